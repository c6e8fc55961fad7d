"""Chapter 6 demos: the MLM loss is a log-loss averaged over the selected positions only.

Pure callbacks (tests call them) and ``make_demo()``. The loss itself is bertlib's ``mlm_loss``; the one
function here that computes a loss differently, ``buggy_masked_mean``, does so on purpose: it is the
classic mistake the chapter takes apart.
"""
from __future__ import annotations

import math

import torch
import torch.nn.functional as F

from bertlib import mlm_loss

IGNORE_INDEX = -100


# ----------------------------------------------------------------------------- callbacks
def log_loss(p: float) -> float:
    """The loss of one selected position when the model gives the right token probability ``p``."""
    if not 0.0 < p <= 1.0:
        raise ValueError(f"p must be in (0, 1], got {p}")
    return -math.log(p)


def buggy_masked_mean(logits: torch.Tensor, targets: torch.Tensor, weights: torch.Tensor) -> torch.Tensor:
    """The classic bug: a *mean-reduced* cross-entropy (a scalar) multiplied by a 0/1 mask, then
    "normalised" by the mask's sum. The scalar already averaged over every position, so the mask
    multiplies a constant and the division undoes the multiplication: the mask does nothing."""
    mean_over_all = F.cross_entropy(logits.reshape(-1, logits.size(-1)), targets.reshape(-1))  # scalar
    weights = weights.reshape(-1).to(mean_over_all.dtype)
    return (mean_over_all * weights).sum() / (weights.sum() + 1e-8)  # = mean_over_all


def fixed_masked_mean(logits: torch.Tensor, targets: torch.Tensor, weights: torch.Tensor) -> torch.Tensor:
    """The repair of the bug: keep one loss per position (``reduction="none"``), then weight and average."""
    per_position = F.cross_entropy(logits.reshape(-1, logits.size(-1)), targets.reshape(-1), reduction="none")
    weights = weights.reshape(-1).to(per_position.dtype)
    return (per_position * weights).sum() / weights.sum()


def make_batch(n_selected: int, seed: int = 0, B: int = 2, T: int = 8, V: int = 20):
    """A seeded toy batch: logits (B, T, V), the original ids (B, T), the selection (B, T) and the labels.

    The logits depend on ``seed`` only, never on ``n_selected``: the first ``n_selected`` positions of one
    fixed random order are selected, so moving the slider changes which positions count, nothing else.
    Each position gets a random confidence in its right id, as a half-trained model would have."""
    if not 1 <= n_selected <= B * T:
        raise ValueError(f"n_selected must be in [1, {B * T}], got {n_selected}")
    g = torch.Generator().manual_seed(seed)
    original = torch.randint(V, (B, T), generator=g)  # (B, T)
    logits = torch.randn(B, T, V, generator=g)  # (B, T, V)
    confidence = 4.0 * torch.rand(B, T, generator=g)  # (B, T): extra logit on the right id
    logits.scatter_add_(-1, original[..., None], confidence[..., None])
    order = torch.randperm(B * T, generator=g)
    selected = torch.zeros(B * T, dtype=torch.bool)
    selected[order[:n_selected]] = True
    selected = selected.view(B, T)  # (B, T)
    labels = torch.where(selected, original, IGNORE_INDEX)  # (B, T)
    return logits, original, selected, labels


def compare_losses(n_selected: int, seed: int = 0) -> dict:
    """The right loss three ways (bertlib, ignore_index, weighted per-position), the bug, and the gradient
    each one sends to the positions that were *not* selected."""
    logits, original, selected, labels = make_batch(n_selected, seed)
    results = {}
    for name, fn in [
        ("bertlib mlm_loss", lambda z: mlm_loss(z, labels)),
        ("ignore_index=-100", lambda z: F.cross_entropy(z.reshape(-1, z.size(-1)), labels.reshape(-1),
                                                        ignore_index=IGNORE_INDEX)),
        ("reduction='none' x mask", lambda z: fixed_masked_mean(z, original, selected)),
        ("mean x mask (bug)", lambda z: buggy_masked_mean(z, original, selected)),
        ("mean over all positions", lambda z: F.cross_entropy(z.reshape(-1, z.size(-1)), original.reshape(-1))),
    ]:
        z = logits.clone().requires_grad_(True)
        loss = fn(z)
        loss.backward()
        results[name] = {
            "loss": loss.item(),
            "grad_on_unselected": float(z.grad[~selected].abs().sum()),
            "grad_on_selected": float(z.grad[selected].abs().sum()),
        }
    return results


