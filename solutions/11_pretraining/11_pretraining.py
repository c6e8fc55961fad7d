"""Assignment 11 (chapter 11, pretraining a tiny BERT): the pretraining loss of one step, also on a slice of a
batch (num_items_in_batch), the loss to expect before the first step, and the learning rate of every step.

The source of 11_pretraining.ipynb: `make notebooks` builds it (the format: docs/exercises.md)."""


# %% [markdown]
# # Assignment 11: pretraining, step by step
#
# Chapter 11 pretrains a tiny BERT from nothing. Every step of that run takes a batch of masked sentence
# pairs, computes **one number**, the pretraining loss, and moves every weight against its gradient by
# a step whose size, the **learning rate**, changes from step to step. You write three pieces of it:
#
# 1. the pretraining loss, MLM + NSP, also when the batch is split into slices (micro-batches of
#    gradient accumulation, or one slice per process under DDP);
# 2. the loss a model that has learnt nothing should start at, the chapter's first check of a run;
# 3. the learning rate of each step: linear warm-up, then linear decay to zero.
#
# Three parts, each with its own graded test cell (partial credit is per cell). Run the setup cell
# first. Do not call bertlib's versions (`bertlib.mlm_loss`, `bertlib.nsp_loss`, and the schedule in
# `bertlib.training.loop`): the grader switches them off while your notebook is graded and checks your
# own computation.


# %% setup
import math

import torch
import torch.nn.functional as F

import bertlib
import bertlib.training.loop

IGNORE_INDEX = -100  # the label of a position that is not predicted


# %% [markdown]
# ## Part 1: the pretraining loss (4 points)
#
# The chapter's formula is the sum of two means, over different things:
#
# $$\mathcal{L} = \underbrace{-\frac{1}{|\mathcal{M}|} \sum_{(b, i) \in \mathcal{M}} \ln P(x_{b,i})}_{\text{MLM}}
# \;\underbrace{-\;\frac{1}{B} \sum_{b=1}^{B} \ln P(y_b)}_{\text{NSP}}$$
#
# - **MLM**: the cross-entropy of the original piece, **summed over the labelled positions** `M` (label
#   not `-100`) and divided by their number `|M|`. Positions labelled `-100` count nowhere: not in the
#   sum, not in the count.
# - **NSP**: the cross-entropy of the 2-way IsNext (0) / NotNext (1) classifier, the **mean over the B
#   pairs**.
#
# Shapes: `seq_relationship_logits` `(B, 2)`, `next_sentence_label` `(B,)`. `prediction_logits` is
# `(B, T, V)` with `labels` `(B, T)`; or, as in the chapter's training loop, which projects onto the
# vocabulary only at the labelled positions, `(N, V)` with `labels` `(N,)`. Any `(..., V)` with labels
# `(...)`: flatten them. (The arguments come in pairs, each logits with its labels; assignment 9's
# `pretraining_loss` took them in another order.)
#
# **`num_items_in_batch`.** A batch too large for one step is cut into slices: micro-batches whose
# gradients are accumulated, or one slice per process. Each slice holds its own number of labelled
# positions, so the means of the slices are not the mean of the batch. When `num_items_in_batch` is
# given (the number of labelled positions in the *whole* batch; it may be a float), the MLM term is this
# slice's **sum divided by `num_items_in_batch`**: then the slices' MLM terms add up to the whole batch's
# MLM mean, and a slice without any label adds 0. When it is `None`, divide by this batch's own count.
# The NSP term is the mean over this slice's pairs either way (the slices hold equally many pairs).
#
# Return the loss as a scalar tensor that has a gradient (no `.item()` on the way).
#
# | what you might write | what it computes instead |
# |---|---|
# | `F.cross_entropy(..., reduction="none")` then `.mean()` | the mean over all positions, the ignored ones counted as 0 |
# | the mean over this slice's labels, whatever `num_items_in_batch` says | slices that do not add up to the batch's loss |
# | the NSP term divided by `num_items_in_batch` too | an NSP term that shrinks with the number of masked pieces |
# | `reduction="sum"` for NSP | B times the NSP mean |


