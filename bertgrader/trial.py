"""A throw-away copy of a course, graded by real nbgrader: what the grading tests and benchmarks stand on.

    course = Course(tmp_path, ["01_positioning"], origin=repo)  # copies nbgrader_config.py and solutions/<a>
    course.generate()                                      # nbgrader generate_assignment, every assignment
    course.submit("alice", "01_positioning", solution_submission(course, "01_positioning"))
    course.submit("bob", "01_positioning", filled(course.release("01_positioning"), {"causal": "..."}))
    course.autograde("01_positioning")                     # ONE nbgrader command grades every student
    course.scores("01_positioning", "bob")                 # {"test_causal": 0.0, ...} per graded cell

``origin`` is the course to copy (the folder holding nbgrader_config.py and solutions/). tests/nbgrader_harness.py
binds it to the repository for the tests; the benchmarks pass their own checkout. A mistake submission is the
release notebook with every solution cell answered correctly except the ones the mistake replaces
(``Assignment.mistakes()``), so exactly one behaviour is wrong.
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import nbformat

from bertgrader.assignment import Assignment, filled, read_nb, solution_answers
from bertgrader.assignment import assignments as course_assignments
from bertgrader.i18n import ENGLISH, LANGUAGES, catalogue
from bertgrader.translated import release_folder, write_release


def _venv_bin_on_path() -> None:
    """nbgrader's gradebook shells out to `alembic`, and the `nbgrader` command must be the one of this
    Python: both live next to the interpreter (the virtualenv's bin/), which may not be on PATH."""
    here = str(Path(sys.executable).parent)
    if here not in os.environ.get("PATH", "").split(os.pathsep):
        os.environ["PATH"] = here + os.pathsep + os.environ.get("PATH", "")


def load_mistakes(origin: Path, assignment: str) -> dict:
    """The named mistakes of ``assignment`` (solutions/<a>/mistakes.py), each checked to say what it loses."""
    mistakes = Assignment.at(origin, assignment).mistakes()
    for name, m in mistakes.items():
        assert set(m) == {"why", "cells", "loses"} and m["cells"] and m["loses"], f"{assignment}/{name}"
    return mistakes


# ----------------------------------------------------------------------------------------------- course
@dataclass
class Run:
    """One nbgrader command: its exit status and everything it logged."""

    args: list[str]
    returncode: int
    log: str


class Course:
    """A temporary nbgrader course at ``root``: ``origin``'s nbgrader_config.py and its solutions/<a> for
    each of ``assignment_ids`` (default: every assignment of ``origin``)."""

    def __init__(self, root: Path, assignment_ids: list[str] | None = None, *, origin: Path):
        _venv_bin_on_path()
        self.root, self.origin = Path(root), Path(origin)
        self.assignments = (list(assignment_ids) if assignment_ids is not None
                            else course_assignments(self.origin))
        self.root.mkdir(parents=True, exist_ok=True)
        # The config finds the course root from its own location, so the copy needs no edit.
        shutil.copy(self.origin / "nbgrader_config.py", self.root / "nbgrader_config.py")
        for a in self.assignments:
            shutil.copytree(self.origin / "solutions" / a, self.root / "solutions" / a,
                            ignore=shutil.ignore_patterns("__pycache__", ".ipynb_checkpoints"))
            for language in LANGUAGES:  # the hidden tests' messages in each language (bertgrader.i18n)
                po = catalogue(self.origin, a, language)
                if po.is_file():
                    catalogue(self.root, a, language).parent.mkdir(parents=True, exist_ok=True)
                    shutil.copy(po, catalogue(self.root, a, language))
        self.runs: list[Run] = []

    # --- commands
    def _module(self, module: str, args: list[str], ok: tuple[int, ...], timeout: float) -> Run:
        """``python -m <module> <args>`` in the course, offline; an exit status outside ``ok`` raises."""
        env = dict(os.environ, HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1", TOKENIZERS_PARALLELISM="false",
                   MPLBACKEND="Agg")
        proc = subprocess.run([sys.executable, "-m", module, *args], cwd=self.root, env=env, timeout=timeout,
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        run = Run(list(args) if module == "nbgrader" else [module, *args], proc.returncode, proc.stdout)
        self.runs.append(run)
        if ok and proc.returncode not in ok:
            raise RuntimeError(f"{module} {' '.join(args)} exited {proc.returncode}:\n{proc.stdout[-4000:]}")
        return run

    def nbgrader(self, *args: str, check: bool = True, timeout: float = 900) -> Run:
        return self._module("nbgrader", list(args), (0,) if check else (), timeout)

    def generate(self, assignment: str = "*") -> Run:
        """nbgrader generate_assignment (``*``: every assignment of the course, in one command), then each
        assignment's student version in every translation (exercises/<language>/<a>/, as make exercises)."""
        run = self.nbgrader("generate_assignment", assignment, "--force")
        for a in self.assignments if assignment == "*" else [assignment]:
            for language in LANGUAGES:
                if Assignment.at(self.root, a).translated_notebook(language).is_file():
                    write_release(self.root, a, language)
        return run

    def autograde(self, assignment: str, *, check: bool = False) -> Run:
        """Autograde every submitted student of ``assignment`` in one command. A failing student makes
        nbgrader exit non-zero after grading the others, so by default that is not an error here."""
        return self.nbgrader("autograde", assignment, "--force", check=check)

    def grade_class(self, *args: str, timeout: float = 3600) -> Run:
        """``python -m bertgrader <args>`` (the class runner) on this course; exit status 1 (a submission
        that could not be graded) is not an error here: the tests read the gradebook."""
        return self._module("bertgrader", [*args, "--root", str(self.root)], (0, 1), timeout)

    def generate_feedback(self, assignment: str) -> Run:
        return self.nbgrader("generate_feedback", assignment, "--force")

    def export_csv(self, path: Path | None = None) -> Path:
        path = Path(path or self.root / "grades.csv")
        self.nbgrader("export", "--to", str(path))
        return path

    def clone(self, root: Path) -> "Course":
        """A copy of this course (gradebook included) at ``root``: a second lane to grade in parallel,
        with its own database, so two nbgrader processes never write to the same SQLite file."""
        shutil.copytree(self.root, root)
        twin = Course.__new__(type(self))
        twin.root, twin.origin, twin.assignments, twin.runs = Path(root), self.origin, list(self.assignments), []
        return twin

    # --- paths and notebooks
    def source(self, assignment: str, language: str = ENGLISH) -> nbformat.NotebookNode:
        return read_nb(Assignment.at(self.root, assignment).translated_notebook(language))

    def release_path(self, assignment: str, language: str = ENGLISH) -> Path:
        return release_folder(self.root, assignment, language) / f"{assignment}.ipynb"

    def release(self, assignment: str, language: str = ENGLISH) -> nbformat.NotebookNode:
        return read_nb(self.release_path(assignment, language))

    def submit(self, student: str, assignment: str, notebook) -> Path:
        """Place a submission at submitted/<student>/<assignment>/<assignment>.ipynb. ``notebook`` is a
        NotebookNode, or str/bytes written as they are (to submit a broken file)."""
        path = self.root / "submitted" / student / assignment / f"{assignment}.ipynb"
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(notebook, bytes):
            path.write_bytes(notebook)
        elif isinstance(notebook, str):
            path.write_text(notebook, encoding="utf-8")
        else:
            path.write_text(nbformat.writes(notebook), encoding="utf-8")
        return path

    def autograded(self, student: str, assignment: str) -> nbformat.NotebookNode:
        return read_nb(self.root / "autograded" / student / assignment / f"{assignment}.ipynb")

    # --- grades
    def _gradebook(self):
        from nbgrader.api import Gradebook

        return Gradebook(f"sqlite:///{self.root / 'gradebook.db'}", course_id="bert-course")

    def scores(self, assignment: str, student: str) -> dict[str, float] | None:
        """{graded test cell id: score} of one student's notebook (the parts the grader scores; a written
        answer is graded by hand: ``written``), or None if nbgrader recorded no grades."""
        from nbgrader.api import MissingEntry

        with self._gradebook() as gb:
            try:
                nb = gb.find_submission_notebook(assignment, assignment, student)
            except MissingEntry:
                return None
            grades = {g.name: g.score for g in nb.grades if g.cell.cell_type == "code"}
        if any(s is None for s in grades.values()):  # submission exists, but never graded
            return None
        return grades

    def written(self, assignment: str, student: str) -> dict[str, dict] | None:
        """{written answer's id: {"score", "auto_score", "manual_score", "extra_credit", "needs_manual_grade",
        "comment"}} of one student's notebook, as the gradebook holds them (None: no submission)."""
        from nbgrader.api import MissingEntry

        with self._gradebook() as gb:
            try:
                nb = gb.find_submission_notebook(assignment, assignment, student)
            except MissingEntry:
                return None
            comments = {c.name: c.comment for c in nb.comments}
            return {g.name: {"score": g.score, "auto_score": g.auto_score, "manual_score": g.manual_score,
                             "extra_credit": g.extra_credit, "needs_manual_grade": g.needs_manual_grade,
                             "comment": comments.get(g.name)}
                    for g in nb.grades if g.cell.cell_type == "markdown"}

    def total(self, assignment: str, student: str) -> float | None:
        grades = self.scores(assignment, student)
        return None if grades is None else sum(grades.values())


def grade_classes(course: Course, classes: dict, jobs: int | None = None) -> dict[str, tuple[Course, Run]]:
    """Submit and grade several assignments' classes: ``classes`` is {assignment: {student: notebook}}.

    One ``python -m bertgrader all --workers N`` command grades them all, as an instructor would: the class
    runner's own code (its worker pool, nbgrader's autograde in each worker, the gradebook). ``jobs``
    workers (default: 2, or the CPU count if smaller; NBGRADER_TEST_JOBS overrides). Returns {assignment:
    (course, the Run)}. ``course`` must already have the release generated.
    """
    jobs = jobs or int(os.environ.get("NBGRADER_TEST_JOBS", min(2, os.cpu_count() or 1)))
    for a, students in classes.items():
        for student, nb in students.items():
            course.submit(student, a, nb)
    run = course.grade_class("all", "--workers", str(jobs))
    return {a: (course, run) for a in classes}


def solution_submission(course: Course, assignment: str, language: str = ENGLISH) -> nbformat.NotebookNode:
    """The student version (in ``language``) with every solution cell answered with the instructor's solution."""
    return filled(course.release(assignment, language), solution_answers(course.source(assignment, language)))


def mistake_submission(course: Course, assignment: str, mistake: dict, language: str = ENGLISH) -> nbformat.NotebookNode:
    """The solution submission (in ``language``) with the cells of one named mistake swapped in."""
    answers = solution_answers(course.source(assignment, language)) | mistake["cells"]
    return filled(course.release(assignment, language), answers)


def notebook_json(path) -> dict:
    return json.loads(Path(path).read_text(encoding="utf-8"))
