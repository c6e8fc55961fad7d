"""Hidden tests of assignment 6 (the additive padding mask, masked softmax, the causal mask), run by the
grader outside the student's kernel.

Each function grades the graded cell of the same name: it calls the student's functions through
``student`` (their kernel, sandboxed), on the visible tests' inputs and on new ones, and checks the data
that comes back against bertlib, here. See bertgrader/checks.py.
"""

import torch

import bertlib
from bertgrader.checks import case, check, tensor

# While the notebook is graded its kernel has these as stubs: bertlib's masks and attention.
SWITCHED_OFF = [
    "bertlib.attention.additive_mask", "bertlib.attention.padding_visibility", "bertlib.attention.causal_visibility",
    "bertlib.attention.build_attention_mask", "bertlib.attention.eager_attention",
    "bertlib.attention.BertSelfAttention",
]

DTYPES = (torch.float32, torch.float64, torch.bfloat16, torch.float16)



def _reference_padding_mask(attention_mask, dtype=torch.float32):
    return bertlib.additive_mask(bertlib.padding_visibility(attention_mask.long()), dtype)  # (B, 1, 1, T)


def _batch(lengths, T):
    return (torch.arange(T)[None] < torch.tensor(lengths)[:, None]).long()  # (B, T)


def _random_batch(gen, B, T):
    lengths = torch.randint(1, T + 1, (B,), generator=gen)
    lengths[0] = T  # one full-length row, as a real padded batch has
    return (torch.arange(T)[None] < lengths[:, None]).long()  # (B, T)


def _left_padded(lengths, T):
    return _batch(lengths, T).flip(1)  # (B, T): the padding first, then the real tokens


def _describe(mask):
    B, T = mask.shape
    m = mask.long()
    left = bool((m[:, 0] < m[:, -1]).any())
    kind = "" if mask.dtype == torch.long else f" ({mask.dtype} mask)"
    return f"a {B} x {T} batch of lengths {m.sum(1).tolist()}" + (", padded on the left" if left else "") + kind


# ------------------------------------------------------------------------------------------------ part 1
def _check_padding(got, mask, dtype):
    got = tensor(got, "the mask")
    B, T = mask.shape
    check(tuple(got.shape) == (B, 1, 1, T),
          f"expected shape (B, 1, 1, T) = {(B, 1, 1, T)}, which broadcasts over heads and queries (padding is "
          f"hidden as a key); got {tuple(got.shape)}")
    check(got.dtype == dtype, f"expected {dtype} (the dtype argument), got {got.dtype}")
    rows, real = got[:, 0, 0], mask.bool()
    check(bool((rows[real] == 0).all()),
          f"real tokens must get 0 (scores unchanged), got {sorted(set(rows[real].float().tolist()))}")
    low = torch.finfo(dtype).min
    pad = sorted(set(rows[~real].double().tolist()))
    check(bool((rows[~real] == low).all()),
          f"padding got {pad}; expected torch.finfo({dtype}).min = {low}"
          + (" (-inf makes a row with nothing visible NaN)" if float("-inf") in pad else "")
          + ("" if dtype == torch.float32 else ": the most negative finite value of the dtype asked for"))
    check(torch.equal(got, _reference_padding_mask(mask.long(), dtype)), "the mask differs from bertlib's")


def test_padding(student):
    pad = student.additive_padding_mask
    with case("on the visible test's mask [[1, 1, 0]] (default dtype)"):
        _check_padding(pad(torch.tensor([[1, 1, 0]])), torch.tensor([[1, 1, 0]]), torch.float32)
    with case("on the visible test's mask [[1, 0]] in float16"):
        _check_padding(pad(torch.tensor([[1, 0]]), torch.float16), torch.tensor([[1, 0]]), torch.float16)
    gen = torch.Generator().manual_seed(501)
    for dtype in DTYPES:
        B, T = int(torch.randint(1, 6, (1,), generator=gen)), int(torch.randint(1, 12, (1,), generator=gen))
        mask = _random_batch(gen, B, T)
        with case(f"with {_describe(mask)} in {dtype}"):
            _check_padding(pad(mask, dtype), mask, dtype)
    for dtype in DTYPES:
        mask = _batch([6, 2, 4, 1], 6)  # every row its own length: each row hides its own padding
        with case(f"with {_describe(mask)} in {dtype}"):
            _check_padding(pad(mask, dtype), mask, dtype)
    for dtype in (torch.float32, torch.float16):
        mask = _left_padded([6, 2, 4, 1, 0], 6)  # 0 marks padding wherever it is, not only at the end
        with case(f"with {_describe(mask)} in {dtype}"):
            _check_padding(pad(mask, dtype), mask, dtype)
    # The masks real callers pass: a tokenizer's long 1/0, a bool one (True = real), a float 1.0/0.0 one, int32;
    # each mask is a new content of one shape, so an answer kept from an earlier call of that shape shows.
    for lengths, form in (([5, 3, 1], torch.bool), ([2, 5, 4], torch.float32), ([4, 4, 2], torch.int32),
                          ([1, 2, 5], torch.long), ([3, 5, 3], torch.bool)):
        mask = _batch(lengths, 5).to(form)
        with case(f"with {_describe(mask)}"):
            _check_padding(pad(mask, torch.float32), mask.long(), torch.float32)


