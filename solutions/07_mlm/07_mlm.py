"""Assignment 7 (chapter 7, masked language modelling): the loss over the selected positions, the tied
output head, and reading off the model's guesses at the [MASK] positions.

The source of 07_mlm.ipynb: `make notebooks` builds it (the format: docs/exercises.md)."""


# %% [markdown]
# # Assignment 7: the masked-language-model objective
#
# BERT is pretrained as a cloze test. About 15% of the tokens are *selected*; the model reads the
# corrupted sequence and must give back the original token **at the selected positions only**. The
# data pipeline (assignment 8) hands the model two tensors of shape `(B, T)`:
#
# - `input_ids`: the corrupted sequence (most selected tokens replaced by `[MASK]`);
# - `labels`: the original token id at every selected position, and `-100` everywhere else.
#
# `-100` means "not predicted, not counted": the mean is taken over the labelled positions only. In
# `[CLS] 我 喜 欢 [MASK] [SEP]` (BERT splits Chinese into characters) only the `[MASK]` position is
# predicted; the other five are not counted at all, neither as a loss of zero nor in the denominator.
#
# You write three functions, each with its own graded test cell (partial credit is per cell). Run the
# setup cell first. Do not call bertlib's versions of these functions: the tests switch them off (the
# visible ones while your function runs: calling one raises a RuntimeError that says so) and check your
# own computation.


# %% setup
import math

import torch
import torch.nn.functional as F
from torch import nn

import bertlib
from inputs import mlm_random_head as _random_head  # inputs.py beside this notebook: the hidden tests use it too

# bertlib's versions of what you write here: the tests switch them off while your functions run
BERTLIB_MLM = (bertlib.heads.mlm_loss, bertlib.heads.BertForMaskedLM, bertlib.heads.BertForPreTraining,
               bertlib.heads.BertLMPredictionHead, bertlib.heads.BertPredictionHeadTransform,
               bertlib.heads.BertOnlyMLMHead, bertlib.heads.BertPreTrainingHeads)


# %% [markdown]
# ## Part 1: the loss over the selected positions (3 points)
#
# `logits` has shape `(B, T, V)` (a score for every word of the vocabulary at every position), `labels`
# shape `(B, T)`. Return the **mean cross-entropy over the positions whose label is not -100**, a
# scalar tensor. `F.cross_entropy` expects `(N, V)` scores and `(N,)` targets, so flatten first.
#
# | what you might write | what it computes instead |
# |---|---|
# | `F.cross_entropy(..., reduction="none").mean()` | the mean over *all* B·T positions, each ignored one counted as 0: the right loss times the fraction of labelled positions (about 0.15) |
# | a mean-reduced loss times a 0/1 mask, summed, divided by the mask's sum | the mask multiplies a scalar, so it does nothing: still the mean over all positions |
# | `logits[:, :-1]` against `labels[:, 1:]` | GPT's next-token shift; in MLM position *i* predicts its own token |


# %% solution mlm_loss
def masked_lm_loss(logits, labels):
    """(B, T, V) scores and (B, T) labels (-100 = not predicted) -> scalar mean over labelled positions."""
    ### BEGIN SOLUTION
    V = logits.size(-1)
    # ignore_index drops the -100 positions from both the sum and the count of the mean.
    return F.cross_entropy(logits.reshape(-1, V), labels.reshape(-1), ignore_index=-100)
    ### END SOLUTION


# %% tests test_mlm_loss points=3
# A case worked by hand: uniform scores over 5 words at the two labelled positions, so each costs
# log 5 = 1.6094; the two unlabelled positions are confidently wrong and must not count.
logits = torch.zeros(1, 4, 5)  # (B=1, T=4, V=5)
logits[0, 0, 3] = logits[0, 2, 3] = 20.0
labels = torch.tensor([[-100, 2, -100, 4]])  # positions 1 and 3 are predicted
# bertlib's versions are switched off while your code runs here, as they are when your notebook is graded
with bertlib_unavailable(*BERTLIB_MLM):
    got = masked_lm_loss(logits, labels)
assert isinstance(got, torch.Tensor) and got.dim() == 0, (
    f"expected a scalar tensor, got {type(got).__name__} of shape {tuple(getattr(got, 'shape', ()))}")
hints = {
    0.8047: "the mean over all 4 positions with the 2 ignored ones counted as 0: divide by the number "
            "of labelled positions, not by B*T",
    10.8047: "the mean over all 4 positions, the ignored ones scored against word 0: a mean-reduced loss "
             "times a mask is still the mean over every position (the mask multiplies a scalar)",
    20.0: "each label scored by the previous position's logits: that is GPT's shift; in MLM position i "
          "predicts its own token",
    3.2189: "the sum over the labelled positions: BERT takes their mean",
}
hint = next((h for v, h in hints.items() if abs(float(got) - v) < 1e-3), "")
assert abs(float(got) - math.log(5)) < 1e-4, (
    f"expected log 5 = {math.log(5):.4f}, the mean over the 2 labelled positions; got {float(got):.4f}"
    + (f". That is {hint}." if hint else ""))

