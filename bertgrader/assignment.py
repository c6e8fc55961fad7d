"""Build the nbgrader source notebooks solutions/<a>/<a>.ipynb from their sources solutions/<a>/<a>.py.

    python tools/build_notebooks.py                  # every assignment (what `make notebooks` runs)
    python tools/build_notebooks.py 08_masking       # one
    python tools/build_notebooks.py --check          # fail, naming them, if a committed notebook is stale
    python tools/build_notebooks.py --lint           # pyflakes over each source, and each mistake in place

A source is a Python file in jupytext's "percent" format: real code, real markdown (as `# ` comments),
one cell per `# %%` header. The header says what nbgrader makes of the cell:

    # %% [markdown]                  a markdown cell
    # %%                             an ordinary code cell (a demo the student may run and edit)
    # %% setup                       the first code cell, read-only; SETUP_PREAMBLE is put before its code
    # %% solution <grade_id>         the student writes this; ### BEGIN/END SOLUTION mark the answer
    # %% tests <grade_id> points=<n> graded, read-only: the visible tests; HIDDEN_NOTE is put after them
                                     (the hidden tests are the function <grade_id> of hidden_tests.py)

Before the first header the file holds its docstring only (not part of the notebook). A cell's code is
the lines up to the next header, without the blank lines around it. The notebook is plain .ipynb with
nbgrader metadata (no jupytext pairing, so nothing of the source can leak into the student version),
written deterministically (cell id = grade id, or cell-NN by position), so a rebuild changes no byte.

solutions/<a>/mistakes.py, in the same format, holds the named wrong answers (read_mistakes below):

    # %% <name> cell=<solution grade_id> loses=<graded id>[,<graded id>...]
    # why: <what is wrong, in one line>
    <the whole solution cell as the mistake writes it>

A mistake that rewrites two solution cells repeats its header with the other cell (no `loses`, no why).
"""
from __future__ import annotations

import argparse
import ast
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path

import nbformat

ROOT = Path(__file__).resolve().parents[1]
SOLUTIONS = ROOT / "solutions"

# The first cell of every notebook: course.grading.notebook sends warnings and log records to stdout
# (nbgrader scores a test cell zero as soon as it writes to stderr) and defines bertlib_unavailable().
SETUP_PREAMBLE = """\
# Setup (read-only): run this cell first.
from course.grading.notebook import *  # warnings to stdout (nbgrader zeroes a cell that writes to stderr), bertlib_unavailable
"""
STAR_MODULE = ROOT / "course" / "grading" / "notebook.py"  # what the preamble's `import *` gives: its __all__

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


def to_notebook_cell(cell: Cell, path: Path):
    where = f"{path}:{cell.line}"
    kind, *ids = cell.header or ["code"]
    code = cell.code
    if kind != "[markdown]" and "### BEGIN HIDDEN TESTS" in code:
        raise SourceError(f"{where}: hidden tests belong in hidden_tests.py, never in the notebook")
    allowed = {"tests": {"points"}}.get(kind, set())
    if set(cell.options) - allowed:
        raise SourceError(f"{where}: unknown option(s) {sorted(set(cell.options) - allowed)} for a {kind} cell")
    if kind == "[markdown]" and not ids:
        return nbformat.v4.new_markdown_cell(_markdown(cell, where))
    if kind == "code" and not ids:
        return nbformat.v4.new_code_cell(code)
    if kind == "setup" and len(ids) <= 1:
        body = SETUP_PREAMBLE + ("\n" + code if code.strip() else "")
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
        return nbformat.v4.new_code_cell(code + "\n\n" + HIDDEN_NOTE, metadata=_nbgrader(
            ids[0], grade=True, solution=False, locked=True, points=_points(cell.options["points"], where)))
    raise SourceError(f"{where}: unknown cell header `# %% {' '.join(cell.header)}`; expected `[markdown]`, "
                      f"nothing, `setup`, `solution <grade_id>` or `tests <grade_id> points=N`")


def _shown(path: Path) -> Path:
    """``path`` as messages show it: relative to the repository where it is inside it."""
    return path.relative_to(ROOT) if path.is_relative_to(ROOT) else path


def source_path(name: str) -> Path:
    return SOLUTIONS / name / f"{name}.py"


