"""One assignment of the course: the folder solutions/<a>/ and everything in it, in one place.

    a = Assignment.at(root, "08_masking")     # root: the course (the folder holding solutions/)
    a.build()                                  # solutions/<a>/<a>.ipynb from its source <a>.py
    a.mistakes()                               # the named wrong answers of mistakes.py
    a.points()                                 # {graded cell: points}, from the notebook
    a.hidden_tests                             # the grader's tests, one function per graded cell

    python -m bertgrader.assignment                  # build every notebook (what `make notebooks` runs)
    python -m bertgrader.assignment 08_masking       # one
    python -m bertgrader.assignment --check          # fail, naming them, if a committed notebook is stale
    python -m bertgrader.assignment --lint           # pyflakes over each source, and each mistake in place

A folder solutions/<a>/ holds: <a>.py, the source; <a>.ipynb, the nbgrader source notebook built from
it; mistakes.py, the named wrong answers; hidden_tests.py, the grader's tests (bertgrader.checks runs
them); PROPERTIES.md, each rule the task states and the check and mistake that test it.

A source is a Python file in jupytext's "percent" format: real code, real markdown (as `# ` comments),
one cell per `# %%` header. The header says what nbgrader makes of the cell:

    # %% [markdown]                  a markdown cell
    # %%                             an ordinary code cell (a demo the student may run and edit)
    # %% setup                       the first code cell, read-only; SETUP_PREAMBLE is put before its code
    # %% solution <grade_id>         the student writes this; ### BEGIN/END SOLUTION mark the answer
    # %% tests <grade_id> points=<n> graded, read-only: the visible tests; HIDDEN_NOTE is put after them
                                     (the hidden tests are the function <grade_id> of hidden_tests.py)
    # %% [markdown] written <grade_id> points=<n>
                                     a written answer, graded by hand in Formgrader: a markdown cell whose
                                     ### BEGIN/END SOLUTION region holds the rubric and a full answer (the
                                     release shows "YOUR ANSWER HERE"; Formgrader shows the grader the rubric)

Before the first header the file holds its docstring only (not part of the notebook). A cell's code is
the lines up to the next header, without the blank lines around it. The notebook is plain .ipynb with
nbgrader metadata (no jupytext pairing, so nothing of the source can leak into the student version),
written deterministically (cell id = grade id, or cell-NN by position), so a rebuild changes no byte.

mistakes.py, in the same format, holds the named wrong answers (Assignment.mistakes):

    # %% <name> cell=<solution grade_id> loses=<graded id>[,<graded id>...]
    # why: <what is wrong, in one line>
    <the whole solution cell as the mistake writes it>

A mistake that rewrites two solution cells repeats its header with the other cell (no `loses`, no why).
"""
from __future__ import annotations

import argparse
import ast
import copy
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path

import nbformat

from bertgrader.i18n import ENGLISH, LANGUAGES, tr

HIDDEN_TESTS = "hidden_tests.py"  # in solutions/<a>/: one function per graded cell, named by its grade id


def setup_preamble(language: str = ENGLISH) -> str:
    """The first cell of every notebook, in ``language`` (its comments; the code is the same):
    bertgrader.kernel.notebook sends warnings and log records to stdout (nbgrader scores a test cell zero as soon
    as it writes to stderr) and defines bertlib_unavailable()."""
    return (f"# {tr('Setup (read-only): run this cell first.', language)}\n"
            "from bertgrader.kernel.notebook import *  # "
            f"{tr('warnings to stdout (nbgrader zeroes a cell that writes to stderr), bertlib_unavailable', language)}\n")


SETUP_PREAMBLE = setup_preamble(ENGLISH)


def hidden_note(language: str = ENGLISH) -> str:
    """HIDDEN_NOTE in ``language``."""
    if language == ENGLISH:
        return HIDDEN_NOTE
    return "# " + tr("The grader also checks this part on new inputs (hidden tests), outside your kernel: passing the "
                    "visible tests above is necessary, not sufficient.", language)


STAR_MODULE = Path(__file__).resolve().parent / "kernel" / "notebook.py"  # the preamble's `import *`: its __all__

