"""What the class got wrong: ``python -m bertgrader report <assignment|all>``.

Reads what grading left (nbgrader's gradebook, the class runner's ledger of grading times and failures,
the autograded notebooks) and changes nothing but the ledger, where it records, as ``python -m bertgrader``
does, the submissions a plain ``nbgrader autograde`` graded (bertgrader.classes.db.Ledger.adopt). It writes one self-contained HTML page (charts drawn by
matplotlib as inline SVG: no script, no network, nothing beside it) with each part's pass rate, the named
mistakes of solutions/<a>/mistakes.py ranked by how many submissions show them (bertgrader.mistakes), the
score distribution, grading times and the submissions that could not be graded; and prints the class
table in the terminal, every message whole, wrapped at word boundaries.

A score here is nbgrader's (``nbgrader export``'s ``score``: the submission's score less its late
penalty, at least 0); a part passes when it scored its full points. A written answer (graded by hand in
Formgrader) that has no score yet reads "awaiting grading", not as a lost part, and is left out of its
part's pass rate until graded; a score given by hand (a written answer's, or an autograded part's
adjusted) is listed with the instructor's comment.
"""
from __future__ import annotations

import argparse
import html
import io
import os
import re
import shutil
import statistics
import sys
import textwrap
from dataclasses import dataclass, field, replace
from pathlib import Path

PROG = "python -m bertgrader report"


@dataclass
class Part:
    assignment: str
    name: str
    points: float
    passed: int = 0
    graded: int = 0
    written: bool = False  # graded by hand in Formgrader (a written answer)
    awaiting: int = 0  # written answers not graded yet

    @property
    def rate(self) -> float | None:
        return self.passed / self.graded if self.graded else None


@dataclass
class Row:
    """One submission: graded (scores from the gradebook) or not (why)."""

    assignment: str
    student: str
    graded: bool
    score: float | None = None  # nbgrader export's score
    max_score: float | None = None
    late_penalty: float = 0.0
    lost: list[str] = field(default_factory=list)  # parts below full points
    awaiting: list[str] = field(default_factory=list)  # written answers not graded yet (by hand, in Formgrader)
    by_hand: list[str] = field(default_factory=list)  # scores given by hand, with the instructor's comment
    problems: list[str] = field(default_factory=list)  # what the autograded notebook says failed, whole
    mistakes: list[str] = field(default_factory=list)  # named mistakes its failures show
    seconds: float | None = None  # its grading time (the ledger)
    why: str = ""  # not graded: why


@dataclass
class ClassReport:
    root: Path
    db: str
    assignments: list[str]
    parts: list[Part] = field(default_factory=list)
    rows: list[Row] = field(default_factory=list)
    mistakes: dict = field(default_factory=dict)  # {(assignment, name): {"why", "students": [...]}}
    unnamed: list[str] = field(default_factory=list)  # assignments with no current mistake signatures
    unexplained: dict = field(default_factory=dict)  # {(assignment, part): failures no named mistake explains}

    @property
    def graded(self) -> list[Row]:
        return [r for r in self.rows if r.graded]

    @property
    def failed(self) -> list[Row]:
        return [r for r in self.rows if not r.graded]


