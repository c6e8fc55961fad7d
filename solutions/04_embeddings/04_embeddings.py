"""Assignment 4 (chapter 4, embeddings): the input layer's forward, and what comes out of it.

The source of 04_embeddings.ipynb: `make notebooks` builds it (the format: docs/exercises.md)."""


# %% [markdown]
# # Assignment 4: three embeddings, added
#
# BERT's input layer turns `input_ids` (B, T) into vectors (B, T, H) in four steps:
#
# 1. look up three learned tables: the **word** of each token (`word_embeddings`, V x H), its
#    **position** 0..T-1 (`position_embeddings`, P x H), its **segment** A = 0 / B = 1
#    (`token_type_embeddings`, S x H);
# 2. **add** them (not concatenate: the width stays H);
# 3. `LayerNorm`;
# 4. `dropout` (active in training only).
#
# You write the sum (part 1), then LayerNorm and dropout on top of it (parts 2 and 3), then say what
# shape comes out and when the layer cannot run at all (part 4). The tables live in `emb`, a
# `bertlib.BertEmbeddings`; use its sub-modules (`emb.word_embeddings`, `emb.position_embeddings`,
# `emb.token_type_embeddings`, `emb.LayerNorm`, `emb.dropout`) but not its `forward`: the tests switch
# that off (the visible ones while your function runs: calling it raises a RuntimeError that says so).


# %% setup
import torch
import bertlib
from bertlib import BertConfig, BertEmbeddings
from inputs import tiny_embeddings as _tiny_embeddings  # inputs.py beside this notebook: the hidden tests use it too


# %% [markdown]
# ## Part 1: the sum (3 points)
#
# Return `word + position + segment` for every token, shape (B, T, H). Positions are 0..T-1 in every
# row. If `token_type_ids` is `None`, every token is in segment A (0).
#
# Ids come as callers give them: `int64` or `int32` (an `nn.Embedding` takes both), possibly a view (a
# slice of a bigger batch, which `.view()` cannot flatten). Training updates all three tables through this
# sum, so the gradient of the output must reach each table's weight (no `.data`, `.detach()` or
# `torch.no_grad()` on the way).


# %% solution sum
def embedding_sum(emb, input_ids, token_type_ids=None):
    """(B, T) ids -> (B, T, H): the three learned embeddings of each token, added."""
    ### BEGIN SOLUTION
    B, T = input_ids.shape
    if token_type_ids is None:
        token_type_ids = torch.zeros_like(input_ids)  # (B, T): all sentence A
    positions = torch.arange(T, device=input_ids.device)[None, :]  # (1, T)
    return (emb.word_embeddings(input_ids)  # (B, T, H)
            + emb.position_embeddings(positions)  # (1, T, H), broadcast over the batch
            + emb.token_type_embeddings(token_type_ids))  # (B, T, H)
    ### END SOLUTION


# %% tests test_sum points=3
fields, emb = _tiny_embeddings(301)
ids = torch.tensor([[2, 7, 7, 3], [5, 1, 0, 0]])
segments = torch.tensor([[0, 0, 1, 1], [0, 1, 1, 1]])
# bertlib's BertEmbeddings.forward is switched off while your code runs here, as it is when your notebook is graded
with torch.no_grad(), bertlib_unavailable(BertEmbeddings.forward):
    got = embedding_sum(emb, ids, segments)
assert tuple(got.shape) == (2, 4, 8), (
    f"expected shape (B, T, H) = (2, 4, 8), got {tuple(got.shape)}"
    + (": concatenated instead of added?" if got.shape[-1] == 24 else ""))
tables = {"word_embeddings": (ids, "the token's word"), "position_embeddings": (torch.arange(4).expand(2, 4),
          "position t: row t of the learned table"), "token_type_embeddings": (segments, "the segment id")}