HIDDEN_NOTE = ("# The grader also checks this part on new inputs (hidden tests), outside your kernel: passing the\n"
               "# visible tests above is necessary, not sufficient.")

_HEADER = re.compile(r"^# %%(?: (?P<rest>.*))?$")


class SourceError(ValueError):
    """A source or mistakes file that does not follow the format; the message names the file and line."""


@dataclass
class Cell:
    header: list[str]  # the words after `# %%`
    lines: list[str]  # the cell's own lines, as written
    line: int  # 1-based line number of the header, for messages
    first: int = 0  # 1-based line number of the first line of `lines`
    options: dict = field(default_factory=dict)

    @property
    def code(self) -> str:
        return "\n".join(self.lines).strip("\n")


def split_cells(text: str, path: Path) -> list[Cell]:
    """The `# %%` cells of a file; refuses anything but a docstring before the first one."""
    lines = text.splitlines()
    starts = [i for i, line in enumerate(lines) if _HEADER.match(line)]
    head = "\n".join(lines[:starts[0]] if starts else lines)
    body = ast.parse(head, str(path)).body
    if len(body) > 1 or (body and not (isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant)
                                       and isinstance(body[0].value.value, str))):
        raise SourceError(f"{path}: before the first `# %%` cell only a docstring (it is not part of the notebook)")
    cells = []
    for k, i in enumerate(starts):
        end = starts[k + 1] if k + 1 < len(starts) else len(lines)
        rest = _HEADER.match(lines[i]).group("rest") or ""
        words, options = [], {}
        for word in rest.split():
            key, eq, value = word.partition("=")
            if eq:
                options[key] = value
            else:
                words.append(word)
        cells.append(Cell(words, lines[i + 1:end], i + 1, i + 2, options))
    return cells


def _nbgrader(grade_id: str, *, grade: bool, solution: bool, locked: bool, points=None) -> dict:
    meta = {"grade": grade, "grade_id": grade_id, "locked": locked, "schema_version": 3, "solution": solution}
    if points is not None:
        meta["points"] = points
    return {"nbgrader": meta}


def _points(text: str, where: str):
    try:
        value = float(text)
    except ValueError:
        raise SourceError(f"{where}: points={text!r} is not a number") from None
    if not value > 0:
        raise SourceError(f"{where}: points={text!r}: a graded cell is worth more than 0")
    return int(value) if value.is_integer() and "." not in text else value


def _markdown(cell: Cell, where: str) -> str:
    out = []
    for n, line in enumerate(cell.lines, start=cell.first):
        if line and not line.startswith("#"):
            raise SourceError(f"{where.rsplit(':', 1)[0]}:{n}: a markdown line is a comment (`# text`, or `#`)")
        out.append(line[2:] if line.startswith("# ") else line[1:])
    return "\n".join(out).strip("\n")


