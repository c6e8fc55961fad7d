"""The gradebook of a class run: any SQLAlchemy URL, safe with several writers, and a ledger of what is done.

Why a ledger: nbgrader writes a submission's grades one cell at a time (``SaveAutoGrades`` commits per
cell), so a grader killed halfway leaves some grades new and others old or empty, and nbgrader's own
tables cannot tell that apart from a finished grading. The table ``course_grade_done`` (in the same
database; nbgrader, ``generate_feedback`` and ``export`` never read it) holds one row per submission
whose grading finished. A worker deletes the row before it grades and writes it back only after nbgrader
has returned and every automatically scored cell has a score. A submission counts as graded when

- its row is there and names the files submitted now (sha-256 of the submission folder: a resubmission
  is graded again),
- every automatically scored cell (a code cell with points that is not an answer cell) has a score in
  nbgrader's tables, and
- its autograded notebook exists (``generate_feedback`` reads it);

anything else is (re)graded, so an interrupted run never leaves a half-written grade counted as done.

Several writers: PostgreSQL (through psycopg 3) handles them itself. SQLite gets a 60 s busy timeout on
every connection (``?timeout=60`` in the URL, which nbgrader passes to SQLAlchemy unchanged) and
write-ahead logging, so readers never block a writer; on one machine that is enough for the few short
transactions a notebook's grading makes (about twenty, each well under a millisecond).
"""
from __future__ import annotations

import contextlib
import datetime as dt
import fcntl
import hashlib
import os
from pathlib import Path

from sqlalchemy import Column, DateTime, Float, MetaData, String, Table, create_engine, delete, insert, select, text
from sqlalchemy.engine import Engine, make_url
from sqlalchemy.exc import ArgumentError, NoSuchModuleError, OperationalError, SQLAlchemyError

SQLITE_TIMEOUT_S = 60
PG_LOCK_KEY = 0x6265727467726164  # "bertgrad": one advisory lock for the set-up of a gradebook

_META = MetaData()
DONE = Table(
    "course_grade_done", _META,
    Column("course_id", String(128), primary_key=True),
    Column("assignment", String(128), primary_key=True),
    Column("student", String(128), primary_key=True),
    Column("digest", String(64), nullable=False),  # sha-256 of the submission folder when it was graded
    Column("graded_at", DateTime(), nullable=False),  # UTC, naive
    Column("seconds", Float(), nullable=False),  # wall time of its grading
    Column("grader", String(128), nullable=False),  # host:pid of the worker that graded it
)
# The submissions the last run could not grade, and why (the class report lists them); a row goes when the
# submission is graded.
FAILED = Table(
    "course_grade_failed", _META,
    Column("course_id", String(128), primary_key=True),
    Column("assignment", String(128), primary_key=True),
    Column("student", String(128), primary_key=True),
    Column("why", String(2000), nullable=False),
    Column("failed_at", DateTime(), nullable=False),  # UTC, naive
)


ADOPTED = "nbgrader autograde"  # the grader named in a ledger row for a grading done by plain nbgrader


class SetupError(RuntimeError):
    """The run cannot start; the message names the problem and what to do about it."""


# ----------------------------------------------------------------------------------------------- URLs
def normalise_url(url: str) -> str:
    """The URL every process of the run uses: PostgreSQL through psycopg 3 (SQLAlchemy's bare
    ``postgresql://`` means psycopg2, which the course does not install), SQLite by absolute path and
    with a busy timeout (a relative path would depend on each process's working directory)."""
    try:
        u = make_url(url)
    except ArgumentError as e:
        raise SetupError(f"--db {url!r} is not a database URL ({e}); e.g. sqlite:////path/gradebook.db or "
                         "postgresql+psycopg://user@host/dbname") from None
    if u.drivername in ("postgresql", "postgres"):
        u = u.set(drivername="postgresql+psycopg")
    if u.get_backend_name() == "sqlite":
        if u.database in (None, "", ":memory:"):
            raise SetupError("an in-memory SQLite database cannot be shared by worker processes: give a file, "
                             "e.g. sqlite:////path/gradebook.db")
        u = u.set(database=str(Path(u.database).expanduser().resolve()))
        if "timeout" not in u.query:
            u = u.update_query_dict({"timeout": str(SQLITE_TIMEOUT_S)})
    return u.render_as_string(hide_password=False)


