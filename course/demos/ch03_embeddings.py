"""Chapter 3 demo: pick a token and watch its token, position and segment vectors add up.

The vectors are read from a real ``bertlib.BertEmbeddings`` (the chapter passes MiniLM's), and the sum is
checked against the module's own forward pass, so the demo cannot drift from the library.
"""
from __future__ import annotations

from collections.abc import Sequence

import matplotlib.pyplot as plt
import numpy as np
import torch

from ..plots import COLORS, fig_to_png

PARTS = ("token", "position", "segment", "sum", "layernorm")
TITLES = {"token": "token embedding", "position": "position embedding", "segment": "segment embedding",
          "sum": "sum = token + position + segment", "layernorm": "after LayerNorm (what layer 1 gets)"}


@torch.no_grad()
def embedding_parts(embeddings, input_ids: torch.Tensor, token_type_ids: torch.Tensor,
                    index: int) -> dict[str, np.ndarray]:
    """The three looked-up vectors of token ``index`` of a (1, T) input, their sum, and the LayerNorm of the
    sum, each of shape (H,). The last one equals ``embeddings(input_ids, token_type_ids)[0, index]``
    in eval mode (dropout off)."""
    if input_ids.dim() != 2 or input_ids.size(0) != 1:
        raise ValueError(f"input_ids must have shape (1, T), got {tuple(input_ids.shape)}")
    T = input_ids.size(1)
    if not 0 <= index < T:
        raise IndexError(f"index {index} is outside the {T} tokens")
    token = embeddings.word_embeddings.weight[input_ids[0, index]]  # (H,)
    position = embeddings.position_embeddings.weight[index]  # (H,): position ids are 0..T-1
    segment = embeddings.token_type_embeddings.weight[token_type_ids[0, index]]  # (H,)
    total = token + position + segment  # (H,)
    normed = embeddings.LayerNorm(total)  # (H,)
    return {k: v.detach().cpu().numpy().copy() for k, v in
            zip(PARTS, (token, position, segment, total, normed))}


def parts_figure(parts: dict[str, np.ndarray], label: str = "", dims: int = 16) -> plt.Figure:
    """Five bar rows over the first ``dims`` dimensions: token, position, segment, their sum, LayerNorm."""
    fig, axes = plt.subplots(len(PARTS), 1, figsize=(7.5, 6.2), sharex=True)
    x = np.arange(dims)
    lim = max(np.abs(parts[k][:dims]).max() for k in ("token", "position", "segment", "sum")) * 1.15
    for ax, key in zip(axes, PARTS):
        v = parts[key][:dims]
        color = COLORS["layernorm"] if key == "layernorm" else COLORS[key]
        ax.bar(x, v, color=color)
        ax.axhline(0, color="black", linewidth=0.5)
        if key != "layernorm":  # the raw vectors share one scale, so the sum visibly is the sum
            ax.set_ylim(-lim, lim)
        ax.set_ylabel(key, rotation=0, ha="right", va="center")
        ax.set_title(TITLES[key], fontsize=9, loc="left")
    axes[-1].set_xticks(x)
    axes[-1].set_xlabel(f"dimension (first {dims} of {len(parts['token'])})")
    fig.suptitle(label, fontsize=11)
    fig.tight_layout()
    return fig


def token_labels(tokens: Sequence[str], token_type_ids: torch.Tensor) -> list[str]:
    """'5: cute (A)' for the dropdown: position, token, segment."""
    return [f"{i}: {t} ({'AB'[int(s)]})" for i, (t, s) in enumerate(zip(tokens, token_type_ids[0].tolist()))]


def make_demo(embeddings, tokens: Sequence[str], input_ids: torch.Tensor, token_type_ids: torch.Tensor,
              index: int = 0, dims: int = 16):
    """A dropdown over the tokens of one (1, T) input; the five-row figure follows it."""
    import ipywidgets as widgets

    labels = token_labels(tokens, token_type_ids)
    pick = widgets.Dropdown(options=[(lab, i) for i, lab in enumerate(labels)], value=index, description="token")
    image = widgets.Image(format="png")

    def update(change=None):
        i = pick.value
        image.value = fig_to_png(parts_figure(embedding_parts(embeddings, input_ids, token_type_ids, i),
                                              labels[i], dims))

    pick.observe(update, names="value")
    update()
    return widgets.VBox([pick, image])