def to_notebook_cell(cell: Cell, path: Path, language: str = ENGLISH):
    where = f"{path}:{cell.line}"
    kind, *ids = cell.header or ["code"]
    code = cell.code
    if kind != "[markdown]" and "### BEGIN HIDDEN TESTS" in code:
        raise SourceError(f"{where}: hidden tests belong in hidden_tests.py, never in the notebook")
    written = kind == "[markdown]" and ids[:1] == ["written"]
    allowed = {"points"} if written or kind == "tests" else set()
    if set(cell.options) - allowed:
        raise SourceError(f"{where}: unknown option(s) {sorted(set(cell.options) - allowed)} for a {kind} cell")
    if kind == "[markdown]" and not ids:
        return nbformat.v4.new_markdown_cell(_markdown(cell, where))
    if kind == "code" and not ids:
        return nbformat.v4.new_code_cell(code)
    if kind == "setup" and len(ids) <= 1:
        body = setup_preamble(language) + ("\n" + code if code.strip() else "")
        return nbformat.v4.new_code_cell(body.rstrip("\n"), metadata=_nbgrader(
            ids[0] if ids else "setup", grade=False, solution=False, locked=True))
    if kind == "solution" and len(ids) == 1:
        if "### BEGIN SOLUTION" not in code or "### END SOLUTION" not in code:
            raise SourceError(f"{where}: mark the answer with ### BEGIN SOLUTION and ### END SOLUTION")
        return nbformat.v4.new_code_cell(code, metadata=_nbgrader(ids[0], grade=False, solution=True,
                                                                  locked=False))
    if kind == "tests" and len(ids) == 1:
        if "points" not in cell.options:
            raise SourceError(f"{where}: a tests cell says what it is worth: `# %% tests {ids[0]} points=N`")
        if "assert" not in code:
            raise SourceError(f"{where}: a graded test cell keeps at least one visible assert")
        return nbformat.v4.new_code_cell(code + "\n\n" + hidden_note(language), metadata=_nbgrader(
            ids[0], grade=True, solution=False, locked=True, points=_points(cell.options["points"], where)))
    if written and len(ids) == 2:
        if "points" not in cell.options:
            raise SourceError(f"{where}: a written answer says what it is worth: "
                              f"`# %% [markdown] written {ids[1]} points=N`")
        text = _markdown(cell, where)
        if not re.search(r"^### BEGIN SOLUTION$.+^### END SOLUTION$", text, re.M | re.S):
            raise SourceError(f"{where}: put the rubric and a full answer between `# ### BEGIN SOLUTION` and "
                              f"`# ### END SOLUTION` lines (the release replaces them by the student's box)")
        return nbformat.v4.new_markdown_cell(text, metadata=_nbgrader(
            ids[1], grade=True, solution=True, locked=False, points=_points(cell.options["points"], where)))
    raise SourceError(f"{where}: unknown cell header `# %% {' '.join(cell.header)}`; expected `[markdown]`, "
                      f"nothing, `setup`, `solution <grade_id>`, `tests <grade_id> points=N` or "
                      f"`[markdown] written <grade_id> points=N`")


def _shown(path: Path) -> Path:
    """``path`` as messages show it: relative to the working directory where it is inside it."""
    path = Path(path).resolve()
    return path.relative_to(Path.cwd()) if path.is_relative_to(Path.cwd()) else path


