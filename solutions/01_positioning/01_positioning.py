"""Assignment 1 (chapter 1, positioning): who may look at whom, in BERT and in GPT.

The source of 01_positioning.ipynb: `make notebooks` builds it (the format: docs/exercises.md)."""


# %% [markdown]
# # Assignment 1: who sees whom
#
# BERT and GPT are built from the same Transformer block. The one architectural difference is which
# positions a token may attend to:
#
# - **BERT (bidirectional)**: every token sees every *real* token of the input, left and right. Only
#   padding is hidden.
# - **GPT (causal)**: token *i* sees tokens 0..*i* only, itself included, never the future.
#
# We write these rules as **visibility matrices**: `visible[i, j]` is `True` when query *i* may attend to
# key *j*. For "我 喜欢 猫" GPT's matrix is lower-triangular; BERT's is all `True`.
#
# You write three functions. Each has its own graded test cell (partial credit is per cell).
# Run the setup cell first. Do not call bertlib's versions of these functions: the tests switch them off
# (the visible ones while your function runs: calling one raises a RuntimeError that says so) and check
# your own computation.


# %% setup
import torch
import bertlib


# %% [markdown]
# ## Part 1: BERT's visibility (2 points)
#
# `attention_mask` has shape `(B, T)`: 1 for a real token, 0 for padding. Return a `bool` tensor of shape
# `(B, T, T)` where `visible[b, i, j]` is `True` exactly when key *j* of sequence *b* is a real token.
# Every query row, a padding query's included, gets the same pattern: padding is hidden as a *key*.
#
# Masks come in the forms callers use: integers (`int64` or `int32`), floats (`1.0` / `0.0`) or `bool`
# (`True` for a real token), in parts 1 and 3 alike, and possibly as a view (a slice of a bigger tensor).
# Read them with `.bool()` (or `!= 0`), and leave the caller's mask as it was: return a new tensor, change
# nothing in place.


# %% solution bidirectional
def bidirectional_visibility(attention_mask):
    """(B, T) 1/0 mask -> (B, T, T) bool: query i of sequence b may see key j iff j is a real token."""
    ### BEGIN SOLUTION
    keys = attention_mask.bool()  # (B, T)
    B, T = keys.shape
    return keys[:, None, :].expand(B, T, T)  # (B, T, T): the same row for every query
    ### END SOLUTION


# %% tests test_bidirectional points=2
mask = torch.tensor([[1, 1, 1, 0]])  # "[CLS] 我 [SEP] [PAD]"
# bertlib's versions are switched off while your code runs here, as they are when your notebook is graded
with bertlib_unavailable(bertlib.attention.padding_visibility, bertlib.attention.causal_visibility,
                         bertlib.attention.build_attention_mask, bertlib.attention.additive_mask):
    got = bidirectional_visibility(mask)
assert isinstance(got, torch.Tensor) and got.dtype == torch.bool, (
    f"expected a torch.bool tensor, got {type(got).__name__} {getattr(got, 'dtype', '')}")
assert tuple(got.shape) == (1, 4, 4), f"expected shape (1, 4, 4) = (B, T, T), got {tuple(got.shape)}"
expected = torch.tensor([[True, True, True, False]] * 4)
for i in range(4):
    assert torch.equal(got[0, i], expected[i]), (
        f"query {i} sees keys {got[0, i].int().tolist()}; BERT lets it see every real token, "
        f"{expected[i].int().tolist()} (future tokens included, padding excluded)")


# %% [markdown]
# ## Part 2: GPT's causal visibility (2 points)
#
# Return the `(T, T)` `bool` matrix of causal attention: query *i* sees keys 0..*i* (itself included).


# %% solution causal
def causal_visibility(T):
    """(T, T) bool, True where key j <= query i."""
    ### BEGIN SOLUTION
    i = torch.arange(T)[:, None]  # (T, 1) queries
    j = torch.arange(T)[None, :]  # (1, T) keys
    return j <= i  # (T, T)
    ### END SOLUTION


# %% tests test_causal points=2
# bertlib's versions are switched off while your code runs here, as they are when your notebook is graded
with bertlib_unavailable(bertlib.attention.padding_visibility, bertlib.attention.causal_visibility,
                         bertlib.attention.build_attention_mask, bertlib.attention.additive_mask):
    got = causal_visibility(4)
