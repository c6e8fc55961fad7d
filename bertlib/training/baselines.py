"""What each fine-tuning task's model must beat, with no model at all: the majority class and a bag-of-words
naive Bayes (sentence classification), all O and a per-word lookup (tagging), the first entry and a
word-overlap rule (question answering). Scored with ``metrics``, like the models.
"""
from __future__ import annotations

import collections
import math
import re

from .metrics import accuracy_and_macro_f1, span_f1, squad_scores
from .task_data import label_names


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