for keep, (index, meaning) in tables.items():
    # Zero every table but one: what is left must be exactly that table's rows.
    _, only = _tiny_embeddings(301)
    with torch.no_grad(), bertlib_unavailable(BertEmbeddings.forward):
        for name in tables:
            if name != keep:
                getattr(only, name).weight.zero_()
        got = embedding_sum(only, ids, segments)
        expected = getattr(only, keep).weight[index]
    assert torch.allclose(got, expected), (
        f"with only {keep} non-zero, each token should get {meaning}; "
        f"largest difference {(got - expected).abs().max():.3g}")
with torch.no_grad(), bertlib_unavailable(BertEmbeddings.forward):
    default = embedding_sum(emb, ids)
    all_a = embedding_sum(emb, ids, torch.zeros_like(ids))
assert torch.allclose(default, all_a), "token_type_ids=None should mean segment 0 for every token"


# %% [markdown]
# ## Parts 2 and 3: LayerNorm, then dropout (2 + 2 points)
#
# Return `dropout(LayerNorm(embedding_sum(...)))` using `emb.LayerNorm` and `emb.dropout`. Call your
# `embedding_sum`: while these parts are tested it is replaced by a correct one, so a mistake in part 1
# does not cost you again. Part 2 checks the module in `eval()` mode (no dropout), part 3 in `train()`
# mode, where dropout zeroes a fraction `p` of the values and scales the rest by `1 / (1 - p)`. In both modes
# the output's gradient must reach the three tables and the LayerNorm's weights: `eval()` switches dropout
# off, not gradients (no `torch.no_grad()`, `.detach()` or `.data` on the way).


# %% solution forward
def embeddings_forward(emb, input_ids, token_type_ids=None):
    """(B, T) ids -> (B, T, H): BertEmbeddings' output."""
    ### BEGIN SOLUTION
    summed = embedding_sum(emb, input_ids, token_type_ids)  # (B, T, H)
    return emb.dropout(emb.LayerNorm(summed))  # normalise each token's vector, then drop out (training only)
    ### END SOLUTION


# %% tests test_layernorm points=2
_x = torch.tensor([[[1.0, 2.0, 3.0, 4.0], [0.0, 0.0, 0.0, 8.0]]])  # (1, 2, 4): what embedding_sum returns here
_, emb = _tiny_embeddings(302, hidden_size=4, num_attention_heads=1)
with torch.no_grad():
    emb.LayerNorm.weight.fill_(1.0)
    emb.LayerNorm.bias.fill_(0.0)
correct = StandIn(_x, "emb", "input_ids", "token_type_ids")  # a correct embedding_sum(), answering _x
# Your forward while embedding_sum() is a correct one, so a mistake in part 1 does not show up again here.
with torch.no_grad(), bertlib_unavailable(BertEmbeddings.forward), \
        standing_in(embeddings_forward, embedding_sum=correct):
    got = embeddings_forward(emb.eval(), torch.zeros(1, 2, dtype=torch.long), None)
expected = torch.tensor([[[-1.3416, -0.4472, 0.4472, 1.3416], [-0.5774, -0.5774, -0.5774, 1.7321]]])
assert tuple(got.shape) == (1, 2, 4), f"expected shape (1, 2, 4), got {tuple(got.shape)}"
assert torch.allclose(got, expected, atol=1e-4), (
    f"in eval mode each token's vector should be normalised to mean 0 and variance 1 "
    f"(LayerNorm with weight 1, bias 0), giving {expected.tolist()}; got {got.tolist()}")


