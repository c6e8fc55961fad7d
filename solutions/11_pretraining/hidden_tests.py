"""Hidden tests of assignment 11 (the pretraining loss, the loss before the first step, the learning-rate
schedule), run by the grader outside the student's kernel.

Each function grades the graded cell of the same name: it calls the student's functions through
``student`` (their kernel, sandboxed), on the visible tests' inputs and on new ones, and checks the data
that comes back against bertlib, here: ``bertlib.heads.mlm_loss`` / ``nsp_loss`` for the loss and its
gradient, the loss of uniform scores for the initial loss, ``bertlib.training.loop.learning_rates`` for the
schedule. See bertgrader/checks.py.
"""
import math

import torch
import torch.nn.functional as F

import bertlib
import bertlib.training.loop as loop
from bertgrader.checks import case, check, check_like, kind_of, tensor
from bertgrader.kernel import wire

# While the notebook is graded its kernel has these as stubs: bertlib's two losses and its schedule.
SWITCHED_OFF = [
    "bertlib.heads.mlm_loss", "bertlib.heads.nsp_loss",
    "bertlib.training.loop.linear_schedule", "bertlib.training.loop.warmup_steps",
    "bertlib.training.loop.make_scheduler", "bertlib.training.loop.learning_rates",
]

IGNORE_INDEX = -100


# ------------------------------------------------------------------------------------------------ part 1
def _oracle(prediction_logits, labels, seq_relationship_logits, next_sentence_label, n=None):
    return bertlib.heads.mlm_loss(prediction_logits, labels, n) + bertlib.heads.nsp_loss(
        seq_relationship_logits, next_sentence_label)


def _named_wrong(prediction_logits, labels, seq_relationship_logits, next_sentence_label, n=None):
    """What the common mistakes compute on these inputs: {why: loss} (the visible test's hints)."""
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


def _close(got: float, expected: float) -> bool:
    return abs(got - expected) <= 1e-6 + 1e-6 * abs(expected)


def _loss(student, args, n=None):
    """The student's loss on ``args`` (logits, labels, NSP logits, NSP labels), checked against bertlib's."""
    got = student.pretraining_loss(*args) if n is None else student.pretraining_loss(*args, n)
    got = tensor(got, "the loss")
    check(got.dim() == 0, f"expected a scalar tensor, got a tensor of shape {tuple(got.shape)}")
    check(got.is_floating_point(), f"expected a floating-point loss, got {got.dtype}")
    expected = _oracle(*args, n).item()
    labels = args[1]
    if torch.isnan(got):
        check(False, f"your loss is NaN, expected {expected:.6f}"
              + ("; a slice without any label adds 0 to the MLM term (its sum, 0, divided by num_items_in_batch), "
                 "not 0/0" if n is not None and not (labels != IGNORE_INDEX).any() else ""))
    value = got.item()
    hint = next((why for why, w in _named_wrong(*args, n).items()
                 if not _close(w.item(), expected) and abs(w.item() - value) <= 1e-5 * max(1.0, abs(value))), None)
    check(_close(value, expected), f"expected {expected:.6f}, got {value:.6f}" + (f": that is {hint}" if hint else ""))


