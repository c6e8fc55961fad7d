"""The book's build: chapter 11's runs kept by their inputs (course.runs), the scheduled execution of every
notebook into Jupyter Book's own cache (course.build), and a build that a slow machine cannot time out.

The first tests need nothing built. The ones marked ``book`` read what `make book` left in _build.
"""
from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest

from course import build, runs

ROOT = Path(__file__).resolve().parents[1]


# --------------------------------------------------------------------------------------- the runs and their keys
@pytest.fixture
def scratch_runs(tmp_path, monkeypatch):
    """course.runs on an empty cache in tmp_path, with two cheap runs (one building on the other)."""
    calls = []

    def fake(progress=False, value=0, out=None):
        calls.append(value)
        return {"value": value, "progress": progress}

    monkeypatch.setattr(sys.modules[__name__], "fake_run", fake, raising=False)
    monkeypatch.setattr(runs, "CACHE", tmp_path / "runs")
    monkeypatch.setattr(runs, "RUNS", {
        "first": runs.Run(f"{__name__}:fake_run", {"value": 1}, 1.0),
        "second": runs.Run(f"{__name__}:fake_run", {"value": 2}, 1.0, ("first",)),
    })
    monkeypatch.setattr(runs, "_VERSION", {False: "code v1", True: "code v1"})
    return calls


def test_a_run_is_computed_once_then_read(scratch_runs):
    assert not runs.is_cached("first")
    assert runs.result("first") == {"value": 1, "progress": False}
    assert runs.is_cached("first")
    assert runs.result("first") == {"value": 1, "progress": False}
    assert scratch_runs == [1], "the second read computed the run again"


def test_a_run_computes_what_it_builds_on_first(scratch_runs):
    assert runs.result("second")["value"] == 2
    assert scratch_runs == [1, 2]
    assert runs.is_cached("first")


def test_the_key_changes_with_the_code_the_arguments_and_what_the_run_builds_on(scratch_runs, monkeypatch):
    first, second = runs.key("first"), runs.key("second")
    monkeypatch.setattr(runs, "_VERSION", {False: "code v2", True: "code v2"})
    assert runs.key("first") != first and runs.key("second") != second
    monkeypatch.setattr(runs, "_VERSION", {False: "code v1", True: "code v1"})
    assert runs.key("first") == first
    monkeypatch.setitem(runs.RUNS, "first", runs.Run(f"{__name__}:fake_run", {"value": 3}, 1.0))
    assert runs.key("first") != first
    assert runs.key("second") != second, "a run's key must follow the key of the run it builds on"


def test_a_new_result_replaces_the_stale_one(scratch_runs, monkeypatch):
    runs.result("first")
    old = runs.entry("first")
    monkeypatch.setattr(runs, "_VERSION", {False: "code v2", True: "code v2"})
    runs.result("first")
    assert runs.entry("first").exists() and not old.exists()
    assert scratch_runs == [1, 1]


def test_a_failed_run_stores_nothing(scratch_runs, monkeypatch):
    def broken(progress=False):
        raise RuntimeError("boom")

    monkeypatch.setattr(sys.modules[__name__], "broken_run", broken, raising=False)
    monkeypatch.setitem(runs.RUNS, "first", runs.Run(f"{__name__}:broken_run", {}, 1.0))
    with pytest.raises(RuntimeError, match="boom"):
        runs.result("first")
    assert not runs.is_cached("first")
    assert not [p for p in runs.CACHE.iterdir() if p.is_dir()], "a half-made entry was left behind"


def test_the_code_version_covers_bertlib_the_experiments_and_the_demo_hook():
    """Every file whose change can change a run's result is hashed."""
    import inspect

    source = inspect.getsource(runs._code_version)
    assert '"bertlib"' in source and "pretraining.py" in source and "torch.__version__" in source
    assert "PROJECT" in source and runs.PROJECT == ROOT / "projects" / "pretraining_experiments"
    for name, run in runs.RUNS.items():
        module = run.func.split(":")[0]
        assert (module.startswith(("bertlib.", "projects.pretraining_experiments.")) or module == "course.runs"), (
            f"{name}: {module} is not hashed")