@dataclass(frozen=True)
class Assignment:
    """One assignment: its name and its folder solutions/<name>/."""

    name: str
    folder: Path

    @classmethod
    def at(cls, root: Path, name: str) -> "Assignment":
        """Assignment ``name`` of the course at ``root`` (the folder holding solutions/)."""
        return cls(name, Path(root) / "solutions" / name)

    @property
    def source(self) -> Path:
        return self.folder / f"{self.name}.py"

    @property
    def notebook(self) -> Path:
        return self.folder / f"{self.name}.ipynb"

    @property
    def mistakes_file(self) -> Path:
        return self.folder / "mistakes.py"

    @property
    def hidden_tests(self) -> Path:
        return self.folder / HIDDEN_TESTS

    # --- the notebook, from its source
    def translated_notebook(self, language: str) -> Path:
        """Where the notebook in ``language`` is: solutions/<a>/<language>/<a>.ipynb (same name, same cells)."""
        return self.notebook if language == ENGLISH else self.folder / language / self.notebook.name

    def source_text(self, language: str = ENGLISH) -> str:
        """The source, its messages in ``language`` where its catalogue translates them (bertgrader.i18n)."""
        text = self.source.read_text(encoding="utf-8")
        if language == ENGLISH:
            return text
        from bertgrader import i18n

        return i18n.translate_source(text, self.source, i18n.translations(self.folder.parents[1], self.name, language))

    def build_notebook(self, language: str = ENGLISH) -> nbformat.NotebookNode:
        path = self.source
        nb = nbformat.v4.new_notebook()
        nb.metadata = {
            "kernelspec": {"display_name": "Python 3 (ipykernel)", "language": "python", "name": "python3"},
            "language_info": {"name": "python"},
        }
        if language != ENGLISH:  # which text the grader shows (bertgrader.i18n.language_of); never a score
            nb.metadata["bertgrader"] = {"language": language}
        cells = split_cells(self.source_text(language), path)
        if not cells:
            raise SourceError(f"{path}: no `# %%` cell, so no notebook (the format: docs/exercises.md)")
        seen = set()
        for i, cell in enumerate(cells):
            nb_cell = to_notebook_cell(cell, path, language)
            # Stable ids: a rebuild of an unchanged source is byte-identical.
            nb_cell.id = nb_cell.metadata.get("nbgrader", {}).get("grade_id") or f"cell-{i:02d}"
            if nb_cell.id in seen:
                raise SourceError(f"{path}:{cell.line}: duplicate cell id {nb_cell.id}")
            seen.add(nb_cell.id)
            nb.cells.append(nb_cell)
        nbformat.validate(nb)
        return nb

    def render(self, language: str = ENGLISH) -> str:
        """The .ipynb text built from the source (what build() writes), in ``language``."""
        return nbformat.writes(self.build_notebook(language)) + "\n"

    def build(self) -> Path:
        """The notebook, and its copy in each translation (solutions/<a>/<language>/<a>.ipynb)."""
        for language in (ENGLISH, *LANGUAGES):
            path = self.translated_notebook(language)
            path.parent.mkdir(exist_ok=True)
            path.write_text(self.render(language), encoding="utf-8")
        return self.notebook

    def stale_notebooks(self) -> list[Path]:
        """The committed notebooks (the English, each translation) missing or not what the source builds now."""
        return [self.translated_notebook(lang) for lang in (ENGLISH, *LANGUAGES)
                if not self.translated_notebook(lang).is_file()
                or self.translated_notebook(lang).read_text(encoding="utf-8") != self.render(lang)]

    def is_stale(self) -> bool:
        """A committed notebook (the English or a translation) is missing or differs from what the source builds."""
        return bool(self.stale_notebooks())

    # --- what the notebook says
    def read_notebook(self) -> nbformat.NotebookNode:
        return read_nb(self.notebook)

    def points(self) -> dict[str, float]:
        """{grade_id: points} of every graded cell."""
        return points(self.read_notebook())

    def answers(self) -> dict[str, str]:
        """{grade_id: source} of every solution cell (the instructor's answers)."""
        return solution_answers(self.read_notebook())

    # --- the named mistakes
    def _mistake_cells(self) -> list[tuple[str, str, str | None, list[str] | None, str, int]]:
        """(mistake, solution grade_id, why, loses, code, line of the code's first line) per mistakes.py cell."""
        path = self.mistakes_file
        if not path.is_file():
            return []
        out = []
        for cell in split_cells(path.read_text(encoding="utf-8"), path):
            where = f"{path}:{cell.line}"
            if len(cell.header) != 1 or not re.fullmatch(r"[A-Za-z0-9_]+", cell.header[0]) or "cell" not in cell.options:
                raise SourceError(f"{where}: a mistake's header is `# %% <name> cell=<grade_id> loses=<grade_id>,...`")
            if set(cell.options) - {"cell", "loses"}:
                raise SourceError(f"{where}: unknown option(s) {sorted(set(cell.options) - {'cell', 'loses'})}")
            lines, first = list(cell.lines), cell.first
            why = None
            if lines and lines[0].startswith("# why: "):
                why, first = lines.pop(0)[len("# why: "):], first + 1
            while lines and not lines[0].strip():
                lines.pop(0)
                first += 1
            code = "\n".join(lines).strip("\n")
            if not code:
                raise SourceError(f"{where}: mistake {cell.header[0]} has no code")
            loses = cell.options["loses"].split(",") if "loses" in cell.options else None
            out.append((cell.header[0], cell.options["cell"], why, loses, code, first))
        return out

    def mistakes(self) -> dict:
        """mistakes.py as ``{mistake: {"why", "cells": {solution grade_id: code}, "loses"}}``."""
        path = self.mistakes_file
        mistakes = {}
        for mistake, gid, why, loses, code, line in self._mistake_cells():
            where = f"{path}:{line}"
            if mistake not in mistakes:
                if why is None or loses is None:
                    raise SourceError(f"{where}: mistake {mistake} says what it loses (loses=...) and why (`# why: ...`)")
                mistakes[mistake] = {"why": why, "cells": {}, "loses": loses}
            elif why is not None or loses is not None:
                raise SourceError(f"{where}: mistake {mistake} gives its why and loses at its first cell only")
            if gid in mistakes[mistake]["cells"]:
                raise SourceError(f"{where}: mistake {mistake} rewrites cell {gid} twice")
            mistakes[mistake]["cells"][gid] = code
        return mistakes

    def lint(self) -> list[str]:
        return lint(self)


