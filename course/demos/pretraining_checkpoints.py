"""Chapter 11's page demo in both editions: step through the default pretraining run (its loss curves and the
fill-mask predictions of ``course.demos.pretraining.FillMaskSnapshots``), worded in each edition's language.

Why a module of its own: ``course/demos/pretraining.py`` holds the run's ``on_step`` hook, so the whole file is
part of the runs' code version (``course.runs._code_version``): any edit there retrains every run of chapters 11
and 12. The demo's words live here instead, and the hook's module keeps its English-only ``checkpoint_state`` and
``static_demos`` (the tests of the hook use them) until the runs are retrained for another reason; then they can
move here. The prompts are the corpus's (Python's documentation, in English): they stay as they are.
"""
from __future__ import annotations

from ..editions import ENGLISH, tr
from ..plots import COLORS, html_table
from .pretraining import PROMPTS, _curve, load_run_record


def checkpoint_state(history: list[dict], snapshots: dict, steps_done: int, prompts=PROMPTS,
                     mlm_baseline: float | None = None, language: str = ENGLISH) -> dict:
    """The run after ``steps_done`` steps: the curves so far (figure), each prompt's top predictions
    (table), and the caption's numbers: the training losses and the held-out MLM top-1 at that point; the words
    in ``language``."""
    import plotly.graph_objects as go
    from plotly.subplots import make_subplots

    if steps_done not in snapshots:
        raise ValueError(f"no snapshot after {steps_done} steps; there are {sorted(snapshots)}")
    total = history[-1]["step"]
    evals = [r for r in history if "heldout_mlm_accuracy" in r]
    fig = make_subplots(rows=2, cols=1, shared_xaxes=True, vertical_spacing=0.12,
                        subplot_titles=(tr("training loss (running mean)", language),
                                        tr("held-out accuracy (first 256 pairs)", language)))
    for key, name, color in (("mlm_loss", "MLM loss", COLORS["bert"]), ("nsp_loss", "NSP loss", COLORS["gpt"])):
        x, y = _curve(history, key, max(steps_done, 1))
        fig.add_trace(go.Scatter(x=x, y=y, mode="lines", name=tr(name, language), line=dict(color=color)),
                      row=1, col=1)
    for key, name, color in (("heldout_mlm_accuracy", "MLM top-1", COLORS["bert"]),
                             ("heldout_nsp_accuracy", "NSP", COLORS["gpt"])):
        shown = [r for r in evals if r["step"] <= steps_done]
        fig.add_trace(go.Scatter(x=[r["step"] for r in shown], y=[r[key] for r in shown], mode="lines+markers",
                                 name=tr("held-out {name}", language).format(name=name),
                                 line=dict(color=color, dash="dot")), row=2, col=1)
    if mlm_baseline is not None:
        fig.add_trace(go.Scatter(x=[0, total], y=[mlm_baseline] * 2, mode="lines",
                                 name=tr("most frequent piece", language),
                                 line=dict(color="gray", dash="dash", width=1)), row=2, col=1)
    losses = [r[k] for r in history for k in ("mlm_loss", "nsp_loss") if r.get(k) is not None]
    fig.update_xaxes(range=[0, total], row=1, col=1)
    fig.update_xaxes(range=[0, total], title_text=tr("step", language), row=2, col=1)
    fig.update_yaxes(range=[0, max(losses) * 1.05], row=1, col=1)
    fig.update_yaxes(range=[0, 1], row=2, col=1)
    fig.add_vline(x=steps_done, line_color="gray", line_width=1)
    fig.update_layout(height=470, legend=dict(orientation="h", yanchor="top", y=-0.2, x=0), margin=dict(l=55, r=15, t=40, b=40))
    predictions = snapshots[steps_done]
    rows = [[text, ", ".join(f"{piece} ({p:.2g})" for piece, p in top)] for text, top in zip(prompts, predictions)]
    table = html_table([tr("prompt", language), tr("top {k} after {steps:,} steps", language).format(
        k=len(predictions[0]), steps=steps_done)], rows, align="ll")
    record = history[max(steps_done, 1) - 1]  # step 1's running loss is the untrained model's first loss
    assert record["step"] == max(steps_done, 1), "history must hold one record per step, in order"
    at = next((r for r in evals if r["step"] == steps_done), None)
    heldout = (tr("held-out MLM top-1 {accuracy:.1%}", language).format(accuracy=at["heldout_mlm_accuracy"]) if at
               else tr("held-out MLM top-1 not measured yet", language))
    when = (tr("before training", language) if steps_done == 0 else
            tr("after {steps:,} of {total:,} steps", language).format(steps=steps_done, total=total))
    caption = tr("{when}: training MLM loss {mlm:.2f}, NSP loss {nsp:.2f}; {heldout}; '{prompt}' -> {guess}",
                 language).format(when=when, mlm=record["mlm_loss"], nsp=record["nsp_loss"], heldout=heldout,
                                  prompt=prompts[0], guess=predictions[0][0][0])
    return {"caption": caption, "figure": fig, "html": table}


def static_demos(history: list[dict] | None = None, snapshots=None, mlm_baseline: float | None = None) -> list:
    """The chapter's demo for the static page, both editions: a slider over the run's snapshots.

    ``history``: ``pretrain(...).history`` (one record per step); ``snapshots``: the ``FillMaskSnapshots``
    passed to ``pretrain`` as ``on_step`` (with the final model recorded), or its ``snapshots`` dict.
    Called with neither, the demo is rebuilt from the record the chapter's last execution left
    (``course.demos.pretraining.RUN_RECORD``)."""
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
                       lambda steps_done, language=ENGLISH: checkpoint_state(history, snaps, steps_done, prompts,
                                                                             mlm_baseline, language),
                       title="Step through the default run")]