def test_an_edit_to_the_experiments_retrains_them_and_nothing_else(monkeypatch):
    """The experiments' project is hashed into the experiments' keys only: the default run, the fine-tunings and
    the step timings never import it, so an edit there leaves their stored results valid."""
    monkeypatch.setattr(runs, "_VERSION", {False: "library v1", True: "library v1, experiments v1"})
    before = {name: runs.key(name) for name in runs.RUNS}
    monkeypatch.setattr(runs, "_VERSION", {False: "library v1", True: "library v1, experiments v2"})
    changed = {name for name in runs.RUNS if runs.key(name) != before[name]}
    assert changed == {n for n, r in runs.RUNS.items() if r.func.startswith("projects.")}, changed
    assert "pretraining" not in changed and "experiment 5" in changed
    assert runs._code_version(False) != runs._code_version(True)


def test_a_run_defined_here_is_keyed_by_its_own_source(scratch_runs, monkeypatch):
    """course.runs' own functions (the default run, the step timings) are hashed by their source, so an edit
    to one recomputes its run and an edit elsewhere in the module recomputes nothing."""
    monkeypatch.setitem(runs.RUNS, "first", runs.Run("course.runs:step_timings", {}, 1.0))
    before = runs.key("first")
    monkeypatch.setattr(runs.inspect, "getsource", lambda f: "def step_timings(): changed")
    assert runs.key("first") != before


RUN_CHAPTERS = ("chapters/11_pretraining", "chapters/12_experiments")  # the chapters of the training runs


def runs_named(text: str) -> tuple[set[str], list[re.Pattern]]:
    """The runs a chapter reads: the names of its ``runs.result("name")`` calls, and a pattern for each templated
    ``runs.result(f"...")`` (its fields match anything)."""
    named = set(re.findall(r'runs\.result\("([^"]+)"\)', text))
    templates = [re.compile(re.sub(r"\\\{[^}]*\\\}", ".+", re.escape(t)))
                 for t in re.findall(r'runs\.result\(f"([^"]+)"\)', text)]
    return named, templates


@pytest.mark.parametrize("page", RUN_CHAPTERS)
def test_every_run_the_chapter_reads_is_in_the_catalogue_and_waited_for(page):
    """Each run the chapter reads exists, and the build computes it before it executes the chapter
    (``READS_RUNS``); the chapter waits for nothing it does not read."""
    text = (ROOT / f"{page}.md").read_text(encoding="utf-8")
    named, templates = runs_named(text)
    waited = set(build.READS_RUNS[page])
    assert named and named <= set(runs.RUNS), sorted(named - set(runs.RUNS))
    assert named <= waited, f"{page} reads {sorted(named - waited)} without waiting for them (READS_RUNS)"
    for t in templates:
        assert any(t.fullmatch(n) for n in waited), f"{page}: no run it waits for matches {t.pattern!r}"
    unread = [n for n in waited if n not in named and not any(t.fullmatch(n) for t in templates)]
    assert not unread, f"{page} waits for runs it never reads: {unread}"
    code = "\n".join(re.findall(r"```\{code-cell\} ipython3\n(.*?)```", text, flags=re.S))
    code = re.sub(r"#.*", "", code)  # comments may say which call a run is
    for call in ("pretrain(", "finetune_task(", "train_step(", "pretraining_step(", *(f"E.{e}(" for e in
                                                               ("bidirectional", "mask_mismatch", "mask_rate", "nsp", "few_labels"))):
        assert call not in code, f"{page} trains in a cell ({call}...): put the run in course.runs.RUNS"


def test_the_two_chapters_read_every_run():
    """Every run of the catalogue is read by chapter 11 or 12 (a run no page reads is work for nothing)."""
    read = set().union(*(build.READS_RUNS[page] for page in RUN_CHAPTERS))
    assert read == set(runs.RUNS), sorted(read ^ set(runs.RUNS))


