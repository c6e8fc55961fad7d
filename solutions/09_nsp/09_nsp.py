"""Assignment 9 (chapter 9, next sentence prediction): build labelled sentence pairs, classify them from
the pooled [CLS] vector, and add the NSP loss to the MLM loss.

The source of 09_nsp.ipynb: `make notebooks` builds it (the format: docs/exercises.md)."""


# %% [markdown]
# # Assignment 9: next sentence prediction
#
# BERT's second pretraining task: given `[CLS] A [SEP] B [SEP]`, is B the sentence that follows A?
#
# - **IsNext, label 0**: B is the sentence right after A in the same document;
# - **NotNext, label 1**: B is a sentence from a *different* document.
#
# Half the pairs are of each kind. The label convention (0 = IsNext) is the one transformers and the
# checkpoints use; getting it backwards trains a model that answers the opposite question. The model
# decides from one vector: the **pooled [CLS]** vector, `tanh(W h_[CLS] + b)`, through a 2-way linear
# layer. The pretraining loss is the MLM loss plus the NSP loss.
#
# You write three functions, each with its own graded test cell (partial credit is per cell). Run the
# setup cell first. Do not call bertlib's versions of these functions: the tests switch them off (the
# visible ones while your function runs: calling one raises a RuntimeError that says so) and check your
# own computation.


# %% setup
import math
import random

import torch
import torch.nn.functional as F

import bertlib
from inputs import nsp_documents as _documents  # inputs.py beside this notebook: the hidden tests use it too
from inputs import nsp_pretraining_case as _pretraining_case

IS_NEXT, NOT_NEXT = 0, 1

# bertlib's versions of what you write here: the tests switch them off while your functions run
BERTLIB_NSP = (bertlib.nsp.create_nsp_examples, bertlib.nsp._examples_from_document, bertlib.encoder.BertPooler,
               bertlib.heads.BertPreTrainingHeads, bertlib.heads.BertOnlyNSPHead, bertlib.heads.BertForPreTraining,
               bertlib.heads.BertForNextSentencePrediction, bertlib.heads.nsp_loss)


# %% [markdown]
# ## Part 1: sentence pairs with labels (3 points)
#
# `documents` is a list of documents, a document a list of sentences, a sentence a list of tokens.
# Go through the documents in order, and through each document's sentences in order. Every sentence
# that has a next sentence in its document (all but the last) gives one pair, with that sentence as A:
#
# - with probability 1/2 (`rng.random() < 0.5`, a fresh toss for every pair), B is the next sentence:
#   label `IS_NEXT` (0);
# - otherwise B is a sentence drawn at random from a **different** document: label `NOT_NEXT` (1). The
#   document is drawn among all the others, each equally likely, and the sentence among its sentences,
#   each equally likely.
#
# Return a list of `(tokens_a, tokens_b, label)` tuples. Draw every random number from `rng`, a
# `random.Random`. (The original BERT code packs several sentences into A and B to fill the sequence
# length; one sentence each keeps the idea and the test readable.)


# %% solution pairs
def make_nsp_pairs(documents, rng):
    """documents: list of documents of sentences of tokens -> list of (tokens_a, tokens_b, label)."""
    ### BEGIN SOLUTION
    pairs = []
    for d, document in enumerate(documents):
        for i in range(len(document) - 1):
            tokens_a = document[i]
            if rng.random() < 0.5:
                pairs.append((tokens_a, document[i + 1], IS_NEXT))
            else:
                # Another document, uniformly: draw among the others by skipping over d.
                other = rng.randrange(len(documents) - 1)
                other += other >= d
                tokens_b = rng.choice(documents[other])
                pairs.append((tokens_a, tokens_b, NOT_NEXT))
    return pairs
    ### END SOLUTION