# %% solution loss
def pretraining_loss(prediction_logits, labels, seq_relationship_logits, next_sentence_label,
                     num_items_in_batch=None):
    """(..., V) vocabulary logits with (...) labels (-100 = not predicted), (B, 2) NSP logits with (B,) labels
    -> the scalar MLM + NSP loss; with num_items_in_batch the MLM sum is divided by it."""
    ### BEGIN SOLUTION
    V = prediction_logits.size(-1)
    logits, targets = prediction_logits.reshape(-1, V), labels.reshape(-1)  # (N, V), (N,)
    # ignore_index: a -100 position adds nothing to the sum (and cannot index the vocabulary).
    mlm_sum = F.cross_entropy(logits, targets, ignore_index=IGNORE_INDEX, reduction="sum")
    if num_items_in_batch is None:
        num_items_in_batch = (targets != IGNORE_INDEX).sum()  # this batch's labelled positions
    mlm = mlm_sum / num_items_in_batch  # a slice without labels: 0 / num_items_in_batch = 0
    nsp = F.cross_entropy(seq_relationship_logits.reshape(-1, 2), next_sentence_label.reshape(-1))  # mean
    return mlm + nsp
    ### END SOLUTION


# %% tests test_loss points=4
def _named_wrong(prediction_logits, labels, seq_relationship_logits, next_sentence_label, n=None):
    """What the common mistakes compute on these inputs, computed (nothing is typed in): {why: loss}."""
    V = prediction_logits.size(-1)
    logits, targets = prediction_logits.reshape(-1, V), labels.reshape(-1)
    per_position = F.cross_entropy(logits, targets, ignore_index=IGNORE_INDEX, reduction="none")  # 0 if -100
    local = (targets != IGNORE_INDEX).sum()
    count = local if n is None else n
    nsp_mean = F.cross_entropy(seq_relationship_logits, next_sentence_label)
    nsp_sum = F.cross_entropy(seq_relationship_logits, next_sentence_label, reduction="sum")
    mlm = per_position.sum() / count
    wrong = {
        "the MLM loss alone: add the NSP term": mlm,
        "the NSP loss summed over the pairs: its term is the mean over the B pairs": mlm + nsp_sum,
        "an MLM mean over all positions, the -100 ones counted as 0: divide by the number of labelled "
        "positions": per_position.mean() + nsp_mean,
    }
    if n is not None:
        wrong["this slice's own MLM mean: with num_items_in_batch given, divide the slice's sum by it"] = (
            per_position.sum() / local + nsp_mean)
        wrong["the NSP term divided by num_items_in_batch as well: NSP stays the mean over this slice's pairs"] = (
            mlm + nsp_sum / n)
    return wrong


def _check_loss(setting, prediction_logits, labels, seq_relationship_logits, next_sentence_label, n=None):
    expected = (bertlib.heads.mlm_loss(prediction_logits, labels, n)
                + bertlib.heads.nsp_loss(seq_relationship_logits, next_sentence_label))  # bertlib: the oracle
    with bertlib_unavailable(bertlib.heads.mlm_loss, bertlib.heads.nsp_loss):
        got = pretraining_loss(prediction_logits, labels, seq_relationship_logits, next_sentence_label, n)
    assert isinstance(got, torch.Tensor) and got.dim() == 0, (
        f"{setting}: expected a scalar tensor, got {type(got).__name__} of shape {tuple(getattr(got, 'shape', ()))}")
    if torch.isnan(got):
        assert False, (f"{setting}: your loss is NaN, expected {expected.item():.5f}"
                       + ("; a slice without any label adds 0 to the MLM term (its sum, 0, divided by "
                          "num_items_in_batch), not 0/0" if n is not None and not (labels != -100).any() else ""))
    hint = next((why for why, w in _named_wrong(prediction_logits.detach(), labels, seq_relationship_logits.detach(),
                                                 next_sentence_label, n).items()
                 if abs(w.item() - expected.item()) > 1e-4 and abs(w.item() - got.item()) < 1e-5), None)
    assert abs(got.item() - expected.item()) <= 1e-6 + 1e-6 * abs(expected.item()), (
        f"{setting}: expected {expected.item():.6f}, got {got.item():.6f}" + (f": that is {hint}" if hint else ""))
    return got


