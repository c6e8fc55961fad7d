"""Chapter 7 demos: the MLM loss is a log-loss averaged over the selected positions only.

Pure callbacks (tests call them), ``static_demos()`` (the page's demos, every state computed at build
time) and ``make_demo()`` (the same in JupyterLab). The loss itself is bertlib's ``mlm_loss``; the one
function here that computes a loss differently, ``buggy_masked_mean``, does so on purpose: it is the
classic mistake the chapter takes apart.

all-MiniLM-L6-v2 ships without an MLM head (no ``cls.predictions`` weights), so the masked-word demo reads
chapter 11's default pretraining run instead (``trained_mlm``: its checkpoint, computed once by ``course.runs``
and kept in ``book_runs/``; nothing is downloaded), on a sentence of that run's held-out documents, in the
run's own vocabulary (compacted to Python's documentation, the corpus it was trained on).
"""
from __future__ import annotations

import functools
import math
import re
import statistics

import torch
import torch.nn.functional as F

from bertlib import mlm_loss
from bertlib.masking import IGNORE_INDEX  # -100: the label of a position the loss skips

from ..editions import ENGLISH, tr
from ..plots import COLORS, html_table

# The masked-word demo's sentences: plain sentences of chapter 11's held-out documents (the run never trained on
# them), a capitalised word, 6 to 13 lower-case words and a full stop, each word one piece of the vocabulary.
PLAIN_SENTENCE = re.compile(r"[A-Z][a-z]+( [a-z]+){6,13}\.")
MIN_LETTERS = 4  # the demo opens on a word of at least this many letters (not on "a", "the" or ".")


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


def mask_one_word(model, tokenizer, text: str, position: int, top_k: int = 5) -> dict:
    """Replace the token at ``position`` by [MASK], label only that position, and run ``model``.

    model: a bertlib ``BertForMaskedLM`` in eval mode. Returns the tokens, what the model reads, the labels
    (-100 everywhere else), bertlib's ``mlm_loss`` on them, the probability and rank of the right token, and
    the ``top_k`` predictions at the masked position."""
    enc = tokenizer(text, return_tensors="pt")
    ids = enc["input_ids"]  # (1, T)
    T = ids.size(1)
    if not 1 <= position <= T - 2:
        raise ValueError(f"position must name a word of the sentence, 1..{T - 2} ([CLS] and [SEP] excluded), "
                         f"got {position}")
    inputs = ids.clone()
    inputs[0, position] = tokenizer.mask_token_id
    labels = torch.full_like(ids, IGNORE_INDEX)  # (1, T)
    labels[0, position] = ids[0, position]
    with torch.no_grad():
        logits = model(input_ids=inputs, attention_mask=enc["attention_mask"]).logits  # (1, T, V)
    loss = float(mlm_loss(logits, labels))
    probs = logits[0, position].softmax(-1)  # (V,)
    right = int(ids[0, position])
    top = probs.topk(top_k)
    return {
        "tokens": tokenizer.convert_ids_to_tokens(ids[0].tolist()),
        "model_reads": tokenizer.convert_ids_to_tokens(inputs[0].tolist()),
        "labels": labels[0].tolist(),
        "position": position,
        "word": tokenizer.convert_ids_to_tokens([right])[0],
        "loss": loss,
        "p_right": float(probs[right]),
        "rank_right": int((probs > probs[right]).sum()) + 1,
        "top": list(zip(tokenizer.convert_ids_to_tokens(top.indices.tolist()), top.values.tolist())),
        "vocab_size": probs.numel(),
    }


def trained_mlm():
    """(model, tokenizer): chapter 11's default pretraining run as a masked LM, from its checkpoint.

    ``course.runs`` computes the run once (``python -m bertlib.pretrain`` with its defaults) and keeps it in
    ``book_runs/``; the book's build runs it before this chapter. The model is ``BertForPreTraining``'s encoder
    and MLM head (its NSP head is left out), in eval mode; the tokenizer is the run's compact vocabulary."""
    from bertlib import BertForMaskedLM, BertTokenizer
    from course import runs

    path = runs.checkpoint_dir()
    return BertForMaskedLM.from_pretrained(path).eval(), BertTokenizer.from_pretrained(path)


