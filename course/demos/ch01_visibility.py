"""Chapter 1 demo: pick a position and see which tokens BERT (bidirectional) and GPT (causal) may attend to.

The visibility comes from bertlib's own mask builder, so the demo shows what the model does, not a
drawing of it. Optionally the demo also shows real attention weights (one query row per model) that the
chapter computes on the MiniLM checkpoint.
"""
from __future__ import annotations

from collections.abc import Sequence

import matplotlib.pyplot as plt
import numpy as np
import torch

from bertlib import build_attention_mask

from ..plots import COLORS, fig_to_png


def visibility(n_tokens: int, is_causal: bool) -> np.ndarray:
    """(T, T) bool from ``bertlib.build_attention_mask``: entry [i, j] says whether query i may see key j."""
    if n_tokens < 1:
        raise ValueError(f"need at least one token, got {n_tokens}")
    mask = build_attention_mask(torch.ones(1, n_tokens, dtype=torch.long), n_tokens, is_causal=is_causal,
                                dtype=torch.float32, device="cpu")  # (1, 1, 1 or T, T), 0 = visible
    return (mask == 0).expand(1, 1, n_tokens, n_tokens)[0, 0].numpy()  # (T, T)


def visible_tokens(tokens: Sequence[str], position: int) -> dict[str, list[str]]:
    """The tokens the query at ``position`` may attend to, under each model."""
    if not 0 <= position < len(tokens):
        raise IndexError(f"position {position} is outside the {len(tokens)} tokens")
    return {
        name: [t for t, seen in zip(tokens, visibility(len(tokens), causal)[position]) if seen]
        for name, causal in (("bert", False), ("gpt", True))
    }


def describe(tokens: Sequence[str], position: int) -> str:
    """One line per model, as the demo prints it under the figure."""
    seen = visible_tokens(tokens, position)
    q = tokens[position]
    return (f"query {position} ({q!r}): BERT sees {len(seen['bert'])} of {len(tokens)} tokens; "
            f"GPT sees {len(seen['gpt'])}: {' '.join(seen['gpt'])}")


def position_figure(tokens: Sequence[str], position: int, attn_bert: np.ndarray | None = None,
                    attn_gpt: np.ndarray | None = None) -> plt.Figure:
    """Two panels, BERT above GPT: for the query at ``position``, each key is either hidden (grey) or
    visible; with ``attn_*`` (T, T) weights given, the bar height is the weight the query gives that key."""
    T = len(tokens)
    if not 0 <= position < T:
        raise IndexError(f"position {position} is outside the {T} tokens")
    fig, axes = plt.subplots(2, 1, figsize=(max(6, 0.6 * T), 4.6), sharex=True)
    for ax, (name, causal, attn) in zip(axes, (("BERT: bidirectional", False, attn_bert),
                                               ("GPT: causal", True, attn_gpt))):
        seen = visibility(T, causal)[position]
        color = COLORS["gpt"] if causal else COLORS["bert"]
        if attn is None:
            heights, ylabel = seen.astype(float), "may attend"
        else:
            heights, ylabel = np.asarray(attn, dtype=float)[position], "attention weight"
        ymax = 1.0 if attn is None else max(float(heights[seen].max()) * 1.15, 0.05)
        ax.bar(range(T), np.where(seen, heights, 0.0), color=color, edgecolor="black", linewidth=0.5)
        for j in np.flatnonzero(~seen):  # hidden keys: a grey crossed box, so "0" reads as "forbidden"
            ax.bar(j, ymax, color=COLORS["hidden"], hatch="xx", edgecolor="white")
        ax.set_ylim(0, ymax)
        ax.axvline(position, color="black", linestyle=":", linewidth=1)
        ax.set_ylabel(ylabel)
        ax.set_title(f"{name}: query {position} ({tokens[position]!r}) sees {int(seen.sum())} of {T} tokens",
                     fontsize=10)
    axes[-1].set_xticks(range(T), tokens, rotation=45, ha="right")
    fig.tight_layout()
    return fig


def make_demo(tokens: Sequence[str], attn_bert: np.ndarray | None = None, attn_gpt: np.ndarray | None = None,
              position: int | None = None):
    """A slider over positions; the figure and the one-line description follow it."""
    import ipywidgets as widgets

    tokens = list(tokens)
    start = len(tokens) // 2 if position is None else position
    slider = widgets.IntSlider(value=start, min=0, max=len(tokens) - 1, description="position",
                               continuous_update=False)
    image = widgets.Image(format="png")
    label = widgets.HTML()

    def update(change=None):
        p = slider.value
        image.value = fig_to_png(position_figure(tokens, p, attn_bert, attn_gpt))
        label.value = f"<code>{describe(tokens, p)}</code>"

    slider.observe(update, names="value")
    update()
    return widgets.VBox([slider, label, image])