def assignments(root: Path) -> list[str]:
    """The course's assignments: the folders of root/solutions/ that hold a notebook of the same name."""
    solutions = Path(root) / "solutions"
    return sorted(p.name for p in solutions.iterdir() if (p / f"{p.name}.ipynb").is_file()) if solutions.is_dir() else []


def sources(root: Path) -> list[str]:
    """The assignments that have a source: solutions/<a>/<a>.py."""
    return sorted(p.parent.name for p in (Path(root) / "solutions").glob("*/*.py") if p.stem == p.parent.name)


# ------------------------------------------------------------------------------------------------ notebooks
def read_nb(path) -> nbformat.NotebookNode:
    return nbformat.read(str(path), as_version=4)


def grade_id(cell) -> str | None:
    return cell.metadata.get("nbgrader", {}).get("grade_id")


def is_solution(cell) -> bool:
    return bool(cell.metadata.get("nbgrader", {}).get("solution"))


def is_graded(cell) -> bool:
    return bool(cell.metadata.get("nbgrader", {}).get("grade"))


def is_written(cell) -> bool:
    """A written answer: a markdown cell graded by hand (nbgrader's "manually graded answer")."""
    return cell.cell_type == "markdown" and is_graded(cell) and is_solution(cell)


def rubric(cell) -> str:
    """What a written answer's source cell holds for the grader: its solution region (rubric, full answer)."""
    m = re.search(r"^### BEGIN SOLUTION$\n?(.*?)^### END SOLUTION$", cell.source, re.M | re.S)
    return m.group(1).strip("\n") if m else ""


def solution_answers(source_nb) -> dict[str, str]:
    """{grade_id: source} of every solution cell of a source notebook (the instructor's answers; a written
    answer's is its solution region, the rubric and a full answer, without the markers)."""
    return {grade_id(c): rubric(c) if is_written(c) else c.source for c in source_nb.cells if is_solution(c)}


def points(source_nb) -> dict[str, float]:
    """{grade_id: points} of every graded cell: the autograded parts and the written answers."""
    return {grade_id(c): float(c.metadata["nbgrader"]["points"]) for c in source_nb.cells if is_graded(c)}


def autograded_points(source_nb) -> dict[str, float]:
    """{grade_id: points} of the parts the grader scores (every graded cell but the written answers)."""
    return {grade_id(c): float(c.metadata["nbgrader"]["points"]) for c in source_nb.cells
            if is_graded(c) and not is_written(c)}


def written_points(source_nb) -> dict[str, float]:
    """{grade_id: points} of the written answers, graded by hand."""
    return {grade_id(c): float(c.metadata["nbgrader"]["points"]) for c in source_nb.cells if is_written(c)}


def filled(release_nb, answers: dict[str, str]) -> nbformat.NotebookNode:
    """A copy of the student version with the solution cells named in ``answers`` replaced by that code,
    as a student would type it (the rest untouched, metadata kept so nbgrader can match the cells)."""
    nb = copy.deepcopy(release_nb)
    by_id = {grade_id(c): c for c in nb.cells if is_solution(c)}
    unknown = set(answers) - set(by_id)
    if unknown:
        raise KeyError(f"not solution cells of this notebook: {sorted(unknown)} (known: {sorted(by_id)})")
    for gid, src in answers.items():
        by_id[gid].source = src
    return nb


# ----------------------------------------------------------------------------------------------------- lint
def _star_names() -> set[str]:
    for node in ast.parse(STAR_MODULE.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.Assign) and any(getattr(t, "id", None) == "__all__" for t in node.targets):
            return set(ast.literal_eval(node.value))
    raise SourceError(f"{STAR_MODULE}: no __all__, so the setup cell's `import *` cannot be linted")


def _pyflakes(code: str, filename: str) -> list:
    from pyflakes.checker import Checker

    return sorted(Checker(ast.parse(code, filename), filename=filename, builtins=_star_names()).messages,
                  key=lambda m: (m.lineno, m.col))


def _text(m) -> str:
    return m.message % m.message_args