# ----------------------------------------------------------------------------------------------- collect
def collect(root: Path, assignments: list[str], db_url: str | None = None) -> ClassReport:
    """Everything the report shows, from the gradebook, the ledger and the autograded notebooks."""
    import nbformat
    from nbgrader.api import Gradebook, MissingEntry

    from bertgrader import i18n
    from bertgrader import mistakes as named
    from bertgrader.classes.db import ADOPTED, Ledger, describe, normalise_url, submission_digest
    from bertgrader.classes.nbgrader_run import course_config, course_facts, read_autograded
    from bertgrader.classes.run import find_submissions

    cfg = course_config(root)
    course_id, default_url = course_facts(cfg)
    url = normalise_url(db_url or default_url)
    report = ClassReport(root, describe(url), assignments)
    subs = find_submissions(root, assignments)
    ledger = Ledger(url, course_id)
    try:
        ledger.create()  # the runner's two tables, if this gradebook was only ever graded by nbgrader
        with Gradebook(url, course_id) as gb:
            for a in assignments:
                students = sorted(s for a2, s in subs if a2 == a)
                try:
                    cells = [(gc.name, float(gc.max_score), gc.cell_type == "markdown")
                             for nb in gb.find_assignment(a).notebooks for gc in nb.grade_cells]
                except MissingEntry:
                    cells = []
                parts = {name: Part(a, name, pts, written=written) for name, pts, written in cells}
                report.parts += parts.values()
                digests = {s: submission_digest(subs[(a, s)]) for s in students}
                done = ledger.graded(a, digests, root) if cells else set()
                if cells:
                    done |= ledger.adopt(a, {s: d for s, d in digests.items() if s not in done},
                                         {s: subs[(a, s)] for s in students}, root)
                rows = ledger.rows(a)
                seconds = {r["student"]: r["seconds"] for r in rows if r["grader"] != ADOPTED}  # adopted: untimed
                whys = ledger.failures(a)
                try:
                    known = named.load(root, a)
                    stale = bool(named.stale(root, [a]))
                except Exception as e:  # a broken mistakes.py: the report is still made, without names
                    print(f"{PROG}: {a}'s named mistakes cannot be read ({e}); none is named", file=sys.stderr)
                    known, stale = [], True
                if stale:
                    report.unnamed.append(a)
                known_in = {i18n.ENGLISH: known}
                for s in students:
                    if s not in done:
                        why = whys.get(s) or ("resubmitted since it was graded: grade it again"
                                              if s in {r["student"] for r in rows} else "not graded yet")
                        report.rows.append(Row(a, s, False, why=why))
                        continue
                    sub = gb.find_submission(a, s)
                    every = [g for nb in sub.notebooks for g in nb.grades]
                    grades = {g.name: (g.score, g.max_score) for g in every}
                    comments = {c.name: c.comment for nb in sub.notebooks for c in nb.comments
                                if (c.comment or "").strip()}
                    waiting = {g.name for g in every if g.cell.cell_type == "markdown"
                               and g.manual_score is None and g.auto_score is None}
                    row = Row(a, s, True, score=max(0.0, float(sub.score) - float(sub.late_submission_penalty or 0)),
                              max_score=float(sub.max_score), late_penalty=float(sub.late_submission_penalty or 0),
                              seconds=seconds.get(s))
                    for name, (score, most) in grades.items():
                        if name in waiting:  # a written answer no one has graded yet: not a lost part
                            row.awaiting.append(name)
                            if name in parts:
                                parts[name].awaiting += 1
                            continue
                        if name in parts:
                            parts[name].graded += 1
                            parts[name].passed += score is not None and score >= most
                        if score is None or score < most:
                            row.lost.append(name)
                    for g in every:
                        if g.manual_score is None and not g.extra_credit:
                            continue
                        said = (f"{g.name}: {g.score:g} of {g.max_score:g} given by hand"
                                + (f" (the grader gave {g.auto_score:g})" if g.auto_score is not None
                                   and g.cell.cell_type == "code" else "")
                                + (f", {g.extra_credit:g} extra credit" if g.extra_credit else ""))
                        note = comments.get(g.name)
                        row.by_hand.append(said + (f"; comment: {note}" if note else ""))
                    path = root / "autograded" / s / a / f"{a}.ipynb"
                    nb = nbformat.read(str(path), as_version=4)
                    row.problems = read_autograded(path, whole=True)[0]
                    # nbgrader counts a Formgrader score instead of the automatic one, also after a regrade
                    row.problems += [f"{g.name}: the manual score {g.manual_score:g} counts, not the automatic "
                                     f"{g.auto_score:g} (review it in Formgrader)" for g in every
                                     if g.manual_score is not None and g.auto_score is not None
                                     and g.manual_score != g.auto_score]
                    failed = named.failures(nb)
                    # a notebook in another language is matched with that language's signatures (its messages'
                    # words); the report names the mistake and says why in English, the instructor's language
                    language = i18n.language_of(nb)
                    if language not in known_in:
                        try:
                            english = {m.name: m.why for m in known}
                            known_in[language] = [replace(m, why=english.get(m.name, m.why))
                                                  for m in named.load(root, a, language)]
                        except Exception:  # a report is still made, without names for these notebooks
                            known_in[language] = []
                    shown = named.identify(known_in[language], failed)
                    for gid in sorted(set(failed) - {g for m in shown for g in m.messages}):
                        report.unexplained[(a, gid)] = report.unexplained.get((a, gid), 0) + 1
                    for alike in named.groups(shown):  # several the messages cannot tell apart: one entry
                        name = " or ".join(m.name for m in alike)
                        why = alike[0].why if len(alike) == 1 else " ".join(
                            f"{m.name.replace('_', ' ')}: {m.why}" for m in alike)
                        row.mistakes.append(name)
                        entry = report.mistakes.setdefault((a, name), {"why": why, "students": []})
                        entry["students"].append(s)
                    report.rows.append(row)
    finally:
        ledger.close()
    return report