# %% tests test_pairs points=3
def _check_pairs(pairs, documents):
    """Every rule of Part 1, with a message that says which pair breaks which rule."""
    where = {tuple(sentence): (d, s) for d, doc in enumerate(documents) for s, sentence in enumerate(doc)}
    expected_a = [(d, s) for d, doc in enumerate(documents) for s in range(len(doc) - 1)]
    assert isinstance(pairs, list), f"expected a list of (tokens_a, tokens_b, label), got {type(pairs).__name__}"
    assert len(pairs) == len(expected_a), (
        f"expected {len(expected_a)} pairs, one for every sentence that has a next sentence; got {len(pairs)}")
    for n, (pair, (da, sa)) in enumerate(zip(pairs, expected_a)):
        tokens_a, tokens_b, label = pair
        assert where.get(tuple(tokens_a)) == (da, sa), (
            f"pair {n}: A should be sentence {sa} of document {da} (pairs in document order), "
            f"got {list(tokens_a)[:4]}")
        assert tuple(tokens_b) in where, f"pair {n}: B {list(tokens_b)[:4]} is not one sentence of the documents"
        db, sb = where[tuple(tokens_b)]
        is_next = (db, sb) == (da, sa + 1)
        assert label in (IS_NEXT, NOT_NEXT), f"pair {n}: the label must be 0 or 1, got {label!r}"
        if label == IS_NEXT:
            assert is_next, (
                f"pair {n} is labelled 0 (IsNext) but B is sentence {sb} of document {db}, not the one "
                f"after A (sentence {sa + 1} of document {da}); the labels are 0 = IsNext, 1 = NotNext")
        else:
            assert db != da, (
                f"pair {n} is labelled 1 (NotNext) but B is "
                + ("the sentence right after A" if is_next else f"sentence {sb} of A's own document {da}")
                + ": a NotNext B comes from a different document (a sentence of the same document is "
                  "still on topic), and the labels are 0 = IsNext, 1 = NotNext")
    return sum(label == NOT_NEXT for _, _, label in pairs) / len(pairs)

documents = _documents(20, seed=8)
# bertlib's versions are switched off while your code runs here, as they are when your notebook is graded
with bertlib_unavailable(*BERTLIB_NSP):
    pairs = make_nsp_pairs(documents, random.Random(0))
share = _check_pairs(pairs, documents)
tolerance = 6 * 0.5 / math.sqrt(len(pairs))  # six standard deviations of a fair coin's share
assert abs(share - 0.5) < tolerance, f"{share:.0%} of your {len(pairs)} pairs are NotNext; BERT makes half of them"
with bertlib_unavailable(*BERTLIB_NSP):
    random.seed(1)
    first = make_nsp_pairs(documents, random.Random(5))
    random.seed(2)
    second = make_nsp_pairs(documents, random.Random(5))
assert first == second, (
    "two calls with random.Random(5) gave different pairs: draw every random number from `rng` "
    "(rng.random(), rng.randrange(...), rng.choice(...))")


# %% [markdown]
# ## Part 2: the NSP logits, from the pooled [CLS] vector (2 points)
#
# `sequence_output` is the encoder's output, `(B, T, H)`; position 0 of every row is `[CLS]`. The
# **pooler** turns the [CLS] vector into `pooled = tanh(pooler_dense(h_[CLS]))`, `(B, H)`, and
# `seq_relationship` (a linear layer H→2) turns that into two logits per pair: column 0 scores IsNext,
# column 1 NotNext. Return the `(B, 2)` logits.
#
# Why [CLS] and not, say, the mean of all vectors, or the final [SEP]? Self-attention lets [CLS] read the
# whole pair, and pretraining trains exactly this vector (through the pooler) to summarise it; that is
# what fine-tuning later reuses for sentence classification.


# %% solution nsp_logits
def nsp_logits(sequence_output, pooler_dense, seq_relationship):
    """(B, T, H) -> (B, 2) IsNext / NotNext logits, read from the pooled [CLS] vector."""
    ### BEGIN SOLUTION
    cls = sequence_output[:, 0]  # (B, H): position 0 is [CLS]
    pooled = torch.tanh(pooler_dense(cls))  # (B, H)
    return seq_relationship(pooled)  # (B, 2)
    ### END SOLUTION


