"""nbgrader's side of a class run: the course's configuration, and the worker process that grades.

Each worker imports nbgrader (and torch, for the hidden tests) once, then grades one submission per
request with nbgrader's own ``NbGraderAPI.autograde(assignment, student, force=True)``, configured by
the course's ``nbgrader_config.py`` exactly as ``nbgrader autograde`` is: TrustedExecute, the sandbox,
the hidden tests in this process, the 20 s cell timeout. Importing once saves the 3-4 s an
``nbgrader autograde`` command spends starting, per submission.

A worker runs in its own process group (a Ctrl-C in the terminal reaches only the coordinating process,
which decides what to stop; a kernel that lost its sandbox to a stray SIGINT would otherwise be graded
as dead), dies with its parent (Linux ``PR_SET_PDEATHSIG``), and keeps its own stdout, stderr and
temporary files in the run's scratch folder.
"""
from __future__ import annotations

import copy
import ctypes
import re
import logging
import os
import signal
import socket
import sys
import tempfile
import time
import traceback
from datetime import datetime
from pathlib import Path

from bertgrader.classes.db import Ledger, SetupError

PR_SET_PDEATHSIG = 1
ASSIGNMENT_SOURCE = "solutions"  # nbgrader_config.py: CourseDirectory.source_directory


# ----------------------------------------------------------------------------------------------- config
def course_config(root: Path, db_url: str | None = None, sandbox: bool = True):
    """The course's nbgrader configuration, loaded from ``root/nbgrader_config.py`` as the ``nbgrader``
    command loads it, with this run's gradebook URL and (``sandbox=False``) TrustedExecute.sandbox=none."""
    from traitlets.config.loader import PyFileConfigLoader

    path = Path(root) / "nbgrader_config.py"
    if not path.is_file():
        raise SetupError(f"{root} is not a course root: it has no nbgrader_config.py (pass --root)")
    cfg = PyFileConfigLoader(path.name, path=str(path.parent)).load_config()
    if db_url:
        cfg.CourseDirectory.db_url = db_url
    if not sandbox:
        cfg.TrustedExecute.sandbox = "none"
    return cfg


def course_facts(cfg) -> tuple[str, str]:
    """(course id, gradebook URL) the configuration gives nbgrader (its default: root/gradebook.db)."""
    from nbgrader.coursedir import CourseDirectory

    cd = CourseDirectory(config=cfg)
    return cd.course_id, cd.db_url


def make_api(cfg):
    from nbgrader.apps import NbGraderAPI
    from nbgrader.coursedir import CourseDirectory

    return NbGraderAPI(coursedir=CourseDirectory(config=cfg), config=cfg)


def register_assignment(cfg, assignment: str) -> None:
    """Put an assignment (its notebooks and graded cells) in a gradebook that lacks it, as
    ``nbgrader generate_assignment`` does, but into a throw-away release folder so the committed
    exercises/ are not touched. A fresh PostgreSQL gradebook needs this before anything is graded."""
    cfg = copy.deepcopy(cfg)
    with tempfile.TemporaryDirectory(prefix="course-grade-release-") as release:
        cfg.CourseDirectory.release_directory = release
        result = make_api(cfg).generate_assignment(assignment, force=True, create=True)
    if not result["success"]:
        tail = (result.get("log", "") + result.get("error", ""))[-1500:]
        raise SetupError(f"could not register {assignment} in the gradebook (nbgrader generate_assignment):\n{tail}")


# ----------------------------------------------------------------------------------------------- results
class _Marks(logging.Handler):
    """Remembers when nbgrader logged 'Autograding <notebook>': the moment the kernel starts."""

    def __init__(self):
        super().__init__(logging.INFO)
        self.autograding_at = None
        self.warnings: list[str] = []

    def emit(self, record):
        msg = record.getMessage()
        if self.autograding_at is None and msg.startswith("Autograding "):
            self.autograding_at = record.created
        if record.levelno >= logging.WARNING:
            self.warnings.append(msg)


def _stamp(value: str) -> float:
    return datetime.fromisoformat(value.replace("Z", "+00:00")).timestamp()


def _first_line(text: str, cap: int = 240) -> str:
    lines = [ln.strip() for ln in str(text).strip().splitlines() if ln.strip()]
    line = lines[0] if lines else ""
    return line if len(line) <= cap else line[:cap] + "..."


def _whole(text: str) -> str:
    """A message whole: its lines joined by spaces (the class report wraps it)."""
    return " ".join(ln.strip() for ln in str(text).strip().splitlines() if ln.strip())


