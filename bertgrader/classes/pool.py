"""A pool of grading workers that survives its workers: one that dies or overruns is replaced.

Why not concurrent.futures: a ProcessPoolExecutor whose worker dies breaks as a whole (every pending
future fails), and it cannot stop one task that runs too long. Here each worker is a process with its own
pipe; the coordinator hands out one submission at a time, waits on every pipe and every process at once,
and on a death or a deadline kills that worker (its sandboxed kernel dies with it), reports that
submission as failed, and starts a fresh worker for the rest.
"""
from __future__ import annotations

import multiprocessing as mp
import os
import time
from collections import deque
from dataclasses import dataclass, field
from multiprocessing.connection import wait
from pathlib import Path

from bertgrader.classes.db import SetupError
from bertgrader.classes.nbgrader_run import worker_main

MAX_START_FAILURES = 3  # a worker that cannot start this many times in a row means the set-up is broken


@dataclass(frozen=True)
class Task:
    assignment: str
    student: str
    digest: str  # of the submission folder, recorded in the ledger when graded


@dataclass
class Slot:
    """One worker process and what it is doing."""

    index: int
    scratch: Path
    process: mp.Process | None = None
    conn: object = None
    ready: bool = False
    task: Task | None = None
    since: float = 0.0  # when its task started (time.monotonic)
    start_failures: int = 0
    log_offset: int = 0
    told_db: bool = False  # sent ("db", url)


