"""What the class got wrong: a failed part matched to a named mistake of solutions/<a>/mistakes.py.

Each named mistake is graded for real (nbgrader autograde, the sandbox, the hidden tests: the same grading
tests/test_exercises.py does) and what its grading said is kept as its *signature*: for every part it
loses, the grader's message. A submission shows a mistake when every part the mistake loses failed in the
submission too, each with the same message once numbers are taken out (the values a check saw differ from
one wrong answer to the next; what the check says does not), and without what quotes the student's own
code (the ``(line N in f: ...)`` the grader adds after an exception). Of two mistakes shown, one whose parts
are all parts of the other is dropped (the other explains more). Of mistakes that fail the same parts alike,
those whose messages agree with the submission's to the number are kept where any does (the hidden inputs
are the same for everyone, so the same wrong rule gives the same numbers); where the numbers cannot tell
them apart either, they are named together, as one explanation of which the student's is one (``groups``).

The signatures are computed, never written by hand: ``python -m bertgrader.mistakes --write`` grades every
mistake once (about 3 s a notebook) and stores them in solutions/mistake_signatures.json, with a digest of
the files they come from (the assignment's source, hidden tests and mistakes); tests/test_report.py fails
when a digest is stale, and tests/test_class_grading.py grades mistakes again and compares.

A match only adds an explanation to a feedback page and a count to the class report: it never changes a
score. A student can make a part fail with any message they like (an exception's text is theirs), so at
worst they can make their own page name a mistake they did not make.
"""
from __future__ import annotations

import argparse
import hashlib
import json
import re
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

from bertgrader import i18n
from bertgrader.assignment import HIDDEN_TESTS, Assignment
from bertgrader.assignment import assignments as course_assignments
from bertgrader.i18n import ENGLISH

SIGNATURES = Path("solutions") / "mistake_signatures.json"  # beside the assignments: never released
VERDICT = "CheckFailed"  # the ename of a graded part the hidden tests failed (bertgrader.preprocessors)

_NUMBER = re.compile(r"0x[0-9a-f]+|[-+]?(?:\d+\.?\d*|\.\d+)(?:e[-+]?\d+)?", re.I)
_SPACE = re.compile(r"\s+")


def _quoted_code(number: str) -> re.Pattern:
    """Where in the student's code it raised, as the grader adds it in any language (bertgrader.remote._frame:
    " (line 3 in f: code)"), ``number`` the line number's pattern."""
    forms = {i18n.gettext("line {line} in {function}: {code}", lang) for lang in (ENGLISH, *i18n.LANGUAGES)}
    alternatives = [re.escape(form).replace(re.escape("{line}"), number).replace(re.escape("{function}"), ".*?")
                    .replace(re.escape("{code}"), ".*") for form in sorted(forms)]
    return re.compile(r" \((?:" + "|".join(alternatives) + r").*$", re.S)


_QUOTED_CODE = _quoted_code("#")  # after normalise
_QUOTED_CODE_NUMBERED = _quoted_code(r"\d+")  # the same, numbers kept


@dataclass(frozen=True)
class Mistake:
    assignment: str
    name: str
    why: str
    messages: dict  # {grade id it loses: the grader's message}


def normalise(message: str) -> str:
    """A message with every number (and address) written '#', its white space collapsed, and the student's
    quoted code line cut off."""
    return _QUOTED_CODE.sub("", _SPACE.sub(" ", _NUMBER.sub("#", str(message))).strip())


def failures(nb) -> dict[str, str]:
    """{grade id: message} of every graded test cell the hidden tests failed in an autograded notebook.
    Only the grader's verdict counts (an error output named CheckFailed, which it writes in place of the
    cell's own outputs); a part not graded (the kernel died before it) is not a mistake of the answer."""
    out = {}
    for cell in nb.cells:
        meta = cell.get("metadata", {}).get("nbgrader", {})
        if cell.get("cell_type") != "code" or not meta.get("grade") or meta.get("solution"):
            continue
        for o in cell.get("outputs", []):
            if o.get("output_type") == "error" and o.get("ename") == VERDICT:
                out[str(meta.get("grade_id"))] = str(o.get("evalue", ""))
                break
    return out


def matches(mistake: Mistake, failed: dict[str, str]) -> bool:
    """Whether a submission's failed parts ({grade id: message}) show this mistake."""
    return bool(mistake.messages) and all(
        gid in failed and normalise(failed[gid]) == normalise(msg) for gid, msg in mistake.messages.items())


