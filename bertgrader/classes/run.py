"""Grade a whole class at once: ``python -m bertgrader <assignment|all> --workers N``.

Every submission (``submitted/<student>/<assignment>/<assignment>.ipynb`` under the course root) is
graded by nbgrader's own autograde, as the course's nbgrader_config.py configures it (TrustedExecute,
each kernel in the bubblewrap sandbox, the hidden tests in the grader), in N worker processes at once,
into nbgrader's gradebook, so ``nbgrader generate_feedback`` and ``nbgrader export`` work unchanged.

- A submission that hangs, crashes, is not a notebook or attacks the grader costs only its own grade;
  the run goes on and its summary says which failed and why.
- Resumable: a submission counts as graded once all its grades are recorded (bertgrader.classes.db);
  a rerun grades only the rest. ``--force`` regrades everything. Ctrl-C (or SIGTERM) stops at once and
  says what was finished; what was being graded then is graded by the next run.
- ``--db URL``: any SQLAlchemy URL; PostgreSQL lets N machines share one gradebook, each grading
  ``--shard K/N`` of the class (students by a stable hash of their id).

Progress goes to stderr (tqdm); the per-student summary to stdout, and as its last line a JSON object
with the run's results (``--report FILE`` writes every submission's details). Exit status: 0 every
submission graded, 1 some could not be (listed), 2 the run could not start (the message says why),
130 interrupted.
"""
from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import shutil
import signal
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from bertgrader.assignment import assignments as course_assignments
from bertgrader.submission import SubmissionRefused, check_student_id, check_submission
from bertgrader.classes.db import Ledger, SetupError, describe, normalise_url, open_engine, setup_lock, \
    submission_digest, use_wal
from bertgrader.classes.pool import Pool, Task

PROG = "python -m bertgrader"
DEFAULT_TIMEOUT_S = 720  # per submission: TrustedExecute's 600 s notebook budget, plus nbgrader's own work
GLOB_CHARS = set("*?[]")  # nbgrader reads a student id as a glob pattern

# nbgrader's gradebook shells out to `alembic`, which lives next to this interpreter (the virtualenv's bin/).
_BIN = str(Path(sys.executable).parent)
if _BIN not in os.environ.get("PATH", "").split(os.pathsep):
    os.environ["PATH"] = _BIN + os.pathsep + os.environ.get("PATH", "")


# ----------------------------------------------------------------------------------------------- arguments
def positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"{value} is less than 1")
    return value


def positive_float(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if value <= 0:
        raise argparse.ArgumentTypeError(f"{value:g} is not more than 0")
    return value


def parse_shard(text: str) -> tuple[int, int]:
    """'K/N' -> (K, N), K counted from 0 (a Kubernetes Indexed Job's JOB_COMPLETION_INDEX)."""
    parts = text.split("/")
    if len(parts) != 2 or not all(p.strip().isdigit() for p in parts):
        raise argparse.ArgumentTypeError(f"{text!r} is not K/N (e.g. 0/4: the first of four shards)")
    k, n = int(parts[0]), int(parts[1])
    if n < 1 or not 0 <= k < n:
        raise argparse.ArgumentTypeError(f"{text!r}: K/N needs N >= 1 and 0 <= K < N (shards are numbered 0 to N-1)")
    return k, n


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog=PROG, formatter_class=argparse.RawDescriptionHelpFormatter,
        description="Grade every submission of an assignment (or of all) in parallel, each in its own\n"
                    "sandboxed kernel, with nbgrader's autograde and the course's nbgrader_config.py, into\n"
                    "nbgrader's gradebook (generate_feedback and export read it as usual). Resumable: a rerun\n"
                    "grades only what is not graded yet. docs/class-grading.md: PostgreSQL and shards.",
        epilog="examples:\n"
               f"  {PROG} 08_masking --workers 2\n"
               f"  {PROG} all --db postgresql+psycopg://grader@dbhost/gradebook --shard 0/4\n"
               "exit status: 0 all graded, 1 some submissions could not be graded (listed), 2 the run could "
               "not start, 130 interrupted")
    p.add_argument("assignment", help="the assignment id (a folder of solutions/, e.g. 08_masking), or 'all'")
    p.add_argument("--workers", type=positive_int, default=os.cpu_count() or 1, metavar="N",
                   help="submissions graded at once, each worker with its own sandboxed kernel (default: the CPU "
                        "count, %(default)s here; each needs about 0.6 GB of memory, 2.5 GB at most)")
    p.add_argument("--root", default=".", metavar="DIR",
                   help="the course root, holding nbgrader_config.py, solutions/ and submitted/ (default: the "
                        "current folder)")
    p.add_argument("--db", metavar="URL",
                   help="the gradebook, any SQLAlchemy URL (default: nbgrader's, sqlite gradebook.db in the course "
                        "root); postgresql://... is read as postgresql+psycopg://... (psycopg 3)")
    p.add_argument("--shard", type=parse_shard, metavar="K/N",
                   help="grade only shard K of N (K from 0), chosen by a stable hash of the student id, so N "
                        "machines sharing one --db grade every student exactly once")
    p.add_argument("--student", nargs="+", metavar="ID",
                   help="grade only these students (ids as in submitted/<id>/; default: every student; put the "
                        "assignment first)")
    p.add_argument("--force", action="store_true",
                   help="regrade every submission, also those already graded")
    p.add_argument("--timeout", type=positive_float, default=DEFAULT_TIMEOUT_S, metavar="SECONDS",
                   help="stop grading a submission after this long and report it (default: %(default)s; cells "
                        "have their own 20 s limit and notebooks 600 s, from nbgrader_config.py)")
    p.add_argument("--report", metavar="FILE",
                   help="also write every submission's result (score, problems, time and where it went) to this "
                        "JSON file")
    p.add_argument("--feedback", action="store_true",
                   help="also write the feedback page (feedback/<student>/<assignment>/) of every graded submission "
                        "that has none; a page made stale by a regrade is rewritten in any case")
    p.add_argument("--no-sandbox", dest="sandbox", action="store_false",
                   help="run student kernels without the sandbox (--TrustedExecute.sandbox=none): only for code "
                        "you trust")
    return p


