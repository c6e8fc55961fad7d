"""The book's execution, scheduled on every core before Jupyter Book renders it: ``python -m course.build``.

``make book`` runs this, then ``jupyter-book build``. Two kinds of work, one queue:

* chapters 11 and 12's training runs (``course.runs.RUNS``), each kept in ``book_runs/`` (committed) under a key of its inputs;
* every notebook of the table of contents, executed exactly as Jupyter Book would (same reader, same
  kernel, same timeout) and stored in Jupyter Book's own cache (``_build/.jupyter_cache``), which it then
  reads instead of executing. A chapter that reads runs (``READS_RUNS``) runs after them.

``--jobs`` workers (default: the cores) take the ready job that has the longest chain of work behind it, so
the default pretraining run starts first and the short chapters fill the gaps. Every run has its own
progress bar in its log (``_build/run_logs``); the terminal gets a line every ``--every`` seconds naming
each job in progress with its step and time left, and at the end the seconds of every job. Nothing is lost
on Ctrl-C or a crash: each finished run and notebook is already stored, and the next build resumes.

No training run is inside a notebook cell, so no cell timeout limits how slow a machine may be; the cells
left are short, and ``--report`` prints their slowest against the timeout.
"""
from __future__ import annotations

import argparse
import concurrent.futures as cf
import contextlib
import fcntl
import functools
import json
import multiprocessing
import os
import re
import sys
import time
from pathlib import Path

import yaml

from course import runs

ROOT = Path(__file__).resolve().parents[1]
BUILD = ROOT / "_build"
NB_CACHE = BUILD / ".jupyter_cache"  # where Jupyter Book's cache mode looks (execute.execute_notebooks: cache)
LOGS = BUILD / "run_logs"
CELL_TIMES = BUILD / "cell_times.json"  # every executed cell's seconds, with its notebook's timeout
# The chapters that read runs, and which: each executes after them, and again whenever one of them is computed
# anew (its stored outputs show the old run). Chapter 11 reads the default run, the step timings and the
# fine-tunings; chapter 12 the experiments and the few-label runs beside them (MiniLM's, and the tiny model's
# topics fine-tuning for its baselines and recipe); chapter 7's fill-mask demo the default run's checkpoint.
# Together 11 and 12 read every run (tests/test_build.py checks each list against the chapter's text).
_EXPERIMENT_RUNS = tuple(name for name, run in runs.RUNS.items()
                         if run.func.startswith("projects.") or name.startswith("minilm "))
READS_RUNS = {
    "chapters/11_pretraining": tuple(name for name in runs.RUNS if name not in _EXPERIMENT_RUNS),
    "chapters/12_experiments": _EXPERIMENT_RUNS + ("docstring_topics pretrained tiny",),
    "chapters/07_mlm": ("pretraining",),
}
NOTEBOOK_COST = 25.0  # about how long a chapter takes to execute, for the order of the queue


# ----------------------------------------------------------------------------------------------- the notebooks
def toc_pages() -> list[str]:
    """Every document of _toc.yml, root first, without extension."""
    toc = yaml.safe_load((ROOT / "_toc.yml").read_text())
    pages = [toc["root"]]

    def walk(entries):
        for e in entries or []:
            if "file" in e:
                pages.append(e["file"])
            walk(e.get("sections"))
            walk(e.get("chapters"))

    for part in toc.get("parts", []):
        walk(part.get("chapters"))
    walk(toc.get("chapters"))
    return pages


@functools.lru_cache(maxsize=1)
def _config() -> dict:
    return yaml.safe_load((ROOT / "_config.yml").read_text())


def read_notebook(page: str):
    """The page as the notebook myst-nb reads (same reader, same Markdown extensions), or None if the page is
    not a notebook."""
    from myst_nb.core.read import is_myst_markdown_notebook, read_myst_markdown_notebook
    from myst_parser.config.main import MdParserConfig

    path = ROOT / f"{page}.md"
    if not path.exists():
        return None
    text = path.read_text(encoding="utf-8")
    if not is_myst_markdown_notebook(text):
        return None
    extensions = set(_config().get("parse", {}).get("myst_enable_extensions", []))
    return read_myst_markdown_notebook(text, config=MdParserConfig(enable_extensions=extensions),
                                      add_source_map=True, path=str(path))


def notebook_timeout(nb) -> int:
    """The cell timeout Jupyter Book applies to this notebook: its front matter's, else _config.yml's."""
    own = nb.metadata.get("mystnb", {}).get("execution_timeout")
    return int(own if own is not None else _config().get("execute", {}).get("timeout", 30))


