"""Pretrain a tiny BERT with MLM + NSP on the Python documentation, on a laptop CPU, in a few minutes.

Book: chapter 11 ("Pretraining a tiny BERT end to end").

    python -m bertlib.pretrain --out runs/tiny            # the book's run (chapter 11 times it)
    torchrun --nproc-per-node 2 -m bertlib.pretrain ...   # the same run, DistributedDataParallel

The last line printed is a JSON object: held-out ``mlm_accuracy`` and ``nsp_accuracy``, the
``mlm_unigram_baseline`` (always predict the most frequent training token), ``seconds``, and more.
``--out DIR`` writes a checkpoint that ``transformers.BertForPreTraining.from_pretrained(DIR)`` and
``transformers.BertTokenizer.from_pretrained(DIR)`` load, plus ``metrics.json`` (the JSON and the curves).

What makes the default run fit on a laptop CPU (chapter 11 measures each on the machine that builds it):

* The vocabulary. The training text uses only a small share of MiniLM's 30,522 pieces; the run keeps just
  those (``compact_vocabulary``), so the tied embedding/decoder matrix, its projection, gradient and AdamW
  update shrink with it. The pieces keep MiniLM's order, plus the ASCII characters alone and as ``##``
  continuations (so a new ASCII word is spelt, not [UNK]); the training text is cut into exactly MiniLM's
  pieces (WordPiece is greedy longest-match and every piece it chose is kept); the checkpoint's vocab.txt
  is this vocabulary.
* Logits only where there is a label (``logits_only_at_labels=True``).
* Short sequences first, as BERT itself did (90% of its steps at 128 tokens, the rest at 512): most steps
  on short pairs, the last ``long_fraction`` on longer ones (``long_seq_len``), as many tokens per batch (small
  batches: before a model has learned much, more and smaller steps beat fewer large ones). A small model
  learns to use its neighbours much faster when there are fewer positions to attend to; the long phase
  trains the later position embeddings. Sentences are cut into parts of at most ``max_sentence_tokens``
  pieces, so NSP pairs stay half IsNext at either length (see ``load_pretraining_data``).
* More predictions per step: ``mask_prob`` of the pieces are selected (80/10/10 as usual), more than BERT's
  15%; at a budget of a couple of thousand steps the extra learning signal is worth more than the lost
  context (experiment 3). Evaluation always masks 15%.
* A schedule for a small model and a short run: AdamW, linear warm-up and decay to zero
  (``bertlib.training.loop``), a high peak learning rate, initial weights wider than BERT's 0.02 (tuned for
  width 768), no dropout.
* One thread (``threads=1``): results do not depend on the core count, and on a shared 2-core machine a
  second thread mostly waits for a busy core.

Everything random takes an explicit seeded source (``random.Random`` for the NSP pairs, a
``torch.Generator`` for the masks, ``torch.manual_seed`` for the initialisation), and deterministic
algorithms are requested, so the same seed gives the same numbers (bit for bit on one thread with the same
torch build and kind of CPU; other CPUs may round differently).
"""
from __future__ import annotations

import argparse
import dataclasses
import json
import os
import random
import sys
import time
from dataclasses import dataclass
from functools import partial
from pathlib import Path

import torch

from ..heads import BertForPreTraining
from .. import masking
from ..masking import IGNORE_INDEX
from ..tokenizer import BertTokenizer
from . import cli
from .checkpoint import out_dir_problem, save_checkpoint
from .loop import make_optimizer, make_scheduler, progress_bar, train_step
from .objective import CURVE_PAIRS, HELDOUT_AT, evaluate, heldout_scores, pretraining_forward
from .pretrain_config import _PAIR, PretrainConfig
from .pretraining_data import (
    NspBatches,
    PretrainingData,
    heldout_pairs,
    load_pretraining_data,
)
from .run_control import StopOnCtrlC, TrainingInterrupted, distributed

# This module is the run and its command; its parts live by idea (pretrain_config, pretraining_data, objective,
# run_control, checkpoint), and callers import each part from its own module.
__all__ = ["PretrainResult", "main", "parse_args", "pretrain", "pretraining_step"]