# ----------------------------------------------------------------------------------------------- planning
def in_shard(student: str, shard: tuple[int, int] | None) -> bool:
    """Whether a student belongs to shard K of N: sha-256 of the id, the same on every machine."""
    if shard is None:
        return True
    k, n = shard
    return int.from_bytes(hashlib.sha256(student.encode("utf-8", "surrogateescape")).digest()[:8], "big") % n == k


def find_submissions(root: Path, assignments: list[str]) -> dict[tuple[str, str], Path]:
    """{(assignment, student): submission folder} of every submitted/<student>/<assignment>/ folder."""
    found = {}
    for a in assignments:
        for folder in sorted((root / "submitted").glob(f"*/{a}")):
            if folder.is_dir() and not folder.parent.name.startswith("."):
                found[(a, folder.parent.name)] = folder
    return found


@dataclass
class Plan:
    root: Path
    assignments: list[str]
    db_url: str
    course_id: str
    sandbox: bool
    shard: tuple[int, int] | None
    todo: list[Task] = field(default_factory=list)
    refused: list[dict] = field(default_factory=list)  # submissions nbgrader cannot be asked to grade
    already: int = 0  # graded before this run
    adopted: int = 0  # of those, graded by a plain nbgrader autograde (found and recorded by this run)
    in_shard: int = 0


def check_arguments(args) -> tuple[Path, list[str], dict]:
    """Everything that needs no nbgrader, before any worker starts: the course root, the assignment, the
    submissions, the sandbox, and that a --db URL is one and its database answers. Raises SetupError
    naming the problem."""
    root = Path(args.root).expanduser().resolve()
    if not (root / "nbgrader_config.py").is_file():
        raise SetupError(f"{root} is not a course root: it has no nbgrader_config.py (run from the course root or "
                         "pass --root)")
    known = course_assignments(root)
    if args.assignment == "all":
        assignments = known
    elif args.assignment in known:
        assignments = [args.assignment]
    else:
        raise SetupError(f"unknown assignment {args.assignment!r}: this course's assignments are "
                         f"{', '.join(known) or 'none'} (folders of solutions/ holding <id>/<id>.ipynb), or 'all'")
    subs = find_submissions(root, assignments)
    if not subs:
        what = args.assignment if args.assignment != "all" else "any assignment"
        raise SetupError(f"no submissions of {what} in {root / 'submitted'}: expected "
                         f"submitted/<student>/<assignment>/<assignment>.ipynb")
    if args.student:
        missing = sorted(set(args.student) - {s for _, s in subs})
        if missing:
            what = args.assignment if args.assignment != "all" else "any assignment"
            raise SetupError(f"no submission of {what} by {', '.join(missing)} in {root / 'submitted'}")
        subs = {k: v for k, v in subs.items() if k[1] in set(args.student)}
    if args.sandbox:
        from bertgrader.sandbox import SandboxUnavailable, check_available

        try:
            check_available()
        except SandboxUnavailable as e:
            raise SetupError(f"refusing to grade: the grading sandbox cannot run here: {e} "
                             "(or pass --no-sandbox, for code you trust)") from None
    if args.db:  # a wrong URL or a database that does not answer costs no worker start (seconds of imports each)
        open_engine(normalise_url(args.db)).dispose()
    return root, assignments, subs


