"""Hidden tests of assignment 7 (the MLM loss, the tied output head, the top-k guesses at [MASK]), run by the
grader outside the student's kernel.

Each function grades the graded cell of the same name: it calls the student's functions through
``student`` (their kernel, sandboxed), on the visible tests' inputs and on new ones, and checks the data
that comes back against bertlib, here. See bertgrader/checks.py.
"""
import math

import torch
import torch.nn.functional as F

import bertlib
from inputs import mlm_random_head as _random_head  # inputs.py, beside the notebook: the visible tests' inputs too
from bertgrader.kernel import wire
from bertgrader.checks import case, check, kind_of, same_gradients, tensor

# While the notebook is graded its kernel has these as stubs: bertlib's MLM loss, head and models.
SWITCHED_OFF = [
    "bertlib.heads.mlm_loss", "bertlib.heads.BertForMaskedLM", "bertlib.heads.BertForPreTraining",
    "bertlib.heads.BertLMPredictionHead", "bertlib.heads.BertPredictionHeadTransform",
    "bertlib.heads.BertOnlyMLMHead", "bertlib.heads.BertPreTrainingHeads",
]

MASK = 103


# ------------------------------------------------------------------------------------------------ part 1
def _loss(student, logits, labels):
    got = tensor(student.masked_lm_loss(logits, labels), "the loss")
    check(got.dim() == 0, f"expected a scalar tensor, got a tensor of shape {tuple(got.shape)}")
    check(got.is_floating_point(), f"expected a floating-point loss, got {got.dtype}")
    return got


def _gradient(student, logits, labels):
    """d loss / d logits of the student's own function: one backward pass in their kernel from a cotangent of 1
    (the loss is a scalar; Remote.gradients). None where no gradient reaches the logits."""
    got = student.masked_lm_loss.gradients(torch.ones((), dtype=logits.dtype), logits, labels)
    return got["grads"].get("0") if got["connected"] else None


def _check_gradient(student, logits, labels):
    reference = logits.clone().requires_grad_()
    bertlib.heads.mlm_loss(reference, labels).backward()
    got = _gradient(student, logits, labels)
    check(got is not None and got.abs().max().item() > 0,
          "your loss has no gradient with respect to the logits: it cannot train a model. Compute it with torch "
          "operations on the logits (no .item(), .detach() or torch.tensor(...) of a number)")
    check(got.shape == logits.shape, f"the gradient of your loss has shape {tuple(got.shape)}, not the logits' "
                                     f"{tuple(logits.shape)}")
    leak = got[labels == -100].abs().max().item() if (labels == -100).any() else 0.0
    check(leak == 0, f"your loss changes with the logits at positions labelled -100 (gradient up to {leak:.3g} "
                     "there); a position that is not predicted must not count at all")
    check(torch.allclose(got, reference.grad, atol=1e-5),
          "the gradient of your loss differs from that of the mean cross-entropy over the labelled positions")