# A worked case: uniform scores over V=5 words at the 2 labelled positions (MLM = ln 5); the two ignored
# positions are confidently wrong and must not count. The NSP logits are right about both pairs.
prediction_logits = torch.zeros(2, 2, 5)  # (B=2, T=2, V=5)
prediction_logits[0, 1, 3] = prediction_logits[1, 0, 3] = 20.0
labels = torch.tensor([[4, -100], [-100, 2]])
seq_relationship_logits = torch.tensor([[2.0, -2.0], [-1.0, 1.0]])  # (B, 2): IsNext, then NotNext
next_sentence_label = torch.tensor([0, 1])
_check_loss("the worked case (MLM ln 5 over 2 labelled positions)", prediction_logits, labels,
            seq_relationship_logits, next_sentence_label)

# A batch of 4 pairs, 9 positions each, V=11; row 2 has no label at all.
gen = torch.Generator().manual_seed(0)
prediction_logits = (torch.randn(4, 9, 11, generator=gen) * 2).requires_grad_()  # (B, T, V)
labels = torch.randint(11, (4, 9), generator=gen)
labels[torch.rand(4, 9, generator=gen) > 0.3] = -100
labels[2] = -100
labels[0, 0] = 0  # 0 is a word id like any other
seq_relationship_logits = torch.randn(4, 2, generator=gen).requires_grad_()
next_sentence_label = torch.tensor([0, 1, 1, 0])
got = _check_loss("a 4 x 9 batch, row 2 without labels", prediction_logits, labels, seq_relationship_logits,
                  next_sentence_label)
assert got.requires_grad, "your loss has no gradient: compute it with torch operations on the logits (no .item())"
got.backward()
leak = prediction_logits.grad[labels == -100].abs().max().item()
assert leak == 0, f"your loss changes with the logits at positions labelled -100 (gradient up to {leak:.3g} there)"

# The chapter's training loop: logits only at the N labelled positions, (N, V) with labels (N,).
selected = labels != -100
_check_loss("(N, V) logits at the labelled positions only", prediction_logits.detach()[selected], labels[selected],
            seq_relationship_logits.detach(), next_sentence_label)

# The same batch cut into two slices of 2 pairs: each divides its MLM sum by the whole batch's count.
n = int(selected.sum())
halves = []
for rows, setting in [(slice(0, 2), "the slice of rows 0-1"), (slice(2, 4), "the slice of rows 2-3")]:
    halves.append(_check_loss(f"{setting}, num_items_in_batch={n}", prediction_logits.detach()[rows], labels[rows],
                              seq_relationship_logits.detach()[rows], next_sentence_label[rows], n))
whole_mlm = bertlib.heads.mlm_loss(prediction_logits.detach(), labels)
nsp_halves = sum(bertlib.heads.nsp_loss(seq_relationship_logits.detach()[r], next_sentence_label[r])
                 for r in (slice(0, 2), slice(2, 4)))
assert abs((halves[0] + halves[1] - nsp_halves).item() - whole_mlm.item()) < 1e-5, (
    "the two slices' MLM terms do not add up to the whole batch's MLM mean")
# A slice without any label at all: its MLM term is 0, the loss its NSP term.
_check_loss(f"a slice without labels, num_items_in_batch={n}", prediction_logits.detach()[2:3], labels[2:3],
            seq_relationship_logits.detach()[2:3], next_sentence_label[2:3], n)
got = _check_loss("num_items_in_batch=7.5 (a float: the batch's count shared by 2 processes)",
                  prediction_logits.detach(), labels, seq_relationship_logits.detach(), next_sentence_label, 7.5)


# %% [markdown]
# ## Part 2: the loss before the first step (2 points)
#
# A model that has learnt nothing gives every one of the `V` pieces the same probability at a masked
# position, and each NSP class probability 1/2. Return its pretraining loss, the number the chapter
# checks a run's first step against, as a Python float. (Natural logarithms: a loss is in nats.)


# %% solution initial
def expected_initial_loss(vocab_size):
    """The pretraining loss (MLM + NSP) of a model that guesses uniformly, for a vocabulary of vocab_size."""
    ### BEGIN SOLUTION
    mlm = math.log(vocab_size)  # -ln(1/V) at every labelled position, so their mean too
    nsp = math.log(2)  # -ln(1/2) for every pair
    return mlm + nsp
    ### END SOLUTION