@functools.lru_cache(maxsize=1)
def _nb_cache():
    from jupyter_cache import get_cache

    NB_CACHE.mkdir(parents=True, exist_ok=True)
    return get_cache(str(NB_CACHE))


def _cache_record(page: str):
    """Jupyter Book's stored execution of the page as it is now, or None."""
    nb = read_notebook(page)
    try:
        return None if nb is None else _nb_cache().match_cache_notebook(nb)
    except KeyError:
        return None


def figures_current(nb) -> bool:
    """Whether every figure the notebook shows was drawn by course/plots.py as it is now (its PNG names the
    version, ``plots.FIGURES_VERSION``): the book's figures, their descriptions and phone versions come from it.
    Likewise every concept drawing (its SVG names ``drawings.DRAWINGS_VERSION``)."""
    import base64

    from course.drawings import DRAWINGS_VERSION
    from course.plots import figure_current

    for cell in nb.cells:
        for output in cell.get("outputs", []):
            page = output.get("data", {}).get("text/html")
            page = "".join(page) if isinstance(page, list) else page or ""
            if 'class="bert-drawing"' in page and f'data-drawings="{DRAWINGS_VERSION}"' not in page:
                return False
            data = output.get("data", {}).get("image/png")
            if data and not figure_current(base64.b64decode(data)):  # its code, or its Chinese words, changed
                return False
    return True


def notebook_is_cached(page: str) -> bool:
    """Stored, and its figures drawn by the current course/plots.py."""
    if read_notebook(page) is None:
        return True
    record = _cache_record(page)
    return record is not None and figures_current(_nb_cache().get_cache_bundle(record.pk).nb)


def executed_at(page: str) -> float | None:
    """When the page's stored execution was made (seconds since the epoch), or None if there is none."""
    import datetime

    record = _cache_record(page)
    return None if record is None else record.created.replace(tzinfo=datetime.timezone.utc).timestamp()


def run_notebook(page: str, timeout: int | None = None):
    """Execute the page's notebook as myst-nb's cache mode does (its reader, its folder, its timeout unless
    ``timeout`` is given); returns the executed notebook, its seconds and each code cell's [index, seconds].
    Raises if a cell fails or times out."""
    from jupyter_cache.executors.utils import single_nb_execution

    nb = read_notebook(page)
    timeout = notebook_timeout(nb) if timeout is None else timeout
    result = single_nb_execution(nb, cwd=str((ROOT / page).parent), timeout=timeout, allow_errors=False,
                                 meta_override=True, record_timing=True)
    if result.err is not None:
        raise RuntimeError(f"{page}: a cell failed\n{result.exc_string}")
    cells = []
    for i, cell in enumerate(nb.cells):
        # the cache matches notebooks by their cells' metadata, which must stay what myst-nb reads
        timing = cell.metadata.pop("execution", None)
        if cell.cell_type == "code" and timing:
            start, end = timing.get("iopub.execute_input"), timing.get("shell.execute_reply")
            if start and end:
                cells.append([i, _seconds_between(start, end)])
    return nb, result.time, cells


def execute_notebook(page: str) -> float:
    """Execute the page's notebook and store it in Jupyter Book's cache, its cell times in ``CELL_TIMES``;
    returns its seconds."""
    from jupyter_cache.base import CacheBundleIn

    nb, seconds, cells = run_notebook(page)
    with _locked(BUILD / ".cell_times.lock"):  # two workers may finish at once
        times = json.loads(CELL_TIMES.read_text()) if CELL_TIMES.exists() else {}
        times[page] = {"timeout": notebook_timeout(nb), "cells": cells, "seconds": seconds}
        CELL_TIMES.write_text(json.dumps(times, indent=1))
        cache = _nb_cache()
        record = cache.add_nb_to_project(str(ROOT / f"{page}.md"), read_data={"type": "plugin", "name": "myst_nb_md"})
        cache.cache_notebook_bundle(CacheBundleIn(nb, record.uri, data={"execution_seconds": seconds}),
                                    check_validity=False, overwrite=True)
    return seconds


def _seconds_between(start: str, end: str) -> float:
    from datetime import datetime

    start_t, end_t = (datetime.fromisoformat(t.replace("Z", "+00:00")) for t in (start, end))
    return (end_t - start_t).total_seconds()


