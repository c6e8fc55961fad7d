"""Grading a whole class at once: ``python -m bertgrader`` (bertgrader/classes/run.py).

One release of assignment 08 and one class of 18 submissions: honest ones (three copies of the solution,
and named mistakes whose lost parts mistakes.py states), broken ones (not JSON, cut short, JSON that is no
notebook), one that hangs (it sleeps forever: the 20 s cell timeout; tests/test_exercises.py's faults
class times out a busy loop), malicious ones (one kills its own kernel, one tries to write the gradebook
and the ledger) and a student id that nbgrader would read as a pattern. Each class here is as small as
what its test asserts needs, and every later run compares with the class graded once (``parallel``).
Asserted, on real runs of the command:

- with 2 workers, every honest score equals serial grading's (``nbgrader autograde``), every bad one is
  reported, nothing is graded twice, and nbgrader's export and feedback read the result;
- interrupted (SIGINT, then SIGKILL as a killed machine would) and resumed: each submission graded
  once, the same final gradebook; a half-written grade, a lost ledger row and a resubmission regraded;
- two shards on one throw-away PostgreSQL: together they grade everyone exactly once, the same
  gradebook as one run;
- SQLite with concurrent writers; every argument error named before any work; --help for every option.
"""
from __future__ import annotations

import argparse
import csv
import glob
import json
import os
import re
import shutil
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import nbformat
import pytest

from nbgrader_harness import REPO, Course, filled, load_mistakes, solution_answers, solution_submission

A = "08_masking"
pytestmark = [pytest.mark.slow, pytest.mark.full, pytest.mark.skipif(sys.platform != "linux", reason="the sandbox is Linux-only")]

SOLVED = [f"honest_{i:02d}" for i in range(1, 4)]  # the same notebook three times: graded alike wherever it runs
# what the grader says of each, after the file's name (bertgrader.submission reads a notebook as bytes first)
BROKEN = {"broken_not_json": "is not JSON", "broken_cut_short": "is not JSON",
          "broken_not_a_notebook": "is not a Jupyter notebook"}
HANGS, KILLS, WRITES, PATTERN = "hangs_forever", "kills_its_kernel", "writes_the_gradebook", "star*"
WRITES_GRADEBOOK = '''
import sqlite3
for sql in ("update grade set auto_score = 99",
            "insert into course_grade_done values ('bert-course', '08_masking', 'x', 'x', '2020-01-01', 0, 'x')"):
    try:
        db = sqlite3.connect("{root}/gradebook.db")
        db.execute(sql)
        db.commit()
        print("WROTE GRADEBOOK")
    except Exception as e:
        print("no gradebook:", type(e).__name__, e)
'''


# ----------------------------------------------------------------------------------------------- helpers
@dataclass
class Graded:
    """One run of the command: exit status, output, its last-line JSON summary, its --report."""

    returncode: int
    stdout: str
    stderr: str
    summary: dict | None
    report: dict | None

    def results(self, status: str | None = None) -> dict[str, dict]:
        rows = (self.report or {}).get("results", [])
        return {r["student"]: r for r in rows if status is None or r["status"] == status}


def _env(**extra) -> dict:
    return dict(os.environ, HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1", TOKENIZERS_PARALLELISM="false",
                MPLBACKEND="Agg", **extra)


def _command(*args) -> list[str]:
    return [sys.executable, "-m", "bertgrader", *args]


def _finish(proc, report: Path | None, timeout: float = 600) -> Graded:
    out, err = proc.communicate(timeout=timeout)
    lines = [ln for ln in out.strip().splitlines() if ln.startswith("{")]
    summary = json.loads(lines[-1]) if lines else None
    data = json.loads(report.read_text()) if report is not None and report.is_file() else None
    return Graded(proc.returncode, out, err, summary, data)