def describe(url: str) -> str:
    """The URL as it may be printed: without its password."""
    return make_url(url).render_as_string(hide_password=True)


def open_engine(url: str) -> Engine:
    """An engine that has connected once, or a SetupError that says why it cannot."""
    try:
        engine = create_engine(url, future=True)
    except NoSuchModuleError as e:
        raise SetupError(f"SQLAlchemy knows no database called {make_url(url).drivername!r} ({e})") from None
    except ImportError as e:
        hint = " (pip install 'psycopg[binary]')" if "psycopg" in str(e) else ""
        raise SetupError(f"the driver for {make_url(url).drivername} is not installed: {e}{hint}") from None
    try:
        with engine.connect() as conn:
            conn.execute(text("select 1"))
    except (OperationalError, SQLAlchemyError, OSError) as e:
        first = str(getattr(e, "orig", e)).strip().splitlines()[0] if str(e).strip() else type(e).__name__
        raise SetupError(f"cannot connect to the gradebook database {describe(url)}: {first}") from None
    return engine


def use_wal(engine: Engine) -> None:
    """SQLite only: write-ahead logging, so nbgrader's readers and writers in several processes do not
    block each other (it stays on for the file; nbgrader works the same with it)."""
    if engine.dialect.name == "sqlite":
        with engine.connect() as conn:
            conn.exec_driver_sql("PRAGMA journal_mode=WAL")


@contextlib.contextmanager
def setup_lock(engine: Engine):
    """Held while a run creates tables, registers assignments and adds students, so that several runs
    starting at once (N shards on one PostgreSQL) do not race to create the same rows. PostgreSQL: an
    advisory lock, released by the server if the holder dies; SQLite: a file lock on the database's
    folder, released by the kernel; other databases: none (start one run first)."""
    if engine.dialect.name == "postgresql":
        with engine.connect().execution_options(isolation_level="AUTOCOMMIT") as conn:
            conn.execute(text("select pg_advisory_lock(:k)"), {"k": PG_LOCK_KEY})
            try:
                yield
            finally:
                conn.execute(text("select pg_advisory_unlock(:k)"), {"k": PG_LOCK_KEY})
    elif engine.dialect.name == "sqlite":
        fd = os.open(str(Path(engine.url.database).parent), os.O_RDONLY)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            yield
        finally:
            os.close(fd)
    else:
        yield


# ----------------------------------------------------------------------------------------------- submissions
def submission_digest(folder: Path) -> str:
    """sha-256 over the names and bytes of every file of a submission folder, in a fixed order."""
    h = hashlib.sha256()
    for path in sorted(p for p in Path(folder).rglob("*") if p.is_file()):
        h.update(str(path.relative_to(folder)).encode() + b"\0")
        with open(path, "rb") as f:
            for block in iter(lambda: f.read(1 << 20), b""):
                h.update(block)
        h.update(b"\0")
    return h.hexdigest()