@dataclass
class PretrainResult:
    model: BertForPreTraining
    tokenizer: BertTokenizer
    metrics: dict
    history: list


def pretrain(cfg: PretrainConfig = PretrainConfig(), *, progress: bool = True, out: str | Path | None = None,
             data: PretrainingData | None = None, model: BertForPreTraining | None = None,
             on_step=None) -> PretrainResult:
    """Train, evaluate on the held-out documents, optionally save; returns the model, metrics and curves.

    Under torchrun each process computes the same global batch (same seeds) and trains on its slice of the
    rows, so N processes with ``batch_size`` B take exactly the steps of one process with batch B.
    ``on_step(step, model, batch)`` is called before each step with the masked global batch it trains on (the
    model has taken ``step`` updates; tests and the book's demo use it).
    The thread count and torch's deterministic-algorithms switch are set for the run and restored after.

    ``out`` is checked before anything is trained (``out_dir_problem``). Ctrl-C stops at the end of the
    current step; the model trained so far is saved to ``out`` (its metrics.json says ``"interrupted": true``
    and has no held-out scores), and ``TrainingInterrupted`` is raised.
    """
    saved = (torch.get_num_threads(), torch.are_deterministic_algorithms_enabled(),
             torch.is_deterministic_algorithms_warn_only_enabled())
    try:
        if cfg.threads:
            torch.set_num_threads(cfg.threads)
        torch.use_deterministic_algorithms(True, warn_only=True)
        with StopOnCtrlC(enabled=int(os.environ.get("WORLD_SIZE", "1")) == 1) as stop:
            return _pretrain(cfg, progress, out, data, model, on_step, stop)
    finally:
        torch.set_num_threads(saved[0])
        torch.use_deterministic_algorithms(saved[1], warn_only=saved[2])


def _pretrain(cfg, progress, out, data, model, on_step, stop) -> PretrainResult:
    run = _set_up(cfg, out, data, model)
    stop.arm(f"then saving the model to {out}" if out is not None else "saving nothing (no output folder)")
    history = _train(run, progress, on_step, stop)
    if len(history) < cfg.steps:  # stopped by Ctrl-C
        _stop_interrupted(run, out, history)
    metrics = _final_metrics(run)
    if out is not None and run.rank == 0:
        save_checkpoint(run.model, run.data.tokenizer, out, metrics, history)
    return PretrainResult(run.model, run.data.tokenizer, metrics, history)


@dataclass
class _Run:
    """Everything one pretraining run works on, made by ``_set_up`` before the first step."""

    cfg: PretrainConfig
    rank: int
    world: int
    device: torch.device
    data: PretrainingData
    model: BertForPreTraining
    ddp_model: torch.nn.Module  # the model itself, or its DistributedDataParallel wrapper
    optimizer: torch.optim.Optimizer
    scheduler: torch.optim.lr_scheduler.LambdaLR
    short_pairs: NspBatches
    long_pairs: NspBatches | None
    mask_generator: torch.Generator
    heldout: dict  # HELDOUT_AT's names -> all held-out pairs of that length, masked once
    started: float  # time.perf_counter() at the start
    data_seconds: float
    train_seconds: float = 0.0

    def pairs_for(self, step: int) -> NspBatches:
        """The short pairs, then the long ones for the last ``long_steps`` steps."""
        return self.long_pairs if step >= self.cfg.steps - self.cfg.long_steps else self.short_pairs