gen = torch.Generator().manual_seed(0)
logits = torch.randn(2, 6, 11, generator=gen).requires_grad_()  # (B=2, T=6, V=11)
labels = torch.full((2, 6), -100)
labels[0, 1], labels[0, 4], labels[1, 2] = 3, 7, 0  # 0 is a word id like any other
with bertlib_unavailable(*BERTLIB_MLM):
    loss = masked_lm_loss(logits, labels)
loss.backward()
leak = logits.grad[labels == -100].abs().max().item()
assert leak == 0, (
    f"your loss changes with the logits at positions labelled -100 (gradient up to {leak:.3g} there); "
    f"a position that is not predicted must not count at all")
log_p = logits.detach().log_softmax(dim=-1)  # (B, T, V)
expected = -(log_p[0, 1, 3] + log_p[0, 4, 7] + log_p[1, 2, 0]) / 3
assert abs(loss.item() - expected.item()) < 1e-5, (
    f"3 labelled positions: expected the mean of their -log p(label) = {expected.item():.5f}, "
    f"got {loss.item():.5f}")


# %% [markdown]
# ## Part 2: the output head, tied to the input embeddings (2 points)
#
# The scores come from the last hidden states through a small head:
#
# 1. a **transform**: `dense` (H→H), the exact GELU (`F.gelu`), then `layer_norm`;
# 2. a **projection onto the vocabulary** whose weight *is* the word-embedding table `E` (V×H) of the
#    input, so the score of word *w* is the dot product with *w*'s own input embedding, plus one
#    learned `bias` per word.
#
# `logits = LayerNorm(GELU(dense(h))) @ Eᵀ + bias`, shape `(B, T, V)`. Tying saves a whole V×H matrix
# (for BERT-Base 30522 × 768) and makes input and output speak the same "language". Return the logits.


# %% solution mlm_head
def mlm_head_logits(sequence_output, dense, layer_norm, word_embeddings, bias):
    """(B, T, H) hidden states -> (B, T, V) scores. dense: nn.Linear(H, H); layer_norm: nn.LayerNorm(H);
    word_embeddings: the input nn.Embedding(V, H); bias: (V,)."""
    ### BEGIN SOLUTION
    h = layer_norm(F.gelu(dense(sequence_output)))  # (B, T, H)
    return h @ word_embeddings.weight.T + bias  # (B, T, V): one score per word of the vocabulary
    ### END SOLUTION


# %% tests test_mlm_head points=2
head, emb, x, _ = _random_head(V=12, H=8, seed=1)
t = head.transform
with torch.no_grad():
    # bertlib's versions are switched off while your code runs here, as they are when your notebook is graded
    with bertlib_unavailable(*BERTLIB_MLM):
        got = mlm_head_logits(x, t.dense, t.LayerNorm, emb, head.bias)
    expected = head(x)  # (2, 3, 12)
    E, b = emb.weight, head.bias
    wrong = {
        "without the per-word bias (BERT adds one learned number per word)":
            t.LayerNorm(F.gelu(t.dense(x))) @ E.T,
        "without the transform (dense, GELU and LayerNorm come before the projection)": x @ E.T + b,
        "with the tanh approximation of GELU (BERT uses the exact erf form, F.gelu's default)":
            t.LayerNorm(F.gelu(t.dense(x), approximate="tanh")) @ E.T + b,
        "with LayerNorm before GELU (the order is dense, GELU, LayerNorm)":
            F.gelu(t.LayerNorm(t.dense(x))) @ E.T + b,
    }
assert isinstance(got, torch.Tensor) and tuple(got.shape) == (2, 3, 12), (
    f"expected logits of shape (B, T, V) = (2, 3, 12), got {tuple(getattr(got, 'shape', ()))}")
diff = (got - expected).abs().max().item()
hint = next((why for why, w in wrong.items() if torch.allclose(got, w, atol=1e-4)), None)
assert diff < 1e-4, (
    f"your logits differ from BERT's head by up to {diff:.3g}"
    + (f"; they match the head {hint}" if hint else ""))


# %% [markdown]
# ## Part 3: what does the model guess at each [MASK]? (2 points)
#
# To *use* a masked language model ("fill in the blank") read its scores at the `[MASK]` positions.
# Return, for every position where `input_ids == mask_token_id`, in reading order (row by row, left to
# right):
#
# - `positions`: `(N, 2)` long tensor of `[row, column]`;
# - `token_ids`: `(N, k)` the k most likely words, most likely first;
# - `probs`: `(N, k)` their probabilities, a softmax **over the vocabulary** at that position.


# %% solution top_k
def top_k_at_masks(logits, input_ids, mask_token_id, k=5):
    """(B, T, V) scores, (B, T) ids -> positions (N, 2), token_ids (N, k), probs (N, k) at each [MASK]."""
    ### BEGIN SOLUTION
    positions = (input_ids == mask_token_id).nonzero()  # (N, 2), row-major order
    probs = logits[positions[:, 0], positions[:, 1]].softmax(dim=-1)  # (N, V): over the vocabulary
    top = probs.topk(k, dim=-1)  # sorted, most likely first
    return positions, top.indices, top.values
    ### END SOLUTION