def heldout_sentences(tokenizer, documents=None) -> list[tuple[str, str]]:
    """(document name, sentence) of every plain sentence (``PLAIN_SENTENCE``) of chapter 11's held-out documents
    whose every word is one piece of ``tokenizer``'s vocabulary; each sentence once, in the corpus's order.

    ``documents``: default, the held-out documents of the default run, split exactly as the run split them."""
    if documents is None:
        from bertlib.training.corpus import load_documents
        from bertlib.training.pretrain_config import PretrainConfig
        from bertlib.training.pretraining_data import load_pretraining_data

        cfg = PretrainConfig()
        # the arguments bertlib.training.pretrain passes: the same split of the corpus
        held = set(load_pretraining_data(cfg.vocab, cfg.heldout_fraction, 0, cfg.max_sentence_tokens).heldout_names)
        documents = [d for d in load_documents() if d.name in held]
    seen, out = set(), []
    for doc in documents:
        for sentence in doc.sentences:
            if sentence in seen or not PLAIN_SENTENCE.fullmatch(sentence):
                continue
            pieces = tokenizer.tokenize(sentence)
            if any(p.startswith("##") or p == tokenizer.unk_token for p in pieces):
                continue
            seen.add(sentence)
            out.append((doc.name, sentence))
    return out


def word_losses(model, tokenizer, text: str) -> torch.Tensor:
    """-ln p of each word of ``text`` (as pieces, [CLS] and [SEP] excluded) when that word alone is masked:
    one row per word, all in one batch. Returns a (n_words,) tensor."""
    enc = tokenizer(text, return_tensors="pt")
    ids = enc["input_ids"]  # (1, T)
    n = ids.size(1) - 2
    rows = torch.arange(n)
    inputs = ids.repeat(n, 1)  # (n, T): row j masks word j (position j + 1)
    inputs[rows, rows + 1] = tokenizer.mask_token_id
    with torch.no_grad():
        logits = model(input_ids=inputs, attention_mask=enc["attention_mask"].repeat(n, 1)).logits  # (n, T, V)
    log_p = logits[rows, rows + 1].log_softmax(-1)  # (n, V)
    return -log_p[rows, ids[0, 1:-1]]  # (n,)


def pick_sentence(model, tokenizer, candidates) -> dict:
    """Of ``candidates`` ((document name, sentence) pairs), the sentence the model reads best: the lowest mean
    of ``word_losses``. Also the number of candidates and the median of their means, which say how typical
    the chosen one is."""
    scored = sorted((float(word_losses(model, tokenizer, s).mean()), name, s) for name, s in candidates)
    if not scored:
        raise ValueError("no candidate sentence: heldout_sentences found no plain sentence in the held-out documents")
    mean_loss, document, sentence = scored[0]
    return {"sentence": sentence, "document": document, "mean_loss": mean_loss, "candidates": len(scored),
            "median_mean_loss": statistics.median(m for m, _, _ in scored)}


def default_position(model, tokenizer, text: str) -> int:
    """The word the demo opens on: of the words of at least ``MIN_LETTERS`` letters, the one the model finds
    most probable when it alone is masked (any word if none is that long). A position counts [CLS] as 0."""
    tokens = tokenizer.tokenize(text)
    losses = word_losses(model, tokenizer, text).tolist()
    long = [j for j, t in enumerate(tokens) if t.isalpha() and len(t) >= MIN_LETTERS] or list(range(len(tokens)))
    return min(long, key=lambda j: (losses[j], j)) + 1


# ----------------------------------------------------------------------------- static demos (the page)
# The losses of compare_losses whose names are words (the others are code, shown as they are)
WORDED_LOSSES = ("mean x mask (bug)", "mean over all positions")


def mask_bug_state(n_selected: int, seed: int = 0, language: str = ENGLISH) -> dict:
    """The five losses of ``compare_losses`` as bars: the right three agree, the bug ignores the selection.
    ``language``: the edition whose words the caption, figure and table use (the numbers are the same)."""
    import plotly.graph_objects as go

    r = _compare_losses(n_selected, seed)
    names = list(r)
    shown = [tr(n, language) if n in WORDED_LOSSES else n for n in names]
    right, bug = r["bertlib mlm_loss"], r["mean x mask (bug)"]
    colors = [COLORS["bert"]] * 3 + [COLORS["gpt"], COLORS["pad"]]
    fig = go.Figure(go.Bar(x=[r[n]["loss"] for n in names], y=shown, orientation="h", marker_color=colors,
                           text=[f"{r[n]['loss']:.4f}" for n in names], textposition="auto"))
    fig.update_layout(xaxis=dict(title=tr("loss", language), rangemode="tozero"), yaxis=dict(autorange="reversed"),
                      height=300, margin=dict(l=170, r=20, t=20, b=50))
    table = html_table([tr(h, language) for h in ("loss", "value", "gradient on unselected", "gradient on selected")],
                       [[n, f"{r[m]['loss']:.4f}", f"{r[m]['grad_on_unselected']:.4g}",
                         f"{r[m]['grad_on_selected']:.4g}"] for n, m in zip(shown, names)], align="lrrr")
    return {"caption": tr("{n} of 16 positions selected: right loss {right:.4f}, bug {bug:.4f} (gradient on the "
                          "unselected: {right_grad:.3g} right, {bug_grad:.3g} bug)", language).format(
                n=n_selected, right=right["loss"], bug=bug["loss"], right_grad=right["grad_on_unselected"],
                bug_grad=bug["grad_on_unselected"]),
            "figure": fig, "html": table}


