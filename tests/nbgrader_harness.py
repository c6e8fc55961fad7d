"""Run real nbgrader on a throw-away copy of the course, and read the grades back.

The tests' binding of bertgrader.trial (which the benchmarks use too) to this repository:

    course = Course(tmp_path, ["01_positioning"])        # copies nbgrader_config.py and solutions/<a>
    course.generate()                                      # nbgrader generate_assignment, every assignment
    course.submit("alice", "01_positioning", solution_submission(course, "01_positioning"))
    course.submit("bob", "01_positioning", filled(course.release("01_positioning"), {"causal": "..."}))
    course.autograde("01_positioning")                     # ONE nbgrader command grades every student
    course.scores("01_positioning", "bob")                 # {"test_causal": 0.0, ...} per graded cell

An assignment's files, its notebooks' cells and its named mistakes are bertgrader.assignment's (the
module `make notebooks` and the class runner use too). Named mistakes live next to each source notebook,
in ``solutions/<a>/mistakes.py`` (nbgrader_config.py keeps that file out of the release), one ``# %%`` cell
each (docs/exercises.md); load_mistakes() reads them as

    {
        "causal_mask_in_bert": {                 # a valid nbgrader student id
            "why": "BERT hides only padding, not the future",
            "cells": {"bidirectional": "def bidirectional_visibility(m): ..."},   # solution grade_id -> code
            "loses": ["test_bidirectional"],     # graded cells that must score 0; every other keeps its points
        },
    }

A mistake submission is the release notebook with every solution cell answered correctly except the ones
the mistake replaces, so exactly one behaviour is wrong.
"""
from __future__ import annotations

import copy
import os
from pathlib import Path

import nbformat

from bertgrader import trial
from bertgrader.assignment import (  # noqa: F401 (re-exported for the tests)
    Assignment, autograded_points, filled, grade_id, is_graded, is_solution, is_written, points, read_nb,
    rubric, solution_answers, written_points,
)
from bertgrader.assignment import assignments as course_assignments
from bertgrader.trial import (  # noqa: F401 (re-exported for the tests)
    Run, grade_classes, mistake_submission, notebook_json, solution_submission,
)

REPO = Path(__file__).resolve().parents[1]
SOLUTIONS = REPO / "solutions"
EXERCISES = REPO / "exercises"


def assignments() -> list[str]:
    """Assignment ids: the folders of solutions/ that hold a notebook of the same name.
    NBGRADER_TEST_ASSIGNMENTS="01_positioning,03_sizes" narrows the list (to work on a few)."""
    found = course_assignments(REPO)
    only = [a for a in os.environ.get("NBGRADER_TEST_ASSIGNMENTS", "").split(",") if a]
    return [a for a in found if a in only] if only else found


def load_mistakes(assignment: str) -> dict:
    return trial.load_mistakes(REPO, assignment)


def replace_cell(nb, gid: str, src: str) -> nbformat.NotebookNode:
    """A copy of ``nb`` with the cell ``gid`` (any kind, a locked test cell too) holding ``src``."""
    nb = copy.deepcopy(nb)
    [cell] = [c for c in nb.cells if grade_id(c) == gid]
    cell.source = src
    return nb


class Course(trial.Course):
    """A temporary nbgrader course made from this repository (``assignments()`` by default)."""

    def __init__(self, root: Path, assignment_ids: list[str] | None = None):
        super().__init__(root, assignment_ids if assignment_ids is not None else assignments(), origin=REPO)