def _set_up(cfg, out, data, model) -> _Run:
    """Check the output folder and the process count, load the data, build the model (seeded), the
    optimizer and schedule, the seeded batch streams and the held-out sets."""
    started = time.perf_counter()
    problem = out_dir_problem(out, overwrite=True)
    if problem is not None:
        raise ValueError(f"out={problem}")
    rank, world = distributed()
    for b in (cfg.batch_size, cfg.long_batch_size):
        if b % world:
            raise ValueError(f"batch size {b} must be divisible by the number of processes {world}")
    device = torch.device(cfg.device)
    if device.type == "cuda" and world > 1:
        device = torch.device("cuda", int(os.environ.get("LOCAL_RANK", rank)))

    data = load_pretraining_data(cfg.vocab, cfg.heldout_fraction, 0, cfg.max_sentence_tokens) if data is None else data
    tok = data.tokenizer
    data_seconds = time.perf_counter() - started

    torch.manual_seed(cfg.seed)
    if model is None:
        model = BertForPreTraining(cfg.model_config(tok.vocab_size))
    model.to(device).train()
    ddp_model = model
    if world > 1:
        from torch.nn.parallel import DistributedDataParallel

        ddp_model = DistributedDataParallel(model, device_ids=[device.index] if device.type == "cuda" else None)
    optimizer = make_optimizer(model, cfg.lr, cfg.weight_decay)
    scheduler = make_scheduler(optimizer, cfg.steps, cfg.warmup_fraction)

    data_rng = random.Random(cfg.seed)  # both lengths draw their pairs from it, in the order they are used
    short_pairs = NspBatches(data.train_docs, tok, cfg.seq_len, cfg.batch_size, data_rng, cfg.short_seq_prob)
    long_pairs = None
    if cfg.long_seq_len:
        long_pairs = NspBatches(data.train_docs, tok, cfg.long_seq_len, cfg.long_batch_size, data_rng,
                                cfg.short_seq_prob)
    heldout = {"final_length": heldout_pairs(data, cfg, seq_len=cfg.max_len)}
    if cfg.long_seq_len:
        heldout["short_length"] = heldout_pairs(data, cfg, seq_len=cfg.seq_len)
    return _Run(cfg, rank, world, device, data, model, ddp_model, optimizer, scheduler, short_pairs, long_pairs,
                torch.Generator().manual_seed(cfg.seed), heldout, started, data_seconds)


def _train(run: _Run, progress: bool, on_step, stop) -> list[dict]:
    """The step loop; returns the learning curve, one record per step taken (fewer after Ctrl-C).

    Each step masks a new global batch and trains on it (``pretraining_step``). The curve holds the running
    (exponentially averaged) training losses and, every ``eval_every`` steps, the scores on the first
    ``CURVE_PAIRS`` held-out pairs of each length (cheap)."""
    cfg = run.cfg
    curve_sets = {name: {k: v[:CURVE_PAIRS].to(run.device) for k, v in pairs.items()} for name, pairs in run.heldout.items()}
    history, running = [], {}
    t_train = time.perf_counter()
    with progress_bar(cfg.steps, "pretraining" if progress and run.rank == 0 else "") as bar:
        for step in range(cfg.steps):
            if stop.requested:  # Ctrl-C: the last step has ended
                break
            # every process draws the same global batch (same generator) and trains on its rows of it
            batch = masking.mask_batch(next(run.pairs_for(step)), run.data.tokenizer, run.mask_generator,
                                       **cfg.masking)
            if on_step is not None:
                on_step(step, run.model, batch)
            out, grad_norm = pretraining_step(run, batch)
            for name, value in (("mlm", out.mlm_loss), ("nsp", out.nsp_loss)):
                if value is not None:
                    v = float(value.detach()) * run.world  # under DDP, this process's share of the loss x world
                    running[name] = v if name not in running else 0.95 * running[name] + 0.05 * v
            record = {"step": step + 1, "seconds": time.perf_counter() - t_train,
                      "lr": run.scheduler.get_last_lr()[0], "mlm_loss": running.get("mlm"),
                      "nsp_loss": running.get("nsp"), "grad_norm": float(grad_norm)}
            if cfg.eval_every and ((step + 1) % cfg.eval_every == 0 or step + 1 == cfg.steps) and run.rank == 0:
                for name, pairs in curve_sets.items():
                    scores = evaluate(run.model, pairs)
                    record.update({f"{HELDOUT_AT[name]}{k}": scores[k] for k in ("mlm_accuracy", "nsp_accuracy", "mlm_loss")})
            history.append(record)
            bar.update()
            bar.set_postfix({k: f"{v:.3f}" for k, v in running.items()}, refresh=False)
    run.train_seconds = time.perf_counter() - t_train
    return history