# %% tests test_initial points=2
def _uniform_loss(V):
    """bertlib's pretraining loss when every score is equal: the model that has learnt nothing."""
    labels = torch.tensor([0, V - 1, V // 2])  # any labels: uniform scores give each the same loss
    mlm = bertlib.heads.mlm_loss(torch.zeros(3, V, dtype=torch.float64), labels)
    nsp = bertlib.heads.nsp_loss(torch.zeros(2, 2, dtype=torch.float64), torch.tensor([0, 1]))
    return (mlm + nsp).item()

for V in [2, 5, 30522]:
    expected = _uniform_loss(V)
    got = expected_initial_loss(V)
    assert isinstance(got, (int, float)) or (isinstance(got, torch.Tensor) and got.numel() == 1), (
        f"V={V}: expected a number, got {type(got).__name__}")
    got = float(got)
    hints = {
        "ln V alone: the NSP coin flip adds ln 2": math.log(V),
        "in base 10: a loss in nats uses the natural logarithm (math.log)": math.log10(V) + math.log10(2),
        "in bits (base 2): a loss in nats uses the natural logarithm (math.log)": math.log2(V) + 1,
        "the MLM term ln V times ln 2: the two terms add": math.log(V) * math.log(2),
    }
    hint = next((why for why, w in hints.items() if abs(w - expected) > 1e-6 and abs(w - got) < 1e-9), None)
    assert abs(got - expected) < 1e-9, (
        f"V={V}: expected the loss of uniform guesses, {expected:.6f}, got {got:.6f}"
        + (f": that is {hint}" if hint else ""))


# %% [markdown]
# ## Part 3: the learning rate of each step (4 points)
#
# BERT trains with a linear warm-up, then a linear decay to zero. For a run of `total_steps` updates
# (update 0 is the first), `peak_lr`, and `warmup_fraction` of the run warming up:
#
# - the warm-up lasts `W = round(warmup_fraction * total_steps)` updates (Python's `round`), **at least
#   one**;
# - update `step < W` gets `peak_lr * (step + 1) / W`: the first update already moves the weights, and
#   update `W - 1` is at the peak;
# - update `step >= W` gets `peak_lr * (total_steps - step) / (total_steps - W)`: it falls linearly from
#   the peak and would reach **zero** at update `total_steps` (one past the last; if `W == total_steps`
#   there is no decay).
#
# Return the learning rate of update `step`, a float, for `0 <= step < total_steps`.


# %% solution schedule
def learning_rate(step, total_steps, peak_lr, warmup_fraction):
    """The learning rate of update `step` (0 = the first) of a total_steps run: warm-up, then decay to 0."""
    ### BEGIN SOLUTION
    warmup = max(1, round(warmup_fraction * total_steps))  # whole updates, at least one
    if step < warmup:
        return peak_lr * (step + 1) / warmup  # update warmup - 1 is at the peak
    return peak_lr * (total_steps - step) / max(1, total_steps - warmup)  # zero at update total_steps
    ### END SOLUTION


# %% tests test_schedule points=4
def _updates(k):
    return f"{k} update" if k == 1 else f"{k} updates"  # two whole messages: each is translated


def _schedule_variants(total, peak, fraction):
    """The schedules the common mistakes give, computed (nothing is typed in): {why: [lr of each update]}."""
    def linear(W, start=0, floor=0.0, decay_over=None):
        return [peak * (s + 1 - start) / W if s < W else
                peak * (floor + (1 - floor) * (total - s) / max(1, (decay_over or total - W))) for s in range(total)]
    W = max(1, round(fraction * total))
    variants = {}
    if round(fraction * total) == 0:  # first: with W = 0 the decay is over the whole run too
        variants[f"no warm-up at all: round({fraction} x {total}) is 0, and the warm-up lasts at least one "
                 "update"] = [peak * (total - s) / total for s in range(total)]
    variants.update({
        "the warm-up starts at 0 (step / W): update step gets (step + 1) / W of the peak, so the first update "
        "already moves the weights": linear(W, start=1),
        f"a warm-up of {_updates(max(1, int(fraction * total)))}, {fraction} x {total} rounded down: W is "
        f"round({fraction} x {total}) = {W}": linear(max(1, int(fraction * total))),
        "a decay to 10% of the peak: it ends at zero (at update total_steps)": linear(W, floor=0.1),
        "a decay over the whole run, (total_steps - step) / total_steps: it is over the updates after the "
        "warm-up, (total_steps - step) / (total_steps - W)": linear(W, decay_over=total),
    })
    return variants


def _check_schedule(total, peak, fraction):
    expected = bertlib.training.loop.learning_rates(peak, total, fraction)  # bertlib: the oracle
    W = bertlib.training.loop.warmup_steps(total, fraction)
    with bertlib_unavailable(bertlib.training.loop.learning_rates, bertlib.training.loop.linear_schedule,
                             bertlib.training.loop.warmup_steps, bertlib.training.loop.make_scheduler):
        got = [learning_rate(step, total, peak, fraction) for step in range(total)]
    for step, g in enumerate(got):
        assert isinstance(g, (int, float)) or (isinstance(g, torch.Tensor) and g.numel() == 1), (
            f"update {step}: expected a number, got {type(g).__name__}")
    got = [float(g) for g in got]
    bad = [s for s in range(total) if abs(got[s] - expected[s]) > 1e-9 * peak]
    if bad:
        hint = next((why for why, v in _schedule_variants(total, peak, fraction).items()
                     if all(abs(a - b) <= 1e-9 * peak for a, b in zip(v, got))), None)
        s = bad[0]
        assert False, (
            f"total_steps={total}, peak_lr={peak}, warmup_fraction={fraction} (a warm-up of W = {_updates(W)}): "
            f"update {s} should get {expected[s]:.6g}, got {got[s]:.6g}" + (f". That is {hint}" if hint else ""))


_check_schedule(total=20, peak=1e-3, fraction=0.25)  # W = 5
_check_schedule(total=30, peak=5e-4, fraction=0.06)  # 1.8 updates: W = 2
_check_schedule(total=12, peak=0.1, fraction=0.0)  # no warm-up asked for: W = 1


# %% [markdown]
# ## All together: the first step of a run, and its schedule
#
# A freshly initialised tiny BERT guesses at random: your loss of its first batch is close to your
# expected initial loss (not equal to it: its scores are small, not exactly equal). Then the learning
# rate of each update of a 40-step run, a bar per update.


# %%
torch.manual_seed(0)
cfg = bertlib.BertConfig(vocab_size=1000, hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
                         intermediate_size=64)
model = bertlib.BertForPreTraining(cfg).eval()
gen = torch.Generator().manual_seed(0)
input_ids = torch.randint(5, 1000, (8, 16), generator=gen)  # (B, T)
labels = torch.where(torch.rand(8, 16, generator=gen) < 0.15, input_ids, IGNORE_INDEX)
next_sentence_label = torch.randint(2, (8,), generator=gen)
with torch.no_grad():
    out = model(input_ids)  # no labels: the model returns its logits, and the loss is yours
    first = pretraining_loss(out.prediction_logits, labels, out.seq_relationship_logits, next_sentence_label)
print(f"first loss {first.item():.3f}, expected about {expected_initial_loss(cfg.vocab_size):.3f}")
for step in range(40):
    lr = learning_rate(step, 40, 1e-3, 0.1)
    print(f"update {step:2d}  {lr:.6f}  " + "#" * round(50 * lr / 1e-3))


# %% [markdown]
# ## Part 4, written: reading the first loss (2 points, graded by hand)
#
# Part 2 computes the loss an untrained model should show before its first step. Explain where that number
# comes from, and what a first loss far above it (say 50) would tell you about your run.
#
# Write your answer in the box below, in a few sentences of your own (markdown and `$formulas$` work).
# It is graded by hand, not by the grader: your instructor's score and comment appear on your feedback
# page.


# %% [markdown] written explain_initial_loss points=2
# ### BEGIN SOLUTION
# **Rubric (2 points; the grader's, never released).**
# - 1 point: an untrained model guesses about uniformly: $\ln V$ for each masked position (uniform over the
#   $V$ pieces) plus $\ln 2$ for NSP (a coin flip), so about $\ln V + \ln 2$.
# - 1 point: a first loss far above it points at a bug, not at a hard corpus: the labels scored at the
#   wrong positions or against the wrong ids, logits over another vocabulary, a loss summed instead of
#   averaged.
# - Half a point for the formula without the reason (uniform guessing), or "something is wrong" without
#   where to look.
#
# **A full answer.** With random weights the logits are nearly equal, so each masked position costs about
# $\ln V$ and the NSP pair $\ln 2$. A loss of 50 means the model is confidently wrong before learning
# anything: look at the labels (positions, ids, `-100`) and the logits' vocabulary, or at a sum where a mean
# belongs.
# ### END SOLUTION