def _gradient(student, args, n=None):
    """The gradients of the student's loss with respect to both logits, one backward pass in their kernel from
    a cotangent of 1 (the loss is a scalar; Remote.gradients), against bertlib's (autograd, here)."""
    logits, labels, nsp_logits, nsp_labels = args
    one = torch.ones((), dtype=logits.dtype)
    got = student.pretraining_loss.gradients(one, *args) if n is None else student.pretraining_loss.gradients(one, *args, n)
    grads = got["grads"] if got["connected"] else {}
    got_logits, got_nsp = grads.get("0"), grads.get("2")
    check(got_logits is not None or not (labels != IGNORE_INDEX).any(),
          "your loss has no gradient with respect to the vocabulary logits: it cannot train a model. Compute it "
          "with torch operations on the logits (no .item(), .detach() or torch.tensor(...) of a number)")
    check(got_nsp is not None, "your loss has no gradient with respect to the NSP logits: the NSP classifier would "
                               "not learn")
    got_logits = torch.zeros_like(logits) if got_logits is None else got_logits
    reference = [logits.clone().requires_grad_(), nsp_logits.clone().requires_grad_()]
    _oracle(reference[0], labels, reference[1], nsp_labels, n).backward()
    check(got_logits.shape == logits.shape, f"the gradient of your loss has shape {tuple(got_logits.shape)}, not "
                                            f"the logits' {tuple(logits.shape)}")
    ignored = labels == IGNORE_INDEX
    leak = got_logits[ignored].abs().max().item() if ignored.any() else 0.0
    check(leak == 0, f"your loss changes with the logits at positions labelled -100 (gradient up to {leak:.3g} "
                     "there); a position that is not predicted must not count at all")
    check(got_logits.abs().max().item() > 0 or not (~ignored).any(),
          "your loss has no gradient with respect to the vocabulary logits: it cannot train a model. Compute it "
          "with torch operations on the logits (no .item(), .detach() or torch.tensor(...) of a number)")
    check(got_nsp.abs().max().item() > 0, "your loss has no gradient with respect to the NSP logits: the NSP "
                                          "classifier would not learn")
    check(torch.allclose(got_logits.double(), reference[0].grad.double(), atol=1e-6, rtol=1e-5)
          and torch.allclose(got_nsp.double(), reference[1].grad.double(), atol=1e-6, rtol=1e-5),
          "the gradient of your loss differs from the gradient of MLM + NSP")


def _visible_batch():
    gen = torch.Generator().manual_seed(0)
    logits = torch.randn(4, 9, 11, generator=gen) * 2  # (B, T, V)
    labels = torch.randint(11, (4, 9), generator=gen)
    labels[torch.rand(4, 9, generator=gen) > 0.3] = -100
    labels[2] = -100
    labels[0, 0] = 0
    nsp_logits = torch.randn(4, 2, generator=gen)
    return logits, labels, nsp_logits, torch.tensor([0, 1, 1, 0])


def _batch(gen, B, T, V, p=0.15, scale=3.0, dtype=torch.float32, empty_rows=()):
    """A random batch: (B, T, V) logits, about p of the positions labelled (at least one per row, except the
    rows in empty_rows, which have none), (B, 2) NSP logits and (B,) NSP labels."""
    logits = (torch.randn(B, T, V, generator=gen) * scale).to(dtype)
    labels = torch.randint(V, (B, T), generator=gen)
    labels[torch.rand(B, T, generator=gen) > p] = IGNORE_INDEX
    first = torch.randint(T, (B,), generator=gen)
    labels[torch.arange(B), first] = torch.randint(V, (B,), generator=gen)
    for b in empty_rows:
        labels[b] = IGNORE_INDEX
    nsp_logits = (torch.randn(B, 2, generator=gen) * scale).to(dtype)
    return logits, labels, nsp_logits, torch.randint(2, (B,), generator=gen)