def pretraining_step(run: _Run, batch: dict[str, torch.Tensor]):
    """One update on a masked global ``batch`` (B rows): this process's rows of it, their MLM + NSP loss, and
    ``train_step``'s backward, clipping, AdamW and schedule step. Returns the output and the gradient norm.

    The MLM loss is a sum over the masked tokens divided by their number in the global batch (over the
    processes: DDP averages the gradients), so N processes take exactly the step of one on the whole batch."""
    num_items = int((batch["labels"] != IGNORE_INDEX).sum())  # masked tokens in the global batch
    B = batch["input_ids"].size(0)
    rows = slice(run.rank * B // run.world, (run.rank + 1) * B // run.world)  # all of them on one process
    local = {k: v[rows].to(run.device) for k, v in batch.items()}  # (B / world, T) each, (B / world,) NSP labels
    forward = partial(pretraining_forward, nsp=run.cfg.nsp, num_items_in_batch=num_items / run.world)
    return train_step(run.ddp_model, local, run.optimizer, run.scheduler, forward=forward,
                      max_grad_norm=run.cfg.max_grad_norm)


def _final_metrics(run: _Run) -> dict:
    """The scores on all held-out pairs, the baselines, and what the run was (the JSON ``main`` prints)."""
    cfg, data, model = run.cfg, run.data, run.model
    model.eval()
    results = {name: heldout_scores(model, pairs, nsp=cfg.nsp, most_frequent_id=data.most_frequent_id,
                                    device=run.device)
               for name, pairs in run.heldout.items()}
    final = results["final_length"]
    metrics = {
        **{k: v for k, v in final.items() if k != "seq_len"},
        "heldout_seq_len": final["seq_len"],
        "steps": cfg.steps,
        "long_steps": cfg.long_steps,
        # passes over the documents begun, both lengths
        "epochs": run.short_pairs.epoch + (run.long_pairs.epoch if run.long_pairs is not None else 0),
        "train_tokens": sum(len(s) for d in data.train_docs for s in d),
        "vocab_size": data.tokenizer.vocab_size,
        "parameters": sum(p.numel() for p in model.parameters()),
        "data_seconds": run.data_seconds,
        "train_seconds": run.train_seconds,
        "seconds": time.perf_counter() - run.started,
        "threads": torch.get_num_threads(),
        "world_size": run.world,
        "device": str(run.device),
        "corpus": data.fingerprint,
        "config": dataclasses.asdict(cfg),
    }
    if "short_length" in results:  # the same model on pairs of the short length, for the record
        metrics["short"] = results["short_length"]
    return metrics


def _stop_interrupted(run: _Run, out, history: list[dict]) -> None:
    """After Ctrl-C: save what was trained (if anything, and if there is an output folder), say so, and raise
    TrainingInterrupted. No held-out evaluation: whoever pressed Ctrl-C wants it to stop."""
    cfg, model, tok = run.cfg, run.model, run.data.tokenizer
    done, saved = len(history), None
    if out is not None and done and run.rank == 0:
        metrics = {"interrupted": True, "steps_done": done, "steps": cfg.steps, "vocab_size": tok.vocab_size,
                   "parameters": sum(p.numel() for p in model.parameters()), "corpus": run.data.fingerprint,
                   "config": dataclasses.asdict(cfg)}
        save_checkpoint(model, tok, out, metrics, history)
        saved = str(out)
    if run.rank == 0:
        what = f"saved the model trained so far to {out}" if saved else "nothing saved" + (
            " (no step finished)" if not done else " (no output folder given)")
        print(f"interrupted after step {done} of {cfg.steps}: {what}", file=sys.stderr, flush=True)
    raise TrainingInterrupted(done, cfg.steps, saved)


# ----------------------------------------------------------------------------- command line
def parse_args(argv=None) -> tuple[PretrainConfig, argparse.Namespace]:
    """The options, checked before any work: a bad value exits with status 2 and a message naming the option."""
    d = PretrainConfig()
    p = argparse.ArgumentParser(prog="python -m bertlib.pretrain", description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    p.add_argument("--out", help="save the checkpoint (transformers layout) and metrics.json here")
    p.add_argument("--overwrite", action="store_true",
                   help="replace the checkpoint already in --out (without it, an existing checkpoint is refused)")
    cli.add_config_options(p, PretrainConfig)  # every field made with cli.option
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    a = p.parse_args(argv)

    # What one option's type cannot see: options together, the machine, the output folder.
    problems = []
    if 0 < a.long_seq_len < 5:
        problems.append(f"--long-seq-len must be 0 (no long phase) or at least 5{_PAIR}, got {a.long_seq_len}")
    if a.hidden_size % a.num_attention_heads:
        problems.append(f"--hidden-size {a.hidden_size} must be divisible by --heads {a.num_attention_heads}: "
                        "each head gets "
                        "hidden-size / heads dimensions")
    if a.mask_prob == 0:
        problems.append("--mask-prob must be above 0: with nothing masked, MLM has nothing to learn")
    random_replace = a.random_replace_prob
    if random_replace is None:
        random_replace = min(d.random_replace_prob, 1.0 - a.mask_replace_prob)
    elif a.mask_replace_prob + random_replace > 1:
        problems.append(f"--mask-replace-prob {a.mask_replace_prob:g} and --random-replace-prob {random_replace:g} "
                        "are shares of the same selected tokens: together at most 1")
    world = int(os.environ.get("WORLD_SIZE", "1"))
    long_batch = max(1, a.batch_size * a.seq_len // a.long_seq_len) if a.long_seq_len else 0
    for name, b in (("--batch-size", a.batch_size), ("the long phase's batch", long_batch)):
        if world > 1 and b % world:
            problems.append(f"{name} ({b}) must be divisible by the number of processes ({world})")
    device = cli.device_problem(a.device)
    if device is not None:
        problems.append(f"--device {device}")
    out = out_dir_problem(a.out, overwrite=a.overwrite)
    if out is not None:
        problems.append(f"--out {out}")
    if problems:
        p.error("\n  ".join(problems))

    cfg = cli.config_from_args(PretrainConfig, a, random_replace_prob=random_replace)
    return cfg, a


def main(argv=None) -> None:
    """The command: the checked options, the run, its summary on stderr and its metrics as the last line of
    stdout (JSON). Returns None, so that the console script ``bertlib-pretrain`` exits 0 after a run."""
    cfg, args = parse_args(argv)
    try:
        result = pretrain(cfg, progress=not args.quiet, out=args.out)
    except TrainingInterrupted as stop:  # pretrain has said what it saved
        print(json.dumps({"interrupted": True, "steps_done": stop.steps_done, "steps": stop.steps,
                          "out": stop.saved_to}), flush=True)
        sys.exit(130)
    except KeyboardInterrupt:
        print("interrupted before training began, or a second time: nothing saved", file=sys.stderr)
        sys.exit(130)
    rank, world = distributed()
    if rank == 0:
        m = result.metrics
        top = result.tokenizer.convert_ids_to_tokens(load_pretraining_data(cfg.vocab, cfg.heldout_fraction, 0, cfg.max_sentence_tokens).most_frequent_id)
        nsp = f"{m['nsp_accuracy']:.3f}" if m["nsp_accuracy"] is not None else "off"
        print(f"held-out MLM top-1 {m['mlm_accuracy']:.3f} (always {top!r}: {m['mlm_unigram_baseline']:.3f}), "
              f"NSP {nsp}, {m['seconds']:.0f} s", file=sys.stderr)
        summary = {k: v for k, v in m.items() if k not in ("config", "corpus")}
        summary["out"] = args.out
        print(json.dumps(summary), flush=True)
    if world > 1:
        torch.distributed.destroy_process_group()


if __name__ == "__main__":
    main()