# %% tests test_dropout points=2
# Your forward in eval and in train mode on the same sum: training must only drop and rescale.
p, shape = 0.5, (4, 16, 32)
_x = torch.randn(shape, generator=torch.Generator().manual_seed(303)) * 3 + 1  # what embedding_sum returns
_, emb = _tiny_embeddings(303, p=p, hidden_size=shape[-1], num_attention_heads=1)
ids = torch.zeros(shape[:2], dtype=torch.long)
correct = StandIn(_x, "emb", "input_ids", "token_type_ids")  # a correct embedding_sum(), answering _x
with torch.no_grad(), bertlib_unavailable(BertEmbeddings.forward), \
        standing_in(embeddings_forward, embedding_sum=correct):
    evaluated = embeddings_forward(emb.eval(), ids, None)
    torch.manual_seed(303)  # dropout draws from torch's global generator
    trained = embeddings_forward(emb.train(), ids, None)
    torch.manual_seed(304)
    again = embeddings_forward(emb.train(), ids, None)
dropped = trained == 0
share = dropped.float().mean().item()
assert abs(share - p) < 0.05, (
    f"in train mode {share:.0%} of the values are zero; dropout with p={p} zeroes about {p:.0%}")
assert torch.allclose(trained[~dropped], evaluated[~dropped] / (1 - p), atol=1e-5), (
    "in train mode the values kept should be the eval-mode output scaled by 1/(1-p): "
    "dropout comes after LayerNorm")
assert not torch.equal(again == 0, dropped), (
    "with another torch seed your dropout zeroes exactly the same values: dropout draws from torch's random "
    "numbers (emb.dropout does), not from a generator of your own with a fixed seed")


# %% [markdown]
# ## Part 4: the output shape (1 point)
#
# Without running anything: what shape comes out of BertEmbeddings for a batch of `batch_size` sequences
# of `seq_len` tokens? Positions are *learned* rows of a table of `max_position_embeddings` rows, so a
# longer sequence has no embedding for its last positions: raise `ValueError` then.


# %% solution shape
def embeddings_output_shape(cfg, batch_size, seq_len):
    """The shape of BertEmbeddings' output, as a tuple; ValueError if seq_len has no position embedding."""
    ### BEGIN SOLUTION
    if seq_len > cfg.max_position_embeddings:
        raise ValueError(f"seq_len {seq_len} > max_position_embeddings {cfg.max_position_embeddings}")
    return (batch_size, seq_len, cfg.hidden_size)
    ### END SOLUTION


# %% tests test_shape points=1
got = embeddings_output_shape(BertConfig.base(), 2, 128)
assert tuple(got) == (2, 128, 768), f"BERT-Base, 2 sequences of 128 tokens: got {got}, expected (2, 128, 768)"
try:
    embeddings_output_shape(BertConfig.base(), 1, 513)
except ValueError:
    pass
else:
    raise AssertionError("BERT-Base has 512 learned positions: 513 tokens should raise ValueError")


# %% [markdown]
# ## Part 5, written: why the three embeddings are added (2 points, graded by hand)
#
# Your `embeddings_sum` adds the token, position and segment vectors. Why is adding them enough, rather than
# concatenating them? Say what adding keeps and why the model loses nothing by it.
#
# Write your answer in the box below, in a few sentences of your own (markdown and `$formulas$` work).
# It is graded by hand, not by the grader: your instructor's score and comment appear on your feedback
# page.


# %% [markdown] written explain_sum points=2
# ### BEGIN SOLUTION
# **Rubric (2 points; the grader's, never released).**
# - 1 point: adding keeps the width at $H$, so every layer after it keeps its size (a concatenation would be
#   $3H$ wide, or need a projection back).
# - 1 point: nothing is lost: the sum is one lookup in a learned table indexed by the (token, position,
#   segment) triple's one-hot codes, which is what a concatenation followed by a linear projection would
#   give, and the tables are learned together; in a high-dimensional space the three parts stay separable.
# - No point for "it is simpler" alone.
#
# **A full answer.** A concatenation would feed a layer $3H$ wide, or need a projection back to $H$; but a
# linear projection of concatenated one-hot lookups equals the sum of three lookups in projected tables, and
# BERT learns those tables directly. So adding costs no expressiveness and keeps the width at $H$.
# ### END SOLUTION
