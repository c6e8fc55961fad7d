"""The fine-tuning tasks' scores, from predictions and gold answers: accuracy and macro-F1 (sentence
classification), span-level F1 as conlleval counts it (tagging), exact match and token F1 as SQuAD's script
computes them (question answering).
"""
from __future__ import annotations

import collections
import re
import string


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
