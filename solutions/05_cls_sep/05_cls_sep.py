"""Assignment 5 (chapter 5, [CLS] and [SEP]): model inputs for one sentence and a pair; a head on [CLS].

The source of 05_cls_sep.ipynb: `make notebooks` builds it (the format: docs/exercises.md)."""


# %% [markdown]
# # Assignment 5: [CLS], [SEP] and the inputs BERT reads
#
# BERT reads one sentence as `[CLS] A [SEP]` and a pair as `[CLS] A [SEP] B [SEP]`, always as three
# aligned lists of the same length `max_length`:
#
# | list | single sentence | pair |
# |---|---|---|
# | `input_ids` | `[CLS] A [SEP] [PAD]...` | `[CLS] A [SEP] B [SEP] [PAD]...` |
# | `token_type_ids` (segment) | 0 everywhere | 0 for `[CLS] A [SEP]`, 1 for `B [SEP]`, 0 on padding |
# | `attention_mask` | 1 on tokens (special ones included), 0 on padding | same |
#
# Too long? The original BERT keeps the **beginning**: a single sentence keeps its first
# `max_length - 2` tokens; a pair loses one token at a time **from the end of the longer** of A and B
# (of B when they are equally long) until `len(A) + len(B) <= max_length - 3`.
#
# The ids below are BERT's (uncased vocabulary): `[CLS]` = 101, `[SEP]` = 102, `[PAD]` = 0. Your
# functions take lists of token ids (already WordPiece-tokenized) and return a dict of three lists of
# ints; they leave the caller's lists as they were (truncate a copy). Either list may be empty: a pair
# with an empty B is still a pair, `[CLS] A [SEP] [SEP]`, its second segment the last `[SEP]` alone.
# bertlib's tokenizer does all this too; the tests switch it off (the visible ones while your
# function runs: calling it raises a RuntimeError that says so).
#
# Part 3 puts a classifier on the output: the final hidden vector of `[CLS]` (position 0) goes through
# the pooler (dense + tanh) and a linear layer to the class logits.


# %% setup
import torch
import bertlib

CLS_ID, SEP_ID, PAD_ID = 101, 102, 0

# bertlib's versions of what you write here: the tests switch them off while your functions run
BERTLIB_INPUTS = (bertlib.tokenizer.BertTokenizer, bertlib.tokenizer.truncate_sequences, bertlib.nsp.truncate_seq_pair,
                  bertlib.nsp.encode_nsp_example, bertlib.heads.BertForSequenceClassification,
                  bertlib.encoder.BertPooler, bertlib.modeling.BertModel)


def _as_lists(encoded):
    # Accept lists or tensors; compare as plain lists of ints.
    return {k: [int(x) for x in encoded[k]] for k in ("input_ids", "token_type_ids", "attention_mask")}


# %% [markdown]
# ## Part 1: one sentence (2 points)


# %% solution single
def encode_single(ids, max_length):
    """[CLS] ids [SEP], truncated and padded to max_length -> {input_ids, token_type_ids, attention_mask}."""
    ### BEGIN SOLUTION
    ids = list(ids)[: max_length - 2]  # keep the beginning: room for [CLS] and [SEP]
    input_ids = [CLS_ID] + ids + [SEP_ID]
    n_pad = max_length - len(input_ids)
    return {
        "input_ids": input_ids + [PAD_ID] * n_pad,
        "token_type_ids": [0] * max_length,
        "attention_mask": [1] * len(input_ids) + [0] * n_pad,
    }
    ### END SOLUTION


# %% tests test_single points=2
# bertlib's versions are switched off while your code runs here, as they are when your notebook is graded
with bertlib_unavailable(*BERTLIB_INPUTS):
    got = _as_lists(encode_single([7592, 2088, 999], 8))  # "hello world !"
expected = {"input_ids": [101, 7592, 2088, 999, 102, 0, 0, 0], "token_type_ids": [0] * 8,
            "attention_mask": [1, 1, 1, 1, 1, 0, 0, 0]}
for key in expected:
    assert got[key] == expected[key], f"{key}: got {got[key]}, expected {expected[key]}"
long = list(range(2001, 2011))  # 10 tokens
with bertlib_unavailable(*BERTLIB_INPUTS):
    got = _as_lists(encode_single(long, 6))["input_ids"]
assert got == [101, 2001, 2002, 2003, 2004, 102], (
    f"10 tokens into max_length=6 gave {got}; BERT keeps the first 6 - 2 = 4 tokens: "
    f"[101, 2001, 2002, 2003, 2004, 102]")


# %% [markdown]
# ## Part 2: a pair (3 points)


# %% solution pair
def encode_pair(ids_a, ids_b, max_length):
    """[CLS] A [SEP] B [SEP], truncated (original rule) and padded to max_length."""
    ### BEGIN SOLUTION
    a, b = list(ids_a), list(ids_b)
    while len(a) + len(b) > max_length - 3:  # room for [CLS], [SEP], [SEP]
        (a if len(a) > len(b) else b).pop()  # from the end of the longer one; B on a tie
    input_ids = [CLS_ID] + a + [SEP_ID] + b + [SEP_ID]
    n_pad = max_length - len(input_ids)
    return {
        "input_ids": input_ids + [PAD_ID] * n_pad,
        "token_type_ids": [0] * (len(a) + 2) + [1] * (len(b) + 1) + [0] * n_pad,
        "attention_mask": [1] * len(input_ids) + [0] * n_pad,
    }
    ### END SOLUTION