@contextlib.contextmanager
def _locked(path: Path):
    """Hold an exclusive lock on ``path`` (created if missing)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        yield


# ----------------------------------------------------------------------------------------------------- the jobs
class Job:
    def __init__(self, kind: str, name: str, cost: float, after: tuple[str, ...] = ()):
        self.kind, self.name, self.cost, self.after = kind, name, cost, after
        self.log = LOGS / (re.sub(r"[^\w.-]+", "_", name) + ".log")

    def __repr__(self):
        return self.name


def plan() -> list[Job]:
    """What is not stored yet: the runs, then the notebooks; a chapter that reads runs (``READS_RUNS``) after
    them, and executed again when one of them is computed now."""
    pending_runs = {name for name in runs.RUNS if not runs.is_cached(name)}
    # a run waits only for the runs computed now: one stored already (the default run, when only a fine-tuning
    # or experiment 5 is to be computed again) is never "done" in this build, so waiting for it would never end
    jobs = [Job("run", name, run.cost, tuple(a for a in run.after if a in pending_runs))
            for name, run in runs.RUNS.items() if name in pending_runs]
    for page in toc_pages():
        after = tuple(sorted(pending_runs.intersection(READS_RUNS.get(page, ()))))
        if after or not notebook_is_cached(page):
            jobs.append(Job("notebook", page, NOTEBOOK_COST, after))
    return jobs


def chain(jobs: list[Job]) -> dict[str, float]:
    """For each job, its cost plus the longest chain of jobs that wait for it: the queue's priority."""
    waiting = {j.name: [k for k in jobs if j.name in k.after] for j in jobs}
    memo: dict[str, float] = {}

    def rest(j: Job) -> float:
        if j.name not in memo:
            memo[j.name] = j.cost + max((rest(k) for k in waiting[j.name]), default=0.0)
        return memo[j.name]

    return {j.name: rest(j) for j in jobs}


def worker_pool(processes: int) -> cf.ProcessPoolExecutor:
    """The build's worker processes: started with ``spawn`` (a fork of a process that has already run torch can
    hang in its thread pool), one torch thread each (the other cores run the other jobs)."""
    import torch

    return cf.ProcessPoolExecutor(processes, mp_context=multiprocessing.get_context("spawn"),
                                  initializer=torch.set_num_threads, initargs=(1,))


def _work(kind: str, name: str, log: str) -> float:
    """One job, in a worker process; its progress bars go to its log."""
    with open(log, "w", buffering=1) as f, _output_to(f):
        t0 = time.perf_counter()
        if kind == "run":
            runs.result(name, progress=True)
        else:
            execute_notebook(name)
        return time.perf_counter() - t0


@contextlib.contextmanager
def _output_to(f):
    """Everything the job prints, its kernel's too (a child process writes to file descriptors 1 and 2),
    into ``f``; the terminal gets only the build's own lines."""
    sys.stdout.flush(), sys.stderr.flush()
    saved = os.dup(1), os.dup(2)
    os.dup2(f.fileno(), 1), os.dup2(f.fileno(), 2)
    try:
        with contextlib.redirect_stderr(f), contextlib.redirect_stdout(f):
            yield
    finally:
        sys.stdout.flush(), sys.stderr.flush()
        os.dup2(saved[0], 1), os.dup2(saved[1], 2)
        os.close(saved[0]), os.close(saved[1])


_BAR = re.compile(r"(\d+)/(\d+) \[[\d:]+<([\d:?]+)")


def progress_of(job: Job) -> str:
    """The last state of the job's progress bar, e.g. '1430/3000 steps, 1:52 left'."""
    try:
        text = job.log.read_text(errors="replace")
    except OSError:
        return ""
    states = [s for s in re.split(r"[\r\n]", text) if _BAR.search(s)]
    if not states:
        return ""
    bar = states[-1]
    label = bar.split(":")[0].strip() if ":" in bar.split("|")[0] else ""
    done, total, left = _BAR.search(bar).groups()
    return f"{label + ' ' if label else ''}{done}/{total} steps, {left} left"


def _clock(seconds: float) -> str:
    return f"{int(seconds // 60)}:{int(seconds % 60):02d}"