def test_loss(student):
    # The visible test's inputs.
    logits = torch.zeros(2, 2, 5)
    logits[0, 1, 3] = logits[1, 0, 3] = 20.0
    worked = (logits, torch.tensor([[4, -100], [-100, 2]]), torch.tensor([[2.0, -2.0], [-1.0, 1.0]]),
              torch.tensor([0, 1]))
    with case("on the visible test's worked case (MLM ln 5 over 2 labelled positions)"):
        _loss(student, worked)
    visible = _visible_batch()
    logits, labels, nsp_logits, nsp_labels = visible
    with case("on the visible test's 4 x 9 batch (row 2 without labels)"):
        _loss(student, visible)
        _gradient(student, visible)
    selected = labels != IGNORE_INDEX
    n = int(selected.sum())
    with case("on the visible test's (N, V) logits at the labelled positions only"):
        _loss(student, (logits[selected], labels[selected], nsp_logits, nsp_labels))
    for rows, where in [(slice(0, 2), "rows 0-1"), (slice(2, 4), "rows 2-3"), (slice(2, 3), "row 2, without labels")]:
        with case(f"on the visible test's slice of {where}, num_items_in_batch={n}"):
            _loss(student, (logits[rows], labels[rows], nsp_logits[rows], nsp_labels[rows]), n)
    with case("on the visible test's batch with num_items_in_batch=7.5"):
        _loss(student, visible, 7.5)

    # New shapes, seeds and -100 patterns.
    gen = torch.Generator().manual_seed(1111)
    for B, T, V, empty in [(1, 1, 3, ()), (2, 16, 50, ()), (3, 16, 1000, (1,)), (2, 3, 30522, (0,))]:
        args = _batch(gen, B, T, V, empty_rows=empty)
        with case(f"with (B, T, V) = {(B, T, V)}, {int((args[1] != -100).sum())} labelled positions"
                  + (f", rows {list(empty)} without labels" if empty else "")):
            _loss(student, args)
            if 10**4 < B * T * V < 10**5:  # the gradient travels back as big as the logits
                _gradient(student, args)
    args = _batch(gen, 5, 20, 200, p=0.5)
    labels = args[1]
    chosen = labels != IGNORE_INDEX
    with case(f"with (N, V) = ({int(chosen.sum())}, 200) logits at the labelled positions only"):
        _loss(student, (args[0][chosen], labels[chosen], args[2], args[3]))
    args = _batch(gen, 3, 10, 40, dtype=torch.float64)
    with case("with float64 logits, (B, T, V) = (3, 10, 40)"):
        _loss(student, args)
        got = check_like(student.pretraining_loss(*args), _oracle(*args), "the loss")  # a float64 loss
        check(abs(got.item() - _oracle(*args).item()) < 1e-12,
              f"expected {_oracle(*args).item():.14f}, got {got.item():.14f}: compute in the logits' dtype")
    # The visible test's shape again, other numbers: nothing kept from an earlier call
    args = _batch(gen, 4, 9, 11, p=0.3)
    with case("with another 4 x 9 batch, V=11"):
        _loss(student, args)
    # Large logits (a gap of 1e4 between the label and the best word): the loss is large and finite, as the
    # log-sum-exp of cross_entropy gives it; exp(logits) overflows to inf in float32 at logits over 88.
    args = _batch(gen, 2, 6, 9, p=0.5)
    logits, labels = args[0], args[1]
    logits[labels != IGNORE_INDEX] = 0.0
    logits[..., 4] = torch.where(labels == 4, logits[..., 4], torch.tensor(1e4))  # the wrong word scores 1e4
    args = (logits, labels, args[2] * 1e3, args[3])
    with case("with logits where another word outscores the label by 1e4 and NSP logits of about 1e3"):
        got = tensor(student.pretraining_loss(*args), "the loss")
        check(bool(torch.isfinite(got)),
              f"your loss is {got.item()}, expected {_oracle(*args).item():.1f}: exp(x) overflows at such scores; "
              "F.cross_entropy (log-sum-exp, shifted by the largest score) keeps them finite")
        _loss(student, args)
    # Logits and labels as a caller's slices deliver them: non-contiguous views (a model's logits with the
    # [CLS] column dropped, say); flatten with reshape, which copies where it must (view cannot).
    args = _batch(gen, 3, 7, 20, p=0.4)
    with case("with (B, T, V) = (3, 7, 20) logits and labels that are non-contiguous views"):
        got = tensor(student.pretraining_loss(wire.Strided(args[0]), wire.Strided(args[1]), args[2], args[3]),
                     "the loss")
        check(_close(got.item(), _oracle(*args).item()), f"expected {_oracle(*args).item():.6f}, got {got.item():.6f}")
    args = _batch(gen, 4, 8, 30)
    args = (args[0], args[1], args[2], torch.ones(4, dtype=torch.long))
    with case("with every pair NotNext (label 1), (B, T, V) = (4, 8, 30)"):
        _loss(student, args)

    # A batch of 8 pairs cut into slices: micro-batches (each divides by the batch's count) and DDP (each
    # divides by the batch's count over the number of processes, a float).
    logits, labels, nsp_logits, nsp_labels = _batch(gen, 8, 24, 300, empty_rows=(5,))
    n = int((labels != IGNORE_INDEX).sum())
    for rows, where in [(slice(0, 3), "rows 0-2"), (slice(3, 8), "rows 3-7"), (slice(5, 6), "row 5, without labels")]:
        part = (logits[rows], labels[rows], nsp_logits[rows], nsp_labels[rows])
        with case(f"with a micro-batch of {where} of an 8-pair batch, num_items_in_batch={n}"):
            _loss(student, part, n)
            if rows.stop - rows.start > 3:  # rows 3-7: row 5 without labels
                _gradient(student, part, n)
    share = n / 3
    for rows, where in [(slice(0, 2), "0-1"), (slice(2, 4), "2-3")]:
        part = (logits[rows], labels[rows], nsp_logits[rows], nsp_labels[rows])
        with case(f"with process slice {where}, num_items_in_batch={share:.4f} (the count shared by 3 processes)"):
            _loss(student, part, share)


