"""Fine-tuning a head on one of the three datasets shipped with bertlib (``datasets/``, package data), scored
against the baselines it must beat: ``finetune_task`` and the command ``python -m bertlib.finetune``.

Book: chapter 10 (the heads), chapter 11 (the tiny model fine-tuned, against from scratch) and chapter 12 (with
few labels, against the real MiniLM checkpoint).

    python -m bertlib.finetune --task docstring_topics --model runs/tiny     # a pretrained tiny BERT
    python -m bertlib.finetune --task code_spans --model scratch             # same architecture, random init
    python -m bertlib.finetune --task code_spans --model minilm              # the real all-MiniLM-L6-v2

The tasks, their heads and scores are in ``tasks`` (data and encoders in ``task_data``, scores in
``metrics``, baselines in ``baselines``); see datasets/README.md for where the data comes from. This module
is the run: where the model comes from, the training epochs, the recipe, the command.

The last line printed is a JSON object with the metrics. Everything random is seeded.
"""
from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import torch

from ..config import BertConfig
from ..tokenizer import BertTokenizer
from . import cli
from .baselines import classification_baselines, qa_baselines, tagging_baselines, word_overlap_answer
from .checkpoint import minilm_dir, model_dir_problem
from .loop import epoch_batches, make_optimizer, make_scheduler, progress_bar, steps_in, train_step
from .metrics import accuracy_and_macro_f1, normalize_answer, span_f1, spans_of, squad_scores
from .task_data import (
    DATA_DIR,
    TAGS,
    TASKS,
    QaFeatures,
    encode_classification,
    encode_qa,
    encode_tagging,
    label_names,
    load_jsonl,
    load_task,
    pieces_with_offsets,
    seeded_sample,
)
from .tasks import evaluate_classification, evaluate_qa, evaluate_tagging, get_task

# This module is the run and its command; chapter 11 and older code import the tasks' data, scores and
# baselines from here too.
__all__ = ["DATA_DIR", "DEFAULTS", "MINILM_DEFAULTS", "TAGS", "TASKS", "QaFeatures", "accuracy_and_macro_f1",
           "classification_baselines", "encode_classification", "encode_qa", "encode_tagging",
           "evaluate_classification", "evaluate_qa", "evaluate_tagging", "finetune_task", "label_names",
           "load_jsonl", "load_model", "load_task", "main", "model_dir_problem", "model_positions",
           "normalize_answer", "pieces_with_offsets", "qa_baselines", "seeded_sample", "span_f1", "spans_of",
           "squad_scores", "tagging_baselines", "train_epochs", "word_overlap_answer"]


# ----------------------------------------------------------------------------- models
def load_model(head: type, model: str, num_labels: int, tokenizer_dir: str | None = None, seed: int = 0,
               max_length: int = 128):
    """(model, tokenizer). ``model`` is a checkpoint directory, "minilm" (the real all-MiniLM-L6-v2) or
    "scratch" (the tiny pretraining architecture with the compact vocabulary, randomly initialised).
    ``head`` is the task's model class (``BertForSequenceClassification``, ...); the task head is always
    freshly initialised."""
    torch.manual_seed(seed)  # the new head's initialisation
    if model == "scratch":
        from .pretrain_config import PretrainConfig
        from .pretraining_data import load_pretraining_data  # here: only a model from scratch needs the corpus

        tok = load_pretraining_data().tokenizer if tokenizer_dir is None else BertTokenizer.from_pretrained(tokenizer_dir)
        cfg = PretrainConfig(seq_len=max_length).model_config(tok.vocab_size).replace(
            num_labels=num_labels, hidden_dropout_prob=0.1, attention_probs_dropout_prob=0.1)
        return head(cfg), tok
    if model == "minilm":
        model = minilm_dir()
    # fine-tuning with BERT's dropout (0.1), whatever pretraining used; and never a causal mask
    cfg = BertConfig.from_json_file(Path(model) / "config.json").replace(
        num_labels=num_labels, is_causal=False, hidden_dropout_prob=0.1, attention_probs_dropout_prob=0.1)
    m = head.from_pretrained(model, config=cfg)
    return m, BertTokenizer.from_pretrained(tokenizer_dir or model)


