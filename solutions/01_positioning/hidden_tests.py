"""Hidden tests of assignment 1 (who sees whom), run by the grader outside the student's kernel.

Each function grades the graded cell of the same name: it calls the student's functions through
``student`` (their kernel, sandboxed), on the visible tests' inputs and on new ones, and checks the data
that comes back against bertlib, here. See bertgrader/checks.py.
"""
import torch

import bertlib
from bertgrader.checks import CheckFailed, case, check
from bertgrader.kernel import wire
from bertgrader.remote import Remote

# While the notebook is graded its kernel has these as stubs: calling them, however, earns nothing.
SWITCHED_OFF = ["bertlib.attention.padding_visibility", "bertlib.attention.causal_visibility",
                "bertlib.attention.build_attention_mask", "bertlib.attention.additive_mask"]

BERT_RULE = "BERT lets every query see every real token, future tokens included, padding excluded"
CAUSAL_RULE = "a causal model lets query i see keys 0..i: itself and its left, never the future"
PADDED_RULE = "no future and no padding: key j is visible to query i iff j <= i and j is a real token"


def _bool_matrix(got, shape, dims):
    """``got`` as a tensor, checked to be torch.bool of ``shape`` (``dims`` names the axes)."""
    if isinstance(got, Remote):
        raise CheckFailed(f"expected a torch.bool tensor, got a {got._target.type_name or 'object'} "
                          "(return a torch.Tensor)")
    check(isinstance(got, torch.Tensor), f"expected a torch.bool tensor, got {type(got).__name__}")
    check(got.dtype == torch.bool, f"expected a torch.bool tensor, got {got.dtype} (compare, or call .bool())")
    check(tuple(got.shape) == tuple(shape), f"expected shape {tuple(shape)} = {dims}, got {tuple(got.shape)}")
    return got


def _keys(row: torch.Tensor) -> str:
    """The keys a query row sees, as a list a student can read (0/1 for short rows, indices for long)."""
    return f"keys {row.int().tolist()}" if row.numel() <= 8 else f"the keys at {row.nonzero().flatten().tolist()}"


def _same_rows(got, expected, rule, mask=None):
    """Point at the first query whose row differs from the expected one."""
    if expected.dim() == 2:  # (T, T): one matrix, no batch
        got, expected = got[None], expected[None]
    for b in range(expected.shape[0]):
        for i in range(expected.shape[1]):
            if not torch.equal(got[b, i], expected[b, i]):
                where = f"sequence {b} (mask {mask[b].tolist()}): " if mask is not None else ""
                raise CheckFailed(f"{where}query {i} sees {_keys(got[b, i])}, expected {_keys(expected[b, i])} "
                                  f"({rule})")


def _random_masks(seed, n, T_range, B_range=(1, 5)):
    """Right-padded 1/0 masks of random batch size, length and padding (every row has a real token)."""
    gen = torch.Generator().manual_seed(seed)
    for _ in range(n):
        B = int(torch.randint(*B_range, (1,), generator=gen))
        T = int(torch.randint(*T_range, (1,), generator=gen))
        lengths = torch.randint(1, T + 1, (B,), generator=gen)
        yield (torch.arange(T)[None, :] < lengths[:, None]).long()  # (B, T)


# Padding on the left (and one mask with a hole): the mask, not a length, says which keys are real.
LEFT_PADDED = torch.tensor([[0, 0, 1, 1, 1], [1, 1, 1, 1, 1], [0, 1, 1, 1, 1], [1, 1, 0, 1, 1]])

# The forms a caller's mask comes in (the task names them): each random case gets the next one.
FORMS = [("int64", torch.long), ("int32", torch.int32), ("float", torch.float32), ("bool", torch.bool)]

# Two masks of one shape and different content, sent one after the other: an answer kept from the first
# call (keyed by shape) is wrong for the second.
SAME_SHAPE = [torch.tensor([[1, 1, 1, 1, 0, 0], [1, 1, 0, 0, 0, 0], [1, 1, 1, 1, 1, 1]]),
              torch.tensor([[1, 1, 1, 0, 0, 0], [1, 1, 1, 1, 1, 0], [1, 0, 0, 0, 0, 0]])]