def build(jobs_n: int, every: float, out=sys.stdout) -> dict[str, float]:
    """Run every job not stored yet on ``jobs_n`` processes; the seconds of each job."""
    jobs = plan()
    if not jobs:
        print("course.build: every run and notebook is stored already", file=out)
        return {}
    LOGS.mkdir(parents=True, exist_ok=True)
    priority = chain(jobs)
    total_cost = sum(j.cost for j in jobs)
    print(f"course.build: {len(jobs)} jobs ({sum(j.kind == 'run' for j in jobs)} training runs, "
          f"{sum(j.kind == 'notebook' for j in jobs)} notebooks) on {jobs_n} processes; logs in "
          f"{os.path.relpath(LOGS)}", file=out, flush=True)
    queue = sorted(jobs, key=lambda j: -priority[j.name])
    done: dict[str, float] = {}
    failures: list[str] = []
    running: dict[cf.Future, tuple[Job, float]] = {}
    t0 = time.perf_counter()
    last_report = t0
    os.environ.setdefault("TQDM_MININTERVAL", "2")  # the logs' progress bars: a line every 2 s, read at import
    pool = worker_pool(jobs_n)
    try:
        while queue or running:
            for job in [j for j in queue if all(a in done for a in j.after)][:jobs_n - len(running)]:
                queue.remove(job)
                running[pool.submit(_work, job.kind, job.name, str(job.log))] = (job, time.perf_counter())
            finished, _ = cf.wait(running, timeout=1.0, return_when=cf.FIRST_COMPLETED)
            now = time.perf_counter()
            for fut in finished:
                job, started = running.pop(fut)
                try:
                    done[job.name] = fut.result()
                except cf.process.BrokenProcessPool:  # its worker was stopped: Ctrl-C, or killed
                    failures.append(f"course.build: {job.name} stopped after {now - started:.0f} s "
                                    "(its worker process ended: Ctrl-C or a kill); it left nothing half-made")
                    print(f"[{_clock(now - t0)}] STOPPED {job.name}", file=out, flush=True)
                    queue.clear()
                    continue
                except Exception as e:
                    tail = job.log.read_text(errors="replace")[-3000:] if job.log.exists() else ""
                    failures.append(f"course.build: {job.name} failed after {now - started:.0f} s: {e}\n"
                                    f"--- the end of {job.log}:\n{tail}")
                    print(f"[{_clock(now - t0)}] FAILED {job.name}; the jobs running finish, no new one starts",
                          file=out, flush=True)
                    queue.clear()
                    continue
                print(f"[{_clock(now - t0)}] done {job.name} ({done[job.name]:.0f} s)", file=out, flush=True)
            if running and now - last_report >= every:
                last_report = now
                left = sum(j.cost for j in queue)
                parts = [f"{job.name} {_clock(now - started)}" + (f" ({p})" if (p := progress_of(job)) else "")
                         for job, started in running.values()]
                print(f"[{_clock(now - t0)}] {len(done)}/{len(jobs)} done, running: " + "; ".join(parts)
                      + f"; queued about {_clock(left / jobs_n)} of work", file=out, flush=True)
    except KeyboardInterrupt:
        pool.shutdown(wait=False, cancel_futures=True)
        raise SystemExit(f"course.build: interrupted; the {len(done)} jobs that finished are stored, "
                         "the next build resumes from them") from None
    pool.shutdown()
    if failures:
        raise SystemExit("\n".join(failures) + f"\ncourse.build: the {len(done)} jobs that finished are stored; "
                         "the next build resumes from them")
    wall = time.perf_counter() - t0
    print(f"course.build: {len(jobs)} jobs in {_clock(wall)} ({sum(done.values()) / wall:.2f} processes busy "
          f"on average; estimated {total_cost:.0f} s of work)", file=out)
    for name, seconds in sorted(done.items(), key=lambda kv: -kv[1]):
        print(f"  {seconds:7.1f} s  {name}", file=out)
    return done


def report(out=sys.stdout) -> float:
    """The slowest cells of the last build against their notebook's timeout; returns the smallest margin."""
    times = json.loads(CELL_TIMES.read_text())
    margins = []
    for page, t in sorted(times.items()):
        slowest = max((s for _, s in t["cells"]), default=0.0)
        margins.append(t["timeout"] / max(slowest, 1e-3))
        print(f"{page:36} {t['seconds']:6.1f} s, slowest cell {slowest:5.1f} s of {t['timeout']} s", file=out)
    return min(margins)


def main(argv=None) -> None:
    p = argparse.ArgumentParser(prog="python -m course.build", description=__doc__.split("\n\n")[0])
    p.add_argument("--jobs", type=int, default=os.cpu_count() or 1, help="worker processes (default: the cores)")
    p.add_argument("--every", type=float, default=15.0, help="seconds between progress lines (default 15)")
    p.add_argument("--report", action="store_true",
                   help="print each notebook's time and slowest cell against its timeout (of the last build)")
    a = p.parse_args(argv)
    if a.jobs < 1:
        p.error(f"--jobs must be at least 1, got {a.jobs}")
    if a.every <= 0:
        p.error(f"--every must be positive, got {a.every}")
    if a.report:
        if not CELL_TIMES.exists():
            p.error(f"{CELL_TIMES} does not exist: run python -m course.build first")
        print(f"smallest margin: the timeout is {report():.1f} times the slowest cell")
        return
    build(a.jobs, a.every)


if __name__ == "__main__":
    main()
