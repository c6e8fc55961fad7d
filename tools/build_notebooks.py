"""Build the nbgrader source notebooks in solutions/ from readable specs in tools/notebooks/.

    python tools/build_notebooks.py              # every spec
    python tools/build_notebooks.py 03_embeddings

A spec is a Python file ``tools/notebooks/<assignment>.py`` that defines ``CELLS``, a list made with
the helpers below. The output is ``solutions/<assignment>/<assignment>.ipynb``: a plain .ipynb with
nbgrader metadata (no jupytext pairing, so nothing can leak into the student version), written
deterministically (stable cell ids, sorted keys), so rebuilding an unchanged spec changes no byte.
Then generate the student version with nbgrader (see docs/exercises.md).

Cell kinds, as nbgrader knows them:
    md(text)                       a markdown cell
    code(src)                      an ordinary code cell (a demo the student may run and edit)
    setup(src)                     the first cell: read-only; SETUP_PREAMBLE + src
    solution(grade_id, src)        the student writes this; ### BEGIN/END SOLUTION mark the answer
    tests(grade_id, points, src)   graded, read-only: the visible tests (hidden ones: hidden_tests.py)
"""
from __future__ import annotations

import importlib.util
import sys
import textwrap
from pathlib import Path

import nbformat

ROOT = Path(__file__).resolve().parents[1]
SPECS = ROOT / "tools" / "notebooks"
SOLUTIONS = ROOT / "solutions"

# The first cell of every notebook: course.grading.notebook sends warnings and log records to stdout
# (nbgrader scores a test cell zero as soon as it writes to stderr) and defines bertlib_unavailable().
SETUP_PREAMBLE = """\
# Setup (read-only): run this cell first.
from course.grading.notebook import *  # warnings to stdout (nbgrader zeroes a cell that writes to stderr), bertlib_unavailable
"""


def _source(text: str) -> str:
    return textwrap.dedent(text).strip("\n")


def _nbgrader(grade_id: str, *, grade: bool, solution: bool, locked: bool, points: float | None = None) -> dict:
    meta = {"grade": grade, "grade_id": grade_id, "locked": locked, "schema_version": 3, "solution": solution}
    if points is not None:
        meta["points"] = points
    return {"nbgrader": meta}


def md(text: str):
    return nbformat.v4.new_markdown_cell(_source(text))


def code(src: str):
    return nbformat.v4.new_code_cell(_source(src))


def setup(src: str = "", grade_id: str = "setup"):
    body = SETUP_PREAMBLE + ("\n" + _source(src) if src.strip() else "")
    return nbformat.v4.new_code_cell(body.rstrip("\n"), metadata=_nbgrader(grade_id, grade=False, solution=False,
                                                                         locked=True))


def solution(grade_id: str, src: str):
    assert "### BEGIN SOLUTION" in src and "### END SOLUTION" in src, f"{grade_id}: mark the answer"
    return nbformat.v4.new_code_cell(_source(src), metadata=_nbgrader(grade_id, grade=False, solution=True,
                                                                   locked=False))


HIDDEN_NOTE = ("# The grader also checks this part on new inputs (hidden tests), outside your kernel: passing the\n"
               "# visible tests above is necessary, not sufficient.")


def tests(grade_id: str, points: float, src: str):
    """A graded cell: the visible tests. Its hidden tests are the function ``grade_id`` of the
    assignment's hidden_tests.py, run by the grader in its own process (course.grading)."""
    body = _source(src)
    assert "### BEGIN HIDDEN TESTS" not in body, f"{grade_id}: hidden tests belong in hidden_tests.py"
    assert "assert" in body, f"{grade_id}: a graded test cell keeps at least one visible assert"
    return nbformat.v4.new_code_cell(body + "\n\n" + HIDDEN_NOTE, metadata=_nbgrader(
        grade_id, grade=True, solution=False, locked=True, points=points))


def build_notebook(cells) -> nbformat.NotebookNode:
    nb = nbformat.v4.new_notebook()
    nb.metadata = {
        "kernelspec": {"display_name": "Python 3 (ipykernel)", "language": "python", "name": "python3"},
        "language_info": {"name": "python"},
    }
    seen = set()
    for i, cell in enumerate(cells):
        # Stable ids: a rebuild of an unchanged spec is byte-identical.
        grade_id = cell.metadata.get("nbgrader", {}).get("grade_id")
        cell.id = grade_id or f"cell-{i:02d}"
        assert cell.id not in seen, f"duplicate cell id {cell.id}"
        seen.add(cell.id)
    nb.cells = list(cells)
    nbformat.validate(nb)
    return nb


def load_spec(name: str):
    path = SPECS / f"{name}.py"
    spec = importlib.util.spec_from_file_location(f"notebook_spec_{name}", path)
    module = importlib.util.module_from_spec(spec)
    sys.path.insert(0, str(Path(__file__).parent))  # so a spec can `from build_notebooks import ...`
    try:
        spec.loader.exec_module(module)
    finally:
        sys.path.pop(0)
    return module


def render(name: str) -> str:
    """The .ipynb text for assignment ``name`` (what build() writes)."""
    return nbformat.writes(build_notebook(load_spec(name).CELLS)) + "\n"


def build(name: str) -> Path:
    out = SOLUTIONS / name / f"{name}.ipynb"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(render(name), encoding="utf-8")
    return out


def spec_names() -> list[str]:
    return sorted(p.stem for p in SPECS.glob("[0-9]*.py"))


if __name__ == "__main__":
    for name in sys.argv[1:] or spec_names():
        print(build(name).relative_to(ROOT))