def test_mlm_loss(student):
    logits = torch.zeros(1, 4, 5)  # (B=1, T=4, V=5)
    logits[0, 0, 3] = logits[0, 2, 3] = 20.0
    labels = torch.tensor([[-100, 2, -100, 4]])  # positions 1 and 3 are predicted
    with case("on the visible test's case worked by hand (uniform scores at the 2 labelled positions of 4)"):
        got = float(_loss(student, logits, labels))
        hints = {
            0.8047: "the mean over all 4 positions with the 2 ignored ones counted as 0: divide by the number "
                    "of labelled positions, not by B*T",
            10.8047: "the mean over all 4 positions, the ignored ones scored against word 0: a mean-reduced loss "
                     "times a mask is still the mean over every position (the mask multiplies a scalar)",
            20.0: "each label scored by the previous position's logits: that is GPT's shift; in MLM position i "
                  "predicts its own token",
            3.2189: "the sum over the labelled positions: BERT takes their mean",
        }
        hint = next((h for v, h in hints.items() if abs(got - v) < 1e-3), "")
        check(abs(got - math.log(5)) < 1e-4,
              f"expected log 5 = {math.log(5):.4f}, the mean over the 2 labelled positions; got {got:.4f}"
              + (f". That is {hint}." if hint else ""))

    gen = torch.Generator().manual_seed(0)
    logits = torch.randn(2, 6, 11, generator=gen)  # (B=2, T=6, V=11)
    labels = torch.full((2, 6), -100)
    labels[0, 1], labels[0, 4], labels[1, 2] = 3, 7, 0  # 0 is a word id like any other
    with case("on the visible test's 2 x 6 batch with 3 labelled positions (one of them word 0)"):
        got = _loss(student, logits, labels).item()
        log_p = logits.log_softmax(dim=-1)  # (B, T, V)
        expected = -(log_p[0, 1, 3] + log_p[0, 4, 7] + log_p[1, 2, 0]).item() / 3
        _check_gradient(student, logits, labels)
        check(abs(got - expected) < 1e-5, f"3 labelled positions: expected the mean of their -log p(label) = "
                                          f"{expected:.5f}, got {got:.5f}")

    gen = torch.Generator().manual_seed(606)
    # (2, 9, 17) twice: one shape, new content (nothing may be kept from an earlier call)
    for B, T, V in [(1, 1, 3), (2, 9, 17), (4, 16, 50), (3, 64, 1000), (2, 9, 17)]:
        logits = torch.randn(B, T, V, generator=gen) * 3
        labels = torch.randint(V, (B, T), generator=gen)
        skipped = torch.rand(B, T, generator=gen) > 0.15
        skipped.view(-1)[0] = False  # at least one labelled position
        labels[skipped] = -100
        expected = bertlib.heads.mlm_loss(logits, labels)
        with case(f"with (B, T, V) = {(B, T, V)} and {int((labels != -100).sum())} labelled positions"):
            got = _loss(student, logits, labels).float()
            check(torch.allclose(got, expected, atol=1e-5, rtol=1e-5),
                  f"expected {expected.item():.5f} (the mean cross-entropy over the labelled positions), "
                  f"got {got.item():.5f}")
            if B * T > 1:
                _check_gradient(student, logits, labels)

    # Logits and labels as a caller's slices deliver them: non-contiguous views (a model's logits with the [CLS]
    # column dropped, say). reshape flattens any layout; view cannot.
    logits = torch.randn(3, 7, 20, generator=gen) * 3
    labels = torch.randint(20, (3, 7), generator=gen)
    labels[torch.rand(3, 7, generator=gen) > 0.4] = -100
    labels[0, 2] = 11
    expected = bertlib.heads.mlm_loss(logits, labels)
    with case("with (B, T, V) = (3, 7, 20) logits and labels that are non-contiguous views"):
        got = tensor(student.masked_lm_loss(wire.Strided(logits), wire.Strided(labels)), "the loss")
        check(torch.allclose(got.float(), expected, atol=1e-5, rtol=1e-5),
              f"expected {expected.item():.5f} (the mean cross-entropy over the labelled positions), got {got.item():.5f}")

    # float64 logits: the loss is computed, and returned, in float64 (bertlib's is)
    logits = torch.randn(3, 8, 40, generator=gen, dtype=torch.float64) * 3
    labels = torch.randint(40, (3, 8), generator=gen)
    labels[torch.rand(3, 8, generator=gen) > 0.4] = -100
    labels[0, 0] = 5
    expected = bertlib.heads.mlm_loss(logits, labels)
    with case("with float64 logits (3 x 8, V=40)"):
        got = _loss(student, logits, labels)
        check(got.dtype == torch.float64,
              f"with float64 logits your loss is {got.dtype}: compute it in the logits' dtype (a cast to float32 "
              "loses the precision the caller asked for)")
        check(torch.allclose(got, expected, atol=1e-12, rtol=1e-12),
              f"expected {expected.item():.12f}, got {got.item():.12f}: compute in float64 throughout")

    # A large logit gap (1e4): the model is confidently wrong at the labelled positions. The loss is large and
    # finite (about 1e4), as cross_entropy's log-sum-exp gives it; log(softmax(x)) is log(0) = -inf there.
    logits = torch.randn(2, 6, 9, generator=gen)
    labels = torch.full((2, 6), -100)
    labels[0, 1], labels[1, 3], labels[1, 5] = 2, 7, 0
    logits[0, 1, 4] = logits[1, 3, 1] = logits[1, 5, 8] = 1e4
    expected = bertlib.heads.mlm_loss(logits, labels)
    with case("with logits where another word outscores the label by 1e4 (a confidently wrong model)"):
        got = _loss(student, logits, labels)
        check(bool(torch.isfinite(got)),
              f"your loss is {got.item()}, expected about {expected.item():.1f}: softmax underflows to 0 at such a "
              "gap and log(0) = -inf; compute -log p with log_softmax or F.cross_entropy (log-sum-exp), never "
              "log(softmax(x))")
        check(torch.allclose(got.double(), expected.double(), rtol=1e-5),
              f"expected {expected.item():.4f} (the mean cross-entropy over the labelled positions), got {got.item():.4f}")


