"""Grade a class of 60 with `python -m bertgrader`, 1 worker against 2, and say where the time goes.

    python benchmarks/bench_class.py              # target: 2 workers >= 1.7x 1 worker, on a 2-core machine

A temporary course gets every assignment released. Sixty students submit 08_masking (assignment 8: the
solution and its named mistakes, in turn); one student submits every assignment, one notebook each. In one
run, taking turns on the same course:

    1 worker    python -m bertgrader 08_masking --workers 1 --force --student <the 60>
    2 workers   python -m bertgrader 08_masking --workers 2 --force --student <the 60>
    every       python -m bertgrader all --student calib --workers 1    (one notebook of each assignment)

Each command's wall time is timed whole (start-up included). Every submission's time is split (from the
command's --report) into prepare (nbgrader reads and sanitises the submission), kernel (starting the
sandboxed kernel), imports (the setup cell: torch and bertlib), cells (the student's cells) and grader
(the hidden tests, calling into the kernel, and nbgrader saving the grades). The run over every assignment
gives each assignment's time per notebook, from which a 300-student class doing every assignment is
extrapolated at the measured speed-up.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from statistics import mean

from bertgrader.assignment import assignments, autograded_points, filled, solution_answers
from bertgrader.trial import Course, load_mistakes, solution_submission

REPO = Path(__file__).resolve().parents[1]  # the course these benchmarks grade a copy of

A = "08_masking"
CLASS_SIZE = 60
TARGET_SPEEDUP = 1.7
STUDENTS = 300  # the class to extrapolate to, each student doing every assignment
PHASES = ["prepare", "kernel", "imports", "cells", "grader"]


def build_class(course: Course) -> dict[str, float]:
    """Submit the 60 (solutions and named mistakes, in turn) and one of each assignment; the 60's
    expected totals, from the mistakes' lost parts."""
    source, release = course.source(A), course.release(A)
    answers = solution_answers(source)
    points = autograded_points(source)  # a written answer is graded by hand
    variants = [("solution", {}, [])] + [(n, m["cells"], m["loses"]) for n, m in load_mistakes(REPO, A).items()]
    expected = {}
    for i in range(CLASS_SIZE):
        name, cells, loses = variants[i % len(variants)]
        student = f"s{i:03d}"
        course.submit(student, A, filled(release, answers | cells))
        expected[student] = sum(p for g, p in points.items() if g not in loses)
    for a in course.assignments:
        course.submit("calib", a, solution_submission(course, a))
    return expected


def cpu_seconds() -> tuple[float, float]:
    """(CPU seconds at nice 0, CPU seconds of niced processes) of the whole machine so far, from
    /proc/stat. The grader runs at nice 0; a niced job of someone else's shows in the second."""
    fields = [int(x) for x in open("/proc/stat").readline().split()[1:]]
    tick = os.sysconf("SC_CLK_TCK")
    user, nice, system, _, _, irq, softirq = fields[:7]
    return (user + system + irq + softirq) / tick, nice / tick


def timed(course: Course, *args) -> dict:
    """Run the command; its wall time, the cores busy at nice 0 and niced while it ran, its report."""
    report = course.root.parent / f"report-{time.monotonic_ns()}.json"
    env = dict(os.environ, HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1", TOKENIZERS_PARALLELISM="false",
               MPLBACKEND="Agg")
    busy0, niced0 = cpu_seconds()
    start = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "bertgrader", *args, "--report", str(report)], cwd=course.root,
                          env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    wall = time.perf_counter() - start
    busy1, niced1 = cpu_seconds()
    if proc.returncode != 0:
        raise SystemExit(f"bertgrader {' '.join(args)} exited {proc.returncode}:\n{proc.stdout[-3000:]}\n"
                         f"{proc.stderr[-3000:]}")
    data = json.loads(report.read_text())
    return {"wall": wall, "cores": (busy1 - busy0) / wall, "niced": (niced1 - niced0) / wall,
            "grading": data["summary"]["seconds"], "results": data["results"]}


_LOOP = "import time\nt = time.perf_counter()\ns = 0\nfor i in range(15_000_000):\n    s += i\nprint(time.perf_counter() - t)"


def machine_scaling(rounds: int = 3) -> float:
    """What this machine gives two CPU-bound processes at once: the time of a pure-Python loop run alone
    over its time when two run together (2.0 on two idle, independent cores), best of ``rounds``."""
    def loop(n: int) -> float:
        procs = [subprocess.Popen([sys.executable, "-c", _LOOP], stdout=subprocess.PIPE, text=True) for _ in range(n)]
        return max(float(p.communicate()[0]) for p in procs)

    alone = min(loop(1) for _ in range(rounds))
    together = min(loop(2) for _ in range(rounds))
    return 2 * alone / together