def loss_vs_selected(seed: int = 0, B: int = 2, T: int = 8) -> dict:
    """For 1..B*T selected positions: the right loss and the buggy one (which ignores the selection)."""
    ks = list(range(1, B * T + 1))
    right, bug = [], []
    for k in ks:
        r = compare_losses(k, seed)
        right.append(r["bertlib mlm_loss"]["loss"])
        bug.append(r["mean x mask (bug)"]["loss"])
    return {"n_selected": ks, "right": right, "bug": bug}


# ----------------------------------------------------------------------------- plots
def plot_log_loss(p: float | None = None, vocab_size: int = 30522, ax=None):
    import matplotlib.pyplot as plt
    import numpy as np

    ax = ax or plt.gca()
    ps = np.logspace(-5, 0, 400)
    ax.plot(ps, -np.log(ps), color="tab:blue")
    ax.set_xscale("log")
    ax.set_xlabel("probability the model gives the right token")
    ax.set_ylabel("loss  -ln p")
    marks = [(1 / vocab_size, f"uniform guess 1/{vocab_size}"), (0.01, "p = 0.01"), (0.62, "p = 0.62")]
    if p is not None:
        marks.append((p, f"your p = {p:g}"))
    for x, label in marks:
        y = -math.log(x)
        ax.plot([x], [y], "o", color="tab:red" if label.startswith("your") else "black")
        ax.annotate(f"{label}: {y:.3f}", (x, y), textcoords="offset points", xytext=(8, 4), fontsize=8)
    return ax


def plot_compare(results: dict, ax=None):
    import matplotlib.pyplot as plt

    ax = ax or plt.gca()
    names = list(results)
    values = [results[n]["loss"] for n in names]
    colors = ["tab:blue"] * 3 + ["tab:red", "tab:gray"]
    bars = ax.barh(names, values, color=colors)
    ax.bar_label(bars, fmt="%.4f", fontsize=8)
    ax.invert_yaxis()
    ax.set_xlabel("loss")
    return ax


# ----------------------------------------------------------------------------- widgets
def make_demo():
    """Two panels: -ln p for a chosen p, and the right loss vs the bug for a chosen number of selected positions."""
    import ipywidgets as w
    import matplotlib.pyplot as plt

    from course.plots import fig_to_png

    p = w.FloatLogSlider(value=0.62, base=10, min=-5, max=0, step=0.05, description="p(right)")
    loss_text = w.HTML()
    p_image = w.Image(format="png")

    def draw_p(_=None):
        loss_text.value = f"<b>loss = -ln({p.value:.4g}) = {log_loss(p.value):.4f}</b>"
        fig, ax = plt.subplots(figsize=(6, 3))
        plot_log_loss(p.value, ax=ax)
        p_image.value = fig_to_png(fig)

    p.observe(draw_p, names="value")
    draw_p()

    k = w.IntSlider(value=3, min=1, max=16, description="selected")
    seed = w.IntSlider(value=0, min=0, max=20, description="seed")
    k_image = w.Image(format="png")

    def draw_k(_=None):
        fig, ax = plt.subplots(figsize=(6, 2.6))
        plot_compare(compare_losses(k.value, seed.value), ax)
        ax.set_title(f"{k.value} of 16 positions selected")
        k_image.value = fig_to_png(fig)

    for control in (k, seed):
        control.observe(draw_k, names="value")
    draw_k()
    return w.Tab(children=[w.VBox([p, loss_text, p_image]), w.VBox([w.HBox([k, seed]), k_image])],
                 titles=["-ln p", "the mask bug"])