# ------------------------------------------------------------------------------------------------ part 2


def _head_logits(student, head, emb, x, cfg):
    t = head.transform
    H, V = cfg.hidden_size, cfg.vocab_size
    got = student.mlm_head_logits(x, wire.Module.of(t.dense, H, H), wire.Module.of(t.LayerNorm, H, eps=cfg.layer_norm_eps),
                                  wire.Module.of(emb, V, H), head.bias.detach())
    return tensor(got, "the logits")


def _head_args(head, emb, x, cfg):
    t = head.transform
    H, V = cfg.hidden_size, cfg.vocab_size
    return (x, wire.Module.of(t.dense, H, H), wire.Module.of(t.LayerNorm, H, eps=cfg.layer_norm_eps),
            wire.Module.of(emb, V, H), head.bias.detach())


def _reference_head(sequence_output, dense, layer_norm, word_embeddings, bias):
    return layer_norm(F.gelu(dense(sequence_output))) @ word_embeddings.weight.T + bias  # (B, T, V)


def _check_head(got, head, emb, x, atol=1e-4, eps_hint=False, earlier=None):
    t = head.transform
    with torch.no_grad():
        expected = head(x)  # (B, T, V)
        E, b = emb.weight, head.bias
        h = F.gelu(t.dense(x))
        wrong = {
            "without the per-word bias (BERT adds one learned number per word)": t.LayerNorm(h) @ E.T,
            "without the transform (dense, GELU and LayerNorm come before the projection)": x @ E.T + b,
            "with the tanh approximation of GELU (BERT uses the exact erf form, F.gelu's default)":
                t.LayerNorm(F.gelu(t.dense(x), approximate="tanh")) @ E.T + b,
            "with LayerNorm before GELU (the order is dense, GELU, LayerNorm)": F.gelu(t.LayerNorm(t.dense(x))) @ E.T + b,
            "with a LayerNorm of eps 1e-5 instead of the layer_norm you are given (its eps is "
            f"{t.LayerNorm.eps}): apply layer_norm itself":
                F.layer_norm(h, h.shape[-1:], t.LayerNorm.weight, t.LayerNorm.bias) @ E.T + b,
        }
        if earlier is not None:  # (E, bias) of an earlier call of the same shape
            wrong["with the embedding table or the bias of an earlier call: build the projection from this call's "
                  "word_embeddings and bias (keep nothing between calls)"] = t.LayerNorm(h) @ earlier[0].T + earlier[1]
            wrong["with the embedding table of an earlier call: keep nothing between calls"] = t.LayerNorm(h) @ earlier[0].T + b
    check(tuple(got.shape) == tuple(expected.shape),
          f"expected logits of shape (B, T, V) = {tuple(expected.shape)}, got {tuple(got.shape)}")
    diff = (got.float() - expected).abs().max().item()
    hint = next((why for why, w in wrong.items() if torch.allclose(got.float(), w, atol=atol)), None)
    check(diff < atol, f"your logits differ from BERT's head by up to {diff:.3g}"
                       + (f"; they match the head {hint}" if hint else ""))