@dataclass
class Pool:
    workers: int
    root: Path
    sandbox: bool
    threads: int
    scratch: Path  # the run's scratch folder: one sub-folder per worker
    timeout_s: float  # per submission
    slots: list[Slot] = field(default_factory=list)

    def __post_init__(self):
        self._ctx = mp.get_context("spawn")  # a fresh interpreter: no threads or sockets inherited
        self.slots = [Slot(i, self.scratch / f"worker-{i}") for i in range(self.workers)]
        self._active: list[Slot] = []
        self.db_url: str | None = None

    def start(self, expected_tasks: int) -> None:
        """Start the workers now (they take seconds to import nbgrader), no more than there will be tasks."""
        self._active = self.slots[:max(1, min(self.workers, expected_tasks))]
        for slot in self._active:
            if slot.process is None:
                self._start(slot)

    # ------------------------------------------------------------------ workers
    def _start(self, slot: Slot) -> None:
        ours, theirs = self._ctx.Pipe()
        slot.process = self._ctx.Process(
            target=worker_main, name=f"course-grade-{slot.index}", daemon=True,
            args=(theirs, str(self.root), self.sandbox, self.threads, str(slot.scratch), os.getpid()))
        slot.process.start()
        theirs.close()
        slot.conn, slot.ready, slot.task, slot.told_db = ours, False, None, False
        log = slot.scratch / "worker.log"
        slot.log_offset = log.stat().st_size if log.exists() else 0

    def _kill(self, slot: Slot) -> None:
        if slot.process is not None and slot.process.is_alive():
            slot.process.kill()
        if slot.process is not None:
            slot.process.join(timeout=10)
        if slot.conn is not None:
            slot.conn.close()
        slot.process, slot.conn, slot.ready = None, None, False

    def _log_tail(self, slot: Slot, chars: int = 300) -> str:
        log = slot.scratch / "worker.log"
        try:
            with open(log, "rb") as f:
                f.seek(slot.log_offset)
                text = f.read().decode("utf-8", "replace")
        except OSError:
            return ""
        lines = [ln for ln in text.strip().splitlines() if ln.strip() and "Warning" not in ln]
        return " | ".join(lines[-3:])[-chars:]

    def stop(self) -> list[Task]:
        """Kill every worker now; the tasks they were grading (left ungraded in the ledger)."""
        cut = [s.task for s in self.slots if s.task is not None]
        for slot in self.slots:
            self._kill(slot)
            slot.task = None
        return cut

    def close(self) -> None:
        """Let idle workers exit on their own (they close their database connections), then kill any left."""
        for slot in self.slots:
            if slot.conn is not None and slot.task is None:
                try:
                    slot.conn.send(None)
                except OSError:
                    pass
        deadline = time.monotonic() + 10
        for slot in self.slots:
            if slot.process is not None:
                slot.process.join(timeout=max(0.1, deadline - time.monotonic()))
            self._kill(slot)

    # ------------------------------------------------------------------ the loop
    def run(self, tasks, db_url: str, on_result, on_start=None) -> None:
        """Grade every task into the gradebook at ``db_url``; ``on_result(task, result)`` for each, in
        the order they finish. A KeyboardInterrupt propagates (the caller stops the pool and reports)."""
        pending = deque(tasks)
        self.db_url = db_url
        if not self._active:
            self.start(len(pending))
        while pending or any(s.task for s in self.slots):
            self._hand_out(pending, on_start)
            busy = [s for s in self.slots if s.process is not None]
            waitables = {}
            for s in busy:
                waitables[s.conn] = s
                waitables[s.process.sentinel] = s
            deadlines = [s.since + self.timeout_s for s in self.slots if s.task is not None]
            timeout = max(0.05, min(deadlines) - time.monotonic()) if deadlines else 1.0
            for ready in wait(list(waitables), timeout=min(timeout, 5.0)):
                self._handle(waitables[ready], ready, pending, on_result)
            self._enforce_deadlines(pending, on_result)

    def _hand_out(self, pending: deque, on_start) -> None:
        for slot in self._active:
            if pending and slot.process is None and slot.task is None:
                self._start(slot)  # replaces a worker that died or was killed
            if pending and slot.ready and slot.task is None:
                if not slot.told_db:
                    slot.conn.send(("db", self.db_url))
                    slot.told_db = True
                slot.task, slot.since = pending.popleft(), time.monotonic()
                slot.conn.send(("grade", (slot.task.assignment, slot.task.student, slot.task.digest)))
                if on_start:
                    on_start(slot.task)

    def _handle(self, slot: Slot, ready, pending: deque, on_result) -> None:
        if slot.process is None:  # already dealt with in this round
            return
        if ready is slot.conn:
            try:
                kind, payload = slot.conn.recv()
            except (EOFError, OSError):
                kind, payload = "died", None
            if kind == "ready":
                slot.ready, slot.start_failures = True, 0
                return
            if kind == "done":
                task, slot.task = slot.task, None
                on_result(task, payload)
                return
            if kind == "fatal":
                self._start_failed(slot, payload)
                return
        self._died(slot, pending, on_result)

    def _start_failed(self, slot: Slot, why: str) -> None:
        slot.start_failures += 1
        self._kill(slot)
        if slot.start_failures >= MAX_START_FAILURES:
            raise SetupError(f"a grading worker could not start ({MAX_START_FAILURES} tries):\n{why[-2000:]}")

    def _died(self, slot: Slot, pending: deque, on_result) -> None:
        code = slot.process.exitcode if slot.process is not None else None
        if slot.process is not None:
            slot.process.join(timeout=5)
            code = slot.process.exitcode
        task, was_ready, tail = slot.task, slot.ready, self._log_tail(slot)
        self._kill(slot)
        slot.task = None
        how = f"killed by signal {-code}" if code is not None and code < 0 else f"exit code {code}"
        if task is not None:
            on_result(task, {"assignment": task.assignment, "student": task.student, "status": "failed",
                             "seconds": time.monotonic() - slot.since,
                             "why": f"the grading process died while grading it ({how})"
                                    + (f": {tail}" if tail else "")})
        elif not was_ready:
            self._start_failed(slot, f"it exited before it was ready ({how}): {tail}")

    def _enforce_deadlines(self, pending: deque, on_result) -> None:
        now = time.monotonic()
        for slot in self.slots:
            if slot.task is not None and now - slot.since > self.timeout_s:
                task = slot.task
                self._kill(slot)
                slot.task = None
                on_result(task, {"assignment": task.assignment, "student": task.student, "status": "failed",
                                 "seconds": now - slot.since,
                                 "why": f"its grading took longer than --timeout {self.timeout_s:g} s and was stopped"})
