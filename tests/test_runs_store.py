"""The committed training runs (``book_runs/``, course/runs.py): exactly this code's, and what this code computes.

The book reads chapters 11 and 12's runs from ``book_runs/``, which the repository holds, so a clean checkout (and CI)
builds the book without training. Three checks keep that honest:

* every run of ``course.runs.RUNS`` is committed under the key of the current code, and nothing else is (a change
  to bertlib, the experiments or a run's arguments changes the key: ``make book`` then computes the run again, and
  this test fails until the new entry is committed and the old one removed);
* the default run's first steps, computed again, are the stored run's (its first batch exactly, its losses, gradient
  norms and learning rates step by step);
* one fine-tuning of chapter 11, computed again, is the stored one (its data and steps exactly, its first loss,
  scores and baselines).

Floats are compared to a relative 1e-4 (the first steps) or 0.02 (scores after a whole fine-tuning): on the
machine that computed the store they are equal to the last bit, and another processor's kernels round
differently (chapter 11's "How this page was computed"); a changed recipe moves them by far more.
"""
from __future__ import annotations

import math
import subprocess

import pytest
import torch

from course import runs

pytestmark = pytest.mark.full

STORE = runs.ROOT / "book_runs"
FIRST_STEPS = 30  # inside the warm-up (6% of 1,800 steps): the learning rate is small, a last-bit difference stays one
FINETUNE = "code_spans from scratch"  # the cheapest fine-tuning (about 10 s), on the default run's vocabulary


def _committed() -> set[str]:
    """The files of ``book_runs/`` git tracks, relative to it."""
    out = subprocess.run(["git", "ls-files", "-z", "--", "book_runs"], cwd=runs.ROOT, capture_output=True, text=True,
                         check=True).stdout
    return {p.removeprefix("book_runs/") for p in out.split("\0") if p}


def test_the_repository_holds_exactly_this_codes_runs():
    committed = _committed()
    expected = {runs.entry(name).name: name for name in runs.RUNS}
    missing = [f"{name} ({folder})" for folder, name in expected.items() if f"{folder}/result.pkl" not in committed]
    assert not missing, (
        f"runs of the current code not committed under book_runs/: {missing}. The code a run depends on (bertlib, "
        "projects/pretraining_experiments, course/demos/pretraining.py, the run's arguments, the Python, torch and "
        "MiniLM versions) changed: `make book` computes them again; then `git add book_runs` and commit")
    stale = sorted({path.split("/")[0] for path in committed} - set(expected))
    assert not stale, f"committed runs no run of the current code has (stale): {stale}; `git rm -r` them"
    checkpoint = runs.entry("pretraining").name + "/checkpoint/"
    for file in ("model.safetensors", "config.json", "vocab.txt", "tokenizer_config.json"):
        assert checkpoint + file in committed, f"the default run's checkpoint lacks {file}"


def test_the_default_runs_first_steps_are_the_stored_ones(monkeypatch):
    from bertlib.training import pretrain as pretrain_module
    from bertlib.training.pretrain_config import PretrainConfig

    assert runs.CACHE == STORE and runs.is_cached("pretraining"), "the default run is not in book_runs/"
    stored = runs.result("pretraining")
    cfg = PretrainConfig()
    assert stored["metrics"]["config"] == {k: getattr(cfg, k) for k in stored["metrics"]["config"]}

    class Enough(Exception):
        pass

    steps, first = [], {}
    real_step = pretrain_module.pretraining_step

    def step(run, batch):  # the real step, recorded; stops the run after FIRST_STEPS
        out, grad_norm = real_step(run, batch)
        steps.append({"mlm": float(out.mlm_loss.detach()), "nsp": float(out.nsp_loss.detach()), "grad_norm": float(grad_norm),
                      "lr": run.scheduler.get_last_lr()[0]})
        if len(steps) == FIRST_STEPS:
            raise Enough
        return out, grad_norm

    def on_step(i, model, batch):
        if i == 0:
            first.update(batch)

    monkeypatch.setattr(pretrain_module, "pretraining_step", step)
    with pytest.raises(Enough):
        pretrain_module.pretrain(cfg, progress=False, on_step=on_step)

    assert first.keys() == stored["first_batch"].keys()
    for k, v in stored["first_batch"].items():
        assert torch.equal(first[k], v), f"the first batch's {k} is not the stored run's"
    running = {}
    for i, (now, then) in enumerate(zip(steps, stored["history"][:FIRST_STEPS], strict=True), start=1):
        for name in ("mlm", "nsp"):  # the history holds the running (0.95) averages, as _train keeps them
            running[name] = now[name] if i == 1 else 0.95 * running[name] + 0.05 * now[name]
        got = {"mlm_loss": running["mlm"], "nsp_loss": running["nsp"], "grad_norm": now["grad_norm"], "lr": now["lr"]}
        for k, v in got.items():
            assert math.isclose(v, then[k], rel_tol=1e-4), f"step {i}: {k} {v!r}, the stored run's {then[k]!r}"


def _close(a, b, tol: float, where: str = "") -> None:
    """``a`` and ``b`` equal, floats to ``tol`` (absolute), ints, strings and structure exactly."""
    if isinstance(a, dict):
        assert a.keys() == b.keys(), f"{where}: keys {sorted(a)} against {sorted(b)}"
        for k in a:
            _close(a[k], b[k], tol, f"{where}.{k}")
    elif isinstance(a, float):
        assert math.isclose(a, b, abs_tol=tol), f"{where}: {a!r}, the stored run's {b!r}"
    else:
        assert a == b, f"{where}: {a!r}, the stored run's {b!r}"


@pytest.fixture
def one_thread():
    """One torch thread, as course.build runs every job (a thread count changes the order of float sums)."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


def test_a_fine_tuning_computed_again_is_the_stored_one(one_thread):
    assert runs.CACHE == STORE and runs.is_cached(FINETUNE), f"{FINETUNE} is not in book_runs/"
    stored = runs.result(FINETUNE)
    again = runs.RUNS[FINETUNE].call(progress=False)
    del stored["seconds"], again["seconds"]  # wall clock: the machine's
    assert math.isclose(again.pop("first_loss"), stored.pop("first_loss"), rel_tol=1e-4)  # before any update
    _close(again, stored, 0.02, FINETUNE)
