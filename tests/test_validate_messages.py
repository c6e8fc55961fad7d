"""The student's `nbgrader validate` shows a failing test's whole message (issue 18 §8).

nbgrader's Validator cuts every line at its width (90 characters), and a test's message is one long line;
nbgrader_config.py makes it break such a line into pieces of that width instead. This runs the real
`nbgrader validate`, from the course root (where nbgrader_config.py is read), on a one-cell notebook whose
graded test fails with a message of 300 characters. Its kernel talks over ipc, so ipykernel's warning that
TCP "without encryption" can be eavesdropped is not printed on every validate (nbgrader_config.py).
"""
import os
import subprocess
import sys
from pathlib import Path

import nbformat

ROOT = Path(__file__).resolve().parents[1]
MESSAGE = "the_start_" + "x" * 280 + "_the_end"  # one line, no spaces: only a cut can lose its end


def test_validate_shows_a_long_message_whole(tmp_path):
    nb = nbformat.v4.new_notebook()
    cell = nbformat.v4.new_code_cell(f"assert False, {MESSAGE!r}")
    cell.metadata["nbgrader"] = {"grade": True, "solution": False, "locked": True, "points": 1,
                                 "grade_id": "test_long", "schema_version": 3}
    nb.cells.append(cell)
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    path = tmp_path / "long.ipynb"
    nbformat.write(nb, path)
    env = dict(os.environ, PATH=f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}")
    proc = subprocess.run([sys.executable, "-m", "nbgrader", "validate", str(path)], cwd=ROOT, env=env,
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=300)
    assert "VALIDATION FAILED" in proc.stdout, proc.stdout[-2000:]
    error = proc.stdout[proc.stdout.index("The error was:"):]
    lines = [line.strip() for line in error.splitlines()]
    assert all(len(line) <= 90 for line in lines), "a line is wider than the validator's width"
    assert MESSAGE in "".join(lines), f"the message was cut:\n{error[-1500:]}"
    assert "without encryption" not in proc.stdout, f"validate printed the TCP warning:\n{proc.stdout[:1500]}"