# %% tests test_nsp_logits points=2
model, ids, mask, types = _pretraining_case(seed=0)
with torch.no_grad():
    out = model.bert(ids, mask, types)
    h = out.last_hidden_state  # (3, 12, 16)
    expected = model.cls.seq_relationship(out.pooler_output)  # (3, 2)
    dense, head = model.bert.pooler.dense, model.cls.seq_relationship
    # bertlib's versions are switched off while your code runs here, as they are when your notebook is graded
    with bertlib_unavailable(*BERTLIB_NSP):
        got = nsp_logits(h, dense, head)
    real = mask[:, :, None].float()
    wrong = {
        "the mean of all the vectors": head(torch.tanh(dense(h.mean(dim=1)))),
        "the mean of the real tokens' vectors": head(torch.tanh(dense((h * real).sum(1) / real.sum(1)))),
        "the last position (the final [SEP] or a [PAD])": head(torch.tanh(dense(h[:, -1]))),
        "the [CLS] vector without the pooler (no dense layer, no tanh)": head(h[:, 0]),
        "the [CLS] vector through the dense layer but without the tanh": head(dense(h[:, 0])),
    }
assert isinstance(got, torch.Tensor) and tuple(got.shape) == (3, 2), (
    f"expected logits of shape (B, 2) = (3, 2), got {tuple(getattr(got, 'shape', ()))}")
diff = (got - expected).abs().max().item()
hint = next((why for why, w in wrong.items() if torch.allclose(got, w, atol=1e-5)), None)
assert diff < 1e-5, (
    f"your NSP logits differ from BERT's by up to {diff:.3g}"
    + (f"; they are the logits of {hint}" if hint else "")
    + ". BERT reads the pooled [CLS] vector: tanh(pooler_dense(sequence_output[:, 0]))")


# %% [markdown]
# ## Part 3: the pretraining loss (2 points)
#
# BERT minimises the sum of two means: the MLM loss (mean cross-entropy over the labelled positions,
# assignment 7) plus the NSP loss (mean cross-entropy of the 2-way classifier over the pairs, class 0 =
# IsNext). Return that scalar. You may call `bertlib.mlm_loss(prediction_logits, labels)` for the first
# term; write the NSP term yourself.
#
# Shapes: `prediction_logits` `(B, T, V)`, `seq_relationship_logits` `(B, 2)`, `labels` `(B, T)` with
# -100 at unselected positions, `next_sentence_label` `(B,)` of 0/1.


# %% solution pretraining_loss
def pretraining_loss(prediction_logits, seq_relationship_logits, labels, next_sentence_label):
    """MLM loss (labelled positions only) + NSP loss (0 = IsNext, 1 = NotNext): a scalar tensor."""
    ### BEGIN SOLUTION
    mlm = bertlib.mlm_loss(prediction_logits, labels)
    nsp = F.cross_entropy(seq_relationship_logits, next_sentence_label)  # (B, 2) scores, (B,) classes
    return mlm + nsp  # a sum, not an average: each task keeps its full weight
    ### END SOLUTION


# %% tests test_pretraining_loss points=2
# Worked by hand: uniform scores over 5 words give MLM = log 5; the NSP logits are confident and right,
# NSP = log(1 + e^-6) = 0.0025 per pair.
prediction_logits = torch.zeros(2, 3, 5)  # (B=2, T=3, V=5)
labels = torch.tensor([[-100, 4, -100], [2, -100, -100]])
seq_relationship_logits = torch.tensor([[3.0, -3.0], [-3.0, 3.0]])  # says IsNext, then NotNext
next_sentence_label = torch.tensor([0, 1])  # and they are: IsNext, NotNext
# bertlib's versions are switched off while your code runs here, as they are when your notebook is graded
with bertlib_unavailable(*BERTLIB_NSP):
    got = pretraining_loss(prediction_logits, seq_relationship_logits, labels, next_sentence_label)