# ---------------------------------------------------------------------------------------------- the schedule
def test_the_longest_chain_starts_first():
    jobs = [build.Job("run", name, run.cost, run.after) for name, run in runs.RUNS.items()]
    jobs += [build.Job("notebook", page, build.NOTEBOOK_COST, build.READS_RUNS[page]) for page in RUN_CHAPTERS]
    jobs += [build.Job("notebook", f"chapters/{i:02d}", build.NOTEBOOK_COST) for i in range(1, 11)]
    priority = build.chain(jobs)
    assert max(priority, key=priority.get) == "pretraining"
    assert priority["pretraining"] > runs.RUNS["pretraining"].cost + build.NOTEBOOK_COST


def test_every_chapter_that_reads_a_run_waits_for_it():
    """A chapter that reads a run (in a cell, or through a demo module it imports) is in READS_RUNS, so the build
    executes it after that run and again whenever the run is computed anew."""
    readers = set()
    for page in build.toc_pages():
        path = ROOT / f"{page}.md"
        if not path.exists():
            continue
        text = path.read_text(encoding="utf-8")
        sources = [text] + [(ROOT / "course" / "demos" / f"{m}.py").read_text(encoding="utf-8")
                            for m in set(re.findall(r"from course\.demos import (\w+)", text))]
        if any(re.search(r"runs\.(result|checkpoint_dir)\(", src) for src in sources):
            readers.add(page)
    assert readers == set(build.READS_RUNS), readers ^ set(build.READS_RUNS)
    assert set(build.READS_RUNS["chapters/07_mlm"]) == {"pretraining"}


def test_a_chapter_that_reads_a_run_computed_now_executes_after_it(monkeypatch):
    monkeypatch.setattr(runs, "is_cached", lambda name: name != "pretraining")
    monkeypatch.setattr(build, "notebook_is_cached", lambda page: True)  # stored, but from the old run
    jobs = {j.name: j for j in build.plan()}
    # chapter 12 reads no run computed now here (its experiment 5 builds on the default run, but is stored here)
    assert set(jobs) == {"pretraining", "chapters/07_mlm", "chapters/11_pretraining"}
    assert jobs["chapters/07_mlm"].after == ("pretraining",) == jobs["chapters/11_pretraining"].after
    monkeypatch.setattr(runs, "is_cached", lambda name: True)
    assert build.plan() == []


def test_a_run_waits_only_for_the_runs_computed_now(monkeypatch):
    """The default run stored, experiment 5 and a fine-tuning that build on it not (a build stopped after the
    default run): they wait for nothing, where waiting for a run no job computes left the build looping
    forever with nothing running."""
    pending = {"experiment 5", "docstring_topics pretrained tiny"}
    monkeypatch.setattr(runs, "is_cached", lambda name: name not in pending)
    monkeypatch.setattr(build, "notebook_is_cached", lambda page: True)
    jobs = {j.name: j for j in build.plan()}
    assert pending <= set(jobs) and all(jobs[name].after == () for name in pending)
    assert "pretraining" in runs.RUNS["experiment 5"].after  # what it would have waited for


def test_progress_of_reads_the_last_state_of_a_bar(tmp_path):
    job = build.Job("run", "x", 1.0)
    job.log = tmp_path / "x.log"
    job.log.write_text("pretraining:  10%|#  | 180/1800 [00:40<06:00,  4.5step/s]\r"
                       "pretraining:  11%|#  | 198/1800 [00:44<05:56,  4.5step/s, mlm=5.1]")
    assert build.progress_of(job) == "pretraining 198/1800 steps, 05:56 left"
    job.log.write_text("no bar yet")
    assert build.progress_of(job) == ""


@pytest.mark.parametrize("argv, message", [(["--jobs", "0"], "--jobs must be at least 1"),
                                           (["--every", "0"], "--every must be positive")])
