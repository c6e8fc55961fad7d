"""Chapter 11 demo: step through the default pretraining run and watch the loss curves and the fill-mask
predictions change.

The run is the chapter's own (``bertlib.pretrain`` with its defaults); nothing is trained here. The one
thing this module adds to the run is ``FillMaskSnapshots``, an ``on_step`` hook that records, every
``eval_every`` steps, the pieces the model predicts at the [MASK] of a few prompts. ``static_demos()`` turns
the run's learning curve (``result.history``) and those snapshots into the page's demo.
"""
from __future__ import annotations

import json
from pathlib import Path

import torch

from ..plots import COLORS, html_table

# Where the chapter leaves its run's record (learning curve and snapshots) when it is built, so that the page
# test and the tests can rebuild the demo's states in Python without training again (_build/ is not committed).
RUN_RECORD = Path(__file__).resolve().parents[2] / "_build" / "pretraining_demo_run.json"

# The chapter's fill-mask prompts ("Fill in the [MASK]"): sentences in the style of the documentation.
PROMPTS = (
    "Return the [MASK] value of x.",
    "Raise a [MASK] if the file does not exist.",
    "The [MASK] statement is used to leave a loop.",
    "This method returns a list of the [MASK] in the directory.",
    "If the argument is omitted, it defaults to [MASK].",
)


class FillMaskSnapshots:
    """An ``on_step(step, model, batch)`` hook for ``bertlib.pretrain``: at every ``every``-th step (step 0,
    the untrained model, included) the ``top_k`` pieces, with their probabilities, that the model predicts
    at the [MASK] of each prompt. ``record(steps_done, model)`` takes one more (the trained model at the end).

    The hook runs the model in eval mode under ``no_grad`` and puts it back in train mode: it draws no random
    numbers and touches no gradient, so the run is exactly the run without it (tests check).
    ``snapshots`` maps the number of optimizer steps taken to one list of (piece, probability) per prompt.
    """

    def __init__(self, tokenizer, every: int, prompts=PROMPTS, top_k: int = 5):
        if every < 1:
            raise ValueError(f"every must be a positive number of steps, got {every}")
        self.tokenizer, self.every, self.prompts, self.top_k = tokenizer, every, tuple(prompts), top_k
        self.encodings = []
        for text in self.prompts:
            enc = tokenizer(text, return_tensors="pt")
            ids = enc["input_ids"][0].tolist()
            if ids.count(tokenizer.mask_token_id) != 1:
                raise ValueError(f"a prompt needs exactly one [MASK]: {text!r}")
            self.encodings.append((enc, ids.index(tokenizer.mask_token_id)))
        self.snapshots: dict[int, list[list[tuple[str, float]]]] = {}

    def __call__(self, step: int, model, batch=None) -> None:
        # called before the update of step ``step`` (0-based): the model has taken ``step`` updates
        if step % self.every == 0:
            self.record(step, model)

    @torch.no_grad()
    def record(self, steps_done: int, model) -> None:
        was_training = model.training
        model.eval()
        device = next(model.parameters()).device
        predictions = []
        for enc, position in self.encodings:
            enc = {k: v.to(device) for k, v in enc.items()}
            out = model(input_ids=enc["input_ids"], attention_mask=enc["attention_mask"],
                        token_type_ids=enc["token_type_ids"])
            logits = getattr(out, "prediction_logits", None)
            logits = out.logits if logits is None else logits  # BertForPreTraining or BertForMaskedLM
            probs = logits[0, position].float().softmax(-1)  # (V,)
            top = probs.topk(self.top_k)
            pieces = self.tokenizer.convert_ids_to_tokens(top.indices.tolist())
            predictions.append(list(zip(pieces, top.values.tolist())))
        self.snapshots[steps_done] = predictions
        model.train(was_training)


# ----------------------------------------------------------------------------- static demo (the page)
def _curve(history: list[dict], key: str, upto: int, every: int = 10):
    """(steps, values) of one history column up to step ``upto``, every ``every``-th step (page weight)."""
    rows = [r for r in history if r["step"] <= upto and r.get(key) is not None
            and (r["step"] % every == 0 or r["step"] in (1, upto))]
    return [r["step"] for r in rows], [r[key] for r in rows]