# ----------------------------------------------------------------------------------------------- terminal
def class_table(report: ClassReport, width: int | None = None) -> str:
    """The class table: one line per submission, then its problems and named mistakes, each whole and
    wrapped at word boundaries (a long word is never cut; it runs past the width instead)."""
    from bertgrader.classes.run import printable

    width = width or shutil.get_terminal_size((120, 24)).columns
    name_w = max([12, *(len(printable(r.student)) for r in report.rows)])
    head = f"{'student':<{name_w}} {'assignment':<20} {'score':>7} {'max':>6} {'time s':>7}  status"
    lines = [head, "-" * min(width, len(head) + 10)]

    def wrap(text: str, first: str) -> list[str]:
        rest = " " * len(first)
        return textwrap.wrap(printable(text), width=max(width, len(first) + 20), initial_indent=first,
                             subsequent_indent=rest + "  ", break_long_words=False, break_on_hyphens=False)

    for r in sorted(report.rows, key=lambda r: (r.student, r.assignment)):
        t = f"{r.seconds:7.1f}" if r.seconds is not None else f"{'-':>7}"
        if r.graded:
            status = "full marks" if not r.lost else f"lost {len(r.lost)} part{'s' * (len(r.lost) != 1)}"
            if r.late_penalty:
                status += f", late penalty {r.late_penalty:g}"
            lines.append(f"{printable(r.student):<{name_w}} {r.assignment:<20} {r.score:7.1f} {r.max_score:6.1f} {t}  "
                         f"{status}")
        else:
            lines.append(f"{printable(r.student):<{name_w}} {r.assignment:<20} {'-':>7} {'-':>6} {t}  NOT GRADED")
            lines += wrap(r.why, "    why: ")
        if r.awaiting:
            lines += wrap(f"{', '.join(r.awaiting)} (written)", "    awaiting grading by hand: ")
        for p in r.problems:
            lines += wrap(p, "    ")
        for h in r.by_hand:
            lines += wrap(h, "    by hand: ")
        for m in r.mistakes:
            why = report.mistakes[(r.assignment, m)]["why"]
            lines += wrap(f"known mistake {m.replace('_', ' ')}: {why}", "    = ")
    return "\n".join(lines)


def summary_lines(report: ClassReport) -> list[str]:
    g = report.graded
    out = [f"{len(report.rows)} submissions of {', '.join(report.assignments)}: {len(g)} graded, "
           f"{len(report.failed)} not graded; gradebook {report.db}"]
    if report.unnamed:
        out.append(f"mistakes not named for {', '.join(report.unnamed)}: their signatures are stale or missing "
                   "(python -m bertgrader.mistakes regrades the named mistakes)")
    return out