def test_bad_options_are_refused_by_name(argv, message):
    proc = subprocess.run([sys.executable, "-m", "course.build", *argv], cwd=ROOT, capture_output=True, text=True)
    assert proc.returncode == 2 and message in proc.stderr, proc.stderr


def test_the_makefile_builds_with_course_build_then_jupyter_book():
    lines = (ROOT / "Makefile").read_text().splitlines()
    start = lines.index(next(line for line in lines if line.startswith("book:")))
    recipe = [line.strip() for line in lines[start + 1:start + 3]]
    assert recipe[0].endswith("-m course.build") and "jupyter-book build" in recipe[1], recipe
    workflow = (ROOT / ".github" / "workflows" / "book.yml").read_text()
    assert re.search(r"python -m course\.build\n\s*jupyter-book build", workflow), "the workflow must build as make book does"


# ----------------------------------------------------------------------------------------- what make book left
def _cell_times() -> dict:
    if not build.CELL_TIMES.exists():
        pytest.fail(f"{build.CELL_TIMES} is missing: run `make book` first (`make check` does)")
    return json.loads(build.CELL_TIMES.read_text())


@pytest.mark.book
def test_every_notebook_is_stored_where_jupyter_book_reads_it():
    """After make book, Jupyter Book's cache holds every notebook as it is now: it executed none itself."""
    for page in build.toc_pages():
        assert build.notebook_is_cached(page), f"{page} is not in {build.NB_CACHE} as it is now"
    for name in runs.RUNS:
        assert runs.is_cached(name), f"the run {name!r} is not stored"


SLOWER = 3  # the machine the build must survive is this many times slower than the one that built it


@pytest.mark.book
@pytest.mark.parametrize("page", RUN_CHAPTERS)
def test_the_run_chapters_survive_a_machine_three_times_slower(tmp_path, page):
    """Chapters 11 and 12 (their runs stored by make book), each executed on one core shared with SLOWER - 1
    busy processes, each with the same share of it, under its own cell timeout: it finishes, and every number
    its prose names is glued."""
    if not all(runs.is_cached(name) for name in runs.RUNS):
        pytest.fail("the runs are not stored: run `make book` first (`make check` does)")
    hogs = [subprocess.Popen(["taskset", "-c", "0", sys.executable, "-c", "while True: pass"])
            for _ in range(SLOWER - 1)]
    try:
        t0 = time.perf_counter()
        code = ("import json, sys; from course import build; nb, seconds, cells = build.run_notebook(sys.argv[1]); "
                "keys = [k for c in nb.cells for o in c.get('outputs', []) "
                "for k in o.get('metadata', {}).get('scrapbook', {}).get('name', '').split() if k]; "
                "print(json.dumps({'seconds': seconds, 'keys': keys}))")
        proc = subprocess.run(["taskset", "-c", "0", sys.executable, "-c", code, page], cwd=ROOT,
                              capture_output=True, text=True, env={**os.environ, "MPLBACKEND": "Agg"})
        wall = time.perf_counter() - t0
    finally:
        for h in hogs:
            h.kill()
    assert proc.returncode == 0, proc.stderr[-4000:]
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    text = (ROOT / f"{page}.md").read_text(encoding="utf-8")
    named = set(re.findall(r"\{glue(?::[a-z]+)?\}`([A-Za-z0-9_]+)", text))
    named |= set(re.findall(r"```\{glue\} ([A-Za-z0-9_]+)", text))
    missing = named - set(out["keys"])
    assert not missing, f"numbers the prose names but the slow run did not glue: {sorted(missing)}"
    print(f"{page} on a third of one core: {wall:.0f} s (the build's: {_cell_times()[page]['seconds']:.0f} s)")


def test_the_readme_counts_the_runs_there_are():
    text = " ".join((ROOT / "README.md").read_text(encoding="utf-8").split())
    m = re.search(r"chapters 11 and 12's (\d+) training runs", text)
    assert m and int(m.group(1)) == len(runs.RUNS), (m and m.group(0), len(runs.RUNS))