def test_mlm_head(student):
    # (12, 8) twice, other weights: nothing built on one call may be reused on the next
    first = None
    for V, H, seed in [(12, 8, 1), (7, 4, 61), (50, 16, 62), (300, 32, 63), (12, 8, 65)]:
        head, emb, x, cfg = _random_head(V, H, seed)
        with case(f"with V={V}, H={H}" + (" (the visible test's head)" if seed == 1 else
                                         ", other weights than an earlier call's" if seed == 65 else "")):
            _check_head(_head_logits(student, head, emb, x, cfg), head, emb, x,
                        earlier=first if seed == 65 else None)
        if seed == 1:
            first = (emb.weight.detach().clone(), head.bias.detach().clone())
    head, emb, x, cfg = _random_head(40, 16, 64, eps=1.0)
    with case("with V=40, H=16 and a layer_norm whose eps is 1.0"):
        _check_head(_head_logits(student, head, emb, x, cfg), head, emb, x)
    # The head trains: one random cotangent backpropagated through your function and through the reference; the
    # gradients of the hidden states, dense, layer_norm, the tied embedding table and the bias must agree.
    for V, H, seed in [(12, 8, 1), (30, 16, 66)]:
        head, emb, x, cfg = _random_head(V, H, seed)
        with case(f"with V={V}, H={H}, the gradients of a random cotangent"):
            same_gradients(student.mlm_head_logits, _reference_head, *_head_args(head, emb, x, cfg), seed=seed)


# ------------------------------------------------------------------------------------------------ part 3
def _top_k(student, logits, input_ids, mask_token_id, k):
    got = student.top_k_at_masks(logits, input_ids, mask_token_id, k)
    check(isinstance(got, (tuple, list)) and len(got) == 3, "return (positions, token_ids, probs)")
    positions, token_ids, probs = got
    check(isinstance(positions, torch.Tensor),
          f"positions must be an (N, 2) long tensor of [row, column], got {kind_of(positions)}")
    check(positions.dtype == torch.long, f"positions must be a long tensor (torch.int64), got {positions.dtype}")
    token_ids, probs = tensor(token_ids, "token_ids"), tensor(probs, "probs")
    check(not token_ids.is_floating_point() and not token_ids.is_complex(),
          f"token_ids are word ids: an integer tensor, got {token_ids.dtype}")
    return positions, token_ids, probs


def _check_top_k(got, logits, input_ids, mask_token_id, k):
    positions, token_ids, probs = got
    where = (input_ids == mask_token_id).nonzero()  # (N, 2), reading order
    N = len(where)
    check(positions.shape == where.shape and torch.equal(positions, where),
          f"the [MASK]s (id {mask_token_id}) are at {where.tolist() if N <= 6 else f'{N} positions'} in reading order; "
          f"got {positions.tolist() if positions.numel() <= 12 else f'{len(positions)} positions'}"
          + (f" (they look for id {MASK}, not the mask_token_id argument)" if mask_token_id != MASK and
             positions.shape == (input_ids == MASK).nonzero().shape and torch.equal(positions, (input_ids == MASK).nonzero())
             else ""))
    check(tuple(token_ids.shape) == (N, k) and tuple(probs.shape) == (N, k),
          f"expected token_ids and probs of shape (N, k) = {(N, k)}, got {tuple(token_ids.shape)} and "
          f"{tuple(probs.shape)}")
    p = logits[where[:, 0], where[:, 1]].softmax(dim=-1)  # (N, V): over the vocabulary
    expected = p.topk(k, dim=-1)
    for n, (row, col) in enumerate(where.tolist()):
        ids = token_ids[n].long()
        check(bool(((ids >= 0) & (ids < logits.shape[-1])).all()),
              f"[MASK] at ({row}, {col}): token_ids {ids.tolist()} are not word ids in [0, V = {logits.shape[-1]})")
        check(torch.allclose(probs[n].double(), p[n][ids].double(), atol=1e-5),
              f"[MASK] at ({row}, {col}): probs {[round(v, 4) for v in probs[n].tolist()]} are not the probabilities "
              f"of token_ids {ids.tolist()} under a softmax over the vocabulary at that position"
              + (" (a softmax over these k words only is not it: the softmax is over all V words)"
                 if k < logits.shape[-1] and torch.allclose(probs[n].float(), logits[row, col][ids].softmax(-1), atol=1e-5)
                 else ""))
        check(torch.equal(ids, expected.indices[n]),
              f"[MASK] at ({row}, {col}): expected the {k} most likely words {expected.indices[n].tolist()} (most "
              f"likely first), got {ids.tolist()}")