# ----------------------------------------------------------------------------------------------- charts
def _svg(fig) -> str:
    buf = io.StringIO()
    fig.savefig(buf, format="svg", bbox_inches="tight")
    import matplotlib.pyplot as plt

    plt.close(fig)
    text = buf.getvalue()
    text = text[text.index("<svg"):]  # no XML prolog or doctype inside the page
    text = re.sub(r"<metadata>.*?</metadata>", "", text, flags=re.S)  # matplotlib's RDF: a date, no use here
    return text.replace("<svg ", '<svg role="img" preserveAspectRatio="xMinYMin meet" ', 1)


def _bar_chart(labels: list[str], values: list[float], xlabel: str, xmax: float | None = None,
               fmt: str = "{:.0%}") -> str:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    plt.rcParams["svg.fonttype"] = "path"  # text drawn as shapes: no font needed to read it
    labels = [textwrap.fill(t, 16, break_long_words=False) for t in labels]  # long names on two lines
    lines = sum(t.count("\n") + 1 for t in labels)
    fig, ax = plt.subplots(figsize=(4.8, 0.6 + 0.3 * max(1, len(labels), lines * 0.75)))  # read at 390 px too
    y = range(len(labels))
    ax.barh(list(y), values, color="#4a7ab5")
    ax.set_yticks(list(y), labels, fontsize=10)
    ax.invert_yaxis()
    ax.set_xlabel(xlabel, fontsize=10)
    ax.tick_params(labelsize=10)
    if xmax is not None:
        ax.set_xlim(0, xmax * 1.12)
    else:  # counts: whole numbers on the axis
        ax.xaxis.get_major_locator().set_params(integer=True)
    for i, v in enumerate(values):
        ax.text(v, i, " " + fmt.format(v), va="center", fontsize=10)
    ax.spines[["top", "right"]].set_visible(False)
    return _svg(fig)


def _score_bins(most: float) -> list[float]:
    """One bar per whole point up to 30 points, else twenty bars."""
    if most <= 30:
        return [i - 0.5 for i in range(int(most) + 2)]
    return [i * most / 20 for i in range(21)]


def _histogram(values: list[float], xlabel: str, bins, xmax: float | None = None) -> str:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    plt.rcParams["svg.fonttype"] = "path"
    fig, ax = plt.subplots(figsize=(4.8, 1.8))
    ax.hist(values, bins=bins, color="#4a7ab5", edgecolor="white")
    ax.set_xlabel(xlabel, fontsize=10)
    ax.set_ylabel("submissions", fontsize=10)
    ax.tick_params(labelsize=10)
    if xmax is not None:
        ax.set_xlim(-0.5, xmax)
    ax.yaxis.get_major_locator().set_params(integer=True)
    ax.spines[["top", "right"]].set_visible(False)
    return _svg(fig)


# ----------------------------------------------------------------------------------------------- page
CSS = """
body { font: 15px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; margin: 0 auto; padding: 1em;
       max-width: 60em; color: #1d1d1d; }
h1 { font-size: 1.5em; } h2 { font-size: 1.2em; margin-top: 1.6em; border-bottom: 1px solid #ddd; }
figure { margin: 0.6em 0; } figure svg { width: 100%; height: auto; max-width: 40em; }
table { border-collapse: collapse; margin: 0.5em 0; } td, th { padding: 0.25em 0.6em; border-bottom: 1px solid #eee;
text-align: left; vertical-align: top; } td.n, th.n { text-align: right; white-space: nowrap; }
td.who { white-space: nowrap; } tr.sub td { border-bottom: none; } table.students, table.mistakes { width: 100%; } td.msg, td.why { overflow-wrap: break-word; }
.box { overflow-x: auto; } .msg { font-family: Menlo, Consolas, monospace; font-size: 0.85em; white-space: pre-wrap; }
.note { color: #555; }
"""


def _e(text) -> str:
    return html.escape(str(text), quote=True)