def lint(assignment: Assignment) -> list[str]:
    """pyflakes' messages for the source, run as the notebook runs it (cell after cell, with the names the
    setup cell's `import *` gives); an import the setup cell offers and no cell uses is not one (it is
    there for the student). Then each mistake, run in its notebook in place of the cell it rewrites:
    what pyflakes says of the mistake's own lines, and any undefined name (a part that fails for a typo
    would lose its points for the wrong reason)."""
    from pyflakes.messages import UndefinedName, UnusedImport

    path = assignment.source
    rel = _shown(path)
    mistakes_rel = _shown(path.parent / "mistakes.py")
    text = path.read_text(encoding="utf-8")
    cells = split_cells(text, path)
    setup = next(((c.first, c.first + len(c.lines)) for c in cells if c.header[:1] == ["setup"]), (0, 0))
    messages = [f"{rel}:{m.lineno}:{m.col + 1}: {_text(m)}" for m in _pyflakes(text, str(rel))
                if not (isinstance(m, UnusedImport) and setup[0] <= m.lineno < setup[1])]
    solutions = {c.header[1]: c for c in cells if c.header[:1] == ["solution"] and len(c.header) == 2}
    lines = text.splitlines()
    by_mistake: dict[str, list] = {}
    for mistake, gid, _, _, code, line in assignment._mistake_cells():
        if gid not in solutions:
            messages.append(f"{mistakes_rel}:{line}: mistake {mistake} rewrites {gid!r}, which is "
                            f"not a solution cell of {rel.name} ({', '.join(solutions)})")
            continue
        by_mistake.setdefault(mistake, []).append((solutions[gid], code, line))
    for mistake, rewrites in by_mistake.items():
        replaced, regions, at = [], [], 0  # regions: (first, last) line in `replaced`, line in mistakes.py
        for cell, code, line in sorted(rewrites, key=lambda r: r[0].first):
            replaced += lines[at:cell.first - 1]
            regions.append((len(replaced) + 1, len(replaced) + code.count("\n") + 1, line))
            replaced += code.splitlines() + ["", ""]
            at = cell.first - 1 + len(cell.lines)
        replaced += lines[at:]
        for m in _pyflakes("\n".join(replaced) + "\n", f"{rel} with {mistake}"):
            region = next((r for r in regions if r[0] <= m.lineno <= r[1]), None)
            if region:
                messages.append(f"{mistakes_rel}:{region[2] + m.lineno - region[0]}:{m.col + 1}: "
                                f"[{mistake}] {_text(m)}")
            elif isinstance(m, UndefinedName):
                messages.append(f"{mistakes_rel}: [{mistake}] {rel} line {m.lineno} of the notebook "
                                f"with this mistake: {_text(m)}")
    return messages


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bertgrader.assignment",
                                     description="Build the nbgrader source notebooks solutions/<a>/<a>.ipynb "
                                                 "from their sources solutions/<a>/<a>.py.")
    parser.add_argument("names", nargs="*", help="assignments (default: every solutions/<a>/<a>.py)")
    parser.add_argument("--root", type=Path, default=Path("."), help="the course: the folder holding solutions/ "
                        "(default: the working directory)")
    group = parser.add_mutually_exclusive_group()
    group.add_argument("--check", action="store_true", help="build nothing; fail if a committed notebook is stale")
    group.add_argument("--lint", action="store_true", help="build nothing; run pyflakes over sources and mistakes")
    args = parser.parse_args(argv)
    known = sources(args.root)
    if not known:
        parser.error(f"{args.root.resolve()} holds no solutions/<a>/<a>.py: run from the course's folder or pass --root")
    unknown = [n for n in args.names if n not in known]
    if unknown:
        parser.error(f"no source solutions/<a>/<a>.py for {unknown}; known: {', '.join(known)}")
    chosen = [Assignment.at(args.root, n) for n in args.names or known]
    try:
        if args.check:
            stale = [path for a in chosen for path in a.stale_notebooks()]
            for path in stale:
                print(f"{_shown(path)} is stale: run `make notebooks`", file=sys.stderr)
            return 1 if stale else 0
        if args.lint:
            messages = [msg for a in chosen for msg in a.lint()]
            print("\n".join(messages) if messages else f"pyflakes: no messages ({len(chosen)} assignments)")
            return 1 if messages else 0
        for a in chosen:
            print(_shown(a.build()))
    except SourceError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