# %% tests test_pair points=3
# bertlib's versions are switched off while your code runs here, as they are when your notebook is graded
with bertlib_unavailable(*BERTLIB_INPUTS):
    got = _as_lists(encode_pair([1001], [2001], 6))
expected = {"input_ids": [101, 1001, 102, 2001, 102, 0], "token_type_ids": [0, 0, 0, 1, 1, 0],
            "attention_mask": [1, 1, 1, 1, 1, 0]}
for key in expected:
    assert got[key] == expected[key], f"{key}: got {got[key]}, expected {expected[key]}"
with bertlib_unavailable(*BERTLIB_INPUTS):
    got = _as_lists(encode_pair([1001, 1002, 1003, 1004, 1005], [2001, 2002], 8))["input_ids"]
assert got == [101, 1001, 1002, 1003, 102, 2001, 2002, 102], (
    f"A of 5 and B of 2 tokens into max_length=8 gave {got}; the longer (A) loses tokens from its end "
    "until 3 + 2 <= 8 - 3: [101, 1001, 1002, 1003, 102, 2001, 2002, 102]")
with bertlib_unavailable(*BERTLIB_INPUTS):
    got = _as_lists(encode_pair([1001, 1002, 1003, 1004], [2001, 2002, 2003, 2004], 9))["input_ids"]
assert got == [101, 1001, 1002, 1003, 102, 2001, 2002, 2003, 102], (
    f"A and B of 4 tokens into max_length=9 gave {got}; on a tie B loses first, then A: each keeps 3")


# %% [markdown]
# ## Part 3: a classifier on [CLS] (2 points)
#
# `last_hidden_state` is the encoder's output, (B, T, H), for a padded batch. Return the class logits
# (B, num_labels): the vector at `[CLS]`, through `pooler_dense` and `tanh` (BERT's pooler), then
# through `classifier` (a `nn.Linear(H, num_labels)`). Dropout is left out, as at inference; but
# fine-tuning trains through this head, so the logits must carry gradients back to `last_hidden_state` and
# to both layers' weights (no `torch.no_grad()`, `.detach()` or `.item()` on the way).


# %% solution head
def cls_logits(last_hidden_state, pooler_dense, classifier):
    """(B, T, H) -> (B, num_labels) from the [CLS] vector."""
    ### BEGIN SOLUTION
    cls = last_hidden_state[:, 0]  # (B, H): position 0 is [CLS] in every sequence
    pooled = torch.tanh(pooler_dense(cls))  # (B, H)
    return classifier(pooled)  # (B, num_labels)
    ### END SOLUTION


# %% tests test_head points=2
H = 4
hidden = torch.tensor([[[0.5, -0.5, 0.0, 1.0],   # [CLS]
                        [2.0, 2.0, 2.0, 2.0],    # a word
                        [-3.0, 1.0, 0.0, 0.0],   # [SEP]
                        [9.0, 9.0, 9.0, 9.0]]])  # [PAD]
identity, pick = torch.nn.Linear(H, H), torch.nn.Linear(H, 2)
with torch.no_grad():
    identity.weight.copy_(torch.eye(H)); identity.bias.zero_()
    pick.weight.copy_(torch.eye(H)[:2]); pick.bias.zero_()
    # bertlib's versions are switched off while your code runs here, as they are when your notebook is graded
    with bertlib_unavailable(*BERTLIB_INPUTS):
        got = cls_logits(hidden, identity, pick)
assert tuple(got.shape) == (1, 2), f"expected logits of shape (B, num_labels) = (1, 2), got {tuple(got.shape)}"
candidates = {"[CLS] (position 0)": hidden[:, 0], "[SEP]": hidden[:, 2], "the last position": hidden[:, -1],
              "the mean over positions": hidden.mean(1)}
expected = torch.tanh(candidates["[CLS] (position 0)"])[:, :2]
seen = [name for name, v in candidates.items() if torch.allclose(got, torch.tanh(v)[:, :2], atol=1e-5)]
assert torch.allclose(got, expected, atol=1e-5), (
    f"got logits {got.tolist()}, expected {expected.tolist()} from the [CLS] vector through dense and tanh"
    + (f"; yours come from {seen[0]}" if seen else ""))


# %% [markdown]
# ## Part 4, written: what makes [CLS] a summary (2 points, graded by hand)
#
# Part 3's classifier reads only the `[CLS]` vector. Someone says it works "because `[CLS]` is first and
# touches all the other tokens". What is wrong with that explanation, and what actually makes the `[CLS]`
# vector a summary of the whole input?
#
# Write your answer in the box below, in a few sentences of your own (markdown and `$formulas$` work).
# It is graded by hand, not by the grader: your instructor's score and comment appear on your feedback
# page.


# %% [markdown] written explain_cls points=2
# ### BEGIN SOLUTION
# **Rubric (2 points; the grader's, never released).**
# - 1 point: being first does not matter: with bidirectional attention every token sees all the others, so
#   "touches all the others" is true of any position.
# - 1 point: what makes `[CLS]` the summary is training: NSP in pretraining and the classifier in
#   fine-tuning put their loss on that one vector, so the model learns to gather what the task needs there.
# - Half a point for "attention" or "the pooler" without saying that training, not position, makes it.
#
# **A full answer.** Under bidirectional attention every position reads the whole input, so position 0 is
# not special by itself. `[CLS]` becomes a summary because the losses of NSP and of fine-tuning are put on its
# vector: the gradients teach the model to collect the sentence-level information there.
# ### END SOLUTION