# ------------------------------------------------------------------------------------------------ part 2
def _uniform_loss(V):
    """bertlib's pretraining loss when every score is equal: the model that has learnt nothing."""
    labels = torch.tensor([0, V - 1, V // 2])
    mlm = bertlib.heads.mlm_loss(torch.zeros(3, V, dtype=torch.float64), labels)
    nsp = bertlib.heads.nsp_loss(torch.zeros(2, 2, dtype=torch.float64), torch.tensor([0, 1]))
    return (mlm + nsp).item()


def test_initial(student):
    for V in [2, 5, 30522, 3, 1000, 250002]:
        with case(f"with vocab_size={V}" + (" (a visible case)" if V in (2, 5, 30522) else "")):
            expected = _uniform_loss(V)
            got = student.expected_initial_loss(V)
            check((isinstance(got, (int, float)) and not isinstance(got, bool))
                  or (isinstance(got, torch.Tensor) and got.numel() == 1),
                  f"expected a number, got {kind_of(got)}")
            got = float(got)
            hints = {
                "ln V alone: the NSP coin flip adds ln 2": math.log(V),
                "in base 10: a loss in nats uses the natural logarithm (math.log)": math.log10(V) + math.log10(2),
                "in bits (base 2): a loss in nats uses the natural logarithm (math.log)": math.log2(V) + 1,
                "the MLM term ln V times ln 2: the two terms add": math.log(V) * math.log(2),
            }
            hint = next((why for why, w in hints.items() if abs(w - expected) > 1e-6 and abs(w - got) < 1e-9), None)
            check(abs(got - expected) < 1e-9 * max(1.0, expected),
                  f"expected the loss of uniform guesses, {expected:.6f}, got {got:.6f}"
                  + (f": that is {hint}" if hint else ""))


# ------------------------------------------------------------------------------------------------ part 3
def _updates(k):
    return f"{k} update" if k == 1 else f"{k} updates"  # two whole messages: each is translated


def _variants(total, peak, fraction, steps):
    """The learning rates the common mistakes give at ``steps``: {why: [lr]} (the visible test's hints)."""
    def linear(W, start=0, floor=0.0, decay_over=None):
        return [peak * (s + 1 - start) / W if s < W else
                peak * (floor + (1 - floor) * (total - s) / max(1, (decay_over or total - W))) for s in steps]
    W = max(1, round(fraction * total))
    variants = {}
    if round(fraction * total) == 0:  # first: with W = 0 the decay is over the whole run too
        variants[f"no warm-up at all: round({fraction} x {total}) is 0, and the warm-up lasts at least one "
                 "update"] = [peak * (total - s) / total for s in steps]
    variants.update({
        "the warm-up starts at 0 (step / W): update step gets (step + 1) / W of the peak, so the first update "
        "already moves the weights": linear(W, start=1),
        f"a warm-up of {_updates(max(1, int(fraction * total)))}, {fraction} x {total} rounded down: W is "
        f"round({fraction} x {total}) = {W}": linear(max(1, int(fraction * total))),
        f"a warm-up of {_updates(max(1, math.floor(fraction * total + 0.5)))}, {fraction} x {total} with a half "
        f"rounded up: Python's round takes a half to the even number, W = round({fraction} x {total}) = {W}":
            linear(max(1, math.floor(fraction * total + 0.5))),
        "a decay to 10% of the peak: it ends at zero (at update total_steps)": linear(W, floor=0.1),
        "a decay over the whole run, (total_steps - step) / total_steps: it is over the updates after the "
        "warm-up, (total_steps - step) / (total_steps - W)": linear(W, decay_over=total),
    })
    return variants


def _steps(total, W, every):
    """Every update (the visible cases), or those that tell the schedule's pieces apart: the first two (the
    warm-up starts above 0), the last of the warm-up and the two after it (the peak, then the decay's slope),
    the middle of the decay, and the last update (how far it has fallen). Each piece is linear, so these pin
    it down; every call goes to the student's kernel and back, so a long run is not asked for whole."""
    if every:
        return list(range(total))
    picked = {0, 1, W - 1, W, W + 1, (W + total) // 2, total - 1}
    return sorted(s for s in picked if 0 <= s < total)


def _check_schedule(student, total, peak, fraction, every=False):
    W = loop.warmup_steps(total, fraction)
    everything = loop.learning_rates(peak, total, fraction)  # bertlib: the oracle
    steps = _steps(total, W, every)
    got = []
    values = student.learning_rate.calls([([s, total, peak, fraction], {}) for s in steps])  # one round trip
    for s, value in zip(steps, values):
        check((isinstance(value, (int, float)) and not isinstance(value, bool))
              or (isinstance(value, torch.Tensor) and value.numel() == 1),
              f"update {s}: expected a number, got {kind_of(value)}")
        got.append(float(value))
    expected = [everything[s] for s in steps]
    bad = [i for i in range(len(steps)) if not abs(got[i] - expected[i]) <= 1e-9 * peak]
    if bad:
        hint = next((why for why, v in _variants(total, peak, fraction, steps).items()
                     if all(abs(a - b) <= 1e-9 * peak for a, b in zip(v, got))), None)
        i = bad[0]
        check(False, f"(a warm-up of W = {_updates(W)}) update {steps[i]} should get {expected[i]:.6g}, got "
                     f"{got[i]:.6g}" + (f". That is {hint}" if hint else ""))


def test_schedule(student):
    # (total_steps, peak_lr, warmup_fraction). The last three put warmup_fraction * total_steps exactly on a half
    # (2.5, 4.5, 6.5: binary fractions, so no float error), where Python's round goes to the even number and
    # rounding a half up gives one update more.
    cases = [
        (20, 1e-3, 0.25), (30, 5e-4, 0.06), (12, 0.1, 0.0),  # the visible ones
        (1, 1e-4, 0.1), (10, 1e-4, 0.1), (7, 0.01, 0.3), (16, 1e-3, 1.0), (30, 2e-3, 0.01),
        (45, 1e-3, 0.32), (200, 5e-5, 0.064), (1000, 1e-4, 0.01), (100_000, 1e-4, 0.1), (10_000, 3e-4, 0.0137),
        (10, 1e-3, 0.25), (36, 2e-4, 0.125), (13, 5e-3, 0.5),
    ]
    for total, peak, fraction in cases:
        visible = (total, peak, fraction) in cases[:3]
        with case(f"with total_steps={total}, peak_lr={peak:g}, warmup_fraction={fraction}"
                  + (" (a visible case)" if visible else "")):
            _check_schedule(student, total, peak, fraction, every=visible)
