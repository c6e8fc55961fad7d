"""Assignment 3 (chapter 3, sizes): BERT's parameter count in closed form, component by component.

The source of 03_sizes.ipynb: `make notebooks` builds it (the format: docs/exercises.md)."""


# %% [markdown]
# # Assignment 3: how many parameters?
#
# "BERT-Base has 110M parameters" is a rounded number. You will count them exactly, for *any*
# configuration, without building the model: a closed form in the config's fields.
#
# | symbol | `BertConfig` field | Base |
# |---|---|---|
# | V | `vocab_size` | 30522 |
# | P | `max_position_embeddings` | 512 |
# | S | `type_vocab_size` | 2 |
# | H | `hidden_size` | 768 |
# | I | `intermediate_size` | 3072 |
# | L | `num_hidden_layers` | 12 |
#
# Two counting rules cover everything: `nn.Linear(a, b)` has `a * b` weights **and `b` biases**;
# `nn.LayerNorm(H)` has `H` weights (gamma) **and `H` biases** (beta). An embedding table of `n` rows is
# `n * H`. The number of attention heads does not appear anywhere: can you see why?
#
# Four parts, each graded on its own. Your functions return Python `int`s. Do not build modules (not
# bertlib's, not `torch.nn`'s, not even on the `meta` device) or call bertlib's counting functions: the
# tests switch bertlib's off, and they also count a configuration far too big to build (about 10^21
# parameters, where no tensor's size fits in 64 bits), which only a closed form in Python `int`s counts.


# %% setup
import numbers

import torch
import bertlib
from bertlib import BertConfig

# What the tests switch off while your code runs, as grading does: bertlib's own counting and its modules
# (calling one raises a RuntimeError that says so).
_BERTLIB_COUNTING = (bertlib.params.count_parameters, bertlib.params.embeddings_breakdown,
                     bertlib.params.layer_breakdown, bertlib.params.count_module_parameters,
                     bertlib.params._linear, bertlib.params._layer_norm, bertlib.BertModel,
                     bertlib.BertForPreTraining, bertlib.BertEmbeddings, bertlib.encoder.BertLayer)


# %% [markdown]
# ## Part 1: the embeddings (2 points)
#
# Three lookup tables (words, positions, segments) and one LayerNorm.


# %% solution embeddings
def embeddings_params(cfg):
    """Parameters of BertEmbeddings for config cfg."""
    ### BEGIN SOLUTION
    H = cfg.hidden_size
    tables = (cfg.vocab_size + cfg.max_position_embeddings + cfg.type_vocab_size) * H
    return tables + 2 * H  # LayerNorm: gamma and beta
    ### END SOLUTION


# %% tests test_embeddings points=2
# bertlib's counting is switched off while your code runs here, as it is when your notebook is graded
base = BertConfig.base()
with bertlib_unavailable(*_BERTLIB_COUNTING):
    got = embeddings_params(base)
assert isinstance(got, numbers.Integral), f"return an int, got {type(got).__name__} {got!r}"
H = 768
assert got == 23_837_184, (
    f"counted {got:,} parameters in BERT-Base's embeddings; expected 23,837,184 "
    f"(you are off by {got - 23_837_184:,} = {(got - 23_837_184) / H:g} x H)")


# %% [markdown]
# ## Part 2: one encoder layer (3 points)
#
# Self-attention (query, key, value), its output projection and LayerNorm; the feed-forward network
# (H -> I, I -> H) and its LayerNorm. Every `nn.Linear` here has a bias.


# %% solution layer
def layer_params(cfg):
    """Parameters of one BertLayer."""
    ### BEGIN SOLUTION
    H, I = cfg.hidden_size, cfg.intermediate_size
    attention = 3 * (H * H + H) + (H * H + H) + 2 * H  # Q, K, V, output dense, LayerNorm
    feed_forward = (H * I + I) + (I * H + H) + 2 * H  # up, down, LayerNorm
    return attention + feed_forward
    ### END SOLUTION


# %% tests test_layer points=3
base = BertConfig.base()
with bertlib_unavailable(*_BERTLIB_COUNTING):  # switched off while your code runs, as in grading
    got = layer_params(base)
assert isinstance(got, numbers.Integral), f"return an int, got {type(got).__name__} {got!r}"
assert got == 7_087_872, (
    f"counted {got:,} parameters in one BERT-Base layer; expected 7,087,872 "
    f"(you are off by {got - 7_087_872:,} = {(got - 7_087_872) / 768:g} x H)")


# %% [markdown]
# ## Part 3: the whole BertModel (2 points)
#
# Return a dict with the keys `"embeddings"`, `"encoder"` (all L layers), `"pooler"` (a dense H -> H on
# the [CLS] vector) and `"total"`. Use your `embeddings_params` and `layer_params`: while this part is
# tested they are replaced by correct versions, so a mistake in part 1 or 2 does not cost you twice.


# %% solution model
def bert_model_params(cfg):
    """{"embeddings", "encoder", "pooler", "total"} for BertModel."""
    ### BEGIN SOLUTION
    H = cfg.hidden_size
    counts = {
        "embeddings": embeddings_params(cfg),
        "encoder": cfg.num_hidden_layers * layer_params(cfg),
        "pooler": H * H + H,
    }
    counts["total"] = sum(counts.values())
    return counts
    ### END SOLUTION