def start(course: Course, *args, env=None) -> tuple[subprocess.Popen, Path]:
    report = Path(tempfile.mkstemp(prefix="report-", suffix=".json", dir=course.root.parent)[1])
    report.unlink()
    proc = subprocess.Popen(_command(*args, "--report", str(report)), cwd=course.root, env=env or _env(),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    return proc, report


def grade(course: Course, *args, env=None, timeout: float = 600) -> Graded:
    proc, report = start(course, *args, env=env)
    return _finish(proc, report, timeout)


def ledger(course: Course, db: Path | None = None) -> dict[str, str]:
    """{student: graded_at} of course_grade_done in a SQLite gradebook (empty while it does not exist)."""
    try:
        con = sqlite3.connect(f"file:{db or course.root / 'gradebook.db'}?mode=ro", uri=True, timeout=30)
        try:
            return {s: str(t) for s, t in con.execute("select student, graded_at from course_grade_done")}
        finally:
            con.close()
    except sqlite3.OperationalError:
        return {}


def wait_for_ledger(course: Course, at_least: int, proc, timeout: float = 300) -> dict[str, str]:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        rows = ledger(course)
        if len(rows) >= at_least:
            return rows
        assert proc.poll() is None, f"the run ended before {at_least} were graded: {proc.communicate()}"
        time.sleep(0.2)
    raise AssertionError(f"fewer than {at_least} graded after {timeout} s")


def scores_in(db_url: str, students) -> dict[str, dict[str, float] | None]:
    """{student: {graded cell: score}} in any gradebook (None: not graded)."""
    from nbgrader.api import Gradebook, MissingEntry

    out = {}
    with Gradebook(db_url, course_id="bert-course") as gb:
        for s in students:
            try:
                nb = gb.find_submission_notebook(A, A, s)
            except MissingEntry:
                out[s] = None
                continue
            grades = {g.name: g.score for g in nb.grades}  # nbgrader's score is 0.0 for a cell never graded
            out[s] = None if any(g.auto_score is None for g in nb.grades) else grades
    return out


def auto_scores(course: Course, student: str) -> list:
    """The raw auto_score column of a student's grades (NULL: never graded; nbgrader's own ``score``
    reads 0.0 then)."""
    con = sqlite3.connect(course.root / "gradebook.db")
    try:
        return [r[0] for r in con.execute(
            "select g.auto_score from grade g join submitted_notebook n on g.notebook_id = n.id "
            "join submitted_assignment a on n.assignment_id = a.id where a.student_id = ?", (student,))]
    finally:
        con.close()


def _processes_in(root: Path) -> list[str]:
    """Processes working in, or naming, the course folder: the run's workers (their working directory is
    the course root) and sandboxed kernels (theirs is autograded/<student>/<assignment>)."""
    found = []
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit() or int(proc.name) == os.getpid():
            continue
        try:
            cwd = os.readlink(proc / "cwd")
            args = (proc / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if cwd.startswith(str(root)) or str(root) in args:
            found.append(f"{proc.name} cwd={cwd} {args[:200]}")
    return found


def _left_behind(root: Path, wait_s: float = 20) -> list[str]:
    """Processes of a finished run still there after ``wait_s`` (a dying process takes a moment)."""
    deadline = time.monotonic() + wait_s
    while (left := _processes_in(root)) and time.monotonic() < deadline:
        time.sleep(0.2)
    return left


# ----------------------------------------------------------------------------------------------- the class
@pytest.fixture(scope="module")
def released(tmp_path_factory):
    """A course with 07 released (its gradebook knows the assignment), and the class's notebooks."""
    course = Course(tmp_path_factory.mktemp("class") / "base", [A])
    course.generate(A)
    source, release = course.source(A), course.release(A)
    answers = solution_answers(source)
    points = {c.metadata["nbgrader"]["grade_id"]: float(c.metadata["nbgrader"]["points"])  # the autograded parts
              for c in source.cells if c.metadata.get("nbgrader", {}).get("grade") and c.cell_type == "code"}
    honest, expected = {}, {}
    for s in SOLVED:
        honest[s], expected[s] = solution_submission(course, A), dict(points)
    # A mixed-language class (issue 31 §3): every other of these students hands in the Chinese notebook (same
    # file name, same cells), graded by the same hidden tests into the same gradebook.
    chinese = []
    zh_release, zh_answers = course.release(A, "zh_CN"), solution_answers(course.source(A, "zh_CN"))
    for i, (name, m) in enumerate(list(load_mistakes(A).items())[:8]):
        s = f"m_{name}"
        if i % 2:
            honest[s] = filled(zh_release, zh_answers | m["cells"])
            chinese.append(s)
        else:
            honest[s] = filled(release, answers | m["cells"])
        expected[s] = {g: 0.0 if g in m["loses"] else p for g, p in points.items()}
    good = nbformat.writes(solution_submission(course, A))
    bad = {"broken_not_json": "this is not a notebook\n", "broken_cut_short": good[: len(good) // 2],
           "broken_not_a_notebook": json.dumps({"cells": "none", "hello": 1}),
           # It never returns, as a busy loop would, without burning the 20 s of CPU one costs (the cell's
           # time limit is wall time; tests/test_exercises.py's faults class times out a busy loop).
           HANGS: filled(release, answers | {"select": "while True:\n    __import__('time').sleep(1)\n"}),
           KILLS: filled(release, answers | {"replace": "import os, signal\nos.kill(os.getpid(), signal.SIGKILL)\n"}),
           PATTERN: solution_submission(course, A)}
    expected[HANGS] = points | {"test_select": 0.0}
    expected[KILLS] = {g: (p if g == "test_select" else 0.0) for g, p in points.items()}
    return dict(course=course, honest=honest, bad=bad, expected=expected, answers=answers, release=release,
                points=points, chinese=chinese)


def _class_course(released, name: str, students: dict) -> Course:
    course = released["course"].clone(released["course"].root.with_name(name))
    for s, nb in students.items():
        course.submit(s, A, nb)
    return course


@pytest.fixture(scope="module")
def parallel(released):
    """The whole class graded by the command with 2 workers and, in a twin course at the same time, the
    honest students' distinct notebooks by serial `nbgrader autograde` (the reference; the copies of the
    solution are one notebook, graded there once as SOLVED[0])."""
    both = {**released["honest"], **released["bad"]}
    course = _class_course(released, "parallel", both)
    course.submit(WRITES, A, filled(released["release"], released["answers"] | {
        "select": WRITES_GRADEBOOK.format(root=course.root) + released["answers"]["select"]}))
    serial = _class_course(released, "serial", {s: nb for s, nb in released["honest"].items()
                                                 if s not in SOLVED[1:]})
    with ThreadPoolExecutor(2) as pool:
        ours = pool.submit(grade, course, A, "--workers", "2")
        theirs = pool.submit(serial.autograde, A)
        graded, serial_run = ours.result(), theirs.result()
    assert serial_run.returncode == 0, serial_run.log[-3000:]
    return dict(course=course, serial=serial, graded=graded, students=[*both, WRITES])


def test_parallel_scores_equal_serial_grading(parallel, released):
    graded, course = parallel["graded"], parallel["course"]
    assert graded.returncode == 1, f"some submissions cannot be graded: exit 1\n{graded.stdout}\n{graded.stderr[-3000:]}"
    ours = course.scores
    for s in released["honest"]:
        same = SOLVED[0] if s in SOLVED else s  # the serial twin graded each distinct notebook once
        assert ours(A, s) == parallel["serial"].scores(A, same), f"{s}: parallel and serial grading differ"
        assert ours(A, s) == released["expected"][s], f"{s}: {ours(A, s)}"
    assert ours(A, WRITES) == released["points"], "the gradebook writer answered correctly"


def test_a_mixed_language_class_is_graded_each_in_its_own_language(parallel, released):
    """The scores are the hidden tests' whatever the language (test_parallel_scores_equal_serial_grading); each
    Chinese notebook keeps its Chinese read-only cells and gets its verdicts and feedback page in Chinese, each
    English one in English, from one run into one gradebook."""
    from bertgrader.i18n import language_of
    from bertgrader.mistakes import failures

    course, chinese = parallel["course"], released["chinese"]
    english = [s for s in released["honest"] if s.startswith("m_") and s not in chinese]
    assert chinese and english
    zh_source = {c.id: c.source for c in course.source(A, "zh_CN").cells}
    cjk = re.compile(r"[\u4e00-\u9fff]")
    for s in chinese:
        nb = course.autograded(s, A)
        assert language_of(nb) == "zh_CN", s
        locked = [c for c in nb.cells if c.metadata.get("nbgrader", {}).get("locked")]
        assert locked and all(c.source == zh_source[c.id] for c in locked), f"{s}: a read-only cell is not the Chinese one"
        verdicts = failures(nb)
        assert verdicts and all(cjk.search(v) for v in verdicts.values()), f"{s}: {verdicts}"
    for s in english:
        verdicts = failures(course.autograded(s, A))
        assert verdicts and not any(cjk.search(v.split("(line")[0]) for v in verdicts.values()), f"{s}: {verdicts}"
    course.nbgrader("generate_feedback", A, "--student", chinese[0], "--force")
    page = (course.root / "feedback" / chinese[0] / A / f"{A}.html").read_text(encoding="utf-8")
    assert "得分：" in page and "未通过" in page, "the Chinese student's feedback page is in Chinese"


def test_every_bad_submission_is_reported_and_costs_only_its_own_grade(parallel, released):
    graded, course = parallel["graded"], parallel["course"]
    failed = {f["student"]: f["why"] for f in graded.summary["failed"]}
    assert set(failed) == {*BROKEN, PATTERN}, failed
    for s, says in BROKEN.items():
        assert f"{s}/{A}/{A}.ipynb' {says}" in failed[s], failed[s]  # names the file, then why
        assert f"{s}/{A}: {failed[s]}" in graded.stdout, "the summary names it and says why"
        # refused before nbgrader reads it (bertgrader.submission): no submission of it in the gradebook at all
        assert auto_scores(course, s) == [], "not graded"
    assert "wildcard" in failed[PATTERN] and course.scores(A, PATTERN) is None
    results = graded.results("graded")
    assert course.scores(A, HANGS) == released["expected"][HANGS]
    assert any("time limit" in p for p in results[HANGS]["problems"]), results[HANGS]
    assert course.scores(A, KILLS) == released["expected"][KILLS]
    assert any("kernel stopped" in p for p in results[KILLS]["problems"]), results[KILLS]
    printed = "".join(o.get("text", "") for c in course.autograded(WRITES, A).cells for o in c.get("outputs", []))
    assert "no gradebook" in printed and "WROTE GRADEBOOK" not in printed
    rows = {ln.split()[0]: ln for ln in graded.stdout.splitlines() if ln.split()}
    for s in [*released["honest"], HANGS, KILLS, WRITES]:
        assert s in rows, f"no summary row for {s}"
    assert f"{sum(released['points'].values()):.1f}" in rows["honest_01"]


def test_nothing_is_graded_twice_and_a_rerun_retries_only_the_failed(parallel):
    graded, course = parallel["graded"], parallel["course"]
    names = [r["student"] for r in graded.report["results"]]
    assert sorted(names) == sorted(parallel["students"]), "each submission handled exactly once"
    done = ledger(course)
    assert set(done) == set(graded.results("graded")), "the ledger holds exactly the graded ones"
    again = grade(course, A, "--workers", "2")
    assert again.returncode == 1
    assert set(again.results()) == {*BROKEN, PATTERN}, "only what is not graded is tried again"
    assert again.summary["already_graded"] == len(done)
    assert ledger(course) == done, "nothing graded before was graded again"


def test_nbgrader_export_and_feedback_read_the_gradebook(parallel, released):
    course = parallel["course"]
    rows = {r["student_id"]: r for r in csv.DictReader(open(course.export_csv()))}
    for s in [*released["honest"], HANGS, KILLS]:
        assert float(rows[s]["score"]) == sum(released["expected"][s].values()), rows[s]
    course.nbgrader("generate_feedback", A, "--student", "honest_01", "--force")
    assert (course.root / "feedback" / "honest_01" / A / f"{A}.html").is_file()


def test_a_submission_past_timeout_is_stopped_and_its_worker_replaced(released):
    students = {HANGS: released["bad"][HANGS], "honest_01": released["honest"]["honest_01"]}
    course = _class_course(released, "overrun", students)
    run = grade(course, A, "--workers", "1", "--timeout", "8")
    assert run.returncode == 1, run.stdout + run.stderr[-2000:]
    assert [f["student"] for f in run.summary["failed"]] == [HANGS]
    assert "took longer than --timeout 8 s" in run.summary["failed"][0]["why"]
    # graded after it (students in order), by the worker started in the stopped one's place
    assert course.scores(A, "honest_01") == released["expected"]["honest_01"]
    assert not _left_behind(course.root), "the stopped worker's kernel outlived it"


# ----------------------------------------------------------------------------------------------- resuming
def test_interrupted_twice_and_resumed_grades_each_once_to_the_same_gradebook(released, parallel):
    students = {s: released["honest"][s] for s in list(released["honest"])[:8]}
    course = _class_course(released, "resumed", students)
    everyone = set(students)

    proc, report = start(course, A, "--workers", "2")
    wait_for_ledger(course, 3, proc)
    proc.send_signal(signal.SIGINT)  # Ctrl-C
    first = _finish(proc, report, timeout=60)
    assert first.returncode == 130, first.stderr[-2000:]
    assert first.summary["interrupted"] and "interrupted:" in first.stdout
    after_first = ledger(course)
    recorded = {s["student"] for s in first.summary["stopped"] if s["recorded"]}
    assert set(after_first) == set(first.results("graded")) | recorded, "it says what was finished"
    assert 3 <= len(after_first) < len(everyone)

    proc, report = start(course, A, "--workers", "2")
    wait_for_ledger(course, len(after_first) + 2, proc)
    proc.kill()  # a machine that dies: no clean-up of any kind
    proc.communicate(timeout=60)
    assert not _left_behind(course.root), "a worker or a kernel outlived the killed run"
    after_second = ledger(course)
    assert {s: after_second[s] for s in after_first} == after_first, "graded before: not graded again"

    third = grade(course, A, "--workers", "2")
    assert third.returncode == 0, third.stdout + third.stderr[-2000:]
    assert set(third.results()) == everyone - set(after_second), "only the rest is graded"
    final = ledger(course)
    assert set(final) == everyone
    assert {s: final[s] for s in after_second} == after_second
    reference = parallel["course"]
    for s in everyone:
        assert course.scores(A, s) == reference.scores(A, s), f"{s}: resumed run differs from one run"

    # A half-written grade (killed between two of nbgrader's per-cell commits) and a resubmission are graded
    # again; a lost ledger row (killed right after the worker cleared it) over a submission whose grades are whole
    # and made from it is adopted, as a plain nbgrader autograde's would be (issue 29 §5), not graded again.
    half, unrecorded, resubmitted = sorted(everyone)[:3]
    db = sqlite3.connect(course.root / "gradebook.db")
    db.execute("update grade set auto_score = null where id in (select g.id from grade g "
               "join submitted_notebook n on g.notebook_id = n.id join submitted_assignment a on n.assignment_id = a.id "
               "join base_cell c on g.cell_id = c.id where a.student_id = ? and c.name = 'test_labels')", (half,))
    db.execute("delete from course_grade_done where student = ?", (unrecorded,))
    db.commit()
    db.close()
    course.submit(resubmitted, A, filled(released["release"], released["answers"] | load_mistakes(A)[
        "masks_special_tokens"]["cells"]))
    fourth = grade(course, A, "--workers", "2")
    assert fourth.returncode == 0, fourth.stdout
    assert set(fourth.results()) == {half, resubmitted}
    assert fourth.summary["adopted"] == 1 and unrecorded in ledger(course), fourth.stdout
    assert course.scores(A, unrecorded) == reference.scores(A, unrecorded)
    assert course.scores(A, half) == reference.scores(A, half)
    assert course.scores(A, resubmitted)["test_select"] == 0.0, "the new submission was graded"
    forced = grade(course, A, "--workers", "2", "--force", "--student", half)
    assert set(forced.results("graded")) == {half}, "--force regrades what is graded"


# ----------------------------------------------------------------------------------------------- shards
def _pg_bin() -> Path | None:
    found = glob.glob("/usr/lib/postgresql/*/bin/initdb")
    return Path(max(found, key=lambda p: int(Path(p).parts[-3]))).parent if found else None


@contextmanager
def postgres():
    """A throw-away PostgreSQL server on a unix socket in a temporary folder; its URL. initdb refuses to
    run as root, so as root the server runs as the `postgres` user."""
    bin_dir = _pg_bin()
    if bin_dir is None:
        pytest.skip("PostgreSQL is not installed (Debian: apt-get install postgresql; .ci/run installs it)")
    base = Path(tempfile.mkdtemp(prefix="pg-class-"))
    as_user = []
    if os.geteuid() == 0:
        import pwd

        user = pwd.getpwnam("postgres")
        os.chown(base, user.pw_uid, user.pw_gid)
        as_user = ["runuser", "-u", "postgres", "--"]
    data = base / "data"
    subprocess.run([*as_user, str(bin_dir / "initdb"), "-D", str(data), "-A", "trust", "-U", "postgres",
                    "--no-sync", "-E", "UTF8"], check=True, capture_output=True)
    ctl = [*as_user, str(bin_dir / "pg_ctl"), "-D", str(data)]
    subprocess.run([*ctl, "-o", f"-k {base} -c listen_addresses='' -c fsync=off", "-l", str(base / "log"),
                    "-w", "-t", "60", "start"], check=True, capture_output=True)
    try:
        import psycopg

        with psycopg.connect(host=str(base), user="postgres", dbname="postgres", autocommit=True) as conn:
            conn.execute("create database gradebook")
        yield f"postgresql+psycopg://postgres@/gradebook?host={base}"
    finally:
        subprocess.run([*ctl, "-m", "immediate", "-w", "stop"], capture_output=True)
        import shutil

        shutil.rmtree(base, ignore_errors=True)


def test_two_shards_on_one_postgresql_grade_everyone_once(released, parallel):
    from bertgrader.classes.run import in_shard

    # One student per kind the shards must treat alike (an honest one, a broken one, one that kills its kernel),
    # split so both shards get some (in_shard: honest_03 in 0/2, the other two in 1/2).
    picked = [SOLVED[2], "broken_not_json", KILLS]
    assert all(any(in_shard(s, (k, 2)) for s in picked) for k in (0, 1)), "a shard with nobody to grade"
    students = {s: {**released["honest"], **released["bad"]}[s] for s in picked}
    course = _class_course(released, "sharded", students)
    with postgres() as url:
        with ThreadPoolExecutor(2) as pool:  # two machines, one gradebook: the assignment is not in it yet
            runs = list(pool.map(lambda k: grade(course, A, "--workers", "1", "--db", url, "--shard", f"{k}/2"),
                                 [0, 1]))
        for k, run in enumerate(runs):
            assert run.returncode in (0, 1), run.stdout + run.stderr[-3000:]
            assert set(run.results()) == {s for s in picked if in_shard(s, (k, 2))}, f"shard {k}/2"
        handled = [s for run in runs for s in run.results()]
        assert sorted(handled) == sorted(picked), "together the shards handle everyone exactly once"
        failed = [f["student"] for run in runs for f in run.summary["failed"]]
        assert failed == ["broken_not_json"]
        got = scores_in(url, picked)
        reference = scores_in(f"sqlite:///{parallel['course'].root / 'gradebook.db'}", picked)
        assert got["broken_not_json"] is None
        for s in picked:
            assert got[s] == reference[s], f"{s}: the sharded gradebook differs from one run"
        from sqlalchemy import create_engine, text

        engine = create_engine(url)
        with engine.connect() as conn:
            rows = conn.execute(text("select student, count(*) from course_grade_done group by student")).all()
        engine.dispose()
        assert dict(rows) == {s: 1 for s in picked if s != "broken_not_json"}
        exported = course.root / "pg-grades.csv"
        course.nbgrader("export", "--db", url, "--to", str(exported))
        rows = {r["student_id"]: float(r["score"]) for r in csv.DictReader(open(exported))}
        assert rows[KILLS] == sum(released["expected"][KILLS].values())


# ----------------------------------------------------------------------------------------------- SQLite
def _hammer(url: str, worker: int, rounds: int) -> int:
    """Many short write transactions through nbgrader's own Gradebook, as workers make them."""
    from nbgrader.api import Gradebook

    for i in range(rounds):
        with Gradebook(url, course_id="bert-course") as gb:
            gb.update_or_create_student(f"w{worker}_{i}", first_name=str(i))
    return rounds


def test_sqlite_takes_concurrent_writers(released, tmp_path):
    from multiprocessing import get_context

    from bertgrader.classes.db import normalise_url, open_engine, use_wal

    db = tmp_path / "gradebook.db"
    db.write_bytes((released["course"].root / "gradebook.db").read_bytes())
    url = normalise_url(f"sqlite:///{db}")
    assert "timeout=60" in url
    use_wal(open_engine(url))
    with get_context("spawn").Pool(4) as pool:
        done = pool.starmap(_hammer, [(url, w, 40) for w in range(4)])
    assert done == [40] * 4
    con = sqlite3.connect(db)
    assert con.execute("select count(*) from student where id like 'w%\\_%' escape '\\'").fetchone()[0] == 160
    assert con.execute("pragma journal_mode").fetchone()[0] == "wal"
    con.close()


# ----------------------------------------------------------------------------------------------- arguments
# ----------------------------------------------------------------------------------------------- one command, regrades
def _losing(released, part: str) -> str:
    """A named mistake of the class that loses ``part`` only."""
    return next(s for s, exp in released["expected"].items() if s.startswith("m_") and s not in released["chinese"]
                and [g for g, v in exp.items() if v == 0.0] == [part])


def test_either_grading_command_sees_the_others_and_a_regrade_leaves_nothing_stale(released):
    """Issue 29 §5 and §8, on a class of two: a plain `nbgrader autograde` then `python -m bertgrader` grades
    nothing twice; both resubmit (alice after a manual score in Formgrader and her written answer graded by
    hand with a comment, issue 29 §4); the next run regrades both, rewrites both feedback pages it made
    stale, and names alice's two manual scores for review; her page keeps the written answer's score and
    comment."""
    mistake = _losing(released, "test_select")
    course = _class_course(released, "either", {"alice": released["honest"]["honest_01"],
                                                "bob": released["honest"][mistake]})
    shutil.copy(REPO / "solutions" / "mistake_signatures.json", course.root / "solutions")  # names the mistakes
    run = course.autograde(A)
    assert run.returncode == 0, run.log[-3000:]
    again = grade(course, A, "--workers", "2")
    assert again.returncode == 0 and again.report["results"] == [], again.stdout + again.stderr[-2000:]
    assert again.summary["already_graded"] == 2 and again.summary["adopted"] == 2
    assert set(ledger(course)) == {"alice", "bob"}, "recorded, so the next run grades nothing either"
    course.nbgrader("generate_feedback", A)
    pages = {s: course.root / "feedback" / s / A / f"{A}.html" for s in ("alice", "bob")}
    assert "known mistake" in pages["bob"].read_text(), "bob's page names his mistake"
    [written] = course.written(A, "alice")
    with course._gradebook() as gb:  # the instructor gives alice 1 of test_select's points by hand
        g = gb.find_grade("test_select", A, A, "alice")
        g.manual_score = 1.0
        w = gb.find_grade(written, A, A, "alice")  # and grades her written answer, as Formgrader stores it
        w.manual_score, w.needs_manual_grade = 2.0, False
        gb.find_comment(written, A, A, "alice").manual_comment = "Both reasons, well put."
        gb.db.commit()
    course.submit("alice", A, released["honest"][mistake])
    course.submit("bob", A, released["honest"]["honest_01"])
    regraded = grade(course, A, "--workers", "2")
    assert regraded.returncode == 0, regraded.stdout + regraded.stderr[-2000:]
    assert sorted(r["student"] for r in regraded.report["results"]) == ["alice", "bob"]
    assert regraded.summary["feedback_written"] == [f"alice/{A}", f"bob/{A}"], "both stale pages rewritten"
    full = sum(released["points"].values())
    most = full + 2.0  # and the written answer's 2 points, which bob's page says wait for a grade
    assert f"(Score: {full:.1f} / {most:.1f})" in pages["bob"].read_text(), "bob's page says his new score"
    assert "Score: awaiting grading / 2.0" in pages["bob"].read_text()
    assert "Both reasons, well put." in pages["alice"].read_text() and "graded by your instructor" in pages["alice"].read_text()
    assert "known mistake" not in pages["bob"].read_text()
    review = regraded.summary["manual_to_review"]
    assert [(r["student"], r["cell"], r["manual"], r["auto_now"]) for r in review] == [
        ("alice", written, 2.0, None), ("alice", "test_select", 1.0, 0.0)], review
    assert "manual scores to review (2)" in regraded.stdout
    assert f"alice/{A} {written}: manual 2, written answer, graded before this regrade" in regraded.stdout
    assert f"alice/{A} test_select: manual 1, automatic 3.0 -> 0.0" in regraded.stdout
    report = subprocess.run(_command("report", A, "--width", "100"), cwd=course.root, env=_env(),
                            capture_output=True, text=True, timeout=600)
    assert report.returncode == 0, report.stderr[-3000:]
    assert "test_select: the manual score 1 counts, not the automatic 0" in " ".join(report.stdout.split())
    rows = {r["student_id"]: r for r in csv.DictReader(open(course.export_csv()))}
    for s in ("alice", "bob"):
        line = next(ln for ln in report.stdout.splitlines() if ln.startswith(s + " "))
        assert line.split()[2:4] == [f"{float(rows[s]['score']):.1f}", f"{float(rows[s]['max_score']):.1f}"], line


def test_the_named_mistakes_graded_here_match_their_stored_signatures(parallel, released):
    """The class's named mistakes, graded by the command: each autograded notebook fails exactly the parts
    its stored signature names, with the same messages, and its feedback would name it (and no other
    mistake losing other parts)."""
    from bertgrader import mistakes as named

    in_language = {"en": {m.name: m for m in named.load(REPO, A)},
                   "zh_CN": {m.name: m for m in named.load(REPO, A, "zh_CN")}}  # the Chinese notebooks' (issue 31)
    assert in_language["en"], f"no current signatures for {A}: python -m bertgrader.mistakes {A}"
    assert in_language["zh_CN"], f"no current Chinese signatures for {A}: python -m bertgrader.mistakes --language zh_CN {A}"
    course = parallel["course"]
    for s in released["honest"]:
        if not s.startswith("m_"):
            continue
        failed = named.failures(course.autograded(s, A))
        known = in_language["zh_CN" if s in released["chinese"] else "en"]
        m = known[s[2:]]
        assert {g: named.normalise(t) for g, t in failed.items()} == {
            g: named.normalise(t) for g, t in m.messages.items()}, f"{s}: its grading says other things now"
        shown = named.identify(list(known.values()), failed)
        assert m.name in [x.name for x in shown], f"{s}: not named"
        assert all(set(x.messages) == set(m.messages) for x in shown), f"{s}: {[x.name for x in shown]}"


def _refused(course: Course, *args, env=None) -> str:
    """The command, as a process: it exits 2 and says why on stderr, before grading anything."""
    proc = subprocess.run(_command(*args), cwd=course.root, env=env or _env(), capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == 2, f"{args}: exit {proc.returncode}\n{proc.stdout}\n{proc.stderr}"
    assert not (course.root / "autograded").exists(), f"{args}: it graded before refusing"
    return proc.stderr


def _main(course: Course, capsys, *args) -> tuple[int, str, str]:
    """The command's main() in this process, on ``course`` (what `python -m bertgrader` runs, without the
    seconds a new interpreter takes to import nbgrader): (exit status, stdout, stderr)."""
    from bertgrader.classes import run as class_run

    capsys.readouterr()
    try:
        code = class_run.main([*args, "--root", str(course.root)])
    except SystemExit as e:  # argparse's own refusals exit from parse_args
        code = e.code
    out, err = capsys.readouterr()
    return code, out, err


def _refused_here(course: Course, capsys, *args) -> str:
    code, out, err = _main(course, capsys, *args)
    assert code == 2, f"{args}: exit {code}\n{out}\n{err}"
    assert not (course.root / "autograded").exists(), f"{args}: it graded before refusing"
    return err


def test_bad_arguments_are_named_before_any_work(released, capsys, monkeypatch):
    course = released["course"].clone(released["course"].root.with_name("arguments"))
    # One as a process: the exit status and stderr of `python -m bertgrader` itself; the rest in-process.
    assert "no submissions of 08_masking" in _refused(course, A)
    course.submit("alice", A, released["honest"]["honest_01"])
    assert "unknown assignment 'nope'" in (said := _refused_here(course, capsys, "nope")) and A in said
    assert "argument --workers: 0 is less than 1" in _refused_here(course, capsys, A, "--workers", "0")
    assert "0 <= K < N" in _refused_here(course, capsys, A, "--shard", "2/2")
    assert "is not K/N" in _refused_here(course, capsys, A, "--shard", "half")
    assert "no submission of 08_masking by ghost" in _refused_here(course, capsys, A, "--student", "ghost")
    with monkeypatch.context() as m:
        m.setenv("PATH", str(Path(sys.executable).parent))  # no bwrap on it
        said = _refused_here(course, capsys, A)
    assert "sandbox cannot run here" in said and "bubblewrap" in said
    assert "not a database URL" in _refused_here(course, capsys, A, "--db", "::nonsense::")
    from bertgrader.classes.run import in_shard

    empty = next(f"{k}/1000" for k in range(1000) if not in_shard("alice", (k, 1000)))
    code, out, err = _main(course, capsys, A, "--shard", empty)
    assert code == 0 and f"falls in shard {empty}" in out, out + err
    assert not (course.root / "autograded").exists()
    assert "cannot connect to the gradebook database" in _refused_here(
        course, capsys, A, "--db", "postgresql+psycopg://nobody@/gradebook?host=/nonexistent-socket-dir")


def test_every_option_has_help_text(capsys):
    from bertgrader.classes import run as class_run

    parser = class_run.build_parser()
    assert parser.prog == "python -m bertgrader" and parser.description
    undocumented = [a.option_strings[-1] if a.option_strings else a.dest for a in parser._actions if not a.help]
    assert undocumented == []
    assert isinstance(parser, argparse.ArgumentParser)
    with pytest.raises(SystemExit) as exited:
        class_run.main(["--help"])
    out = capsys.readouterr().out
    assert exited.value.code == 0 and "--shard K/N" in out and "--db URL" in out


def test_the_command_skips_the_grammar_jsonschema_would_build():
    """The command's processes never import rfc3987_syntax (jsonschema builds its IRI grammar at import, the
    slowest import of a grading process, for formats nothing here validates), and nbformat still validates."""
    code = ("import runpy, sys\n"
            "sys.argv = ['bertgrader', '--help']\n"
            "try:\n    runpy.run_module('bertgrader', run_name='__main__', alter_sys=True)\n"
            "except SystemExit:\n    pass\n"
            "import nbformat\n"
            "nbformat.validate(nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell('1')]))\n"
            "print('nbformat' in sys.modules, sys.modules.get('rfc3987_syntax', 'absent'))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO, env=_env(),
                         timeout=120)
    assert out.returncode == 0 and out.stdout.strip().splitlines()[-1] == "True None", (
        out.stdout[-500:] + out.stderr[-2000:])
    import inspect

    from bertgrader.classes import nbgrader_run

    assert "skip_unused_imports()" in inspect.getsource(nbgrader_run.worker_main), "each worker skips it too"


def test_the_deployment_manifest_runs_the_command_with_a_shard(monkeypatch):
    import shlex

    import yaml

    from bertgrader.classes.run import build_parser

    job = yaml.safe_load((REPO / "docs" / "class-grading-job.yaml").read_text())
    assert job["kind"] == "Job" and job["spec"]["completionMode"] == "Indexed"
    container = job["spec"]["template"]["spec"]["containers"][0]
    env = {e["name"]: e.get("value", "") for e in container["env"]}
    assert int(env["SHARDS"]) == job["spec"]["completions"] == job["spec"]["parallelism"]
    script = container["command"][-1]
    line = next(ln for ln in script.splitlines() if "-m bertgrader" in ln)
    for name, value in {**env, "JOB_COMPLETION_INDEX": "1", "GRADEBOOK_URL": "postgresql://u@db/g"}.items():
        monkeypatch.setenv(name, value)
    argv = shlex.split(os.path.expandvars(line.split("-m bertgrader", 1)[1].split("||")[0]))
    args = build_parser().parse_args(argv)
    assert args.shard == (1, int(env["SHARDS"])) and args.db == "postgresql://u@db/g"
