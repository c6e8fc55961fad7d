"""The three fine-tuning tasks, each with its head: how its rows become training tensors, how a trained model
is scored on its test rows, and its baselines. ``finetune.finetune_task`` runs any of them the same way.

Book: chapter 10 (the heads) and chapter 11 (pretrained against from scratch).

* ``docstring_topics``: one label per sentence (which part of the standard library a docstring summary
  comes from) with ``BertForSequenceClassification``; accuracy and macro-F1.
* ``code_spans``: one tag per word (B-CODE / I-CODE / O: was this word code in the documentation?) with
  ``BertForTokenClassification``; span-level F1 and word accuracy.
* ``function_qa``: an answer span in a context with ``BertForQuestionAnswering``; exact match and token F1.
"""
from __future__ import annotations

import torch

from ..heads import (
    BertForQuestionAnswering,
    BertForSequenceClassification,
    BertForTokenClassification,
    decode_span,
)
from .baselines import classification_baselines, qa_baselines, tagging_baselines
from .metrics import accuracy_and_macro_f1, span_f1, squad_scores
from .task_data import TAGS, TASKS, QaFeatures, encode_classification, encode_qa, encode_tagging, label_names


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


class SentenceClassification:
    """``docstring_topics``: a label per sentence, from the pooled [CLS] vector."""

    head = BertForSequenceClassification

    def labels(self, train, test) -> list[str]:
        """The labels of train and test together: a small sample may lack one the test set has."""
        return label_names(train + test)

    def train_tensors(self, rows, tokenizer, labels, max_length) -> dict:
        return encode_classification(rows, tokenizer, labels, max_length)

    def score(self, model, rows, tokenizer, labels, max_length) -> dict:
        return evaluate_classification(model, encode_classification(rows, tokenizer, labels, max_length), len(labels))

    def baselines(self, train, test) -> dict:
        return classification_baselines(train, test)


class Tagging:
    """``code_spans``: a B-CODE / I-CODE / O tag per word, on its first piece."""

    head = BertForTokenClassification

    def labels(self, train, test) -> list[str]:
        return list(TAGS)

    def train_tensors(self, rows, tokenizer, labels, max_length) -> dict:
        return encode_tagging(rows, tokenizer, max_length)[0]

    def score(self, model, rows, tokenizer, labels, max_length) -> dict:
        tensors, word_starts = encode_tagging(rows, tokenizer, max_length)
        return evaluate_tagging(model, tensors, word_starts, rows)

    def baselines(self, train, test) -> dict:
        return tagging_baselines(train, test)


class QuestionAnswering:
    """``function_qa``: the answer's first and last piece in the context (two logits per piece)."""

    head = BertForQuestionAnswering

    def labels(self, train, test) -> list[str]:
        return ["start", "end"]  # qa_outputs: a start and an end logit per piece

    def train_tensors(self, rows, tokenizer, labels, max_length) -> dict:
        return encode_qa(rows, tokenizer, max_length, drop_unanswerable=True).tensors

    def score(self, model, rows, tokenizer, labels, max_length) -> dict:
        return evaluate_qa(model, encode_qa(rows, tokenizer, max_length, drop_unanswerable=False), rows)[0]

    def baselines(self, train, test) -> dict:
        return qa_baselines(train, test)


_TASKS = {"docstring_topics": SentenceClassification(), "code_spans": Tagging(), "function_qa": QuestionAnswering()}
assert tuple(_TASKS) == TASKS


def get_task(name: str):
    """The task called ``name`` (one of ``TASKS``)."""
    if name not in _TASKS:
        raise ValueError(f"task must be one of {TASKS}, got {name!r}")
    return _TASKS[name]