def _form(mask, i):
    """(the mask in the i-th form, its name); every third one arrives as a non-contiguous view."""
    name, dtype = FORMS[i % len(FORMS)]
    if i % 3 == 2:
        return wire.Strided(mask.to(dtype)), f"{name} (a non-contiguous view)"
    return mask.to(dtype), name


def _padding_reference(mask):
    return bertlib.attention.padding_visibility(mask)[:, 0]  # (B, 1, T): the same row for every query


# ------------------------------------------------------------------------------------------------ part 1
def test_bidirectional(student):
    f = student.bidirectional_visibility
    with case('on the visible test\'s mask [[1, 1, 1, 0]] ("[CLS] 我 [SEP] [PAD]")'):
        got = _bool_matrix(f(torch.tensor([[1, 1, 1, 0]])), (1, 4, 4), "(B, T, T)")
        _same_rows(got, torch.tensor([[[True, True, True, False]] * 4]), BERT_RULE)
    masks = [*_random_masks(101, 5, (4, 8)), *SAME_SHAPE, torch.tensor([[1]]), torch.tensor([[1, 1, 0]])]
    for i, mask in enumerate(masks):
        B, T = mask.shape
        expected = _padding_reference(mask).expand(B, T, T)
        sent, form = _form(mask, i)
        with case(f"with a {B} x {T} {form} mask of lengths {mask.sum(1).tolist()}"):
            _same_rows(_bool_matrix(f(sent), (B, T, T), "(B, T, T)"), expected, BERT_RULE, mask)
    B, T = LEFT_PADDED.shape
    for i in range(len(FORMS)):
        sent, form = _form(LEFT_PADDED, i)
        with case(f"with padding on the left ({form} masks {LEFT_PADDED.tolist()})"):
            got = _bool_matrix(f(sent), (B, T, T), "(B, T, T)")
            _same_rows(got, _padding_reference(LEFT_PADDED).expand(B, T, T),
                       "the keys visible are those where attention_mask is 1, wherever the padding is: do not "
                       "assume the real tokens come first", LEFT_PADDED)


# ------------------------------------------------------------------------------------------------ part 2
def test_causal(student):
    f = student.causal_visibility  # a function of T alone: the same T must give the same matrix
    for T in (4, 1, 2, 7, 33, 4):
        with case(f"with T={T}" + (" (the visible test)" if T == 4 else "")):
            got = _bool_matrix(f(T), (T, T), "(T, T)")
            _same_rows(got, bertlib.attention.causal_visibility(T), CAUSAL_RULE)


# ------------------------------------------------------------------------------------------------ part 3
def test_causal_padded(student):
    f = student.causal_padded_visibility

    def expected_for(mask):
        T = mask.shape[1]
        return (bertlib.attention.padding_visibility(mask) & bertlib.attention.causal_visibility(T))[:, 0]

    visible = torch.tensor([[1, 1, 1], [1, 1, 0]])
    with case(f"on the visible test's masks {visible.tolist()}"):
        got = _bool_matrix(f(visible), (2, 3, 3), "(B, T, T)")
        _same_rows(got, expected_for(visible), PADDED_RULE, visible)
    masks = [*_random_masks(103, 5, (2, 9)), *SAME_SHAPE, torch.tensor([[1]]), torch.tensor([[1, 1, 0]])]
    for i, mask in enumerate(masks):
        B, T = mask.shape
        sent, form = _form(mask, i)
        with case(f"with a {B} x {T} {form} mask of lengths {mask.sum(1).tolist()}"):
            _same_rows(_bool_matrix(f(sent), (B, T, T), "(B, T, T)"), expected_for(mask), PADDED_RULE, mask)
    B, T = LEFT_PADDED.shape
    for i in range(len(FORMS)):
        sent, form = _form(LEFT_PADDED, i)
        with case(f"with padding on the left ({form} masks {LEFT_PADDED.tolist()})"):
            got = _bool_matrix(f(sent), (B, T, T), "(B, T, T)")
            _same_rows(got, expected_for(LEFT_PADDED),
                       PADDED_RULE + "; the real tokens are where attention_mask is 1, wherever the padding is",
                       LEFT_PADDED)