# ------------------------------------------------------------------------------------------------ part 2
ATOL = {torch.float32: 1e-6, torch.float64: 1e-9, torch.float16: 2e-3, torch.bfloat16: 1e-2}


def _same(got, want, atol):
    """Same dtype, same shape, same weights (NaN where want has NaN)."""
    return (got.dtype == want.dtype and got.shape == want.shape
            and bool(torch.allclose(got.double(), want.double(), atol=atol, equal_nan=True)))


def _softmax(student, scores, mask):
    """The student's weights, their additive_padding_mask replaced for the call by a stand-in returning a correct
    mask (in the scores' dtype), so that Part 2 is graded on its own: a mistake in Part 1 costs Part 1 only.
    What the stand-in was asked for is checked: this call's attention_mask, in the scores' dtype."""
    given = _reference_padding_mask(mask, scores.dtype)  # (B, 1, 1, T)
    got, calls = student.masked_softmax.call_standing_in({"additive_padding_mask": given}, scores, mask)
    for call in calls["additive_padding_mask"]:
        args, kwargs = call["args"], call["kwargs"]
        asked = args[0] if args else kwargs.get("attention_mask")
        dtype = args[1] if len(args) > 1 else kwargs.get("dtype", torch.float32)
        check(isinstance(asked, torch.Tensor) and asked.shape == mask.shape and torch.equal(asked.long(), mask.long()),
              "you hand additive_padding_mask another mask than the attention_mask your function was given (one "
              "rebuilt from each row's length, say): pass it the attention_mask itself")
        check(dtype == scores.dtype,
              f"with {scores.dtype} scores you ask additive_padding_mask for a {dtype} mask: build the mask in the "
              "scores' dtype, additive_padding_mask(attention_mask, scores.dtype), so that adding it keeps the "
              "scores' dtype")
    return tensor(got, "the attention weights")


def _check_softmax(student, scores, mask, atol=None):
    atol = ATOL[scores.dtype] if atol is None else atol
    expected = (scores + _reference_padding_mask(mask, scores.dtype)).softmax(dim=-1)
    got = _softmax(student, scores, mask)
    check(tuple(got.shape) == tuple(scores.shape), f"expected weights shaped like the scores {tuple(scores.shape)}, "
                                                   f"got {tuple(got.shape)}")
    if _same(got, expected, atol):
        return
    got64, expected64 = got.double(), expected.double()
    multiplied = (scores * _reference_padding_mask(mask, scores.dtype)).softmax(dim=-1)
    check(not torch.allclose(got64, multiplied.double(), atol=atol, equal_nan=True),
          "your weights are softmax(scores * mask): the mask is added to the scores (scores + mask), not "
          "multiplied: a score times finfo.min overflows to +/-inf (a row with a +inf is NaN), and a score of 0 "
          "times it stays 0 (that padding key keeps its weight)")
    nan_rows = got.isnan().any(dim=-1)  # (B, nh, T): the query rows holding NaN
    real = mask.bool().any(dim=1)[:, None, None].expand_as(nan_rows)  # rows of sequences with a real token
    check(not (nan_rows & real).any(),
          f"some weights are NaN in {int((nan_rows & real).sum())} rows of sequences that have real tokens: "
          "their masked positions should get exactly 0 and the real keys the rest; add the mask to the scores "
          "(scores + additive_padding_mask(...)), then softmax")
    check(not got.isnan().any() or expected.isnan().any(),
          "some weights are NaN: a sequence that is all padding has a row that sees nothing, and -inf there "
          "gives exp(-inf) / 0 = NaN; add finfo(dtype).min (your additive_padding_mask) instead, which keeps it "
          "finite")
    check(got.dtype == scores.dtype or not torch.allclose(got64, expected64, atol=atol),
          f"with {scores.dtype} scores your weights come back as {got.dtype}: build the mask in the scores' "
          "dtype, additive_padding_mask(attention_mask, scores.dtype), so that adding it keeps the scores' dtype")
    keys = mask.bool()[:, None, None, :].expand_as(got)  # (B, nh, T, T): True at real keys
    some = mask.bool().any(dim=1)[:, None, None, None].expand_as(got)  # rows of sequences with a real token
    leaked = got64.masked_fill(keys | ~some, 0).flatten()
    leak = leaked.abs().max().item()
    example = leaked[leaked.abs().argmax()].item()
    sums = got64.sum(dim=-1)
    future = torch.ones(scores.shape[-1], scores.shape[-1], dtype=torch.bool).triu(1)
    causal = (scores.masked_fill(future, torch.finfo(scores.dtype).min)
              + _reference_padding_mask(mask, scores.dtype)).softmax(dim=-1)
    if leak > 10 * atol:
        why = (f"padding keys get weights other than 0 (e.g. {example:.3g}): add the mask to the scores before the "
               "softmax, so that exp(score + finfo.min) is exactly 0")
    elif not torch.allclose(sums, torch.ones_like(sums), atol=1e-2):
        why = (f"the rows sum to {sorted(set(round(s, 3) for s in sums.flatten().tolist()))[:5]}, not 1: the softmax "
               "is over the keys (the last dimension), after the mask is added")
    elif torch.allclose(got64, causal.double(), atol=atol):
        why = "the future keys are hidden too: that is GPT's causal mask; BERT hides only the padding keys"
    else:
        why = "the padding keys get 0 and every row sums to 1 over the real keys of its own sequence"
    check(False, f"wrong attention weights (they differ from the expected by up to "
                 f"{(got64 - expected64).abs().max().item():.3g}): {why}")