def test_top_k(student):
    input_ids = torch.tensor([[101, 7, MASK, 102],
                              [MASK, 9, 8, MASK]])  # (B=2, T=4): three [MASK]s
    gen = torch.Generator().manual_seed(3)
    logits = torch.randn(2, 4, 6, generator=gen) * 2  # (B, T, V=6)
    with case("on the visible test's 2 x 4 batch with three [MASK]s and k = V = 6"):
        got = _top_k(student, logits, input_ids, MASK, 6)
        sums = got[2].sum(dim=-1)
        if got[2].shape == (3, 6):
            check(torch.allclose(sums.double(), torch.ones(3, dtype=torch.double), atol=1e-5),
                  f"with k = V = 6 each [MASK]'s probabilities must sum to 1 over the vocabulary; they sum to "
                  f"{[round(s, 3) for s in sums.tolist()]} (a softmax over the last axis, the vocabulary, not over "
                  "positions)")
        _check_top_k(got, logits, input_ids, MASK, 6)
    with case("on the visible test's batch with k=2"):
        _check_top_k(_top_k(student, logits, input_ids, MASK, 2), logits, input_ids, MASK, 2)
    # the visible test's shapes again, with other [MASK]s and scores (the caller's tensors checked after the call)
    input_ids = torch.tensor([[MASK, 7, 8, MASK], [5, MASK, 9, 6]])
    logits = torch.randn(2, 4, 6, generator=gen) * 2
    with case("with another 2 x 4 batch (V=6, k=3)"):
        _check_top_k(_top_k(student, logits, input_ids, MASK, 3), logits, input_ids, MASK, 3)

    gen = torch.Generator().manual_seed(66)
    for B, T, V, k in [(1, 5, 10, 1), (3, 12, 40, 5), (4, 30, 500, 10), (2, 9, 300, 3)]:
        input_ids = torch.randint(200, 260, (B, T), generator=gen)
        input_ids[torch.rand(B, T, generator=gen) < 0.2] = MASK
        input_ids[0, 1] = MASK
        if V == 300:  # the scores of a real (small, random) masked language model
            torch.manual_seed(66)
            cfg = bertlib.BertConfig(vocab_size=V, hidden_size=16, num_hidden_layers=1, num_attention_heads=2,
                                     intermediate_size=32)
            with torch.no_grad():
                logits = bertlib.BertForMaskedLM(cfg).eval()(input_ids).logits * 50  # (B, T, V)
        else:
            logits = torch.randn(B, T, V, generator=gen) * 3
        with case(f"with a {B} x {T} batch, V={V} and k={k}"):
            _check_top_k(_top_k(student, logits, input_ids, MASK, k), logits, input_ids, MASK, k)
    # Another vocabulary's [MASK] id (4), with BERT's 103 an ordinary word here: the argument decides.
    input_ids = torch.randint(5, 120, (3, 10), generator=gen)
    input_ids[:, 2] = MASK
    input_ids[torch.rand(3, 10, generator=gen) < 0.25] = 4
    input_ids[1, 7] = 4
    logits = torch.randn(3, 10, 120, generator=gen) * 3
    with case(f"with mask_token_id=4 (and {MASK} an ordinary word), a 3 x 10 batch, V=120 and k=4"):
        _check_top_k(_top_k(student, logits, input_ids, 4, 4), logits, input_ids, 4, 4)
    # No [MASK] at all (N = 0): still an (N, 2) long tensor, and (N, k) token_ids and probs.
    input_ids = torch.randint(5, MASK, (2, 7), generator=gen)  # ids below 103: no [MASK]
    logits = torch.randn(2, 7, 120, generator=gen) * 3
    with case("with a 2 x 7 batch without any [MASK] (N = 0), V=120 and k=3"):
        _check_top_k(_top_k(student, logits, input_ids, MASK, 3), logits, input_ids, MASK, 3)
