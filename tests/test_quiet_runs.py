"""No warning on a run that is not the user's to act on (issue 29 §10): the commands a student and an instructor
run, run as they run them, print no warning line, and a student's traceback has no frame without its source.

- the student's visible tests, the notebook run in a kernel as JupyterLab runs it, with an answer that calls
  bertlib's switched-off function: its traceback shows that function's line (IPython printed "Could not get
  source, probably due dynamically evaluated source code" for it), and nothing else warns;
- the student's ``nbgrader validate`` on that notebook;
- the instructor's feedback for one student, ``python -m bertgrader <a> --feedback`` in a temporary course, and
  ``nbgrader generate_feedback --force`` there (nbconvert's exporter used to make traitlets warn "Config option
  `display_data_priority` not recognized by `SafeFeedback`"; ``--force`` logged each page it replaced as a
  WARNING).
"""
from __future__ import annotations

import re
import sys
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

from bertgrader.assignment import filled, read_nb, solution_answers

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))
from nbgrader_harness import Course, load_mistakes  # noqa: E402
from test_validate_messages import validate  # noqa: E402

A = "01_positioning"
WARNING = re.compile(r"warning|\bwarn\b", re.I)  # Warning:, UserWarning, [App | WARNING], warnings.warn(


def _calls_bertlib() -> nbformat.NotebookNode:
    answers = solution_answers(read_nb(ROOT / "solutions" / A / f"{A}.ipynb")) | load_mistakes(A)["calls_bertlib"]["cells"]
    return filled(read_nb(ROOT / "exercises" / A / f"{A}.ipynb"), answers)


def _warning_lines(text: str) -> list[str]:
    return [line for line in text.splitlines() if WARNING.search(line)]


def test_the_visible_tests_are_quiet_and_show_every_frames_source(tmp_path):
    nb = _calls_bertlib()
    NotebookClient(nb, timeout=120, kernel_name="python3", allow_errors=True,
                   resources={"metadata": {"path": str(tmp_path)}}).execute()
    texts, errors = [], []
    for cell in nb.cells:
        for out in cell.get("outputs", []):
            assert not (out.output_type == "stream" and out.name == "stderr"), f"stderr: {out.text[:500]}"
            if out.output_type == "error":
                errors.append((cell.metadata.get("nbgrader", {}).get("grade_id"), "\n".join(out.traceback)))
            texts.append(out.get("text", "") if out.output_type == "stream" else str(out.get("data", {})))
    assert [gid for gid, _ in errors] == ["test_causal"], [gid for gid, _ in errors]
    traceback = re.sub(r"\x1b\[[0-9;]*m", "", errors[0][1])
    assert "Could not get source" not in traceback, traceback
    assert "raise RuntimeError('bertlib.attention.causal_visibility is switched off in this test" in traceback, traceback
    assert not _warning_lines("\n".join(texts)), _warning_lines("\n".join(texts))


def test_validate_is_quiet(tmp_path):
    nbformat.write(_calls_bertlib(), tmp_path / f"{A}.ipynb")
    rc, out = validate(tmp_path / f"{A}.ipynb")
    assert rc == 1 and "RuntimeError: bertlib.attention.causal_visibility is switched off" in out, out[:2000]
    assert not _warning_lines(out), _warning_lines(out)
    assert "Could not get source" not in out


@pytest.mark.slow
def test_feedback_for_one_student_is_quiet(tmp_path):
    course = Course(tmp_path / "course", [A])
    course.generate(A)
    course.submit("alice", A, _calls_bertlib())
    graded = course.grade_class(A, "--student", "alice", "--feedback")
    assert (course.root / "feedback" / "alice" / A / f"{A}.html").is_file(), graded.log[-2000:]
    again = course.nbgrader("generate_feedback", A, "--force")
    for run in (graded, again):
        assert not _warning_lines(run.log), f"{' '.join(run.args)}: {_warning_lines(run.log)}"