def prepare(args, root: Path, assignments: list[str], subs: dict) -> Plan:
    """Set up the gradebook (tables, assignments, students: under a lock, so shards starting together
    do not collide) and decide what to grade."""
    from bertgrader.classes.nbgrader_run import course_config, course_facts, register_assignment

    cfg = course_config(root, sandbox=args.sandbox)
    course_id, default_url = course_facts(cfg)
    db_url = normalise_url(args.db or default_url)
    cfg.CourseDirectory.db_url = db_url
    engine = open_engine(db_url)
    mine = {k: v for k, v in subs.items() if in_shard(k[1], args.shard)}
    plan = Plan(root, assignments, db_url, course_id, args.sandbox, args.shard, in_shard=len(mine))
    ledger = Ledger(db_url, course_id, engine)
    bad_ids = {}  # a folder name that is not a plain student id (not UTF-8, a control character, absurdly long)
    for _, s in mine:
        try:
            check_student_id(s, folder=root / "submitted" / s)
        except SubmissionRefused as e:
            bad_ids[s] = str(e)
    try:
        with setup_lock(engine):
            _set_up_gradebook(engine, ledger, cfg, db_url, course_id, sorted({a for a, _ in mine}),
                              sorted({s for _, s in mine if not GLOB_CHARS & set(s) and s not in bad_ids}),
                              register_assignment)
        refused = set()
        for (a, s), folder in sorted(mine.items()):
            why = bad_ids.get(s)
            if why:
                s = s.encode("utf-8", "backslashreplace").decode("utf-8")  # written out: the summary and ledger
            elif GLOB_CHARS & set(s):
                why = ("its student id holds *, ?, [ or ], which nbgrader reads as a pattern matching other "
                       "students: rename the folder")
            else:
                try:  # before anything of it is read: a link or FIFO is never followed, even to hash it
                    check_submission(folder, inside=root / "submitted")
                except SubmissionRefused as e:
                    why = str(e)
            if why:
                refused.add((a, folder.parent.name))
                plan.refused.append({"assignment": a, "student": s, "status": "failed", "seconds": 0.0, "why": why})
        digests = {k: submission_digest(v) for k, v in mine.items() if k not in refused}
        graded = set()
        for a in ([] if args.force else assignments):
            of_a = {s: d for (a2, s), d in digests.items() if a2 == a}
            graded |= {(a, s) for s in ledger.graded(a, of_a, root)}
            # graded by a plain `nbgrader autograde` since: counted as graded here too
            adopted = ledger.adopt(a, {s: d for s, d in of_a.items() if (a, s) not in graded},
                                   {s: mine[(a, s)] for s in of_a}, root)
            graded |= {(a, s) for s in adopted}
            plan.adopted += len(adopted)
        plan.already = len(graded)
        plan.todo = [Task(a, s, d) for (a, s), d in sorted(digests.items()) if (a, s) not in graded]
    finally:
        ledger.close()
    return plan


def _set_up_gradebook(engine, ledger, cfg, db_url, course_id, assignments, students, register) -> None:
    """nbgrader's tables and course, the ledger table, every assignment and student of this run: done
    once here so the workers never race to create the same row."""
    from nbgrader.api import Gradebook, MissingEntry

    use_wal(engine)
    with Gradebook(db_url, course_id) as gb:  # creates nbgrader's tables and the course, if new
        missing = []
        for a in assignments:
            try:
                gb.find_assignment(a)
            except MissingEntry:
                missing.append(a)
    for a in missing:
        print(f"{a} is not in the gradebook yet: registering it from solutions/{a}", file=sys.stderr)
        register(cfg, a)
    ledger.create()
    with Gradebook(db_url, course_id) as gb:
        known = {s.id for s in gb.students}
        for s in students:
            if s not in known:
                gb.add_student(s)