assert isinstance(got, torch.Tensor) and got.dtype == torch.bool, (
    f"expected a torch.bool tensor, got {type(got).__name__} {getattr(got, 'dtype', '')}")
assert tuple(got.shape) == (4, 4), f"expected shape (4, 4), got {tuple(got.shape)}"
for i in range(4):
    expected = [1] * (i + 1) + [0] * (3 - i)
    assert got[i].int().tolist() == expected, (
        f"query {i} sees keys {got[i].int().tolist()}; a causal model sees itself and its left, {expected}")


# %% [markdown]
# ## Part 3: GPT with padding (2 points)
#
# A padded batch in a causal model hides both the future and the padding. Return the `(B, T, T)` `bool`
# visibility for an `attention_mask` of shape `(B, T)`.


# %% solution causal_padded
def causal_padded_visibility(attention_mask):
    """(B, T) 1/0 mask -> (B, T, T) bool: key j visible to query i iff j <= i and j is a real token."""
    ### BEGIN SOLUTION
    keys = attention_mask.bool()[:, None, :]  # (B, 1, T)
    T = attention_mask.shape[1]
    past = torch.ones(T, T, dtype=torch.bool).tril()  # (T, T)
    return keys & past  # (B, T, T)
    ### END SOLUTION


# %% tests test_causal_padded points=2
mask = torch.tensor([[1, 1, 1], [1, 1, 0]])
# bertlib's versions are switched off while your code runs here, as they are when your notebook is graded
with bertlib_unavailable(bertlib.attention.padding_visibility, bertlib.attention.causal_visibility,
                         bertlib.attention.build_attention_mask, bertlib.attention.additive_mask):
    got = causal_padded_visibility(mask)
assert isinstance(got, torch.Tensor) and got.dtype == torch.bool and tuple(got.shape) == (2, 3, 3), (
    f"expected a (2, 3, 3) torch.bool tensor, got {type(got).__name__} {tuple(getattr(got, 'shape', ()))}")
expected = torch.tensor([[[1, 0, 0], [1, 1, 0], [1, 1, 1]],
                         [[1, 0, 0], [1, 1, 0], [1, 1, 0]]]).bool()
for b in range(2):
    assert torch.equal(got[b], expected[b]), (
        f"sequence {b} (mask {mask[b].tolist()}): got {got[b].int().tolist()}, "
        f"expected {expected[b].int().tolist()} (no future, no padding)")


# %% [markdown]
# ## Look at them
#
# How many keys does each query see? In BERT every real token sees the whole sentence; in GPT the first
# token sees only itself. Run the cell to compare.


# %%
mask = torch.tensor([[1, 1, 1, 1, 0]])
print("BERT\n", bidirectional_visibility(mask)[0].int())
print("GPT\n", causal_padded_visibility(mask)[0].int())


# %% [markdown]
# ## Part 4, written: BERT cannot generate text left to right (2 points, graded by hand)
#
# GPT writes text one token at a time. Why can't BERT do the same? Answer with the matrices you built: what
# happens to the vectors of the tokens already there when one more token is appended, in BERT and in GPT?
# And what was BERT trained to do instead?
#
# Write your answer in the box below, in a few sentences of your own (markdown and `$formulas$` work).
# It is graded by hand, not by the grader: your instructor's score and comment appear on your feedback
# page.


# %% [markdown] written explain_generation points=2
# ### BEGIN SOLUTION
# **Rubric (2 points; the grader's, never released).**
# - 1 point: in BERT a token's vector depends on the tokens to its right (part 1: every query row sees every
#   real key), so appending a token changes every earlier vector: no left-to-right factorisation, nothing to
#   cache. In GPT (part 2) earlier rows never see later keys, so they stay as they were.
# - 1 point: BERT's objective was to fill in masked tokens with both sides visible, never to continue a
#   prefix; generating needs a causal (decoder-only) or an encoder-decoder model.
# - Half a point each at most for naming the difference ("bidirectional") without saying what it does to
#   the earlier vectors, or the objective without saying why it matters.
#
# **A full answer.** BERT's attention is bidirectional, so the vector of token 2 is computed from token 5 as
# well. Append a token and every earlier vector changes: there is no fixed left context to extend and no cache
# of past states, unlike GPT, whose lower-triangular matrix keeps earlier rows unchanged. BERT was also never
# trained to predict a next token, only masked tokens with context on both sides.
# ### END SOLUTION