def build_notebook(name: str) -> nbformat.NotebookNode:
    path = source_path(name)
    nb = nbformat.v4.new_notebook()
    nb.metadata = {
        "kernelspec": {"display_name": "Python 3 (ipykernel)", "language": "python", "name": "python3"},
        "language_info": {"name": "python"},
    }
    cells = split_cells(path.read_text(encoding="utf-8"), path)
    if not cells:
        raise SourceError(f"{path}: no `# %%` cell, so no notebook (the format: docs/exercises.md)")
    seen = set()
    for i, cell in enumerate(cells):
        nb_cell = to_notebook_cell(cell, path)
        # Stable ids: a rebuild of an unchanged source is byte-identical.
        nb_cell.id = nb_cell.metadata.get("nbgrader", {}).get("grade_id") or f"cell-{i:02d}"
        if nb_cell.id in seen:
            raise SourceError(f"{path}:{cell.line}: duplicate cell id {nb_cell.id}")
        seen.add(nb_cell.id)
        nb.cells.append(nb_cell)
    nbformat.validate(nb)
    return nb


def render(name: str) -> str:
    """The .ipynb text for assignment ``name`` (what build() writes)."""
    return nbformat.writes(build_notebook(name)) + "\n"


def build(name: str) -> Path:
    out = SOLUTIONS / name / f"{name}.ipynb"
    out.write_text(render(name), encoding="utf-8")
    return out


def source_names() -> list[str]:
    """The assignments that have a source: solutions/<a>/<a>.py."""
    return sorted(p.parent.name for p in SOLUTIONS.glob("*/*.py") if p.stem == p.parent.name)


# ------------------------------------------------------------------------------------------------- mistakes
def _mistake_cells(name: str) -> list[tuple[str, str, str | None, list[str] | None, str, int]]:
    """(mistake, solution grade_id, why, loses, code, line of the code's first line) per mistakes.py cell."""
    path = SOLUTIONS / name / "mistakes.py"
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


def read_mistakes(name: str) -> dict:
    """solutions/<name>/mistakes.py as ``{mistake: {"why", "cells": {solution grade_id: code}, "loses"}}``."""
    path = SOLUTIONS / name / "mistakes.py"
    mistakes = {}
    for mistake, gid, why, loses, code, line in _mistake_cells(name):
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


def lint(name: str) -> list[str]:
    """pyflakes' messages for the source, run as the notebook runs it (cell after cell, with the names the
    setup cell's `import *` gives); an import the setup cell offers and no cell uses is not one (it is
    there for the student). Then each mistake, run in its notebook in place of the cell it rewrites:
    what pyflakes says of the mistake's own lines, and any undefined name (a part that fails for a typo
    would lose its points for the wrong reason)."""
    from pyflakes.messages import UndefinedName, UnusedImport

    path = source_path(name)
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
    for mistake, gid, _, _, code, line in _mistake_cells(name):
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
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("names", nargs="*", help="assignments (default: every solutions/<a>/<a>.py)")
    group = parser.add_mutually_exclusive_group()
    group.add_argument("--check", action="store_true", help="build nothing; fail if a committed notebook is stale")
    group.add_argument("--lint", action="store_true", help="build nothing; run pyflakes over sources and mistakes")
    args = parser.parse_args(argv)
    known = source_names()
    unknown = [n for n in args.names if n not in known]
    if unknown:
        parser.error(f"no source solutions/<a>/<a>.py for {unknown}; known: {', '.join(known)}")
    names = args.names or known
    try:
        if args.check:
            stale = [n for n in names if not (SOLUTIONS / n / f"{n}.ipynb").is_file()
                     or (SOLUTIONS / n / f"{n}.ipynb").read_text(encoding="utf-8") != render(n)]
            for n in stale:
                print(f"solutions/{n}/{n}.ipynb is stale: run `make notebooks`", file=sys.stderr)
            return 1 if stale else 0
        if args.lint:
            messages = [msg for n in names for msg in lint(n)]
            print("\n".join(messages) if messages else f"pyflakes: no messages ({len(names)} assignments)")
            return 1 if messages else 0
        for n in names:
            print(_shown(build(n)))
    except SourceError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
