"""A fresh clone as an instructor meets it: exercises/ committed, no gradebook.db (git-ignored). The README's
`nbgrader autograde <assignment>` grades there without step 1 having been run first: the configuration puts
the missing assignment into the gradebook from solutions/ (nbgrader alone stopped with "No assignment with ID
... exists in the database"), and leaves the committed exercises/ as they are. The clone's own bertlib and
bertgrader are what the grader imports (nbgrader runs from the clone), while the virtual environment's editable
install points at this repository, another checkout: the kernel must import the clone's copies too (it died
before replying, every one of them, when it imported a bertlib the sandbox does not show). The assignment is the one
nbgrader itself read from its command line, in each form it accepts (bertgrader.config)."""
from __future__ import annotations

import hashlib
import shutil
import sys

import pytest

from nbgrader_harness import EXERCISES, REPO, Course, autograded_points, solution_submission

A = "01_positioning"


def _digest(folder) -> str:
    return hashlib.sha256(b"".join(p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file())).hexdigest()


@pytest.mark.skipif(sys.platform != "linux", reason="the sandbox is Linux-only")
@pytest.mark.parametrize("named", [[A], ["--assignment", A], [f"--assignment={A}"]],
                         ids=["positional", "--assignment X", "--assignment=X"])
def test_plain_autograde_on_a_fresh_clone_registers_the_assignment_and_grades(tmp_path, named):
    course = Course(tmp_path / "course", [A])
    shutil.copytree(EXERCISES / A, course.root / "exercises" / A)  # committed, as in a clone
    for package in ("bertlib", "bertgrader"):
        shutil.copytree(REPO / package, course.root / package, ignore=shutil.ignore_patterns("__pycache__"))
    before = _digest(course.root / "exercises")
    assert not (course.root / "gradebook.db").exists()
    course.submit("alice", A, solution_submission(course, A))

    run = course.nbgrader("autograde", *named, "--force")

    assert f"{A} is not in the gradebook yet: registering it from solutions/{A}" in run.log, run.log[-3000:]
    assert "No assignment" not in run.log
    assert course.total(A, "alice") == sum(autograded_points(course.source(A)).values()) > 0
    assert _digest(course.root / "exercises") == before  # the release folder untouched
    # graded again: nothing registered twice
    assert "registering" not in course.nbgrader("autograde", *named, "--force").log
