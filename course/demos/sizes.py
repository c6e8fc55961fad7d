"""Chapter 3 demo: choose a BERT's width, depth and vocabulary and see where its parameters sit.

All counting is bertlib's closed form (``bertlib.params``); the demo only groups and draws it.
"""
from __future__ import annotations

from bertlib import BertConfig, count_parameters
from bertlib.params import embeddings_breakdown, layer_breakdown
from course.editions import ENGLISH, tr

PRESETS = {
    "BERT-Base": dict(hidden_size=768, num_hidden_layers=12, vocab_size=30522),
    "BERT-Large": dict(hidden_size=1024, num_hidden_layers=24, vocab_size=30522),
    "MiniLM-L6-H384": dict(hidden_size=384, num_hidden_layers=6, vocab_size=30522),
}
GROUPS = ("word embeddings", "positions + segments + LayerNorm", "attention (all layers)",
          "feed-forward (all layers)", "pooler")
GROUP_COLORS = ("#4C72B0", "#8FAADC", "#DD8452", "#C44E52", "#55A868")


def make_config(hidden_size: int, num_hidden_layers: int, vocab_size: int = 30522) -> BertConfig:
    """A BERT with the paper's proportions: feed-forward 4H, 64 dimensions per head (heads do not change
    the count: they split H, they do not add weights)."""
    if hidden_size % 64:
        raise ValueError(f"hidden_size must be a multiple of 64 (64 dimensions per head), got {hidden_size}")
    return BertConfig(hidden_size=hidden_size, num_hidden_layers=num_hidden_layers, vocab_size=vocab_size,
                      num_attention_heads=hidden_size // 64, intermediate_size=4 * hidden_size)


def grouped_counts(cfg: BertConfig) -> dict[str, int]:
    """bertlib's count regrouped by what the parameters do; the values add up to ``count_parameters``."""
    emb, layer, L = embeddings_breakdown(cfg), layer_breakdown(cfg), cfg.num_hidden_layers
    groups = {
        "word embeddings": emb["word_embeddings"],
        "positions + segments + LayerNorm": emb["total"] - emb["word_embeddings"],
        "attention (all layers)": L * (layer["attention.self"] + layer["attention.output.dense"]
                                       + layer["attention.output.LayerNorm"]),
        "feed-forward (all layers)": L * (layer["intermediate.dense"] + layer["output.dense"]
                                          + layer["output.LayerNorm"]),
        "pooler": count_parameters(cfg)["pooler"],
    }
    assert sum(groups.values()) == count_parameters(cfg)["total"]
    return groups


def summary(cfg: BertConfig) -> str:
    groups = grouped_counts(cfg)
    total = sum(groups.values())
    share = groups["word embeddings"] / total
    return (f"L={cfg.num_hidden_layers}, H={cfg.hidden_size}, V={cfg.vocab_size}: {total:,} parameters, "
            f"{share:.1%} in the word embeddings")


def make_demo(preset: str = "BERT-Base"):
    """Sliders for H, L and V (and preset buttons); the page's bar chart (``breakdown_plotly``) and the summary
    follow them."""
    import ipywidgets as widgets

    from ._live import panel

    p = PRESETS[preset]
    hidden = widgets.IntSlider(value=p["hidden_size"], min=128, max=1536, step=64, description="H",
                               continuous_update=False)
    layers = widgets.IntSlider(value=p["num_hidden_layers"], min=1, max=48, description="L",
                               continuous_update=False)
    vocab = widgets.IntSlider(value=p["vocab_size"], min=1000, max=250000, step=500, description="V",
                              continuous_update=False)
    presets = widgets.ToggleButtons(options=list(PRESETS), value=preset)

    def apply_preset(change):  # the sliders' own changes redraw
        q = PRESETS[change["new"]]
        with hidden.hold_trait_notifications(), layers.hold_trait_notifications(), \
                vocab.hold_trait_notifications():
            hidden.value, layers.value, vocab.value = q["hidden_size"], q["num_hidden_layers"], q["vocab_size"]

    def state(hidden_size, num_hidden_layers, vocab_size):
        cfg = make_config(hidden_size, num_hidden_layers, vocab_size)
        return {"caption": summary(cfg), "figure": breakdown_plotly(cfg)}

    presets.observe(apply_preset, names="value")
    return panel({"hidden_size": hidden, "num_hidden_layers": layers, "vocab_size": vocab}, state,
                 rows=[presets, hidden, layers, vocab])


# --- the static page's demo (course.static_demo) ----------------------------------------------------------------

LAYERS = (1, 2, 6, 12, 24)
WIDTHS = (128, 256, 384, 768, 1024)
HEADS = (1, 2, 4, 8, 12, 16)
VOCABS = (8000, 30522, 119547, 250002)  # a small WordPiece, BERT's, multilingual BERT's, XLM-R's


def config_with_heads(hidden_size: int, num_hidden_layers: int, num_attention_heads: int,
                      vocab_size: int = 30522) -> BertConfig:
    """Like ``make_config`` but with the number of heads chosen freely (it must divide H)."""
    if hidden_size % num_attention_heads:
        raise ValueError(f"{num_attention_heads} heads do not divide hidden_size {hidden_size}")
    return BertConfig(hidden_size=hidden_size, num_hidden_layers=num_hidden_layers, vocab_size=vocab_size,
                      num_attention_heads=num_attention_heads, intermediate_size=4 * hidden_size)


def caption(cfg: BertConfig, language: str = ENGLISH) -> str:
    """The static demo's one line: the total, and the heads' width (the heads split H, they add nothing)."""
    total = count_parameters(cfg)["total"]
    share = grouped_counts(cfg)["word embeddings"] / total
    return tr("L={L}, H={H}, A={A} ({per_head} per head), V={V}: {total} parameters, {share} in the word "
              "embeddings", language).format(L=cfg.num_hidden_layers, H=cfg.hidden_size, A=cfg.num_attention_heads,
                                             per_head=cfg.hidden_size // cfg.num_attention_heads,
                                             V=f"{cfg.vocab_size:,}", total=f"{total:,}", share=f"{share:.1%}")


SHORT_GROUPS = ("word<br>emb.", "pos., seg.,<br>LayerNorm", "attention", "feed-<br>forward",
               "pooler")  # GROUPS, short enough for a phone's width (the full names are in the hover)


def breakdown_plotly(cfg: BertConfig, language: str = ENGLISH):
    """The count by component as bars, each labelled with its count and share."""
    import plotly.graph_objects as go

    groups = grouped_counts(cfg)
    total = sum(groups.values())
    values = [groups[g] for g in GROUPS]
    fig = go.Figure(go.Bar(x=[tr(g, language) for g in SHORT_GROUPS], y=[v / 1e6 for v in values],
                           marker_color=list(GROUP_COLORS),
                           text=[f"{v / 1e6:.2f}M<br>{v / total:.1%}" for v in values], textposition="outside",
                           cliponaxis=False, customdata=[tr(g, language) for g in GROUPS],
                           hovertemplate="%{customdata}: %{y:.2f}M<extra></extra>"))
    fig.update_layout(height=340, margin=dict(l=55, r=10, t=20, b=70), showlegend=False)
    fig.update_yaxes(title_text=tr("parameters (millions)", language), range=[0, max(values) / 1e6 * 1.3])
    fig.update_xaxes(tickangle=0)
    return fig


def static_demos():
    """Chapter 3's demo in the static page: L, H, A and V; bertlib's count by component for each."""
    from course.static_demo import Buttons, Select, Slider, StaticDemo

    figures = {}  # the heads do not change the count: one figure per (L, H, V) and edition

    def state(L, H, A, V, language=ENGLISH):
        if H % A:
            return {"caption": tr("A={A} heads do not divide H={H}: each head needs H/A whole dimensions",
                                  language).format(A=A, H=H)}
        cfg = config_with_heads(H, L, A, V)
        if (L, H, V, language) not in figures:
            figures[L, H, V, language] = breakdown_plotly(cfg, language)
        return {"caption": caption(cfg, language), "figure": figures[L, H, V, language]}

    return [StaticDemo("sizes", [Slider("L", "layers L", values=list(LAYERS), default=12),
                                      Slider("H", "hidden size H", values=list(WIDTHS), default=768),
                                      Buttons("A", "heads A", options=list(HEADS), default=12),
                                      Select("V", "vocabulary V", options=list(VOCABS), default=30522,
                                             labels=[f"{v:,}" for v in VOCABS])],
                       state=state)]
