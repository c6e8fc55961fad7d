"""A submission is data (bertgrader.submission) and its nbgrader metadata is the release's
(bertgrader.preprocessors.CleanSubmission): the fast checks. The attacked class of
tests/test_grading_security.py grades such submissions end to end."""
from __future__ import annotations

import json
import os
import re
import subprocess
import sys

import nbformat
import pytest

from bertgrader.preprocessors import CleanSubmission
from bertgrader.submission import (
    MAX_NOTEBOOK_BYTES, SubmissionRefused, check_notebook_file, check_student_id, check_submission,
)
from nbgrader_harness import REPO, read_nb

A = "08_masking"


def _plain(tmp_path):
    folder = tmp_path / "submitted" / "alice" / A
    (folder / "data").mkdir(parents=True)
    (folder / f"{A}.ipynb").write_text(nbformat.writes(nbformat.v4.new_notebook()))
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


# --------------------------------------------------------------------------- a notebook checked as bytes
def _v3_heading_bomb(level: int = 10**10) -> str:
    """3 KB on disk; nbformat's upgrade to v4 would write '#' * level for each heading cell."""
    cells = [{"cell_type": "heading", "level": level, "source": "x", "metadata": {}} for _ in range(20)]
    return json.dumps({"nbformat": 3, "nbformat_minor": 0, "metadata": {}, "worksheets": [{"cells": cells}]})


def _nested(depth: int) -> str:
    return json.dumps({"nbformat": 4, "nbformat_minor": 5, "metadata": {}, "cells": []})[:-1] + \
        ', "deep": ' + "[" * depth + "]" * depth + "}"


@pytest.mark.parametrize("text, why", [
    (_v3_heading_bomb(), "is nbformat 3: only nbformat 4"),
    (json.dumps({"nbformat": 5, "nbformat_minor": 0, "cells": []}), "is nbformat 5"),
    (json.dumps({"nbformat": "4", "cells": []}), "is nbformat '4'"),
    (json.dumps({"cells": []}), "no nbformat field"),
    (json.dumps([1, 2]), "no nbformat field"),
    ("{not json", "is not JSON"),
    (_nested(40), "nested more than 32 deep"),
    (json.dumps({"nbformat": 4, "nbformat_minor": 5, "metadata": {}, "cells": [[]] * 600_000}),
     "holds more than 500,000 JSON lists and objects"),
    (_nested(5_000), "nested more than 32 deep"),
    (json.dumps({"nbformat": 4, "nbformat_minor": 5, "metadata": {}, "cells": [], "big": "x" * (8 * 2**20 + 1)}),
     "holds a string of 8,388,609 characters"),
    (json.dumps({"nbformat": 4, "nbformat_minor": 5, "metadata": {"x": [""] * 1_100_000}, "cells": []}),
     "more than 1,000,000 JSON strings"),
])
def test_a_notebook_is_checked_as_bytes_before_nbformat_reads_it(tmp_path, text, why):
    path = tmp_path / "08_masking.ipynb"
    path.write_text(text)
    with pytest.raises(SubmissionRefused, match=re.escape(why)) as e:
        check_notebook_file(path)
    assert str(path) in str(e.value)


def test_a_notebook_over_the_size_cap_is_refused_without_being_read(tmp_path, monkeypatch):
    import builtins

    path = tmp_path / "big.ipynb"
    with open(path, "wb") as f:
        f.truncate(MAX_NOTEBOOK_BYTES + 1)  # sparse: no disk used
    opened = []
    monkeypatch.setattr(builtins, "open", lambda *a, **k: opened.append(a) or (_ for _ in ()).throw(AssertionError))
    with pytest.raises(SubmissionRefused, match="over the 32 MiB a notebook may be"):
        check_notebook_file(path)
    assert not opened


def test_not_utf8_is_refused(tmp_path):
    path = tmp_path / "n.ipynb"
    path.write_bytes(b'{"nbformat": 4, "cells": ["\xff"]}')
    with pytest.raises(SubmissionRefused, match="is not UTF-8"):
        check_notebook_file(path)


def test_every_notebook_of_the_course_passes_the_check():
    notebooks = sorted((REPO / "solutions").glob("*/*.ipynb")) + sorted((REPO / "exercises").glob("*/*.ipynb"))
    assert len(notebooks) >= 20
    for path in notebooks:
        check_notebook_file(path)


def test_check_submission_checks_its_notebooks(tmp_path):
    folder = _plain(tmp_path)
    (folder / f"{A}.ipynb").write_text(_v3_heading_bomb())
    with pytest.raises(SubmissionRefused, match="only nbformat 4"):
        check_submission(folder, inside=tmp_path / "submitted")


@pytest.mark.parametrize("student_id, why", [
    ("mal\udcffory", "not UTF-8"), ("a/b", "path separator"), ("a\\b", "path separator"), ("x" * 101, "101 characters"),
    ("eve\x1b[2J", "control"), ("eve\u202e", "invisible"), ("..", "'.' or '..'"), ("", "empty"), (" bob", "space"),
    ("b*", "wildcard"), ("<img src=x onerror=alert(1)>", "markup"), ('a"b', "markup"), ("a&b", "markup"),
])
def test_a_student_id_that_is_not_a_plain_name_is_refused_naming_the_folder(student_id, why):
    with pytest.raises(SubmissionRefused, match=re.escape(why)) as e:
        check_student_id(student_id, folder=f"submitted/{student_id}/{A}")
    assert repr(f"submitted/{student_id}/{A}") in str(e.value)