def _exact(message: str) -> str:
    """A message with its white space collapsed and the student's quoted code line cut off, numbers kept."""
    return _QUOTED_CODE_NUMBERED.sub("", _SPACE.sub(" ", str(message)).strip())


def identify(mistakes: list[Mistake], failed: dict[str, str]) -> list[Mistake]:
    """The named mistakes a submission's failures show, those explaining the most parts first; of those that
    fail the same parts alike, the ones agreeing to the number where any does."""
    found = [m for m in mistakes if matches(m, failed)]
    found = [m for m in found if not any(set(m.messages) < set(o.messages) for o in found)]
    kept = []
    for alike in groups(found):
        exact = [m for m in alike if all(_exact(failed[g]) == _exact(msg) for g, msg in m.messages.items())]
        kept += exact or alike
    return sorted(kept, key=lambda m: (-len(m.messages), m.name))


def groups(shown: list[Mistake]) -> list[list[Mistake]]:
    """The mistakes shown, those that lose the same parts together (in ``shown``'s order): each group is one
    explanation of a submission's failures, a group of several one that its messages cannot narrow down."""
    by_parts: dict[frozenset, list[Mistake]] = {}
    for m in shown:
        by_parts.setdefault(frozenset(m.messages), []).append(m)
    return list(by_parts.values())


# ----------------------------------------------------------------------------------------------- stored
def source_digest(root: Path, assignment: str, language: str = ENGLISH) -> str:
    """sha-256 of what a mistake's grading depends on in the course: the assignment's source notebook
    builder, its hidden tests and its mistakes, and the inputs.py both tests import where it has one; in
    another language, also the hidden tests as translated (a translation of the task's text or of a why line
    changes no signature; bertgrader's own messages, as in English, are not covered: tests/test_class_grading.py
    grades mistakes again and compares)."""
    a = Assignment.at(Path(root), assignment)
    h = hashlib.sha256()
    inputs = [a.folder / "inputs.py"] if (a.folder / "inputs.py").is_file() else []
    for path in (a.folder / f"{assignment}.py", a.folder / HIDDEN_TESTS, a.mistakes_file, *inputs):
        h.update(path.name.encode() + b"\0" + (path.read_bytes() if path.is_file() else b"") + b"\0")
    if language != ENGLISH:
        tests = a.hidden_tests.read_text(encoding="utf-8") if a.hidden_tests.is_file() else ""
        h.update(i18n.translate_module(tests, i18n.translations(root, assignment, language)).encode() + b"\0")
    return h.hexdigest()


def _read(root: Path) -> dict:
    """Every stored signature ({} if none are)."""
    path = Path(root) / SIGNATURES
    return json.loads(path.read_text(encoding="utf-8")) if path.is_file() else {}


def _stored(stored: dict, assignment: str, language: str = ENGLISH) -> dict:
    """The signatures of one assignment in one language in ``stored`` ({} if none): English at the top of its
    entry, another language under its name."""
    entry = stored.get(assignment) or {}
    return entry if language == ENGLISH else entry.get(language) or {}


def load(root: Path, assignment: str, language: str = ENGLISH) -> list[Mistake]:
    """The stored signatures of ``assignment``'s mistakes in ``language`` (the messages a notebook in that
    language gets) with their why lines (from mistakes.py, as it is now, translated by the assignment's
    catalogue); [] if none are stored for it. A mistake whose signature is stale for the current files is not
    matched (``stale`` says which assignments are)."""
    root = Path(root)
    stored = _stored(_read(root), assignment, language)
    if not stored or stored.get("digest") != source_digest(root, assignment, language):
        return []
    table = i18n.translations(root, assignment, language) if language != ENGLISH else {}
    whys = {name: table.get(m["why"], m["why"]) for name, m in Assignment.at(root, assignment).mistakes().items()}
    return [Mistake(assignment, name, whys[name], dict(m["messages"]))
            for name, m in sorted(stored["mistakes"].items()) if name in whys]


def stale(root: Path, assignments: list[str] | None = None, language: str = ENGLISH) -> list[str]:
    """The assignments whose stored signatures (in ``language``) are missing or were computed from other files."""
    root = Path(root)
    stored = _read(root)
    return [a for a in (assignments or course_assignments(root))
            if _stored(stored, a, language).get("digest") != source_digest(root, a, language)]