def test_softmax(student):
    scores = torch.tensor([[[[0.0, 0.0, 0.0], [1.0, 2.0, 50.0], [0.0, 0.0, 0.0]]]])  # (1, 1, 3, 3)
    with case("on the visible test's scores (1 x 1 x 3 x 3, the padding key scored 50) and mask [[1, 1, 0]]"):
        _check_softmax(student, scores, torch.tensor([[1, 1, 0]]), atol=1e-4)
    gen = torch.Generator().manual_seed(503)
    # one shape, new content (nothing may be kept from an earlier call), and the mask as a tokenizer, a bool
    # (True = real) and a float 1.0/0.0 give it
    for lengths, form in (([6, 2, 5], torch.long), ([3, 6, 1], torch.bool), ([5, 5, 2], torch.float32)):
        mask = _batch(lengths, 6).to(form)
        scores = torch.randn(3, 2, 6, 6, generator=gen) * 4
        with case(f"with {_describe(mask)} and 2 heads"):
            _check_softmax(student, scores, mask)
    gen = torch.Generator().manual_seed(502)
    for _ in range(4):
        B, nh, T = (int(torch.randint(lo, hi, (1,), generator=gen)) for lo, hi in ((1, 5), (1, 4), (2, 10)))
        mask = _random_batch(gen, B, T)
        scores = torch.randn(B, nh, T, T, generator=gen) * 4
        with case(f"with {_describe(mask)} and {nh} heads"):
            _check_softmax(student, scores, mask)
    mask = _batch([7, 3, 1, 5], 7)  # every row its own padding
    scores = torch.randn(4, 3, 7, 7, generator=gen) * 4
    with case(f"with {_describe(mask)} and 3 heads"):
        _check_softmax(student, scores, mask)
    mask = _left_padded([7, 3, 1, 5], 7)  # padding first: 0 marks padding wherever it is
    scores = torch.randn(4, 2, 7, 7, generator=gen) * 4
    with case(f"with {_describe(mask)} and 2 heads"):
        _check_softmax(student, scores, mask)
    mask = _batch([5, 0, 2], 5)  # the second sequence is all padding: its rows see nothing
    scores = torch.randn(3, 2, 5, 5, generator=gen) * 4
    with case(f"with {_describe(mask)} (one sequence all padding) and 2 heads"):
        _check_softmax(student, scores, mask)
    for dtype in (torch.float16, torch.bfloat16, torch.float64):
        mask = _batch([6, 4, 1], 6)
        scores = (torch.randn(3, 2, 6, 6, generator=gen) * 4).to(dtype)
        with case(f"with {dtype} scores, {_describe(mask)} and 2 heads"):
            _check_softmax(student, scores, mask)


# ------------------------------------------------------------------------------------------------ part 3
def _check_causal(got, T, dtype):
    got = tensor(got, "the mask")
    check(tuple(got.shape) == (1, 1, T, T), f"expected shape (1, 1, T, T) = {(1, 1, T, T)}, got {tuple(got.shape)}")
    check(got.dtype == dtype, f"expected {dtype} (the dtype argument), got {got.dtype}")
    low = torch.finfo(dtype).min
    expected = bertlib.additive_mask(bertlib.causal_visibility(T), dtype)[None, None]  # (1, 1, T, T)
    hidden = (got[0, 0] == low).int()
    check(torch.equal(hidden, (expected[0, 0] == low).int()),
          f"hidden keys per query {hidden.tolist() if T <= 6 else '(too many to show)'}; query i sees keys 0..i: "
          "above the diagonal (key j > query i) is hidden, the rest is not")
    if not torch.equal(got, expected):
        values = sorted(set(got.double().flatten().tolist()))
        check(False, f"the mask holds the values {values[:4]}; expected 0 where a key is visible and "
                     f"torch.finfo({dtype}).min = {low} where it is hidden")


def test_causal(student):
    with case("on the visible test's T=3 (default dtype)"):
        _check_causal(student.causal_additive_mask(3), 3, torch.float32)
    # T=5 twice, in two dtypes: a mask kept from an earlier call of the same length must not come back
    for T, dtype in ((1, torch.float32), (5, torch.float64), (17, torch.float16), (8, torch.bfloat16), (4, torch.float32),
                     (5, torch.float16), (5, torch.float32)):
        with case(f"with T={T} in {dtype}"):
            _check_causal(student.causal_additive_mask(T, dtype), T, dtype)