@pytest.mark.parametrize("student_id", ["alice", "bob_2", "zoë", "李雷", "o'brien", "anne-marie", "jean paul"])
def test_plain_student_ids_pass(student_id):
    check_student_id(student_id)


def test_the_class_runner_skips_a_folder_that_is_not_a_student_id_and_grades_the_rest(tmp_path):
    """python -m bertgrader stopped with UnicodeEncodeError before anyone was graded when a folder of
    submitted/ was not UTF-8: now that folder (and one holding a terminal escape) is named and skipped."""
    import shutil

    shutil.copy(REPO / "nbgrader_config.py", tmp_path / "nbgrader_config.py")
    shutil.copytree(REPO / "solutions" / A, tmp_path / "solutions" / A)
    solved = (REPO / "solutions" / A / f"{A}.ipynb").read_bytes()
    for name in (b"mal\xffory", b"eve\x1b[2J", b"alice"):
        folder = os.fsencode(tmp_path / "submitted") + b"/" + name + b"/" + A.encode()
        os.makedirs(folder)
        with open(folder + b"/" + A.encode() + b".ipynb", "wb") as f:
            f.write(solved)
    proc = subprocess.run([sys.executable, "-m", "bertgrader", A, "--workers", "1", "--root", str(tmp_path)],
                          capture_output=True, timeout=900, cwd=tmp_path)
    out = proc.stdout.decode("utf-8")  # strict: the summary itself is UTF-8
    assert proc.returncode == 1, out + proc.stderr.decode("utf-8", "replace")
    assert "its name is not UTF-8" in out and "mal\\udcffory" in out, out
    assert "control or invisible character" in out, out
    summary = json.loads(out.strip().splitlines()[-1])
    assert summary["graded"] == 1 and len(summary["failed"]) == 2, summary


def test_a_notebook_of_too_many_cells_is_refused(tmp_path):
    path = tmp_path / "n.ipynb"
    path.write_text(nbformat.writes(nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell("x") for _ in range(1001)])))
    with pytest.raises(SubmissionRefused, match="has 1,001 cells"):
        check_notebook_file(path)


def test_a_pass_over_a_notebook_that_never_ends_is_stopped_and_only_that_one(monkeypatch):
    """The watchdog every nbgrader converter's pass over one notebook runs under: a step that would never
    end (here a sleep of an hour, standing in for a runaway parse) raises OverBudget at the budget; the
    budget is then disarmed, so the next student's pass runs as usual."""
    import time

    from nbgrader.converters import GenerateFeedback

    from bertgrader import submission

    class Stuck:
        calls = []

        def convert_single_notebook(self, filename):
            self.calls.append(filename)
            if filename == "stuck.ipynb":
                time.sleep(3600)
            return "done"

    submission._install_watchdog(Stuck)
    monkeypatch.setattr(submission, "budget_seconds", lambda converter: 0.5)
    with pytest.raises(submission.OverBudget, match="stuck.ipynb took more than 0 s"):
        Stuck().convert_single_notebook("stuck.ipynb")
    assert Stuck().convert_single_notebook("next.ipynb") == "done"
    import signal

    assert signal.getitimer(signal.ITIMER_REAL)[0] == 0
    assert submission.MARGIN_SECONDS == 300
    monkeypatch.undo()
    assert submission.budget_seconds(GenerateFeedback()) == 300


def test_a_pass_whose_memory_runs_away_is_stopped_and_only_that_one(monkeypatch):
    """The same watchdog's memory budget: a pass that keeps allocating (standing in for a parse that blows
    up) raises OverMemory once the grader's resident memory has grown past the budget (lowered here to
    64 MiB), long before it would have taken what it asked for; the next student's pass runs as usual."""
    import signal
    import time

    from bertgrader import submission

    handler_before = signal.getsignal(signal.SIGUSR1)

    class Greedy:
        held = []

        def convert_single_notebook(self, filename):
            if filename == "greedy.ipynb":
                for _ in range(64):  # 64 x 16 MiB = 1 GiB, touched so that it is resident
                    self.held.append(bytearray(16 * 2**20))
                    time.sleep(0.02)
            return "done"

    submission._install_watchdog(Greedy)
    monkeypatch.setattr(submission, "MEMORY_BUDGET_BYTES", 64 * 2**20)
    with pytest.raises(submission.OverMemory, match=r"greedy.ipynb made the grader's memory grow by [\d,]+ MiB, "
                       r"more than its budget of 64 MiB"):
        Greedy().convert_single_notebook("greedy.ipynb")
    assert 48 * 2**20 <= len(Greedy.held) * 16 * 2**20 < 2**30  # stopped past the budget, before the whole GiB
    Greedy.held.clear()
    assert Greedy().convert_single_notebook("next.ipynb") == "done"
    assert signal.getsignal(signal.SIGUSR1) == handler_before  # the handler put back
