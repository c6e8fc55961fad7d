"""The visible tests' helpers speak the notebook's language in the student's own kernel (issue 31 §3).

bertgrader.kernel.notebook cannot read the notebook's metadata; it reads the setup cell that imported it (the
release writes its comments in the notebook's language). Run in a real kernel, as JupyterLab and ``nbgrader
validate`` run a notebook: the Chinese release of 01 with an answer that calls bertlib's switched-off function
says so in Chinese, the English release in English; a StandIn given too many arguments says so in the language of
the last setup cell run, and a setup cell that claims no language of the course, or a kernel that cannot import
bertgrader.i18n (a grading sandbox that does not show it), leaves the messages English.
"""
from __future__ import annotations

import re
import sys
from pathlib import Path

import nbformat
from nbclient import NotebookClient

from bertgrader.assignment import filled, read_nb, setup_preamble, solution_answers
from bertgrader.i18n import ENGLISH

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))
from nbgrader_harness import load_mistakes  # noqa: E402

A = "01_positioning"
ANSI = re.compile(r"\x1b\[[0-9;]*m")


def _run(nb, tmp_path) -> list[tuple[str, str]]:
    """(ename, evalue) of each error the notebook's cells raised, in order (the whole traceback's text kept in
    evalue's place when it has the message)."""
    NotebookClient(nb, timeout=120, kernel_name="python3", allow_errors=True,
                   resources={"metadata": {"path": str(tmp_path)}}).execute()
    return [(o.ename, o.evalue, ANSI.sub("", "\n".join(o.traceback))) for c in nb.cells for o in c.get("outputs", [])
            if o.output_type == "error"]


def _calls_bertlib(release: Path) -> nbformat.NotebookNode:
    answers = solution_answers(read_nb(ROOT / "solutions" / A / f"{A}.ipynb")) | load_mistakes(A)["calls_bertlib"]["cells"]
    return filled(read_nb(release), answers)


def test_a_switched_off_function_says_so_in_the_notebooks_language(tmp_path):
    name = "bertlib.attention.causal_visibility"
    for release, says in ((ROOT / "exercises" / "zh_CN" / A / f"{A}.ipynb", f"{name} 在这个测试里被关掉了（switched off）：请自己实现它"),
                          (ROOT / "exercises" / A / f"{A}.ipynb", f"{name} is switched off in this test: write it yourself")):
        errors = _run(_calls_bertlib(release), tmp_path)
        assert [(e[0], e[1]) for e in errors] == [("RuntimeError", says)], errors
        assert f"raise RuntimeError({says!r})" in errors[0][2], errors[0][2]  # the frame shows its line


def test_a_stand_in_speaks_the_language_of_the_last_setup_cell_run(tmp_path):
    call = "StandIn(None, 'scores', 'mask')(1, 2, 3)"
    edited = setup_preamble("zh_CN").replace("设置", "Setup", 1)  # a setup cell edited: no language of the course
    # last, a kernel that cannot import bertgrader.i18n (a grading sandbox that does not show it): English, no error
    hidden = "import sys\nsys.modules['bertgrader.i18n'] = None  # importing it now raises ImportError"
    cells = [setup_preamble("zh_CN"), call, setup_preamble(ENGLISH), call, edited, call, hidden,
             setup_preamble("zh_CN"), call]
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in cells])
    errors = [(e[0], e[1]) for e in _run(nb, tmp_path)]
    assert errors == [("TypeError", "应接收 2 个参数（scores, mask），实际传入了 3 个"),
                      ("TypeError", "takes 2 arguments (scores, mask), 3 were given"),
                      ("TypeError", "takes 2 arguments (scores, mask), 3 were given"),
                      ("TypeError", "takes 2 arguments (scores, mask), 3 were given")], errors