def signatures_from(root: Path, assignment: str, autograded: dict, language: str = ENGLISH) -> dict:
    """The stored form of one assignment's signatures, from each mistake's autograded notebook
    ({mistake: notebook}) graded in the course at ``root`` (its files are the digest's). Refuses a mistake
    whose grading failed other parts than mistakes.py says."""
    named = Assignment.at(Path(root), assignment).mistakes()
    out = {}
    for name, m in named.items():
        failed = failures(autograded[name])
        if set(failed) != set(m["loses"]):
            raise RuntimeError(f"{assignment}/{name}: mistakes.py says it loses {sorted(m['loses'])}, its grading "
                               f"failed {sorted(failed)}")
        out[name] = {"messages": {gid: failed[gid] for gid in sorted(failed)}}
    return {"digest": source_digest(root, assignment, language), "mistakes": out}


def _student(name: str, language: str) -> str:
    return name if language == ENGLISH else f"{name}--{language}"


def compute(root: Path, assignments: list[str], workers: int = 2,
            languages: tuple[str, ...] = (ENGLISH,)) -> tuple[dict, dict]:
    """Grade every named mistake of ``assignments`` in a throw-away copy of the course (one
    ``python -m bertgrader all`` run), once per language (its notebook: bertgrader.i18n):
    ({(assignment, language): signatures}, {(assignment, language): why not}) (an assignment whose mistakes did
    not grade as mistakes.py says gets no signatures)."""
    from bertgrader.trial import Course, load_mistakes, mistake_submission

    with tempfile.TemporaryDirectory(prefix="mistake-signatures-") as tmp:
        course = Course(Path(tmp) / "course", assignments, origin=Path(root))
        course.generate("*")
        for a in assignments:
            for name, m in load_mistakes(Path(root), a).items():
                for language in languages:
                    course.submit(_student(name, language), a, mistake_submission(course, a, m, language))
        course.grade_class("all", "--workers", str(workers))
        done, failed = {}, {}
        for a in assignments:  # the copy's files, not the checkout's: what was graded, even if it changed since
            for language in languages:
                try:
                    done[(a, language)] = signatures_from(
                        course.root, a, {name: course.autograded(_student(name, language), a)
                                         for name in load_mistakes(course.root, a)}, language)
                except (RuntimeError, OSError, ValueError) as e:
                    failed[(a, language)] = str(e)
        return done, failed


def write(root: Path, assignments: list[str], workers: int = 2,
          languages: tuple[str, ...] = (ENGLISH,)) -> tuple[Path, dict]:
    """Grade and store the signatures of ``assignments`` in ``languages``; returns the file and
    {(assignment, language): why not}."""
    root = Path(root)
    path = root / SIGNATURES
    done, failed = compute(root, assignments, workers, languages)
    stored = _read(root)
    for (a, language), signatures in done.items():
        entry = stored.setdefault(a, {})
        if language == ENGLISH:
            entry.update(signatures)
        else:
            entry[language] = signatures
    path.write_text(json.dumps(dict(sorted(stored.items())), indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    return path, failed


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m bertgrader.mistakes",
                                description="Grade every named mistake and store what its grading said "
                                            f"({SIGNATURES}), so feedback and the class report can name it.")
    p.add_argument("assignments", nargs="*", help="assignment ids (default: those whose signatures are stale)")
    p.add_argument("--root", default=".", help="the course root (default: the current folder)")
    p.add_argument("--workers", type=int, default=2)
    p.add_argument("--check", action="store_true", help="only list the stale assignments; exit 1 if any")
    p.add_argument("--language", default=ENGLISH, choices=[ENGLISH, *i18n.LANGUAGES],
                   help="the notebooks' language (default en: the English notebooks' messages)")
    args = p.parse_args(argv)
    root = Path(args.root).resolve()
    if args.check:  # of the assignments named (default: all), those whose signatures are stale
        todo = stale(root, args.assignments or None, args.language)
        print("\n".join(todo) or "every assignment's mistake signatures are current")
        return 1 if todo else 0
    todo = args.assignments or stale(root, language=args.language)
    if not todo:
        print("every assignment's mistake signatures are current")
        return 0
    print(f"grading the named mistakes of {', '.join(todo)} ({args.language}) ...", file=sys.stderr)
    path, failed = write(root, todo, args.workers, (args.language,))
    print(path)
    for (a, language), why in failed.items():
        print(f"{a} ({language}): no signatures stored: {why}", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