@functools.lru_cache(maxsize=64)
def _compare_losses(n_selected: int, seed: int) -> dict:
    """``compare_losses``, once per state for both editions."""
    return compare_losses(n_selected, seed)


def masked_word_state(model, tokenizer, position: int, text: str, language: str = ENGLISH, r: dict | None = None) -> dict:
    """One word of ``text`` masked: what the model reads, the labels, the loss, the top guesses and the rank of
    the right word. ``r``: ``mask_one_word``'s result if already computed (both editions word one result)."""
    import plotly.graph_objects as go

    r = r or mask_one_word(model, tokenizer, text, position)
    top = list(r["top"])
    right = [t == r["word"] for t, _ in top]
    if not any(right):  # the right word as a last bar, with its rank
        top.append((tr("{word} (rank {rank:,})", language).format(word=r["word"], rank=r["rank_right"]),
                    r["p_right"]))
        right.append(True)
    colors = [COLORS["gpt"] if is_right else COLORS["bert"] for is_right in right]
    highest = max(p for _, p in top)
    fig = go.Figure(go.Bar(x=[p for _, p in top], y=[t for t, _ in top], orientation="h", marker_color=colors,
                           text=[f"{p:.2f}" if p >= 0.01 else f"{p:.1e}" for _, p in top], textposition="outside",
                           cliponaxis=False))
    fig.update_layout(xaxis=dict(title=tr("probability (red: the right word)", language), range=[0, 1.3 * highest]),
                      yaxis=dict(autorange="reversed", automargin=True), height=300,
                      margin=dict(l=10, r=20, t=30, b=50))
    yes = tr("yes", language)
    rows = [[i, tok, reads, lab if lab != IGNORE_INDEX else "-100", yes if lab != IGNORE_INDEX else ""]
            for i, (tok, reads, lab) in enumerate(zip(r["tokens"], r["model_reads"], r["labels"]))]
    table = html_table([tr(h, language) for h in ("position", "token", "model reads", "label", "in the loss")], rows,
                       align="rllrl")
    guesses = ", ".join(f"{t} {p:.2f}" for t, p in r["top"][:3])
    return {"caption": tr("mask '{word}' (position {position}): the loss reads 1 of {T} positions, -ln p('{word}') = "
                          "{loss:.2f}; top guesses {guesses}; '{word}' ranks {rank:,} of {V:,}", language).format(
                word=r["word"], position=position, T=len(r["tokens"]), loss=r["loss"], guesses=guesses,
                rank=r["rank_right"], V=r["vocab_size"]),
            "figure": fig, "html": table}


def static_demos(tokenizer=None, model=None, sentence: str | None = None) -> list:
    """The chapter's demos for the static page. ``model``: a bertlib ``BertForMaskedLM`` with its ``tokenizer``
    (default: chapter 11's default run, ``trained_mlm()``); ``sentence``: the sentence to mask (default: the
    held-out sentence the model reads best, ``pick_sentence``)."""
    from course.static_demo import Select, Slider, StaticDemo

    if model is None:
        model, tokenizer = trained_mlm()
    elif tokenizer is None:
        raise ValueError("a model needs its tokenizer: pass tokenizer= with model=")
    model.eval()
    if sentence is None:
        sentence = pick_sentence(model, tokenizer, heldout_sentences(tokenizer))["sentence"]
    words = tokenizer.tokenize(sentence)
    masked = functools.cache(lambda position: mask_one_word(model, tokenizer, sentence, position))  # once per state
    return [
        StaticDemo("mask-bug", [Slider("n_selected", "selected positions", values=list(range(1, 17)),
                                            default=3)],
                   mask_bug_state, title="The right loss and the mask bug"),
        StaticDemo("masked-word",
                   [Select("position", "masked word", options=list(range(1, len(words) + 1)),
                           default=default_position(model, tokenizer, sentence), labels=words)],
                   lambda position, language=ENGLISH: masked_word_state(model, tokenizer, position, sentence,
                                                                        language, masked(position)),
                   title="Mask one word of a sentence the model never trained on"),
    ]


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


def make_demo():
    """Two panels: -ln p for a chosen p, and the right loss vs the bug for a chosen number of selected positions."""
    import ipywidgets as w
    import matplotlib.pyplot as plt

    from course.plots import fig_to_png

    from ._live import panel

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
    mask_bug = panel({"n_selected": k, "seed": seed}, mask_bug_state)  # the page's state, with a seed of its own
    return w.Tab(children=[w.VBox([p, loss_text, p_image]), mask_bug], titles=["-ln p", "the mask bug"])