# ----------------------------------------------------------------------------------------------- running
class Stopped(KeyboardInterrupt):
    """SIGTERM (a pod being deleted, a `kill`): handled like Ctrl-C."""


def _on_sigterm(signum, frame):
    raise Stopped()


@dataclass
class Outcome:
    plan: Plan
    workers: int
    results: list[dict] = field(default_factory=list)
    feedback: dict = field(default_factory=dict)  # {(assignment, student): None or why} pages (re)written
    stopped: list[dict] = field(default_factory=list)  # in flight when interrupted
    not_started: int = 0
    interrupted: bool = False
    seconds: float = 0.0


def run(plan: Plan, pool: Pool) -> Outcome:
    """Grade ``plan.todo`` with the pool's workers, a progress bar on stderr."""
    from tqdm import tqdm

    outcome = Outcome(plan, min(pool.workers, max(1, len(plan.todo))), results=list(plan.refused))
    if not plan.todo:
        return outcome
    bar = tqdm(total=len(plan.todo), unit="nb", desc="grading", file=sys.stderr, dynamic_ncols=True, smoothing=0.05)
    finished: set[tuple[str, str]] = set()
    started = time.monotonic()

    def on_result(task: Task, result: dict) -> None:
        outcome.results.append(result)
        finished.add((task.assignment, task.student))
        if result["status"] != "graded":
            bar.write(f"not graded: {printable(task.student)}/{task.assignment}: {printable(result['why'])}",
                      file=sys.stderr)
        bar.update(1)
        bar.set_postfix(failed=sum(r["status"] != "graded" for r in outcome.results), refresh=False)

    try:
        pool.run(plan.todo, plan.db_url, on_result)
    except KeyboardInterrupt:
        outcome.interrupted = True
        cut = pool.stop()
        outcome.stopped = _stopped(plan, cut)
        outcome.not_started = len(plan.todo) - len(finished) - len(cut)
    finally:
        bar.close()
        outcome.seconds = time.monotonic() - started
    return outcome


def _remember_failures(plan: Plan, outcome: Outcome) -> None:
    """The submissions this run could not grade, with why, in the gradebook (the class report lists them)."""
    failed = [r for r in outcome.results if r["status"] != "graded"]
    if not failed:
        return
    ledger = Ledger(plan.db_url, plan.course_id)
    try:
        for r in failed:
            ledger.failed(r["assignment"], r["student"], r["why"])
    finally:
        ledger.close()


def _stopped(plan: Plan, cut: list[Task]) -> list[dict]:
    """What was being graded when the run stopped, and whether its grade made it into the gradebook."""
    if not cut:
        return []
    ledger = Ledger(plan.db_url, plan.course_id)
    try:
        out = []
        for t in cut:
            done = t.student in ledger.graded(t.assignment, {t.student: t.digest}, plan.root)
            out.append({"assignment": t.assignment, "student": t.student, "recorded": done})
        return out
    finally:
        ledger.close()


# ----------------------------------------------------------------------------------------------- feedback
def feedback_page(root: Path, assignment: str, student: str) -> Path:
    return root / "feedback" / student / assignment / f"{assignment}.html"


def stale_feedback(root: Path, pairs, also_missing: bool = False) -> list[tuple[str, str]]:
    """The (assignment, student) pairs whose feedback page is older than their autograded notebook (a
    regrade, by this command or by nbgrader autograde, made it stale), and with ``also_missing`` those
    graded without a page. nbgrader's generate_feedback skips an existing page unless forced."""
    out = []
    for a, s in sorted(pairs):
        graded = root / "autograded" / s / a / f"{a}.ipynb"
        page = feedback_page(root, a, s)
        if not graded.is_file():
            continue
        if page.is_file() and page.stat().st_mtime < graded.stat().st_mtime or (also_missing and not page.exists()):
            out.append((a, s))
    return out


def write_feedback(plan: Plan, pairs: list[tuple[str, str]]) -> dict[tuple[str, str], str | None]:
    """nbgrader generate_feedback --force for each pair: {pair: None, or why it failed}."""
    from bertgrader.classes.nbgrader_run import course_config, make_api

    cfg = course_config(plan.root, plan.db_url, plan.sandbox)
    api = make_api(cfg)
    done = {}
    for a, s in pairs:
        result = api.generate_feedback(a, student_id=s, force=True)
        done[(a, s)] = None if result.get("success") else (result.get("error") or result.get("log", ""))[-300:]
    return done


