"""Assignment 6 (chapter 6, attention masks): the additive padding mask, masked softmax, the causal mask.

The source of 06_attention_masks.ipynb: `make notebooks` builds it (the format: docs/exercises.md)."""


# %% [markdown]
# # Assignment 6: masks are added before the softmax
#
# A padded batch has `[PAD]` tokens that must receive **zero** attention. BERT does not remove them; it
# adds a number to every attention score before the softmax:
#
# - `0` where the key is a real token (the score is unchanged),
# - a hugely negative number where the key is padding, so `exp(score + mask)` is exactly 0.
#
# The number is `torch.finfo(dtype).min`, the most negative *finite* value of the scores' dtype: `-inf`
# would turn a row that sees nothing into `NaN`, and a fixed `-1e9` overflows to `-inf` in float16.
# The mask has shape (B, 1, 1, T): one row per sequence, broadcast over heads and queries, because
# padding is hidden as a *key*.
#
# GPT's causal mask is built the same way, with shape (1, 1, T, T), hiding every key to the right of
# the query. BERT has no causal mask.
#
# bertlib has all of these; the tests switch them off (the visible ones while your function runs: calling
# one raises a RuntimeError that says so).


# %% setup
import torch
import bertlib


def _reference_padding_mask(attention_mask, dtype=torch.float32):
    # bertlib's mask: the visible softmax test swaps it in for yours, so that it grades Part 2 alone.
    return bertlib.additive_mask(bertlib.padding_visibility(attention_mask), dtype)


# %% [markdown]
# ## Part 1: the additive padding mask (2 points)
#
# `attention_mask` is (B, T), 1 for a real token, 0 for padding (a tokenizer gives integers; other
# callers pass `True`/`False` or 1.0/0.0, and all of them must work). Return a tensor of `dtype` and shape
# (B, 1, 1, T): 0 on real tokens, `torch.finfo(dtype).min` on padding. Leave `attention_mask` as it is.


# %% solution padding
def additive_padding_mask(attention_mask, dtype=torch.float32):
    """(B, T) 1/0 -> (B, 1, 1, T) of 0 (real) / finfo(dtype).min (padding)."""
    ### BEGIN SOLUTION
    visible = attention_mask.bool()[:, None, None, :]  # (B, 1, 1, T)
    hidden = torch.full(visible.shape, torch.finfo(dtype).min, dtype=dtype)
    return torch.where(visible, torch.zeros((), dtype=dtype), hidden)  # (B, 1, 1, T)
    ### END SOLUTION


# %% tests test_padding points=2
# bertlib's masks are switched off while your code runs here, as they are when your notebook is graded
with bertlib_unavailable(bertlib.attention.additive_mask, bertlib.attention.padding_visibility,
                         bertlib.attention.causal_visibility, bertlib.attention.build_attention_mask,
                         bertlib.attention.eager_attention, bertlib.attention.BertSelfAttention):
    got = additive_padding_mask(torch.tensor([[1, 1, 0]]))
    half = additive_padding_mask(torch.tensor([[1, 0]]), torch.float16)
assert tuple(got.shape) == (1, 1, 1, 3), (
    f"expected shape (B, 1, 1, T) = (1, 1, 1, 3), which broadcasts over heads and queries; got {tuple(got.shape)}")
assert got.dtype == torch.float32, f"expected float32, got {got.dtype}"
assert got[0, 0, 0, :2].tolist() == [0.0, 0.0], f"real tokens must get 0 (scores unchanged), got {got[0, 0, 0, :2].tolist()}"
pad = got[0, 0, 0, 2].item()
assert pad == torch.finfo(torch.float32).min, (
    f"padding got {pad}; expected torch.finfo(float32).min = {torch.finfo(torch.float32).min}"
    + (" (-inf makes a row with nothing visible NaN)" if pad == float("-inf") else ""))
assert half.dtype == torch.float16 and half[0, 0, 0, 1].item() == torch.finfo(torch.float16).min, (
    f"in float16 padding should get {torch.finfo(torch.float16).min}, got {half.flatten().tolist()} ({half.dtype})")


# %% [markdown]
# ## Part 2: masked softmax (3 points)
#
# `scores` are attention scores (B, nh, T, T) (already divided by sqrt(d)); `attention_mask` is (B, T).
# Return the attention weights: softmax over the keys (last dimension) with padding keys weighted 0.
# Use your `additive_padding_mask`, on the `attention_mask` given, in the scores' dtype, and leave `scores`
# as they are. A mistake in it costs Part 1's points, not these: the visible test below swaps in a correct
# one, and so does the grader.


# %% solution softmax
def masked_softmax(scores, attention_mask):
    """(B, nh, T, T) scores, (B, T) mask -> (B, nh, T, T) weights; each row sums to 1 over real keys."""
    ### BEGIN SOLUTION
    mask = additive_padding_mask(attention_mask, scores.dtype)  # (B, 1, 1, T)
    return (scores + mask).softmax(dim=-1)  # add before the softmax: exp(very negative) = 0
    ### END SOLUTION


