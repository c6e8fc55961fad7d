"""The training toolkit: one optimizer set-up, one learning-rate schedule, one progress bar, one training step.

Pretraining, fine-tuning, the experiments, chapter 10's schedule plot, chapter 11 and the benchmark all train
with these, so a change to how BERT is trained is made once:

* ``make_optimizer``: AdamW, no weight decay on biases and LayerNorm weights, as BERT did;
* ``linear_schedule``: the learning rate of each update, a share of the peak: linear warm-up, then linear
  decay to zero; ``warmup_steps`` turns a share of the run into a number of steps;
* ``progress_bar``: a tqdm bar on stderr (one that shows nothing where there is no label or no tqdm);
* ``train_step``: one update, a batch in and its loss out: forward, backward, gradient clipping, optimizer and
  schedule step, for any model whose output has a ``.loss``. Each run writes its own ``for`` loop around it
  (where its batches come from, what it records, when it stops);
* ``seconds_per_step``: how long a step takes, timed the one way chapter 11 and the benchmark time it;
* ``epoch_batches``, ``trim_padding``: fine-tuning's mini-batches, each cut to its longest row.
"""
from __future__ import annotations

import sys
import time
from collections.abc import Callable, Iterator

import torch


def make_optimizer(model: torch.nn.Module, lr: float, weight_decay: float) -> torch.optim.AdamW:
    """AdamW with no weight decay on biases and LayerNorm weights, as BERT did."""
    decay, no_decay = [], []
    for p in model.parameters():
        if p.requires_grad:
            (no_decay if p.dim() < 2 else decay).append(p)
    groups = [{"params": decay, "weight_decay": weight_decay}, {"params": no_decay, "weight_decay": 0.0}]
    # foreach: one kernel per step for all tensors instead of a Python loop over them; the same arithmetic, so
    # the same numbers to the last bit (tests/test_pretrain.py checks), and faster on a CPU
    return torch.optim.AdamW(groups, lr=lr, betas=(0.9, 0.98), eps=1e-6, foreach=True)


def linear_schedule(step: int, total_steps: int, warmup_steps: int) -> float:
    """The learning rate of update ``step`` (0 is the first), as a share of the peak.

    Warm-up: update ``step`` gets ``(step + 1) / warmup_steps``, so the first update already moves the weights
    and update ``warmup_steps - 1`` is at the peak. Then linear decay, reaching zero at ``total_steps``."""
    if step < warmup_steps:
        return (step + 1) / warmup_steps
    return max(0.0, (total_steps - step) / max(1, total_steps - warmup_steps))


def warmup_steps(total_steps: int, warmup_fraction: float) -> int:
    """The warm-up, ``warmup_fraction`` of the run rounded to whole steps, at least one."""
    return max(1, round(warmup_fraction * total_steps))


def make_scheduler(optimizer: torch.optim.Optimizer, total_steps: int,
                   warmup_fraction: float) -> torch.optim.lr_scheduler.LambdaLR:
    """``linear_schedule`` over ``total_steps`` updates, ``warmup_fraction`` of them warming up."""
    warmup = warmup_steps(total_steps, warmup_fraction)
    return torch.optim.lr_scheduler.LambdaLR(optimizer, lambda step: linear_schedule(step, total_steps, warmup))


class _NoBar:
    """The bar ``progress_bar`` gives when nothing is to be shown: takes the same calls, does nothing."""

    def update(self, n: int = 1) -> None:
        pass

    def set_postfix(self, *args, **kwargs) -> None:
        pass

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> bool:
        return False


def progress_bar(total: int, desc: str):
    """A progress bar on stderr counting ``total`` steps, to use as ``with progress_bar(...) as bar``; one that
    shows nothing if ``desc`` is empty or tqdm is missing (tqdm comes with the book's dependencies, not the
    library's)."""
    if not desc:
        return _NoBar()
    try:
        from tqdm.auto import tqdm
    except ImportError:
        return _NoBar()
    return tqdm(total=total, desc=desc, unit="step", file=sys.stderr)


def train_step(
    model: torch.nn.Module,
    batch: dict[str, torch.Tensor],
    optimizer: torch.optim.Optimizer,
    scheduler,
    *,
    forward: Callable[[torch.nn.Module, dict], object] | None = None,
    max_grad_norm: float = 1.0,
) -> tuple[object, torch.Tensor]:
    """One update of ``model`` on ``batch``: returns the model's output (its ``.loss``, and whatever else the
    model gives) and the norm of all the gradients together before clipping.

    ``forward(model, batch)`` computes the output (default ``model(**batch)``); pretraining passes
    ``pretraining_forward`` with the number of masked tokens its loss is divided by."""
    out = model(**batch) if forward is None else forward(model, batch)
    optimizer.zero_grad(set_to_none=True)
    out.loss.backward()
    grad_norm = torch.nn.utils.clip_grad_norm_(model.parameters(), max_grad_norm)
    optimizer.step()
    scheduler.step()
    return out, grad_norm


def seconds_per_step(steps: dict[str, Callable[[], object]], n: int, *, repeats: int = 1,
                     warmup: int = 2) -> dict[str, float]:
    """Seconds per call of each of ``steps`` (a name -> a function that takes one training step): ``warmup``
    untimed calls each, then ``repeats`` timings of ``n`` calls each, the functions taking turns so that a
    busy machine slows all of them alike; the best repeat counts."""
    for step in steps.values():
        for _ in range(warmup):
            step()
    best = dict.fromkeys(steps, float("inf"))
    for _ in range(repeats):
        for name, step in steps.items():
            start = time.perf_counter()
            for _ in range(n):
                step()
            best[name] = min(best[name], (time.perf_counter() - start) / n)
    return best


def epoch_batches(tensors: dict[str, torch.Tensor], batch_size: int, epochs: int,
                  generator: torch.Generator) -> Iterator[dict]:
    """Fine-tuning's batches: ``epochs`` passes over ``tensors`` in mini-batches, each pass in a new order drawn
    from ``generator`` (the last batch of a pass may be smaller), each batch without the padding its rows
    share (``trim_padding``) if ``tensors`` has an attention mask."""
    n = len(next(iter(tensors.values())))
    for _ in range(epochs):
        order = torch.randperm(n, generator=generator)
        for start in range(0, n, batch_size):
            idx = order[start:start + batch_size]
            batch = {k: v[idx] for k, v in tensors.items()}
            yield trim_padding(batch) if "attention_mask" in batch else batch


def trim_padding(batch: dict[str, torch.Tensor]) -> dict[str, torch.Tensor]:
    """The batch without the padding columns that come after every row's last token: each would cost as much
    as a real token and changes nothing (the attention mask hides it and its labels are ignored). Tensors of
    the mask's shape (ids, segments, the mask, tagging labels) are cut; the others (a label per row) kept."""
    mask = batch["attention_mask"]  # (B, T)
    width = int(mask.any(0).nonzero().max()) + 1 if mask.any() else mask.size(1)
    return {k: v[:, :width] if v.shape == mask.shape else v for k, v in batch.items()}


def steps_in(n: int, batch_size: int, epochs: int) -> int:
    """Updates in ``epochs`` passes over ``n`` examples in batches of ``batch_size``."""
    return epochs * -(-n // batch_size)


def learning_rates(peak_lr: float, total_steps: int, warmup_fraction: float) -> list[float]:
    """The learning rate of each of ``total_steps`` updates, exactly what ``make_scheduler`` gives the optimizer
    (chapter 10 plots it)."""
    warmup = warmup_steps(total_steps, warmup_fraction)
    return [peak_lr * linear_schedule(step, total_steps, warmup) for step in range(total_steps)]