# ----------------------------------------------------------------------------------------------- report
def _per_student(results: list[dict]) -> dict[str, dict]:
    rows: dict[str, dict] = {}
    for r in results:
        row = rows.setdefault(r["student"], {"score": 0.0, "max": 0.0, "lost": 0, "seconds": 0.0, "notes": [],
                                             "graded": 0, "failed": 0})
        row["seconds"] += r.get("seconds", 0.0)
        if r["status"] == "graded":
            row["graded"] += 1
            row["score"] += r["score"]
            row["max"] += r["max_score"]
            row["lost"] += len(r.get("lost", []))
            row["notes"] += [f"{r['assignment']} {p}" for p in r.get("problems", [])]
        else:
            row["failed"] += 1
            row["notes"].append(f"{r['assignment']} NOT GRADED: {r['why']}")
    return rows


_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")


def printable(text) -> str:
    """``text`` with every control character written out (\\x1b...): a student's file name or error message
    cannot move the cursor or erase other students' rows on the instructor's terminal."""
    return _CONTROL.sub(lambda m: f"\\x{ord(m.group()):02x}", str(text))


def clip(text: str, width: int = 100) -> str:
    """``text`` cut at a word boundary to at most ``width`` characters (``...`` marks the cut); the class
    report (``python -m bertgrader report``) prints every message whole."""
    if len(text) <= width:
        return text
    cut = text[:width - 3].rsplit(" ", 1)[0]
    return (cut if cut.strip() else text[:width - 3]) + "..."


def print_summary(outcome: Outcome, out=sys.stdout) -> None:
    """The per-student table (score, parts lost, time, the first problem), then what failed and why."""
    rows = {printable(s): r for s, r in _per_student(outcome.results).items()}
    if rows:
        width = max(12, *(len(s) for s in rows))
        print(f"{'student':<{width}} {'score':>7} {'max':>6} {'lost':>5} {'time s':>7}  problems", file=out)
        for student in sorted(rows):
            r = rows[student]
            score = f"{r['score']:7.1f}" if r["graded"] else f"{'-':>7}"
            mx = f"{r['max']:6.1f}" if r["graded"] else f"{'-':>6}"
            note = r["notes"][0] if r["notes"] else ""
            more = f" (+{len(r['notes']) - 1} more)" if len(r["notes"]) > 1 else ""
            print(f"{student:<{width}} {score} {mx} {r['lost']:>5} {r['seconds']:7.1f}  {clip(printable(note))}{more}",
                  file=out)
    failed = [r for r in outcome.results if r["status"] != "graded"]
    if failed:
        print(f"\nnot graded ({len(failed)}):", file=out)
        for r in sorted(failed, key=lambda r: (r["student"], r["assignment"])):
            print(f"  {printable(r['student'])}/{r['assignment']}: {printable(r['why'])}", file=out)
    graded = len(outcome.results) - len(failed)
    if rows:
        print(f"\nevery message whole, each part's pass rate and the named mistakes: {PROG} report "
              f"{outcome.plan.assignments[0] if len(outcome.plan.assignments) == 1 else 'all'}", file=out)
    shard = f" (shard {outcome.plan.shard[0]}/{outcome.plan.shard[1]})" if outcome.plan.shard else ""
    print(f"\ngraded {graded} submission{'s' * (graded != 1)}, {len(failed)} could not be graded, in "
          f"{outcome.seconds:.1f} s with {outcome.workers} worker{'s' * (outcome.workers != 1)}{shard}; "
          f"{outcome.plan.already} of the {outcome.plan.in_shard} submissions were graded before this run"
          f"{f' ({outcome.plan.adopted} by nbgrader autograde)' if outcome.plan.adopted else ''}; "
          f"gradebook {describe(outcome.plan.db_url)}", file=out)
    flagged = [(r, k) for r in outcome.results for k in r.get("manual_kept", [])]
    if flagged:
        print(f"\nmanual scores to review ({len(flagged)}): the automatic score of these cells changed, or the "
              "written answer was graded before this regrade, and nbgrader still counts the manual score given "
              "before (Formgrader: change or clear it)", file=out)
        for r, k in flagged:
            what = ("written answer, graded before this regrade" if k["auto_before"] is None and k["auto_now"] is None
                    else f"automatic {k['auto_before']} -> {k['auto_now']}")
            print(f"  {printable(r['student'])}/{r['assignment']} {k['cell']}: manual {k['manual']:g}, {what}",
                  file=out)
    if outcome.feedback:
        ok = sorted(f"{printable(s)}/{a}" for (a, s), why in outcome.feedback.items() if why is None)
        bad = {f"{printable(s)}/{a}": why for (a, s), why in outcome.feedback.items() if why is not None}
        print(f"\nfeedback pages written ({len(ok)}; feedback/<student>/<assignment>/, stale ones rewritten): "
              f"{', '.join(ok) or 'none'}", file=out)
        for name, why in sorted(bad.items()):
            print(f"  feedback for {name} FAILED: {printable(why)}", file=out)
    if outcome.interrupted:
        lost = [f"{printable(s['student'])}/{s['assignment']}" for s in outcome.stopped if not s["recorded"]]
        print(f"interrupted: {graded + len(failed)} finished (listed above), "
              f"{len(outcome.stopped) - len(lost)} more finished as it stopped, {len(lost)} stopped while being "
              f"graded ({', '.join(lost) or 'none'}), {outcome.not_started} not started. Run the same command "
              "again to grade the rest.", file=out)