# %% tests test_softmax points=3
_given = _reference_padding_mask(torch.tensor([[1, 1, 0]]))  # a correct mask, made before bertlib is off


def _given_mask(attention_mask, dtype=torch.float32):
    return _given.to(dtype)


_yours = additive_padding_mask
additive_padding_mask = _given_mask
try:
    scores = torch.tensor([[[[0.0, 0.0, 0.0], [1.0, 2.0, 50.0], [0.0, 0.0, 0.0]]]])  # (1, 1, 3, 3)
    # bertlib's masks are switched off while your code runs here, as they are when your notebook is graded
    with bertlib_unavailable(bertlib.attention.additive_mask, bertlib.attention.padding_visibility,
                             bertlib.attention.causal_visibility, bertlib.attention.build_attention_mask,
                             bertlib.attention.eager_attention, bertlib.attention.BertSelfAttention):
        got = masked_softmax(scores, torch.tensor([[1, 1, 0]]))
finally:
    additive_padding_mask = _yours
assert tuple(got.shape) == (1, 1, 3, 3), f"expected shape (1, 1, 3, 3), got {tuple(got.shape)}"
expected = torch.tensor([[0.5, 0.5, 0.0], [0.2689, 0.7311, 0.0], [0.5, 0.5, 0.0]])
assert torch.allclose(got[0, 0], expected, atol=1e-4), (
    f"weights {got[0, 0].tolist()}; expected {expected.tolist()}: the padding key (column 2) gets 0 "
    "even with a score of 50, every query (a padding query too) still sees the real keys, each row sums to 1")


# %% [markdown]
# ## Part 3: GPT's causal mask (2 points)
#
# Return the additive causal mask of shape (1, 1, T, T) in `dtype`: 0 where key j <= query i,
# `torch.finfo(dtype).min` where j > i.


# %% solution causal
def causal_additive_mask(T, dtype=torch.float32):
    """(1, 1, T, T): 0 on and below the diagonal, finfo(dtype).min above it."""
    ### BEGIN SOLUTION
    future = torch.ones(T, T, dtype=torch.bool).triu(1)  # (T, T): key j > query i
    mask = torch.zeros(T, T, dtype=dtype).masked_fill(future, torch.finfo(dtype).min)
    return mask[None, None]  # (1, 1, T, T)
    ### END SOLUTION


# %% tests test_causal points=2
# bertlib's masks are switched off while your code runs here, as they are when your notebook is graded
with bertlib_unavailable(bertlib.attention.additive_mask, bertlib.attention.padding_visibility,
                         bertlib.attention.causal_visibility, bertlib.attention.build_attention_mask,
                         bertlib.attention.eager_attention, bertlib.attention.BertSelfAttention):
    got = causal_additive_mask(3)
assert tuple(got.shape) == (1, 1, 3, 3), f"expected shape (1, 1, T, T) = (1, 1, 3, 3), got {tuple(got.shape)}"
low = torch.finfo(torch.float32).min
expected = torch.tensor([[0.0, low, low], [0.0, 0.0, low], [0.0, 0.0, 0.0]])
hidden_pattern = (got[0, 0] == low).int().tolist()
assert torch.equal(got[0, 0], expected), (
    f"hidden keys per query {hidden_pattern}; expected [[0, 1, 1], [0, 0, 1], [0, 0, 0]] "
    "(query i sees keys 0..i; the hidden ones get finfo.min, the rest 0)")


# %% [markdown]
# ## Part 4, written: why the mask is added before the softmax (2 points, graded by hand)
#
# Your padding mask is *added* to the scores before the softmax. Why not multiply the attention weights by
# the 0/1 mask after the softmax instead? Say what each does to a row of weights.
#
# Write your answer in the box below, in a few sentences of your own (markdown and `$formulas$` work).
# It is graded by hand, not by the grader: your instructor's score and comment appear on your feedback
# page.


# %% [markdown] written explain_additive points=2
# ### BEGIN SOLUTION
# **Rubric (2 points; the grader's, never released).**
# - 1 point: adding a huge negative number makes $e^{s}$ of the hidden keys vanish, and the softmax's own
#   normalisation then spreads all the weight over the visible keys: each row still sums to 1.
# - 1 point: multiplying after the softmax zeroes the padding's weights but leaves rows that sum to less
#   than 1 (the real tokens keep only their old share); re-normalising would fix it, which is the same
#   result in more steps.
# - A mention of `finfo.min` rather than `-inf` (a row with nothing visible would become NaN) earns no
#   extra point but is worth a comment.
#
# **A full answer.** Added before the softmax, the mask makes the hidden keys' exponentials 0, and the
# normalisation divides by the visible keys' sum only, so the visible weights sum to 1. Multiplied after, the
# padding's share is simply dropped: the row sums to less than 1 unless you divide again.
# ### END SOLUTION