def read_autograded(path: Path, whole: bool = False) -> tuple[list[str], list[tuple[float, float]]]:
    """From an autograded notebook: the problems it shows (a graded part that failed, a cell that timed
    out or whose kernel died: each message's first line cut at 240 characters, or ``whole``), and the
    (start, end) times of every cell the kernel executed."""
    said_of = _whole if whole else _first_line
    import nbformat

    nb = nbformat.read(str(path), as_version=4)
    problems, spans = [], []
    for i, cell in enumerate(nb.cells):
        if cell.cell_type != "code":
            continue
        meta = cell.metadata.get("nbgrader", {})
        name = meta.get("grade_id") or f"cell {i}"
        timing = cell.metadata.get("execution", {})
        if "iopub.status.busy" in timing and "shell.execute_reply" in timing:
            spans.append((_stamp(timing["iopub.status.busy"]), _stamp(timing["shell.execute_reply"])))
        errors = [o for o in cell.get("outputs", []) if o.get("output_type") == "error"]
        if not errors:
            continue
        names = {o.get("ename", "") for o in errors}
        first = errors[0]
        if "CellTimeoutError" in names:
            problems.append(f"{name}: ran past the cell time limit and was interrupted")
        elif "DeadKernelError" in names or (meta.get("grade") and not meta.get("solution")):
            said = said_of(first.get("evalue", ""))
            problems.append(f"{name}: {said}" if first.get("ename") in ("CheckFailed", "NotGraded", "DeadKernelError")
                            else f"{name}: {first.get('ename', '')}: {said}")
    return problems, spans


def manual_kept(before: dict, after: dict) -> list[dict]:
    """The cells of a regraded submission whose automatic score changed while a manual score (given in
    Formgrader, which nbgrader keeps across regrades and counts instead) stayed: each needs a look.
    A written answer (no automatic score before or after) graded by hand before the regrade is one too: its
    score was given to the answer as it was, and nbgrader marks it as needing a grade again."""
    out = []
    for cell, (auto, manual) in sorted(after.items()):
        was = before.get(cell)
        if manual is not None and was is not None and (was[0] != auto or (auto is None and was[0] is None)):
            out.append({"cell": cell, "manual": manual, "auto_before": was[0], "auto_now": auto})
    return out


def manual_note(k: dict) -> str:
    def said(x):
        return "none" if x is None else format(x, "g")

    if k["auto_before"] is None and k["auto_now"] is None:
        return (f"{k['cell']}: REVIEW the manual score {said(k['manual'])} of this written answer, given to it "
                "before this regrade (nbgrader marks it as needing a grade again: confirm or change it in Formgrader)")
    return (f"{k['cell']}: REVIEW the manual score {said(k['manual'])}, kept although the automatic score changed "
            f"from {said(k['auto_before'])} to {said(k['auto_now'])} (nbgrader counts the manual score: change or "
            "clear it in Formgrader)")


def phases(started: float, autograding_at: float | None, spans, seconds: float) -> dict[str, float]:
    """Where one submission's time went, in seconds: prepare (nbgrader reads and sanitises the
    submission, the gradebook), kernel (starting the sandboxed kernel), imports (the setup cell: torch
    and bertlib), cells (the student's other cells), grader (the hidden tests, run here and calling into
    the kernel, then nbgrader saving the grades)."""
    if autograding_at is None or not spans:
        return {}
    kernel = max(0.0, spans[0][0] - autograding_at)
    imports = spans[0][1] - spans[0][0]
    cells = sum(end - start for start, end in spans[1:])
    prepare = autograding_at - started
    return {"prepare": prepare, "kernel": kernel, "imports": imports, "cells": cells,
            "grader": max(0.0, seconds - prepare - kernel - imports - cells)}


_EXCEPTION_LINE = re.compile(r"^(?:[\w.]+\.)?(\w+(?:Error|Exception)): (.*)$")
_PLAIN = {"NotJSONError": "not a notebook (not JSON)", "JSONDecodeError": "not a notebook (not JSON)",
          "ValidationError": "not a valid notebook", "NBFormatError": "not a valid notebook"}


def failure_reason(result: dict) -> str:
    """One line saying why nbgrader could not grade a submission: the last exception its log or
    traceback names (not nbgrader's closing 'see the above traceback'), in plain words where known."""
    text = result.get("log", "") + "\n" + result.get("error", "")
    found = [m for m in (_EXCEPTION_LINE.match(ln.strip()) for ln in text.splitlines()) if m]
    found = [m for m in found if m.group(1) != "NbGraderException"]
    if found:
        name, message = found[-1].group(1), found[-1].group(2)
        plain = _PLAIN.get(name)
        return _first_line(f"{plain}: {message}" if plain else f"{name}: {message}")
    errors = [ln[8:] for ln in result.get("log", "").splitlines() if ln.startswith("[ERROR] ")]
    return _first_line(errors[0] if errors else "nbgrader failed without saying why")