# %% tests test_model points=2
# Your part 3 while embeddings_params() and layer_params() are correct ones, answering these two configs'
# counts, so a mistake in part 1 or 2 does not show up again here (bertlib's counting switched off).
got = {}
for cfg, counts in [(BertConfig.base(), (23_837_184, 7_087_872)), (BertConfig.large(), (31_782_912, 12_596_224))]:
    parts = {"embeddings_params": StandIn(counts[0], "cfg"), "layer_params": StandIn(counts[1], "cfg")}
    with standing_in(bert_model_params, **parts), bertlib_unavailable(*_BERTLIB_COUNTING):
        got[cfg.hidden_size] = bert_model_params(cfg)
    for name, part in parts.items():
        assert part.calls, f"bert_model_params() never called {name}(): use your parts 1 and 2"
        assert all(call.get("cfg") == cfg for call in part.calls), (
            f"{name}() should be given bert_model_params' own cfg, passed on unchanged")
got_base, got_large = got[768], got[1024]
assert isinstance(got_base, dict) and set(got_base) == {"embeddings", "encoder", "pooler", "total"}, (
    f"expected a dict with keys embeddings, encoder, pooler, total; got {got_base!r}")
expected = {"embeddings": 23_837_184, "encoder": 85_054_464, "pooler": 590_592, "total": 109_482_240}
for key in expected:
    assert got_base[key] == expected[key], f"BERT-Base {key}: counted {got_base[key]:,}, expected {expected[key]:,}"
assert got_large["total"] == 335_141_888, f"BERT-Large: counted {got_large['total']:,}, expected 335,141,888"


# %% [markdown]
# ## Part 4: the pretraining heads (2 points)
#
# `BertForPreTraining` adds two heads to BertModel. Return `{"cls.predictions": ..., "cls.seq_relationship": ...}`:
#
# - `cls.predictions` (MLM): a transform (dense H -> H, GELU, LayerNorm), then a projection H -> V to the
#   vocabulary. Its V x H weight **is** the word-embedding matrix (tied: one tensor, already counted in
#   the embeddings); it adds one bias per word.
# - `cls.seq_relationship` (NSP): a linear layer H -> 2 on the pooled [CLS] vector.


# %% solution heads
def pretraining_heads_params(cfg):
    """{"cls.predictions", "cls.seq_relationship"} for BertForPreTraining's heads."""
    ### BEGIN SOLUTION
    H, V = cfg.hidden_size, cfg.vocab_size
    transform = (H * H + H) + 2 * H  # dense + LayerNorm (GELU has no parameters)
    return {"cls.predictions": transform + V,  # decoder weight tied: only its bias is new
            "cls.seq_relationship": H * 2 + 2}
    ### END SOLUTION


# %% tests test_heads points=2
base = BertConfig.base()
with bertlib_unavailable(*_BERTLIB_COUNTING):  # switched off while your code runs, as in grading
    got = pretraining_heads_params(base)
assert isinstance(got, dict) and set(got) == {"cls.predictions", "cls.seq_relationship"}, (
    f"expected a dict with keys cls.predictions and cls.seq_relationship; got {got!r}")
assert got["cls.seq_relationship"] == 1_538, f"NSP head: counted {got['cls.seq_relationship']:,}, expected 1,538"
assert got["cls.predictions"] == 622_650, (
    f"MLM head: counted {got['cls.predictions']:,}, expected 622,650 (off by "
    f"{got['cls.predictions'] - 622_650:,}; V x H = 23,440,896 would mean the tied decoder is counted twice)")


# %% [markdown]
# ## Where the parameters are
#
# Run this to see how BERT-Base's 110M parameters split. Almost a quarter sit in the word-embedding
# table; the twelve layers hold the rest.


# %%
counts = bert_model_params(BertConfig.base())
for name, n in counts.items():
    print(f"{name:>10}: {n:>12,}  ({n / counts['total']:.1%})")


# %% [markdown]
# ## Part 5, written: where a small BERT's parameters sit (2 points, graded by hand)
#
# Your count gives the embeddings about a fifth of BERT-Base's parameters, but about half of MiniLM's
# (all-MiniLM-L6-v2: 6 layers of width 384) and under a tenth of BERT-Large's. Explain why, from the terms
# of your formula: which term grows with what?
#
# Write your answer in the box below, in a few sentences of your own (markdown and `$formulas$` work).
# It is graded by hand, not by the grader: your instructor's score and comment appear on your feedback
# page.


# %% [markdown] written explain_embedding_share points=2
# ### BEGIN SOLUTION
# **Rubric (2 points; the grader's, never released).**
# - 1 point: the word-embedding table costs $V \times H$: linear in the width, independent of the depth,
#   and $V$ (30,522) does not shrink with the model.
# - 1 point: the encoder costs about $12 L H^2$: quadratic in the width and linear in the depth, so it
#   shrinks much faster than the table when a model is made narrow and shallow (and grows faster for Large).
# - Half a point for "the vocabulary is big" without comparing how the two terms scale.
#
# **A full answer.** The table is $VH$ whatever the depth; the layers are about $12H^2$ each. MiniLM has
# small $H$ and $L$, so $12LH^2 \approx 10.6$M while $VH \approx 11.7$M: about half. BERT-Large's
# $24$ wide layers make $12LH^2 \approx 302$M against $VH \approx 31$M.
# ### END SOLUTION