def model_positions(model: str) -> int:
    """The longest input ``model`` (a checkpoint folder, "minilm" or "scratch") takes: its
    max_position_embeddings. A model from scratch is built for the length asked, up to BERT's 512."""
    if model == "scratch":
        return BertConfig().max_position_embeddings
    if model == "minilm":
        model = minilm_dir()
    return BertConfig.from_json_file(Path(model) / "config.json").max_position_embeddings


# ----------------------------------------------------------------------------- training
def train_epochs(model, tensors: dict, *, epochs: int, lr: float, batch_size: int, seed: int,
                 warmup_fraction: float = 0.1, weight_decay: float = 0.01, on_step=None,
                 progress: bool = False) -> list[float]:
    """Fine-tune ``model`` on ``tensors`` (its inputs and labels) for ``epochs`` passes in shuffled mini-batches
    from a seeded generator, with the toolkit's AdamW, warm-up and decay (``bertlib.training.loop``); returns
    the loss of each step. ``on_step(step, loss)`` after each update (1-based step); ``progress``: a progress
    bar with the running loss on stderr."""
    n = len(next(iter(tensors.values())))
    total = steps_in(n, batch_size, epochs)
    optimizer = make_optimizer(model, lr, weight_decay)
    scheduler = make_scheduler(optimizer, total, warmup_fraction)
    batches = epoch_batches(tensors, batch_size, epochs, torch.Generator().manual_seed(seed))
    torch.manual_seed(seed)  # dropout
    model.train()
    losses = []
    with progress_bar(total, "fine-tuning" if progress else "") as bar:
        for batch in batches:
            out, _ = train_step(model, batch, optimizer, scheduler)
            losses.append(float(out.loss.detach()))
            if on_step is not None:
                on_step(len(losses), losses[-1])
            bar.update()
            bar.set_postfix(loss=f"{sum(losses[-20:]) / len(losses[-20:]):.3f}", refresh=False)
    model.eval()
    return losses


# ----------------------------------------------------------------------------- one fine-tuning run
DEFAULTS = {  # (epochs, lr for the tiny models, max_length, batch size)
    "docstring_topics": dict(epochs=8, lr=1e-3, max_length=48, batch_size=32),
    "code_spans": dict(epochs=8, lr=1e-3, max_length=64, batch_size=32),
    "function_qa": dict(epochs=5, lr=1e-3, max_length=64, batch_size=32),
}
# A real checkpoint takes the BERT paper's fine-tuning recipe (appendix A.3: learning rate 2e-5 to 5e-5,
# batch 16 or 32, 2 to 4 epochs); the tiny models' 1e-3 would wreck its weights in a few steps.
MINILM_DEFAULTS = dict(epochs=3, lr=5e-5, batch_size=16)


def finetune_task(task: str, model: str = "scratch", *, epochs: int | None = None, lr: float | None = None,
                  batch_size: int | None = None, max_length: int | None = None, train_size: int | None = None,
                  seed: int = 0, tokenizer_dir: str | None = None, data_dir=None, baselines: bool = True,
                  feature_based: bool = False, progress: bool = False) -> dict:
    """Fine-tune one head on one shipped dataset and score it on the held-out split; returns the metrics.

    ``feature_based``: the pretrained encoder is a fixed feature extractor (frozen, no dropout) and only the
    new head trains on its last layer, the paper's feature-based use (section 5.3)."""
    t0 = time.perf_counter()
    spec = get_task(task)  # the task's head, encoding, scoring and baselines
    d = {**DEFAULTS[task], **(MINILM_DEFAULTS if model == "minilm" else {})}
    epochs = d["epochs"] if epochs is None else epochs
    lr = d["lr"] if lr is None else lr
    batch_size = d["batch_size"] if batch_size is None else batch_size
    # the task's default length, cut to what the model has; a length asked for must fit
    positions = model_positions(model)
    if max_length is None:
        max_length = min(d["max_length"], positions)
    elif max_length > positions:
        raise ValueError(f"max_length={max_length} is more than the {positions} positions of {model!r}: "
                         "BERT has no embedding for a later position")
    train, test = load_task(task, data_dir)
    train = seeded_sample(train, train_size, seed)
    labels = spec.labels(train, test)
    net, tok = load_model(spec.head, model, len(labels), tokenizer_dir, seed, max_length)
    if feature_based:
        net.bert.requires_grad_(False)  # make_optimizer leaves out what does not train
        for module in net.bert.modules():
            if isinstance(module, torch.nn.Dropout):
                module.p = 0.0  # fixed features: the same every time they are read

    losses = train_epochs(net, spec.train_tensors(train, tok, labels, max_length), epochs=epochs, lr=lr,
                          batch_size=batch_size, seed=seed, progress=progress)
    scores = spec.score(net, test, tok, labels, max_length)
    base = spec.baselines(train, test) if baselines else None
    return {"task": task, "model": model if model in ("scratch", "minilm") else str(model), "scores": scores,
            "baselines": base, "train_examples": len(train), "test_examples": len(test), "epochs": epochs,
            "lr": lr, "batch_size": batch_size, "max_length": max_length, "seed": seed, "feature_based": feature_based,
            "first_loss": losses[0], "last_loss": sum(losses[-5:]) / len(losses[-5:]), "steps": len(losses),
            "seconds": time.perf_counter() - t0, "threads": torch.get_num_threads()}


