"""A submission is data (bertgrader.submission) and its nbgrader metadata is the release's
(bertgrader.preprocessors.CleanSubmission): the fast checks. The attacked class of
tests/test_grading_security.py grades such submissions end to end."""
from __future__ import annotations

import os
import subprocess
import sys

import nbformat
import pytest

from bertgrader.preprocessors import CleanSubmission
from bertgrader.submission import SubmissionRefused, check_submission
from nbgrader_harness import REPO, read_nb

A = "08_masking"


def _plain(tmp_path):
    folder = tmp_path / "submitted" / "alice" / A
    (folder / "data").mkdir(parents=True)
    (folder / f"{A}.ipynb").write_text("{}")
    (folder / "data" / "notes.txt").write_text("mine")
    return folder


def test_plain_files_in_plain_folders_pass(tmp_path):
    check_submission(_plain(tmp_path), inside=tmp_path / "submitted")


@pytest.mark.parametrize("make, kind", [
    (lambda f: (f / "notes.py").symlink_to(REPO / "solutions" / A / "hidden_tests.py"), "a symbolic link"),
    (lambda f: (f / "data" / "zero").symlink_to("/dev/zero"), "a symbolic link"),
    (lambda f: os.mkfifo(f / "pipe"), "a FIFO"),
    (lambda f: ((f / f"{A}.ipynb").unlink(), (f / f"{A}.ipynb").symlink_to(REPO / "solutions" / A / f"{A}.ipynb")),
     "a symbolic link"),
    (lambda f: (f / "data" / "loop").symlink_to(f), "a symbolic link"),
])
def test_a_link_fifo_or_device_is_refused_naming_it(tmp_path, make, kind):
    folder = _plain(tmp_path)
    make(folder)
    with pytest.raises(SubmissionRefused, match=kind) as e:
        check_submission(folder, inside=tmp_path / "submitted")
    assert str(folder) in str(e.value)


def test_a_linked_submission_folder_is_refused(tmp_path):
    elsewhere = _plain(tmp_path / "elsewhere")
    (tmp_path / "submitted" / "bob").mkdir(parents=True)
    (tmp_path / "submitted" / "bob" / A).symlink_to(elsewhere)
    with pytest.raises(SubmissionRefused, match="bob/08_masking is a symbolic link"):
        check_submission(tmp_path / "submitted" / "bob" / A, inside=tmp_path / "submitted")


def test_the_class_runner_refuses_a_linked_submission_before_reading_it(tmp_path):
    """python -m bertgrader: the refusal is that student's, named in the summary; a FIFO is never opened (the
    run would block on it), and no kernel is started for nothing."""
    import shutil

    shutil.copy(REPO / "nbgrader_config.py", tmp_path / "nbgrader_config.py")
    shutil.copytree(REPO / "solutions" / A, tmp_path / "solutions" / A)
    folder = tmp_path / "submitted" / "mallory" / A
    folder.mkdir(parents=True)
    os.mkfifo(folder / f"{A}.ipynb")
    proc = subprocess.run([sys.executable, "-m", "bertgrader", A, "--workers", "1", "--root", str(tmp_path)],
                          capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert f"mallory/{A}: {folder / (A + '.ipynb')} is a FIFO" in proc.stdout, proc.stdout


def _release_cells():
    return read_nb(REPO / "solutions" / A / f"{A}.ipynb")


def _clean(nb):
    pp = CleanSubmission(source_root=str(REPO / "solutions"))
    return pp.preprocess(nb, {"nbgrader": {"assignment": A, "notebook": A}})[0]


@pytest.mark.parametrize("meta", [{"schema_version": 4}, {}, "not a dict", {"grade_id": "made_up", "grade": True,
                                                                            "points": 50, "schema_version": 3}])
def test_a_cell_the_student_added_loses_its_nbgrader_metadata(meta):
    nb = _release_cells()
    extra = nbformat.v4.new_code_cell("x = 1")
    extra.metadata["nbgrader"] = meta
    nb.cells.insert(2, extra)
    cleaned = _clean(nb)
    assert "nbgrader" not in cleaned.cells[2].metadata
    release = _release_cells()
    assert [c.metadata.get("nbgrader") for c in cleaned.cells if c is not cleaned.cells[2]] == \
           [c.metadata.get("nbgrader") for c in release.cells]


def test_a_copied_graded_cell_stays_an_ordinary_cell_and_the_release_metadata_wins():
    nb = _release_cells()
    graded = next(c for c in nb.cells if c.metadata.get("nbgrader", {}).get("grade"))
    copy = nbformat.v4.new_code_cell("assert True")  # a new cell id, as JupyterLab gives a pasted cell
    copy.metadata["nbgrader"] = dict(graded.metadata["nbgrader"], points=100, locked=False)
    nb.cells.insert(1, copy)
    graded.metadata["nbgrader"]["points"] = 1000  # the student edited the real one's metadata too
    cleaned = _clean(nb)
    assert "nbgrader" not in cleaned.cells[1].metadata
    release = {c.id: c.metadata.get("nbgrader") for c in _release_cells().cells}
    assert {c.id: c.metadata.get("nbgrader") for c in cleaned.cells if c.id in release} == release


def test_the_class_summary_writes_control_characters_out():
    """A student's folder name or error message holding terminal escapes cannot rewrite the instructor's
    terminal: python -m bertgrader's summary writes every control character out."""
    import io
    from pathlib import Path

    from bertgrader.classes.run import Outcome, Plan, print_summary

    evil = "\x1b[2J\x1b[1;1Hmallory"
    results = [{"student": evil, "assignment": A, "status": "graded", "score": 1.0, "max_score": 8.0, "seconds": 1.0,
                "lost": ["test_select"], "problems": ["test_select: raised ValueError: \x1b[31mred\r\x1b[Kgone"]},
               {"student": "eve\x07", "assignment": A, "status": "failed", "seconds": 0.0, "why": "bad\x1b]0;title\x07"},
               {"student": "alice", "assignment": A, "status": "graded", "score": 8.0, "max_score": 8.0, "seconds": 1.0}]
    plan = Plan(Path("."), [A], "sqlite:///x.db", "bert-course", True, None, in_shard=3)
    out = io.StringIO()
    print_summary(Outcome(plan, 1, results=results, seconds=3.0), out=out)
    text = out.getvalue()
    assert not any(ord(c) < 32 and c != "\n" or 127 <= ord(c) < 160 for c in text), repr(text)
    assert "\\x1b[2J\\x1b[1;1Hmallory" in text and "eve\\x07" in text and "alice" in text