# ----------------------------------------------------------------------------------------------- ledger
class Ledger:
    """The ``course_grade_done`` table of one course, and the checks that say a submission is graded."""

    def __init__(self, url: str, course_id: str, engine: Engine | None = None):
        self.engine = engine or create_engine(url, future=True)
        self.course_id = course_id

    def create(self) -> None:
        _META.create_all(self.engine)

    def close(self) -> None:
        self.engine.dispose()

    def _key(self, assignment: str, student: str):
        return (DONE.c.course_id == self.course_id) & (DONE.c.assignment == assignment) & (DONE.c.student == student)

    def forget(self, assignment: str, student: str) -> None:
        """Before grading: from now until ``record``, the submission is not graded."""
        with self.engine.begin() as conn:
            conn.execute(delete(DONE).where(self._key(assignment, student)))

    def record(self, assignment: str, student: str, digest: str, seconds: float, grader: str) -> None:
        """After nbgrader recorded every grade: the submission is graded."""
        with self.engine.begin() as conn:
            conn.execute(delete(DONE).where(self._key(assignment, student)))
            conn.execute(delete(FAILED).where((FAILED.c.course_id == self.course_id)
                                              & (FAILED.c.assignment == assignment) & (FAILED.c.student == student)))
            conn.execute(insert(DONE).values(
                course_id=self.course_id, assignment=assignment, student=student, digest=digest,
                graded_at=dt.datetime.now(dt.timezone.utc).replace(tzinfo=None), seconds=seconds, grader=grader))

    def failed(self, assignment: str, student: str, why: str) -> None:
        """A run could not grade this submission: say why until it is graded."""
        key = ((FAILED.c.course_id == self.course_id) & (FAILED.c.assignment == assignment)
               & (FAILED.c.student == student))
        with self.engine.begin() as conn:
            conn.execute(delete(FAILED).where(key))
            conn.execute(insert(FAILED).values(
                course_id=self.course_id, assignment=assignment, student=student, why=str(why)[:2000],
                failed_at=dt.datetime.now(dt.timezone.utc).replace(tzinfo=None)))

    def failures(self, assignment: str) -> dict[str, str]:
        """{student: why} of the submissions of ``assignment`` a run could not grade (and none has since)."""
        query = select(FAILED.c.student, FAILED.c.why).where(
            (FAILED.c.course_id == self.course_id) & (FAILED.c.assignment == assignment))
        with self.engine.connect() as conn:
            return {r.student: r.why for r in conn.execute(query)}

    def rows(self, assignment: str | None = None) -> list[dict]:
        """Every ledger row of the course (of one assignment), as dicts."""
        query = select(DONE).where(DONE.c.course_id == self.course_id)
        if assignment is not None:
            query = query.where(DONE.c.assignment == assignment)
        with self.engine.connect() as conn:
            return [dict(r._mapping) for r in conn.execute(query)]

    def scored_students(self, assignment: str) -> set[str]:
        """Students of whom nbgrader holds a score for every automatically scored cell of ``assignment``
        (a code cell with points that is not also an answer cell: those may wait for a manual grade)."""
        from nbgrader.api import Assignment, Grade, GradeCell, Notebook, SolutionCell, SubmittedAssignment, \
            SubmittedNotebook

        with self.engine.connect() as conn:
            cells = conn.execute(
                select(GradeCell.id, GradeCell.name, GradeCell.notebook_id, GradeCell.cell_type)
                .join(Notebook, GradeCell.notebook_id == Notebook.id)
                .join(Assignment, Notebook.assignment_id == Assignment.id)
                .where(Assignment.name == assignment, Assignment.course_id == self.course_id)).all()
            answers = {(r.name, r.notebook_id) for r in conn.execute(
                select(SolutionCell.name, SolutionCell.notebook_id)
                .join(Notebook, SolutionCell.notebook_id == Notebook.id)
                .join(Assignment, Notebook.assignment_id == Assignment.id)
                .where(Assignment.name == assignment))}
            auto = {c.id for c in cells if c.cell_type == "code" and (c.name, c.notebook_id) not in answers}
            grades = conn.execute(
                select(SubmittedAssignment.student_id, Grade.cell_id, Grade.auto_score)
                .join(Assignment, SubmittedAssignment.assignment_id == Assignment.id)
                .join(SubmittedNotebook, SubmittedNotebook.assignment_id == SubmittedAssignment.id)
                .join(Grade, Grade.notebook_id == SubmittedNotebook.id)
                .where(Assignment.name == assignment, Assignment.course_id == self.course_id)).all()
        scored: dict[str, set] = {}
        for g in grades:
            scored.setdefault(g.student_id, set())
            if g.auto_score is not None:
                scored[g.student_id].add(g.cell_id)
        return {s for s, ids in scored.items() if auto <= ids}

    def cell_scores(self, assignment: str, student: str) -> dict[str, tuple]:
        """{graded cell: (auto score, manual score)} of one submission ({} if nbgrader holds none): taken
        before and after a regrade, it shows a manual score kept on a cell whose automatic score changed."""
        from nbgrader.api import Assignment, Grade, GradeCell, SubmittedAssignment, SubmittedNotebook

        with self.engine.connect() as conn:
            rows = conn.execute(
                select(GradeCell.name, Grade.auto_score, Grade.manual_score)
                .join(Grade, Grade.cell_id == GradeCell.id)
                .join(SubmittedNotebook, Grade.notebook_id == SubmittedNotebook.id)
                .join(SubmittedAssignment, SubmittedNotebook.assignment_id == SubmittedAssignment.id)
                .join(Assignment, SubmittedAssignment.assignment_id == Assignment.id)
                .where(Assignment.name == assignment, Assignment.course_id == self.course_id,
                       SubmittedAssignment.student_id == student)).all()
        return {r.name: (r.auto_score, r.manual_score) for r in rows}

    def adopt(self, assignment: str, digests: dict[str, str], folders: dict[str, Path], root: Path) -> set[str]:
        """Of the students in ``digests`` not graded by the ledger's conditions, those whose submission now was
        graded by a plain ``nbgrader autograde`` (which writes no ledger row): every automatically scored cell
        has a score, the autograded notebook exists, and it was made from this submission: the hand-in time
        nbgrader recorded equals the submission's timestamp.txt, or, without one, the autograded notebook is
        newer than every file of the submission (nbgrader's own rule for regrading is timestamp.txt). Each
        gets its ledger row (grader ``nbgrader autograde``, no time measured), so it is not graded twice."""
        from nbgrader.api import Assignment, SubmittedAssignment
        from nbgrader.utils import parse_utc

        done = {r["student"]: r["digest"] for r in self.rows(assignment)}
        todo = {s: d for s, d in digests.items() if done.get(s) != d}
        if not todo:
            return set()
        scored = self.scored_students(assignment)
        with self.engine.connect() as conn:
            stamps = dict(conn.execute(
                select(SubmittedAssignment.student_id, SubmittedAssignment.timestamp)
                .join(Assignment, SubmittedAssignment.assignment_id == Assignment.id)
                .where(Assignment.name == assignment, Assignment.course_id == self.course_id)).all())
        adopted = set()
        for s, d in sorted(todo.items()):
            graded = Path(root) / "autograded" / s / assignment / f"{assignment}.ipynb"
            if s not in scored or not graded.is_file():
                continue
            stamp = Path(folders[s]) / "timestamp.txt"
            if stamp.is_file():
                try:
                    same = stamps.get(s) is not None and parse_utc(stamp.read_text().strip()) == parse_utc(stamps[s])
                except (ValueError, OverflowError):
                    same = False
            else:
                files = [p.lstat().st_mtime for p in Path(folders[s]).rglob("*") if p.is_file()]
                same = bool(files) and graded.stat().st_mtime >= max(files)
            if same:
                self.record(assignment, s, d, 0.0, ADOPTED)
                adopted.add(s)
        return adopted

    def graded(self, assignment: str, digests: dict[str, str], root: Path) -> set[str]:
        """Which of the students in ``digests`` ({student: digest of the submission now}) have
        ``assignment`` graded, by the three conditions of this module's docstring."""
        done = {r["student"]: r["digest"] for r in self.rows(assignment)}
        scored = self.scored_students(assignment)
        return {s for s, d in digests.items()
                if done.get(s) == d and s in scored
                and (Path(root) / "autograded" / s / assignment / f"{assignment}.ipynb").is_file()}