assert isinstance(got, torch.Tensor) and got.dim() == 0, (
    f"expected a scalar tensor, got {type(got).__name__} of shape {tuple(getattr(got, 'shape', ()))}")
mlm, nsp = math.log(5), math.log1p(math.exp(-6))
hints = {
    mlm + 6 + nsp: "the NSP labels read backwards: 0 = IsNext is class 0 of the logits",
    (mlm + nsp) / 2: "the average of the two losses; BERT adds them",
    mlm: "the MLM loss alone", nsp: "the NSP loss alone",
}
hint = next((h for v, h in hints.items() if abs(float(got) - v) < 1e-3), "")
assert abs(float(got) - (mlm + nsp)) < 1e-4, (
    f"expected MLM + NSP = {mlm:.4f} + {nsp:.4f} = {mlm + nsp:.4f}, got {float(got):.4f}"
    + (f": that is {hint}" if hint else ""))

model, ids, mask, types = _pretraining_case(seed=1)
mlm_labels = torch.where(torch.rand(ids.shape, generator=torch.Generator().manual_seed(1)) < 0.3, ids, -100)
mlm_labels[:, 0] = ids[:, 0]  # at least one labelled position per row
nsp_labels = torch.tensor([0, 1, 1])
with torch.no_grad():
    out = model(ids, mask, types, labels=mlm_labels, next_sentence_label=nsp_labels)
    with bertlib_unavailable(*BERTLIB_NSP):
        got = pretraining_loss(out.prediction_logits, out.seq_relationship_logits, mlm_labels, nsp_labels)
assert abs(float(got) - out.loss.item()) < 1e-4, (
    f"on a small model, BertForPreTraining's loss is {out.loss.item():.4f} (MLM {out.mlm_loss.item():.4f} + "
    f"NSP {out.nsp_loss.item():.4f}); yours is {float(got):.4f}")


# %% [markdown]
# ## Look at a few pairs
#
# Three short documents, cut into sentences; your pairs, as the model would read them.


# %%
documents = [
    ["the cat sat on the mat .".split(), "it was warm there .".split(), "then it fell asleep .".split()],
    ["bert reads both directions .".split(), "it is pretrained on two tasks .".split()],
    ["paris is the capital of france .".split(), "it lies on the seine .".split()],
]
for tokens_a, tokens_b, label in make_nsp_pairs(documents, random.Random(3)):
    print(["IsNext ", "NotNext"][label], "[CLS]", " ".join(tokens_a), "[SEP]", " ".join(tokens_b), "[SEP]")


# %% [markdown]
# ## Part 4, written: what NSP can be solved by (2 points, graded by hand)
#
# Your `make_nsp_pairs` takes a NotNext B from a *different* document. RoBERTa dropped next sentence
# prediction, and ALBERT replaced it by sentence-order prediction (two consecutive segments of one
# document, the negative being the same pair swapped). What does the way NotNext pairs are built let a model
# solve NSP by, without judging whether B follows A, and how does sentence-order prediction remove that?
#
# Write your answer in the box below, in a few sentences of your own (markdown and `$formulas$` work).
# It is graded by hand, not by the grader: your instructor's score and comment appear on your feedback
# page.


# %% [markdown] written explain_topic points=2
# ### BEGIN SOLUTION
# **Rubric (2 points; the grader's, never released).**
# - 1 point: a NotNext B comes from another document, so it is usually on another topic: the model can tell
#   most pairs apart by topic alone, a weak signal about whether B continues A.
# - 1 point: in sentence-order prediction both segments come from the same document (same topic), so only
#   their order and coherence tell them apart.
# - Half a point for "NSP is too easy" without saying why.
#
# **A full answer.** Because NotNext pairs mix two documents, a change of topic gives the answer away, and
# the model learns topic matching rather than coherence. Sentence-order prediction keeps both segments from
# one document and only swaps them, so topic no longer helps and the model must judge the order.
# ### END SOLUTION
