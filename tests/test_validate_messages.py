"""The student's `nbgrader validate`: each failing cell's reason first, whole, and exit status 1 (issue 29 §10).

nbgrader prints each failing test cell's source, then its traceback, every line cut or broken at 90
characters, the reason last, and exits 0 on a failing notebook; nbgrader_config.py installs
bertgrader/validate.py instead. These run the real `nbgrader` command of the virtualenv, as a student runs it,
from the course root (where nbgrader_config.py is read), and read its exit status and its first lines.
Its kernel talks over ipc, so ipykernel's warning that TCP "without encryption" can be eavesdropped is not
printed (nbgrader_config.py).
"""
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

from bertgrader.assignment import Assignment, filled, read_nb, solution_answers

ROOT = Path(__file__).resolve().parents[1]
NBGRADER = Path(sys.executable).parent / "nbgrader"
MESSAGE = "the_start_" + "x" * 280 + " and a few words at the_end"  # no space for 280 characters: a cut loses it


def validate(path, cwd=ROOT):
    env = dict(os.environ, PATH=f"{NBGRADER.parent}{os.pathsep}{os.environ.get('PATH', '')}")
    proc = subprocess.run([str(NBGRADER), "validate", str(path)], cwd=cwd, env=env, stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, text=True, timeout=300)
    return proc.returncode, proc.stdout


def _graded(source, grade_id):
    cell = nbformat.v4.new_code_cell(source)
    cell.metadata["nbgrader"] = {"grade": True, "solution": False, "locked": True, "points": 1,
                                 "grade_id": grade_id, "schema_version": 3}
    return cell


def test_a_long_message_comes_first_whole_and_the_exit_status_is_1(tmp_path):
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_markdown_cell("## Part 1: a long message"),
                _graded("x = 1\n" * 40 + f"assert False, {MESSAGE!r}", "test_long")]
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nbformat.write(nb, tmp_path / "long.ipynb")
    rc, out = validate(tmp_path / "long.ipynb")
    assert rc == 1, f"validate exited {rc} on a failing notebook:\n{out[:1500]}"
    lines = [line for line in out.splitlines() if not line.startswith("[ValidateApp")]
    assert lines[0].startswith("VALIDATION FAILED ON 1 CELL(S)!"), out[:1500]
    reason = next(line for line in lines if line.startswith("1. "))
    assert reason == f"1. Part 1: a long message, test test_long: AssertionError: {MESSAGE}", out[:1500]
    assert lines.index(reason) <= 3, f"the reason is not among the first lines:\n{out[:1500]}"
    assert out.index(reason) < out.index("Traceback"), "the traceback comes before the reason"
    assert "x = 1\n    x = 1\n    x = 1\n    x = 1\n    x = 1\n    x = 1" not in out, "the test cell's source is printed"
    assert "without encryption" not in out, f"validate printed the TCP warning:\n{out[:1500]}"


def test_the_released_notebook_names_each_unanswered_part_first(tmp_path):
    path = tmp_path / "01_positioning.ipynb"
    shutil.copy(ROOT / "exercises" / "01_positioning" / "01_positioning.ipynb", path)
    rc, out = validate(path)
    assert rc == 1, out[:1500]
    lines = [line for line in out.splitlines() if line.strip() and not line.startswith("[ValidateApp")]
    assert lines[0].startswith("VALIDATION FAILED ON 4 CELL(S)!"), out[:1500]
    for i, (function, test) in enumerate([("bidirectional_visibility", "test_bidirectional"), ("causal_visibility", "test_causal"),
                                          ("causal_padded_visibility", "test_causal_padded")], 1):
        assert lines[i].startswith(f"{i}. Part {i}: ") and f", test {test}: NotImplementedError: not answered yet " \
            f"(`raise NotImplementedError()` is still in {function}" in lines[i], out[:2500]
    assert lines[4].startswith("4. Part 4, written: ") and lines[4].endswith(
        ", answer explain_generation: You did not provide a response."), out[:2500]


def test_a_notebook_that_passes_exits_0(tmp_path):
    path = tmp_path / "01_positioning.ipynb"
    shutil.copy(ROOT / "solutions" / "01_positioning" / "01_positioning.ipynb", path)
    rc, out = validate(path)
    assert rc == 0, out[-1500:]
    assert "Success! Your notebook passes all the tests." in out


def test_a_chinese_notebook_that_passes_says_so_in_chinese(tmp_path):
    """nbgrader's own success line, in the notebook's language (bertgrader.validate), as its failures are."""
    path = tmp_path / "01_positioning.ipynb"
    shutil.copy(ROOT / "solutions" / "01_positioning" / "zh_CN" / "01_positioning.ipynb", path)
    rc, out = validate(path)
    assert rc == 0, out[-1500:]
    assert "成功！你的笔记本通过了所有测试。" in out and "Success!" not in out, out[-1500:]


def test_a_path_that_matches_nothing_exits_1(tmp_path):
    rc, out = validate(tmp_path / "no_such_notebook.ipynb")
    assert rc == 1 and "No notebook matches" in out, out


# The two messages that used to mislead (issue 29 §10), each a named mistake of solutions/<a>/mistakes.py: what
# validate (the visible test) and the feedback page (the hidden tests' message, as graded into
# solutions/mistake_signatures.json, which tests/test_class_grading.py grades again) say must name the fault.
SHARPENED = [
    # scores * mask: the rows with masked keys are NaN (the visible test said "weights should sum to 1")
    ("02_encoder_layer", "mask_multiplied", "test_attention",
     ["NaN", "add the mask to the scores (scores + mask)"], ["NaN", "each a row with masked keys",
                                                             "the mask is added to the scores (scores + mask)"]),
    # the second residual adds x, not y (the visible test said only "LayerNorm(x + sublayer(x)), twice")
    ("02_encoder_layer", "second_residual_from_input", "test_layer",
     ["the second residual adds the layer's input x; it must add y"],
     ["the second residual adds the layer's input x; it must add y"]),
    # scores * the additive mask (the hidden tests said "padding keys get weights other than 0")
    ("06_attention_masks", "additive_mask_multiplied", "test_softmax", None,
     ["softmax(scores * mask)", "added to the scores (scores + mask), not multiplied"]),
]


@pytest.mark.parametrize("a, mistake, grade_id, visible, feedback", SHARPENED, ids=[m[1] for m in SHARPENED])
def test_a_misleading_message_now_names_the_fault(tmp_path, a, mistake, grade_id, visible, feedback):
    stored = json.loads((ROOT / "solutions" / "mistake_signatures.json").read_text())[a]["mistakes"][mistake]
    message = stored["messages"][grade_id]
    assert all(phrase in message for phrase in feedback), f"the feedback for {mistake} says: {message}"
    if visible is None:  # the visible test's message already named it
        return
    answers = solution_answers(read_nb(ROOT / "solutions" / a / f"{a}.ipynb"))
    answers |= Assignment.at(ROOT, a).mistakes()[mistake]["cells"]
    path = tmp_path / f"{a}.ipynb"
    nbformat.write(filled(read_nb(ROOT / "exercises" / a / f"{a}.ipynb"), answers), path)
    for shipped in (ROOT / "exercises" / a).glob("*.py"):  # inputs.py: the notebook imports it
        shutil.copy(shipped, tmp_path)
    rc, out = validate(path)
    reason = next((line for line in out.splitlines() if line.startswith("1. ")), "")
    assert rc == 1 and f", test {grade_id}: AssertionError: " in reason, out[:2000]
    assert all(phrase in reason for phrase in visible), f"validate says, for {mistake}: {reason}"