def render(report: ClassReport) -> str:
    """The report as one HTML page (no script, nothing loaded)."""
    out = ['<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">',
           '<meta name="viewport" content="width=device-width, initial-scale=1">',
           f"<title>Class report: {_e(', '.join(report.assignments))}</title><style>{CSS}</style></head><body>",
           f"<h1>Class report: {_e(', '.join(report.assignments))}</h1>",
           f'<p class="note">{"<br>".join(_e(s) for s in summary_lines(report))}</p>']
    for a in report.assignments:
        parts = [p for p in report.parts if p.assignment == a]
        rows = [r for r in report.rows if r.assignment == a]
        graded = [r for r in rows if r.graded]
        out.append(f'<section id="{_e(a)}"><h2>{_e(a)}: {len(graded)} of {len(rows)} submissions graded</h2>')
        if parts and graded:
            out.append("<h3>Each part's pass rate</h3>")
            out.append(f"<figure>{_bar_chart([p.name for p in parts], [p.rate or 0.0 for p in parts], 'passed (full points)', 1.0)}</figure>")
            out.append('<div class="box"><table class="parts"><tr><th>part</th><th class="n">points</th>'
                       '<th class="n">passed</th><th class="n">rate</th></tr>')
            for p in parts:
                rate = f"{p.rate:.0%}" if p.rate is not None else "-"
                waits = f" ({p.awaiting} awaiting grading)" if p.awaiting else ""
                name = f"{p.name} (written, graded by hand)" if p.written else p.name
                out.append(f'<tr><td>{_e(name)}</td><td class="n">{p.points:g}</td><td class="n">{p.passed} of '
                           f'{p.graded}{waits}</td><td class="n">{rate}</td></tr>')
            out.append("</table></div>")
        ranked = sorted(((n, v) for (a2, n), v in report.mistakes.items() if a2 == a),
                        key=lambda kv: (-len(kv[1]["students"]), kv[0]))
        out.append("<h3>Named mistakes, by how many made them</h3>")
        if ranked:
            out.append(f"<figure>{_bar_chart([n.replace('_', ' ') for n, _ in ranked], [len(v['students']) for _, v in ranked], 'submissions', None, '{:.0f}')}</figure>")
            out.append('<div class="box"><table class="mistakes"><tr><th>mistake, and why it is wrong</th>'
                       '<th class="n">submissions</th></tr>')
            for n, v in ranked:
                out.append(f'<tr class="sub"><td><b>{_e(n.replace("_", " "))}</b></td>'
                           f'<td class="n">{len(v["students"])}</td></tr>'
                           f'<tr><td colspan="2" class="why">{_e(v["why"])}</td></tr>')
            out.append("</table></div>")
        else:
            out.append('<p class="note">' + ("its mistakes' signatures are stale or missing"
                                             if a in report.unnamed else "no failure matched a named mistake")
                       + "</p>")
        other = {p: n for (a2, p), n in sorted(report.unexplained.items()) if a2 == a}
        if other:
            out.append(f'<p class="note">Failed parts no named mistake explains: '
                       f'{_e(", ".join(f"{p} {n}" for p, n in other.items()))}</p>')
        if graded:
            most = graded[0].max_score or 1.0
            out.append("<h3>Score distribution</h3>")
            out.append(f"<figure>{_histogram([r.score for r in graded], f'score (of {most:g})', bins=_score_bins(most), xmax=most + 0.5)}</figure>")
            out.append(f'<p class="note">mean {statistics.fmean(r.score for r in graded):.2f}, median '
                       f"{statistics.median(r.score for r in graded):.2f} of {most:g}</p>")
        timed = [r.seconds for r in graded if r.seconds is not None]
        out.append("<h3>Grading time and failures</h3>")
        if timed:
            out.append(f"<figure>{_histogram(timed, 'seconds to grade a submission', bins=10)}</figure>")
            out.append(f'<p class="note">{len(timed)} timed: median {statistics.median(timed):.1f} s, longest '
                       f"{max(timed):.1f} s, {sum(timed):.0f} s in all</p>")
        failed = [r for r in rows if not r.graded]
        out.append(f"<p>{len(failed)} not graded</p>")
        if failed:
            out.append('<div class="box"><table class="failed"><tr><th>student</th><th>why</th></tr>')
            for r in failed:
                out.append(f'<tr><td class="who">{_e(r.student)}</td><td class="msg">{_e(r.why)}</td></tr>')
            out.append("</table></div>")
        out.append("<h3>Every submission</h3>")
        out.append('<div class="box"><table class="students"><tr><th>student</th><th class="n">score</th>'
                   '<th class="n">max</th><th class="n">time s</th></tr>')
        for r in rows:
            said = [*(f"awaiting grading by hand: {w}" for w in r.awaiting), *r.problems,
                    *(f"by hand: {h}" for h in r.by_hand), *(f"known mistake {m.replace('_', ' ')}" for m in r.mistakes)]
            if not r.graded:
                said = [f"not graded: {r.why}"]
            score = f"{r.score:g}" if r.graded else "-"
            most = f"{r.max_score:g}" if r.graded else "-"
            t = f"{r.seconds:.1f}" if r.seconds is not None else "-"
            out.append(f'<tr class="sub"><td class="who">{_e(r.student)}</td><td class="n">{score}</td>'
                       f'<td class="n">{most}</td><td class="n">{t}</td></tr>')
            if said:  # on a row of its own, the table's whole width: a phone reads it too
                out.append(f'<tr><td colspan="4" class="msg">{"<br>".join(_e(s) for s in said)}</td></tr>')
        out.append("</table></div></section>")
    out.append("</body></html>")
    return "\n".join(out)