# ----------------------------------------------------------------------------------------------- worker
class Grader:
    """One worker's nbgrader, gradebook ledger and course root."""

    def __init__(self, root: Path, cfg, db_url: str):
        self.root = Path(root)
        self.cfg = copy.deepcopy(cfg)
        self.cfg.CourseDirectory.db_url = db_url
        self.course_id, self.db_url = course_facts(self.cfg)
        self.api = make_api(self.cfg)
        self.ledger = Ledger(self.db_url, self.course_id)
        self.name = f"{socket.gethostname()}:{os.getpid()}"

    def grade(self, assignment: str, student: str, digest: str) -> dict:
        """Grade one submission; the result says what happened (it never raises for the submission's
        sake: a broken notebook is a result, not an error of the worker)."""
        started = time.time()
        before = self.ledger.cell_scores(assignment, student)
        self.ledger.forget(assignment, student)
        marks = _Marks()
        self.api.log.addHandler(marks)
        try:
            result = self.api.autograde(assignment, student, force=True, create=True)
        finally:
            self.api.log.removeHandler(marks)
        seconds = time.time() - started
        out = {"assignment": assignment, "student": student, "seconds": seconds, "grader": self.name}
        if not result["success"]:
            return out | {"status": "failed", "why": failure_reason(result)}
        path = self.root / "autograded" / student / assignment / f"{assignment}.ipynb"
        if not path.is_file():
            return out | {"status": "failed", "why": f"nbgrader wrote no autograded notebook at {path}"}
        problems, spans = read_autograded(path)
        problems += [f"{_first_line(w)}" for w in marks.warnings if "checksum" in w and "has changed" in w]
        score = self._score(assignment, student)
        if student not in self.ledger.scored_students(assignment):
            return out | score | {"status": "failed", "why": "nbgrader finished without a score for every graded cell"}
        kept = manual_kept(before, self.ledger.cell_scores(assignment, student))
        problems += [manual_note(k) for k in kept]
        self.ledger.record(assignment, student, digest, seconds, self.name)
        return out | score | {"status": "graded", "problems": problems, "manual_kept": kept,
                              "phases": phases(started, marks.autograding_at, spans, seconds)}

    def _score(self, assignment: str, student: str) -> dict:
        from nbgrader.api import Gradebook

        with Gradebook(self.db_url, self.course_id) as gb:
            sub = gb.find_submission(assignment, student)
            lost = sorted(g.name for nb in sub.notebooks for g in nb.grades
                          if g.score is not None and g.score < g.max_score)
            return {"score": float(sub.score), "max_score": float(sub.max_score), "lost": lost}


def _detach(parent: int) -> None:
    """Own process group (no terminal SIGINT) and death with the coordinator ``parent`` (no orphan keeps
    grading). The coordinator may have died before this ran (a kill during start-up): then exit now."""
    os.setpgrp()
    try:
        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
    except (OSError, AttributeError):
        pass
    if os.getppid() != parent:
        os._exit(1)


def _quiet(log_path: str) -> None:
    """The worker's stdout and stderr (nbgrader's and SQLAlchemy's warnings) go to its log file."""
    fd = os.open(log_path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
    os.dup2(fd, 1)
    os.dup2(fd, 2)
    os.close(fd)


def worker_main(conn, root: str, sandbox: bool, threads: int, scratch: str, parent: int) -> None:
    """A worker process. It imports nbgrader and torch and loads the course's configuration (the slow
    part: it overlaps with the coordinator's own set-up), says ("ready", pid), then takes messages:
    ("db", url) once, before any grading; ("grade", (assignment, student, digest)), answered with
    ("done", result); None, to exit. ("fatal", traceback) if it cannot start."""
    from bertgrader.classes import skip_unused_imports

    skip_unused_imports()  # before nbgrader imports nbformat
    _detach(parent)
    os.makedirs(scratch, exist_ok=True)
    _quiet(os.path.join(scratch, "worker.log"))
    tempfile.tempdir = scratch  # kernel connection files, the stubbed bertlib: removed with the run's folder
    for var in ("OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ[var] = str(threads)
    os.chdir(root)
    try:
        import torch

        torch.set_num_threads(threads)  # the hidden tests' bertlib; the kernels get 1 thread each (sandbox)
        cfg = course_config(Path(root), None, sandbox)
        make_api(cfg)  # imports the rest of nbgrader now
    except BaseException:
        conn.send(("fatal", traceback.format_exc()))
        return
    conn.send(("ready", os.getpid()))
    grader = None
    while True:
        try:
            message = conn.recv()
        except EOFError:
            return
        if message is None:
            if grader is not None:
                grader.ledger.close()
            return
        kind, payload = message
        if kind == "db":
            grader = Grader(Path(root), cfg, payload)
            continue
        started = time.time()
        try:
            conn.send(("done", grader.grade(*payload)))
        except Exception:  # the worker's own failure (the database went away, say): reported, not fatal
            conn.send(("done", {"assignment": payload[0], "student": payload[1], "status": "failed",
                                "seconds": time.time() - started,
                                "why": "the grader failed: " + _first_line(traceback.format_exc().splitlines()[-1])}))
        sys.stdout.flush()