# %% tests test_top_k points=2
MASK = 103
input_ids = torch.tensor([[101, 7, MASK, 102],
                          [MASK, 9, 8, MASK]])  # (B=2, T=4): three [MASK]s
gen = torch.Generator().manual_seed(3)
logits = torch.randn(2, 4, 6, generator=gen) * 2  # (B, T, V=6)
# bertlib's versions are switched off while your code runs here, as they are when your notebook is graded
with bertlib_unavailable(*BERTLIB_MLM):
    got = top_k_at_masks(logits, input_ids, MASK, 6)
assert isinstance(got, tuple) and len(got) == 3, "return (positions, token_ids, probs)"
positions, token_ids, probs = got
assert torch.as_tensor(positions).tolist() == [[0, 2], [1, 0], [1, 3]], (
    f"the [MASK]s are at [[0, 2], [1, 0], [1, 3]] in reading order; got {torch.as_tensor(positions).tolist()}")
assert tuple(token_ids.shape) == (3, 6) and tuple(probs.shape) == (3, 6), (
    f"expected token_ids and probs of shape (N, k) = (3, 6), got {tuple(token_ids.shape)} and "
    f"{tuple(probs.shape)}")
sums = probs.sum(dim=-1)
assert torch.allclose(sums, torch.ones(3), atol=1e-5), (
    f"with k = V = 6 each [MASK]'s probabilities must sum to 1 over the vocabulary; they sum to "
    f"{[round(s, 3) for s in sums.tolist()]} (a softmax over the last axis, the vocabulary, not over positions)")
for n, (row, col) in enumerate([(0, 2), (1, 0), (1, 3)]):
    p = logits[row, col].softmax(dim=-1)  # (V,)
    assert torch.allclose(probs[n], p[token_ids[n]], atol=1e-5), (
        f"[MASK] at ({row}, {col}): probs {probs[n].tolist()} are not the softmax probabilities of "
        f"token_ids {token_ids[n].tolist()}")
    assert token_ids[n].tolist() == p.argsort(descending=True).tolist(), (
        f"[MASK] at ({row}, {col}): expected words {p.argsort(descending=True).tolist()} (most likely "
        f"first), got {token_ids[n].tolist()}")
with bertlib_unavailable(*BERTLIB_MLM):
    positions, token_ids, probs = top_k_at_masks(logits, input_ids, MASK, 2)
assert tuple(token_ids.shape) == (3, 2), f"k=2: expected token_ids of shape (3, 2), got {tuple(token_ids.shape)}"


# %% [markdown]
# ## Check against the model
#
# `bertlib.BertForMaskedLM` computes the same loss inside its forward. A tiny random model is enough to
# see that your function agrees with it (an untrained model guesses at random: its loss is close to
# log V).


# %%
cfg = bertlib.BertConfig(vocab_size=100, hidden_size=32, num_hidden_layers=2, num_attention_heads=4,
                         intermediate_size=64)
input_ids = torch.tensor([[1, 40, 41, 3, 42, 2]])  # pretend 1 = [CLS], 2 = [SEP], 3 = [MASK]
labels = torch.tensor([[-100, -100, -100, 57, -100, -100]])  # the word that was masked at position 3
try:
    model = bertlib.BertForMaskedLM(cfg).eval()
    with torch.no_grad():
        out = model(input_ids, labels=labels)
except RuntimeError as e:  # bertlib's MLM model is switched off while your notebook is graded
    if "switched off" not in str(e):
        raise
    print("bertlib's MLM model is switched off while your notebook is graded: run this cell yourself to compare")
else:
    print(f"model's loss {out.loss.item():.4f}, yours {masked_lm_loss(out.logits, labels).item():.4f}, "
          f"log V = {math.log(cfg.vocab_size):.4f}")


# %% [markdown]
# ## Part 4, written: why the loss is only at the selected positions (2 points, graded by hand)
#
# Your `masked_lm_loss` scores only the selected positions. Why not every position? And why does
# `F.cross_entropy(logits, targets) * mask` (the default reduction, targets the original id everywhere)
# *not* score only the selected ones?
#
# Write your answer in the box below, in a few sentences of your own (markdown and `$formulas$` work).
# It is graded by hand, not by the grader: your instructor's score and comment appear on your feedback
# page.


# %% [markdown] written explain_selected points=2
# ### BEGIN SOLUTION
# **Rubric (2 points; the grader's, never released).**
# - 1 point: at an unselected position the answer is in the input: scoring it rewards copying input to
#   output, which needs no understanding, and being about 85% of the tokens it would dominate the loss.
# - 1 point: `cross_entropy` reduces to the mean by default, so it returns one scalar already averaged over
#   every position; multiplying that scalar by the mask selects nothing (the gradient reaches every
#   position). Use `reduction="none"` before weighting, or labels of `-100`.
# - Half a point for "the mask is wrong" without naming the reduction.
#
# **A full answer.** Unselected positions show their own answer, so their loss teaches copying and would
# outweigh the 15% that need context. The mean-reduced `cross_entropy` has already averaged over all
# positions before the mask is applied, so the product is the same average: the mask must act before the
# reduction.
# ### END SOLUTION