def summary_json(outcome: Outcome) -> dict:
    failed = [r for r in outcome.results if r["status"] != "graded"]
    return {"assignments": outcome.plan.assignments, "graded": len(outcome.results) - len(failed),
            "failed": [{"student": r["student"], "assignment": r["assignment"], "why": r["why"]} for r in failed],
            "already_graded": outcome.plan.already, "adopted": outcome.plan.adopted,
            "interrupted": outcome.interrupted,
            "stopped": outcome.stopped, "not_started": outcome.not_started, "seconds": round(outcome.seconds, 2),
            "workers": outcome.workers, "shard": list(outcome.plan.shard) if outcome.plan.shard else None,
            "feedback_written": sorted(f"{s}/{a}" for (a, s), why in outcome.feedback.items() if why is None),
            "feedback_failed": sorted(f"{s}/{a}" for (a, s), why in outcome.feedback.items() if why is not None),
            "manual_to_review": [{"student": r["student"], "assignment": r["assignment"], **k}
                                 for r in outcome.results for k in r.get("manual_kept", [])],
            "db": describe(outcome.plan.db_url)}


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    # Ctrl-C and SIGTERM (a pod being deleted) stop the run cleanly, also when started from a script that
    # left SIGINT ignored (a shell's background job).
    previous = {sig: signal.signal(sig, handler) for sig, handler in
                ((signal.SIGINT, signal.default_int_handler), (signal.SIGTERM, _on_sigterm))}
    scratch = Path(tempfile.mkdtemp(prefix="course-grade-"))
    pool = None
    try:
        root, assignments, subs = check_arguments(args)
        in_mine = sum(in_shard(s, args.shard) for _, s in subs)
        threads = max(1, (os.cpu_count() or 1) // args.workers)
        pool = Pool(args.workers, root, args.sandbox, threads, scratch, args.timeout)
        if in_mine:
            pool.start(in_mine)  # workers import nbgrader while this process sets up the gradebook
        plan = prepare(args, root, assignments, subs)
        if not plan.in_shard:
            print(f"nothing to grade: none of the {len(subs)} submissions falls in shard "
                  f"{args.shard[0]}/{args.shard[1]}")
        elif not plan.todo and not plan.refused:
            print(f"nothing to grade: all {plan.in_shard} submissions{' of this shard' if plan.shard else ''} "
                  "are graded already (--force regrades them)")
        outcome = run(plan, pool)
        _remember_failures(plan, outcome)
    except SetupError as e:
        print(f"{PROG}: error: {e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(f"{PROG}: interrupted before grading started; nothing was graded", file=sys.stderr)
        return 130
    finally:
        if pool is not None:
            pool.close()
        shutil.rmtree(scratch, ignore_errors=True)
        for sig, handler in previous.items():
            signal.signal(sig, handler)
    if not outcome.interrupted:  # the pages a regrade made stale (and with --feedback, the missing ones)
        try:
            mine = [(a, st) for a, st in subs if in_shard(st, args.shard)]
            outcome.feedback = write_feedback(plan, stale_feedback(root, mine, args.feedback))
        except KeyboardInterrupt:
            print(f"{PROG}: interrupted while writing feedback pages; grading had finished", file=sys.stderr)
    print_summary(outcome)
    summary = summary_json(outcome)
    if args.report:
        Path(args.report).write_text(json.dumps({"summary": summary, "results": outcome.results}, indent=1))
    print(json.dumps(summary))
    if outcome.interrupted:
        return 130
    return 1 if summary["failed"] else 0