# ----------------------------------------------------------------------------------------------- command
def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog=PROG, description=__doc__.split("\n\n")[1].replace("\n", " "))
    p.add_argument("assignment", help="an assignment id (a folder of solutions/) or 'all'")
    p.add_argument("--root", default=".", metavar="DIR", help="the course root (default: the current folder)")
    p.add_argument("--db", metavar="URL", help="the gradebook URL (default: nbgrader's, gradebook.db in the root)")
    p.add_argument("--out", metavar="FILE",
                   help="where to write the HTML page (default: reports/<assignment>.html in the course root)")
    p.add_argument("--width", type=int, metavar="COLUMNS", help="wrap the table at this width (default: the terminal's)")
    return p


def main(argv: list[str] | None = None) -> int:
    from bertgrader.assignment import assignments as course_assignments
    from bertgrader.classes.db import SetupError

    args = build_parser().parse_args(argv)
    root = Path(args.root).expanduser().resolve()
    try:
        if not (root / "nbgrader_config.py").is_file():
            raise SetupError(f"{root} is not a course root: it has no nbgrader_config.py (pass --root)")
        known = course_assignments(root)
        if args.assignment != "all" and args.assignment not in known:
            raise SetupError(f"unknown assignment {args.assignment!r}: this course's assignments are "
                             f"{', '.join(known) or 'none'}, or 'all'")
        chosen = known if args.assignment == "all" else [args.assignment]
        report = collect(root, chosen, args.db)
    except SetupError as e:
        print(f"{PROG}: error: {e}", file=sys.stderr)
        return 2
    out = Path(args.out) if args.out else root / "reports" / f"{args.assignment}.html"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(render(report), encoding="utf-8")
    width = args.width or shutil.get_terminal_size((120, 24)).columns
    print(class_table(report, width))
    print()
    for line in [*summary_lines(report), f"report: {out}"]:
        print("\n".join(textwrap.wrap(line, width, subsequent_indent="  ", break_long_words=False,
                                       break_on_hyphens=False)))
    return 0


if __name__ == "__main__":
    os.environ.setdefault("MPLBACKEND", "Agg")
    sys.exit(main())
