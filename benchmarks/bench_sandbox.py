"""The sandbox's cost: one student's notebooks, one per assignment, autograded sandboxed and unsandboxed.

    python benchmarks/bench_sandbox.py [--rounds 2]      # target: sandboxed <= 1.2x unsandboxed

Both runs are the README's `nbgrader autograde "*" --student bench` on the same temporary course with
trusted grading on (hidden tests in the grader's process); one passes `--TrustedExecute.sandbox=none`.
They take turns, `--rounds` times each, and the best time of each is compared. Both must give the
solution full marks.
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bertgrader.assignment import assignments, autograded_points
from bertgrader.trial import Course, solution_submission

REPO = Path(__file__).resolve().parents[1]  # the course these benchmarks grade a copy of

TARGET = 1.2


def grade(course: Course, sandbox: str) -> float:
    env = dict(os.environ, HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1", MPLBACKEND="Agg")
    start = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "nbgrader", "autograde", "*", "--student", "bench", "--force",
                           f"--TrustedExecute.sandbox={sandbox}"], cwd=course.root, env=env,
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    seconds = time.perf_counter() - start
    if proc.returncode != 0:
        raise SystemExit(f"autograde ({sandbox}) failed:\n{proc.stdout[-3000:]}")
    for a in course.assignments:
        full = sum(autograded_points(course.source(a)).values())  # a written answer is graded by hand
        if course.total(a, "bench") != full:
            raise SystemExit(f"{a} ({sandbox}): the solution scored {course.scores(a, 'bench')}, not {full}")
    return seconds


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=2, help="runs of each kind, taking turns (default 2)")
    args = parser.parse_args()
    if args.rounds < 1:
        parser.error("--rounds must be at least 1")
    ids = assignments(REPO)
    with tempfile.TemporaryDirectory() as tmp:
        course = Course(Path(tmp) / "course", ids, origin=REPO)
        course.generate("*")
        for a in ids:
            course.submit("bench", a, solution_submission(course, a))
        times = {"bwrap": [], "none": []}
        for r in range(args.rounds):
            for kind in ("bwrap", "none") if r % 2 == 0 else ("none", "bwrap"):
                times[kind].append(grade(course, kind))
                print(f"round {r + 1}: {kind:5s} {times[kind][-1]:6.1f} s", flush=True)
    sandboxed, bare = min(times["bwrap"]), min(times["none"])
    n = len(ids)
    print(f"\n{n} notebooks, best of {args.rounds}: sandboxed {sandboxed:.1f} s ({sandboxed / n:.2f} s a notebook), "
          f"unsandboxed {bare:.1f} s ({bare / n:.2f} s a notebook)")
    print(f"sandboxed / unsandboxed = {sandboxed / bare:.2f}x (target <= {TARGET}x)")
    return 0 if sandboxed / bare <= TARGET else 1


if __name__ == "__main__":
    raise SystemExit(main())