def checkpoint_state(history: list[dict], snapshots: dict, steps_done: int, prompts=PROMPTS,
                     mlm_baseline: float | None = None) -> dict:
    """The run after ``steps_done`` steps: the curves so far (figure), each prompt's top predictions
    (table), and the caption's numbers: the training losses and the held-out MLM top-1 at that point."""
    import plotly.graph_objects as go
    from plotly.subplots import make_subplots

    if steps_done not in snapshots:
        raise ValueError(f"no snapshot after {steps_done} steps; there are {sorted(snapshots)}")
    total = history[-1]["step"]
    evals = [r for r in history if "heldout_mlm_accuracy" in r]
    fig = make_subplots(rows=2, cols=1, shared_xaxes=True, vertical_spacing=0.12,
                        subplot_titles=("training loss (running mean)", "held-out accuracy (first 256 pairs)"))
    for key, name, color in (("mlm_loss", "MLM loss", COLORS["bert"]), ("nsp_loss", "NSP loss", COLORS["gpt"])):
        x, y = _curve(history, key, max(steps_done, 1))
        fig.add_trace(go.Scatter(x=x, y=y, mode="lines", name=name, line=dict(color=color)), row=1, col=1)
    for key, name, color in (("heldout_mlm_accuracy", "MLM top-1", COLORS["bert"]),
                             ("heldout_nsp_accuracy", "NSP", COLORS["gpt"])):
        shown = [r for r in evals if r["step"] <= steps_done]
        fig.add_trace(go.Scatter(x=[r["step"] for r in shown], y=[r[key] for r in shown], mode="lines+markers",
                                 name=f"held-out {name}", line=dict(color=color, dash="dot")), row=2, col=1)
    if mlm_baseline is not None:
        fig.add_trace(go.Scatter(x=[0, total], y=[mlm_baseline] * 2, mode="lines", name="most frequent piece",
                                 line=dict(color="gray", dash="dash", width=1)), row=2, col=1)
    losses = [r[k] for r in history for k in ("mlm_loss", "nsp_loss") if r.get(k) is not None]
    fig.update_xaxes(range=[0, total], row=1, col=1)
    fig.update_xaxes(range=[0, total], title_text="step", row=2, col=1)
    fig.update_yaxes(range=[0, max(losses) * 1.05], row=1, col=1)
    fig.update_yaxes(range=[0, 1], row=2, col=1)
    fig.add_vline(x=steps_done, line_color="gray", line_width=1)
    fig.update_layout(height=470, legend=dict(orientation="h", yanchor="top", y=-0.2, x=0), margin=dict(l=55, r=15, t=40, b=40))

    predictions = snapshots[steps_done]
    rows = [[text, ", ".join(f"{piece} ({p:.2g})" for piece, p in top)] for text, top in zip(prompts, predictions)]
    table = html_table(["prompt", f"top {len(predictions[0])} after {steps_done:,} steps"], rows, align="ll")

    record = history[max(steps_done, 1) - 1]  # step 1's running loss is the untrained model's first loss
    assert record["step"] == max(steps_done, 1), "history must hold one record per step, in order"
    at = next((r for r in evals if r["step"] == steps_done), None)
    heldout = f"held-out MLM top-1 {at['heldout_mlm_accuracy']:.1%}" if at else "held-out MLM top-1 not measured yet"
    when = "before training" if steps_done == 0 else f"after {steps_done:,} of {total:,} steps"
    caption = (f"{when}: training MLM loss {record['mlm_loss']:.2f}, NSP loss {record['nsp_loss']:.2f}; "
               f"{heldout}; '{prompts[0]}' -> {predictions[0][0][0]}")
    return {"caption": caption, "figure": fig, "html": table}


def save_run_record(history: list[dict], snapshots: FillMaskSnapshots, mlm_baseline: float | None,
                    path: Path | None = None) -> Path:
    """Write what the demo is made of (the run's learning curve, the snapshots, the baseline) as JSON
    (to ``RUN_RECORD`` by default)."""
    path = RUN_RECORD if path is None else Path(path)
    record = {"history": history, "prompts": list(snapshots.prompts), "mlm_baseline": mlm_baseline,
              "snapshots": {str(k): v for k, v in snapshots.snapshots.items()}}
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(record))
    tmp.replace(path)
    return path


def load_run_record(path: Path | None = None) -> dict:
    """The record ``save_run_record`` wrote (JSON numbers round-trip exactly, so the states are the same)."""
    path = RUN_RECORD if path is None else Path(path)
    if not path.exists():
        raise FileNotFoundError(f"{path} does not exist: it is written when chapter 11 is executed "
                                "(build the book, or chapters/11_pretraining.md alone, first)")
    record = json.loads(path.read_text())
    record["snapshots"] = {int(k): [[(piece, p) for piece, p in top] for top in v]
                           for k, v in record["snapshots"].items()}
    return record


def static_demos(history: list[dict] | None = None, snapshots: FillMaskSnapshots | dict | None = None,
                 mlm_baseline: float | None = None) -> list:
    """The chapter's demo for the static page: a slider over the run's snapshots.

    ``history``: ``pretrain(...).history`` (one record per step); ``snapshots``: the ``FillMaskSnapshots``
    passed to ``pretrain`` as ``on_step`` (with the final model recorded), or its ``snapshots`` dict.
    Called with neither, the demo is rebuilt from the record the chapter's last execution left
    (``RUN_RECORD``): the states are the chapter's run, which is too long to repeat in a test."""
    from course.static_demo import Slider, StaticDemo

    prompts = getattr(snapshots, "prompts", PROMPTS)
    if history is None and snapshots is None:
        record = load_run_record()
        history, snapshots, mlm_baseline = record["history"], record["snapshots"], record["mlm_baseline"]
        prompts = tuple(record["prompts"])
    snaps = getattr(snapshots, "snapshots", snapshots)
    if not snaps:
        raise ValueError("no snapshots: pass the FillMaskSnapshots given to pretrain(..., on_step=...)")
    steps = sorted(snaps)
    return [StaticDemo("pretraining-checkpoints",
                       [Slider("steps_done", "steps trained", values=steps, default=steps[-1],
                               labels=[f"{s:,}" for s in steps])],
                       lambda steps_done: checkpoint_state(history, snaps, steps_done, prompts, mlm_baseline),
                       title="Step through the default run")]