def main(argv=None) -> None:
    """The command: checked options, one run, its metrics as the last line of stdout (JSON)."""
    per_task = "; ".join(
        f"{t}: {d['epochs']} epochs, lr {d['lr']:g}, batch {d['batch_size']}, {d['max_length']} pieces"
        for t, d in DEFAULTS.items())
    m = MINILM_DEFAULTS
    minilm = f"minilm: {m['epochs']} epochs, lr {m['lr']:g}, batch {m['batch_size']}"
    p = argparse.ArgumentParser(prog="python -m bertlib.finetune", description=__doc__.split("\n\n")[0],
                                epilog=f"Defaults per task: {per_task}; {minilm} (the BERT paper's recipe). "
                                       "The last line printed is a JSON object with the scores and the baselines.")
    p.add_argument("--task", choices=TASKS, required=True, help="the shipped dataset (bertlib/training/datasets/) and so the head")
    p.add_argument("--model", default="scratch",
                   help='a checkpoint directory (python -m bertlib.pretrain --out), "minilm" (all-MiniLM-L6-v2) '
                        'or "scratch" (random weights); default scratch')
    p.add_argument("--epochs", type=cli.positive_int, help="passes over the training set (default: per task, below)")
    p.add_argument("--lr", type=cli.positive_float, help="peak learning rate of AdamW (default: per task, below)")
    p.add_argument("--batch-size", type=cli.positive_int, help="examples per step (default: per task, below)")
    p.add_argument("--max-length", type=cli.int_at_least(3, " ([CLS] x [SEP])"),
                   help="pieces per example, [CLS] and [SEP] included (default: per task)")
    p.add_argument("--train-size", type=cli.positive_int,
                   help="use only this many training examples (a seeded sample)")
    p.add_argument("--seed", type=int, default=0,
                   help="seeds the new head, the sample, the batch order and dropout; default 0")
    p.add_argument("--threads", type=cli.non_negative_int, help="torch threads (default: torch's choice)")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    a = p.parse_args(argv)
    problem = model_dir_problem(a.model)
    if a.model == "minilm":
        try:
            minilm_dir()
        except ImportError as e:
            p.error(f"--model minilm: {e}")
    if problem is not None:
        p.error(f"--model {problem}" + ("" if Path(a.model).exists() else ", or 'scratch' or 'minilm'"))
    if a.max_length is not None and a.max_length > model_positions(a.model):
        p.error(f"--max-length {a.max_length} is more than the {model_positions(a.model)} positions of --model "
                f"{a.model} (its max_position_embeddings): BERT has no embedding for a later position")
    if a.threads:
        torch.set_num_threads(a.threads)
    result = finetune_task(a.task, a.model, epochs=a.epochs, lr=a.lr, batch_size=a.batch_size,
                           max_length=a.max_length, train_size=a.train_size, seed=a.seed, progress=not a.no_progress)
    print(json.dumps(result), flush=True)


if __name__ == "__main__":
    main()