def breakdown(results: list[dict]) -> dict[str, float]:
    """Mean seconds per notebook in each phase, and in all."""
    rows = [r for r in results if r.get("phases")]
    out = {p: mean(r["phases"][p] for r in rows) for p in PHASES}
    out["total"] = mean(r["seconds"] for r in rows)
    return out


def check_scores(run: dict, expected: dict[str, float], label: str) -> list[str]:
    got = {r["student"]: r.get("score") for r in run["results"]}
    return [f"{label}: {s} scored {got.get(s)}, expected {e}" for s, e in expected.items() if got.get(s) != e]


def main() -> int:
    ids = assignments(REPO)
    load_before = os.getloadavg()[0]
    scaling_before = machine_scaling()
    with tempfile.TemporaryDirectory() as tmp:
        course = Course(Path(tmp) / "course", ids, origin=REPO)
        course.generate("*")
        expected = build_class(course)
        the60 = ["--student", *sorted(expected)]  # not calib, who submitted A too
        one = timed(course, A, "--workers", "1", "--force", *the60)
        two = timed(course, A, "--workers", "2", "--force", *the60)
        every = timed(course, "all", "--student", "calib", "--workers", "1", "--force")
    scaling_after = machine_scaling()
    failures = check_scores(one, expected, "1 worker") + check_scores(two, expected, "2 workers")
    per_assignment = {r["assignment"]: r["seconds"] for r in every["results"]}
    failures += [f"every assignment: {r['assignment']} {r['status']}" for r in every["results"]
                 if r["status"] != "graded"]

    speedup = one["wall"] / two["wall"]
    grading_speedup = one["grading"] / two["grading"]
    print(f"python -m bertgrader {A}, {CLASS_SIZE} submissions, on {os.cpu_count()} cores "
          f"(load average {load_before:.1f} before, {os.getloadavg()[0]:.1f} after)")
    print(f"{'':<12}{'wall s':>9}{'per nb s':>10}{'nb/min':>8}{'grading s':>11}{'cores busy':>12}{'niced':>7}")
    for label, run in (("1 worker", one), ("2 workers", two)):
        print(f"{label:<12}{run['wall']:9.1f}{run['wall'] / CLASS_SIZE:10.2f}{60 * CLASS_SIZE / run['wall']:8.1f}"
              f"{run['grading']:11.1f}{run['cores']:12.2f}{run['niced']:7.2f}")
    print(f"speed-up with 2 workers: {speedup:.2f}x whole command, {grading_speedup:.2f}x grading only "
          f"(target >= {TARGET_SPEEDUP}x): {'met' if speedup >= TARGET_SPEEDUP else 'NOT MET'}")
    print(f"this machine's own speed-up for two CPU-bound processes (a Python loop, alone vs two at once): "
          f"{scaling_before:.2f}x before, {scaling_after:.2f}x after (2.00 on two free cores); 'niced' above: "
          "cores taken by other, niced jobs while each run ran")

    print("\nwhere a notebook's time goes, mean seconds (its own wall time; with 2 workers two run at once):")
    print(f"{'':<12}" + "".join(f"{p:>9}" for p in PHASES) + f"{'total':>9}")
    for label, run in (("1 worker", one), ("2 workers", two)):
        b = breakdown(run["results"])
        print(f"{label:<12}" + "".join(f"{b[p]:9.2f}" for p in PHASES) + f"{b['total']:9.2f}")

    print(f"\none notebook of each assignment, 1 worker ({every['wall']:.1f} s for the command):")
    print("  " + ", ".join(f"{a} {s:.1f} s" for a, s in sorted(per_assignment.items())))
    serial_class = STUDENTS * sum(per_assignment.values())  # one worker, back to back
    start_up = one["wall"] - one["grading"]
    print(f"extrapolated, {STUDENTS} students x {len(per_assignment)} assignments "
          f"({STUDENTS * len(per_assignment)} notebooks): 1 worker {serial_class / 60:.0f} min, "
          f"2 workers on this machine {serial_class / speedup / 60:.0f} min (at the measured {speedup:.2f}x); "
          f"N such machines in shards: {serial_class / speedup / 60:.0f}/N min, plus {start_up:.0f} s start-up each")
    if failures:
        print("wrong results:", *failures, sep="\n  ")
        return 1
    return 0  # a slow run on a busy machine is reported above, not failed: wall time depends on the load


if __name__ == "__main__":
    sys.exit(main())
