"""Hidden tests of assignment 2 (the encoder layer), run by the grader outside the student's kernel.

Each function grades the graded cell of the same name. Tensors, and bertlib modules as data (their weights),
go into the student's kernel; what comes back is compared with bertlib run here: ``eager_attention``,
``BertSelfAttention`` and ``BertLayer``. Parts 2 and 3 are called with a stand-in for the part they build on
(``call_standing_in``: the notebook's ``attention``, then ``self_attention``, replaced for the call by one that
records what it is given and returns the correct result, computed here), so a mistake is charged to its own
part only. Nothing of the notebook's own helpers is used, and every comparison is made here. See
bertgrader/checks.py.
"""
import math

import torch
import torch.nn.functional as F

from bertlib import build_attention_mask, eager_attention
from bertlib.attention import BertSelfAttention
from bertlib.encoder import BertLayer
from bertgrader.kernel import wire
from inputs import padding_mask as _padding_mask  # inputs.py, beside the notebook: the visible tests' inputs too
from inputs import tiny_bert_module as _tiny
from bertgrader.checks import CheckFailed, case, check, linearised, same_gradients
from bertgrader.remote import Remote

# While the notebook is graded its kernel has these as stubs. The classes' __init__ stay: the kernel still
# builds the modules the grader sends.
SWITCHED_OFF = [
    "bertlib.attention.eager_attention",
    "bertlib.attention.BertSelfAttention.forward",
    "bertlib.attention.BertSelfAttention._split_heads",
    "bertlib.attention.BertSelfOutput.forward",
    "bertlib.attention.BertAttention.forward",
    "bertlib.encoder.BertIntermediate.forward",
    "bertlib.encoder.BertOutput.forward",
    "bertlib.encoder.BertLayer.forward",
    "bertlib.encoder.BertEncoder.forward",
]


def _send(fields, module):
    return wire.Module.of(module, wire.Config(fields))


def _tensor(value, shape, what):
    if isinstance(value, Remote):
        raise CheckFailed(f"expected {what} to be a torch.Tensor, got an object that is not plain data")
    check(isinstance(value, torch.Tensor), f"expected {what} to be a torch.Tensor, got {type(value).__name__}")
    check(tuple(value.shape) == tuple(shape), f"expected {what} of shape {tuple(shape)}, got {tuple(value.shape)}")
    return value.float()


def _pair(value, context_shape, weights_shape):
    check(isinstance(value, (tuple, list)) and len(value) == 2,
          f"expected a pair (context, weights), got {type(value).__name__}")
    return _tensor(value[0], context_shape, "context"), _tensor(value[1], weights_shape, "weights")


def _max_diff(got, expected):
    return f"largest difference {(got - expected).abs().max().item():.3g}"


# bertlib's numbers under the notebook's names: the references of the gradient checks, and what the stand-ins
# of parts 2 and 3 are linearised from (checks.linearised binds the student's call by these parameter names).
def _attention(q, k, v, mask=None):
    return eager_attention(q, k, v, mask)


def _self_attention(attn, hidden_states, mask=None):
    return attn(hidden_states, mask, output_attentions=True)  # (context, weights)


def _encoder_layer(layer, hidden_states, mask=None):
    return layer(hidden_states, mask)[0]


# ------------------------------------------------------------------------------------------------ part 1
def _weights_diagnosis(got, q, k, mask):
    """What a wrong set of weights looks like, for the message."""
    raw = q @ k.transpose(-2, -1)  # (B, nh, T, T)
    d = q.size(-1)
    masked = (lambda s: s if mask is None else s + mask)
    candidates = [
        ("the scores are not divided by sqrt(d_k)", masked(raw).softmax(-1)),
        ("the scores are divided by d_k; divide by its square root", masked(raw / d).softmax(-1)),
        ("the softmax runs over the queries (dim=-2): each query's row of weights over the keys must sum to 1",
         masked(raw / math.sqrt(d)).softmax(-2)),
    ]
    if mask is not None:
        candidates.append(("the mask is not added to the scores before the softmax: [PAD] keys get weight",
                           (raw / math.sqrt(d)).softmax(-1)))
        candidates.append(("the mask is used as a filter (hidden where it is negative); it is added to the "
                           "scores, whatever values it holds", (raw / math.sqrt(d)).masked_fill(
                               mask < 0, float("-inf")).softmax(-1)))
    for hint, candidate in candidates:
        if torch.allclose(got, candidate, atol=1e-5):
            return hint
    if not torch.allclose(got.sum(-1), torch.ones_like(got.sum(-1)), atol=1e-4):
        return "each query's weights over the keys should sum to 1"
    return "expected softmax(q k^T / sqrt(d_k) + mask)"


def _not_finite_diagnosis(got, q, k, mask):
    """Why some weights are inf or NaN: a multiplied mask, or exp() overflowing at scores far apart."""
    scores = q.float() @ k.float().transpose(-2, -1) / math.sqrt(q.size(-1))  # (B, nh, T, T)
    bad = ~torch.isfinite(got).all(-1)  # (B, nh, T): the query rows holding inf or NaN
    rows = f"{int(bad.sum())} of the {bad.numel()} query rows"
    if mask is not None:
        masked = (mask.float() < 0).expand_as(scores).any(-1)  # (B, nh, T): rows with a masked key
        if torch.allclose(got, (scores * mask.float()).softmax(-1), atol=1e-5, equal_nan=True) or not (bad & ~masked).any():
            return (f"your weights hold NaN or inf in {rows}, each a row with masked keys: the mask is added to the "
                    "scores (scores + mask); multiplied, a score times the mask's huge negative numbers overflows to "
                    "+/-inf, and a softmax over inf is NaN")
    gap = (scores.amax(-1) - scores.amin(-1)).max().item()
    if gap > 1e3:
        return (f"your weights hold inf or NaN in {rows}, where the scores of a row differ by up to {gap:.0f}: "
                "exp(score) overflows; softmax must subtract each row's largest score first (torch.softmax does)")
    return f"your weights hold inf or NaN in {rows}: expected softmax(q k^T / sqrt(d_k) + mask), finite"


def _attention_case(student, q, k, v, mask, name, strided=False):
    """``strided``: q, k and v arrive as non-contiguous views, as self-attention's transposed heads do."""
    B, nh, T, hd = q.shape
    expected_context, expected_weights = eager_attention(q, k, v, mask)
    with case(name):
        sent = [wire.Strided(t) for t in (q, k, v)] if strided else [q, k, v]
        got = student.attention(*sent, mask)
        context, weights = _pair(got, (B, nh, T, hd), (B, nh, T, T))
        if not bool(torch.isfinite(weights).all()):
            raise CheckFailed(_not_finite_diagnosis(weights, q, k, mask))
        if q.dtype == torch.float64:  # float64 in, float64 out, computed in float64
            for what, value in (("context", got[0]), ("weights", got[1])):
                check(value.dtype == torch.float64,
                      f"{what} is {value.dtype} for float64 q, k, v: compute in the inputs' dtype")
            diff = (got[1].double() - expected_weights).abs().max().item()
            check(diff < 1e-12, f"the float64 weights differ from softmax computed in float64 by {diff:.3g}: they "
                                "were rounded through float32 on the way (a softmax in float32, a .float()); "
                                "compute in the inputs' dtype")
            context, weights = got[0].double(), got[1].double()
        check(torch.allclose(weights, expected_weights, atol=1e-5),
              f"wrong weights ({_weights_diagnosis(weights, q, k, mask)}); {_max_diff(weights, expected_weights)}")
        check(torch.allclose(context, expected_context, atol=1e-5),
              f"context should be weights @ v; {_max_diff(context, expected_context)}")


def test_attention(student):
    X = torch.tensor([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])[None, None]  # (1, 1, 3, 2)
    _attention_case(student, X, X, X, None, "on the three-token example (the visible test)")
    g = torch.Generator().manual_seed(201)
    q, k, v = (torch.randn(2, 3, 5, 16, generator=g) for _ in range(3))
    _attention_case(student, q, k, v, _padding_mask([5, 3], 5), "on the visible test's heads, with padding")

    gen = torch.Generator().manual_seed(2101)
    for trial, (B, nh, T, hd) in enumerate([(1, 1, 7, 64), (3, 4, 6, 8), (2, 12, 9, 32), (4, 2, 1, 4)]):
        q, k, v = (torch.randn(B, nh, T, hd, generator=gen) * 2 for _ in range(3))
        if trial == 0:
            _attention_case(student, q, k, v, None, f"with B={B}, nh={nh}, T={T}, hd={hd}, no mask")
            causal = build_attention_mask(None, T, is_causal=True, dtype=torch.float32, device="cpu")  # (1, 1, T, T)
            _attention_case(student, q, k, v, causal, f"with B={B}, nh={nh}, T={T}, hd={hd} and a causal (T, T) mask")
        else:
            lengths = torch.randint(1, T + 1, (B,), generator=gen).tolist()
            lengths[0] = T
            _attention_case(student, q, k, v, _padding_mask(lengths, T),
                            f"with B={B}, nh={nh}, T={T}, hd={hd}, real lengths {lengths}")
    # An additive mask of any values, one per head and query (B, nh, T, T): it is added, not used as a filter.
    q, k, v = (torch.randn(2, 3, 6, 8, generator=gen) for _ in range(3))
    bias = -3 * torch.rand(2, 3, 6, 6, generator=gen)  # (B, nh, T, T), finite, between -3 and 0
    bias = bias.masked_fill(torch.rand(2, 3, 6, 6, generator=gen) < 0.5, 0.0)  # about half of them 0
    bias = bias.masked_fill(torch.eye(6, dtype=torch.bool), 0.0)  # every query sees at least itself with 0
    _attention_case(student, q, k, v, bias, "with B=2, nh=3, T=6, hd=8 and an additive mask of values "
                                            "between -3 and 0, one per head and query (B, nh, T, T)")
    # The visible test's shape again, other numbers: nothing may be kept from an earlier call.
    q, k, v = (torch.randn(2, 3, 5, 16, generator=gen) for _ in range(3))
    _attention_case(student, q, k, v, _padding_mask([2, 5], 5), "with the visible test's shape (2, 3, 5, 16), other "
                                                                "numbers, real lengths [2, 5]")
    # Scores far apart (gaps of about 10^4 within a row): softmax is still finite, a sure choice per row.
    q, k = (torch.randn(2, 2, 5, 8, generator=gen) * 100 for _ in range(2))
    v = torch.randn(2, 2, 5, 8, generator=gen)
    gap = (q @ k.transpose(-2, -1) / math.sqrt(8)).amax(-1) - (q @ k.transpose(-2, -1) / math.sqrt(8)).amin(-1)
    assert gap.max() > 1e4  # the case is what it says
    _attention_case(student, q, k, v, _padding_mask([5, 4], 5),
                    f"with scores up to {gap.max().item():.0f} apart within a row (q and k of size about 100)")
    # float64 in, float64 out: with a float64 padding mask, and with none.
    q, k, v = (torch.randn(3, 2, 6, 8, generator=gen, dtype=torch.float64) for _ in range(3))
    mask64 = build_attention_mask((torch.arange(6)[None] < torch.tensor([[6], [4], [1]])).long(), 6, is_causal=False,
                                  dtype=torch.float64, device="cpu")  # (3, 1, 1, 6)
    _attention_case(student, q, k, v, mask64, "with float64 q, k, v and mask (B=3, nh=2, T=6, hd=8, real lengths "
                                              "[6, 4, 1])")
    _attention_case(student, q * 3, k, v, None, "with float64 q, k, v, no mask")
    # q, k, v as the views a caller passes (self-attention's heads are transposed views): .view() cannot
    # flatten them, .reshape() and matmul's broadcasting can.
    q, k, v = (torch.randn(2, 3, 5, 8, generator=gen) for _ in range(3))
    _attention_case(student, q, k, v, _padding_mask([5, 3], 5), "with q, k, v that are non-contiguous views "
                    "(slices of bigger tensors, as the transposed heads of self-attention are), B=2, nh=3, T=5, hd=8",
                    strided=True)
    # Training goes through it: one random cotangent on the context, backpropagated there and here.
    with case("with B=2, nh=3, T=5, hd=8, real lengths [5, 3], backpropagating a random gradient of the context"):
        same_gradients(student.attention, eager_attention, q, k, v, _padding_mask([5, 3], 5), output=0, seed=2102)


# ------------------------------------------------------------------------------------------------ part 2
def _split(x, nh):
    B, T, H = x.shape
    return x.view(B, T, nh, H // nh).transpose(1, 2)  # (B, nh, T, hd)


def _self_attention_case(student, fields, attn, x, mask, name, strided=False):
    B, T, H = x.shape
    nh = attn.num_attention_heads
    with torch.no_grad():
        q, k, v = _split(attn.query(x), nh), _split(attn.key(x), nh), _split(attn.value(x), nh)
        context_heads, weights = eager_attention(q, k, v, mask)  # (B, nh, T, hd), (B, nh, T, T)
        merged = context_heads.transpose(1, 2).reshape(B, T, H)
        oracle, oracle_weights = attn(x, mask, output_attentions=True)  # bertlib's BertSelfAttention
    assert torch.allclose(merged, oracle, atol=1e-5) and torch.allclose(weights, oracle_weights, atol=1e-6)
    with case(name):
        got, calls = student.self_attention.call_standing_in({"attention": (context_heads, weights)},
                                                             _send(fields, attn), wire.Strided(x) if strided else x,
                                                             mask)
        calls = calls["attention"]
        check(len(calls) == 1, f"self_attention() should call attention() once, it called it {len(calls)} times")
        _check_given(calls[0], ["q", "k", "v"], [q, k, v], mask, "attention()",
                     "Expected (B, nh, T, hd): head a holds hd numbers of every token, the a-th slice of its H, "
                     "and the tokens keep their order.")
        context, got_weights = _pair(got, (B, T, H), (B, nh, T, T))
        check(torch.allclose(got_weights, weights, atol=1e-6),
              "the weights should be the ones attention() returns, unchanged")
        if not torch.allclose(context, merged, atol=1e-5) and torch.allclose(
                context, context_heads.reshape(B, T, H), atol=1e-5):
            raise CheckFailed("the heads are merged without moving the head axis back: the contexts are "
                              "(B, nh, T, hd); bring them to (B, T, nh, hd) before reshaping to (B, T, H)")
        check(torch.allclose(context, merged, atol=1e-5),
              f"the merged context differs from BertSelfAttention's; {_max_diff(context, merged)}")


def test_self_attention(student):
    fields, attn = _tiny(202, BertSelfAttention, hidden_size=12, num_attention_heads=3)
    x = torch.randn(2, 4, 12, generator=torch.Generator().manual_seed(202))
    _self_attention_case(student, fields, attn, x, _padding_mask([4, 2], 4), "on the visible test's input")
    gen = torch.Generator().manual_seed(2201)
    for trial, (B, T, H, nh) in enumerate([(1, 6, 16, 4), (3, 5, 24, 6), (2, 7, 8, 1), (2, 3, 32, 8)]):
        fields, attn = _tiny(2210 + trial, BertSelfAttention, hidden_size=H, num_attention_heads=nh)
        x = torch.randn(B, T, H, generator=gen)
        lengths = torch.randint(1, T + 1, (B,), generator=gen).tolist()
        mask = None if trial == 0 else _padding_mask(lengths, T)
        _self_attention_case(student, fields, attn, x, mask,
                             f"with B={B}, T={T}, H={H}, nh={nh}" + (", no mask" if mask is None else
                                                                     f", real lengths {lengths}"))
    # The visible test's module and shape again, other hidden states, arriving as a non-contiguous view.
    fields, attn = _tiny(202, BertSelfAttention, hidden_size=12, num_attention_heads=3)
    _self_attention_case(student, fields, attn, torch.randn(2, 4, 12, generator=gen), _padding_mask([3, 4], 4),
                         "with the visible test's attention and shape, other hidden states (a non-contiguous "
                         "view), real lengths [3, 4]", strided=True)
    fields, attn = _tiny(2220, BertSelfAttention, hidden_size=8, num_attention_heads=2)
    _self_attention_case(student, fields, attn, torch.randn(1, 1, 8, generator=gen), None,
                         "with one sequence of one token (B=1, T=1, H=8, nh=2), no mask")
    # Training goes through it: a random gradient of the merged context, backpropagated through your function
    # and a stand-in attention() that passes it on as the correct one does, at the q, k, v it should get.
    fields, attn = _tiny(2230, BertSelfAttention, hidden_size=8, num_attention_heads=2)
    x, mask = torch.randn(2, 3, 8, generator=gen), _padding_mask([3, 2], 3)
    with torch.no_grad():
        q, k, v = _split(attn.query(x), 2), _split(attn.key(x), 2), _split(attn.value(x), 2)
    with case("with B=2, T=3, H=8, nh=2, real lengths [3, 2], backpropagating a random gradient of the context"):
        same_gradients(student.self_attention, _self_attention, _send(fields, attn), x, mask, output=0, seed=2231,
                       stand_ins={"attention": linearised(_attention, q, k, v, mask)})


def _check_given(call, names, expected, mask, callee, hint):
    """What the student's function passed to the stand-in: the tensors ``names`` (positional, in order,
    or by keyword), then the mask (positional or ``mask=``), unchanged."""
    args, kwargs = list(call["args"]), dict(call["kwargs"])
    for i, (name, want) in enumerate(zip(names, expected)):
        got = args[i] if i < len(args) else kwargs.get(name)
        check(isinstance(got, torch.Tensor) and tuple(got.shape) == tuple(want.shape),
              f"{callee} got {name} of shape {tuple(got.shape) if isinstance(got, torch.Tensor) else type(got).__name__}, "
              f"expected {tuple(want.shape)}. {hint}")
        check(torch.allclose(got.float(), want, atol=1e-5), f"{callee} got {name} with the right shape but not the "
              f"right numbers. {hint}")
    got_mask = args[len(names)] if len(args) > len(names) else kwargs.get("mask")
    check((got_mask is None) == (mask is None) and (mask is None or (isinstance(got_mask, torch.Tensor)
                                                                   and torch.equal(got_mask, mask))),
          f"{callee} did not get the mask that the function was given")


# ------------------------------------------------------------------------------------------------ part 3
def _layer_diagnosis(got, layer, x, mask, context):
    """Common wrong layers, computed from the layer's own sub-modules."""
    sub, ffn_in, ffn_out = layer.attention.output, layer.intermediate, layer.output
    act = ffn_in.intermediate_act_fn
    y = sub.LayerNorm(x + sub.dense(context))
    candidates = [
        ("no residual: each sub-layer's output is added to its input before the LayerNorm",
         ffn_out.LayerNorm(ffn_out.dense(act(ffn_in.dense(sub.LayerNorm(sub.dense(context))))))),
        ("the second residual adds the layer's input x; it must add y, the first sub-layer's output (the "
         "feed-forward network's input): out = LayerNorm(y + FFN(y))",
         ffn_out.LayerNorm(x + ffn_out.dense(act(ffn_in.dense(y))))),
        ("ReLU in the feed-forward network: BERT's activation is a GELU, layer.intermediate.intermediate_act_fn",
         ffn_out.LayerNorm(y + ffn_out.dense(torch.relu(ffn_in.dense(y))))),
        ("the exact GELU (F.gelu) where this layer's config names the tanh form: use "
         "layer.intermediate.intermediate_act_fn", ffn_out.LayerNorm(y + ffn_out.dense(F.gelu(ffn_in.dense(y))))),
        ("the tanh GELU where this layer's config names the exact form: use layer.intermediate.intermediate_act_fn",
         ffn_out.LayerNorm(y + ffn_out.dense(F.gelu(ffn_in.dense(y), approximate="tanh")))),
        ("no LayerNorm after the feed-forward network's residual", y + ffn_out.dense(act(ffn_in.dense(y)))),
    ]
    H = x.shape[-1]
    for eps, said in ((1e-5, "torch's default eps (1e-5)"), (1e-12, "eps=1e-12")):
        ln1, ln2 = sub.LayerNorm, ffn_out.LayerNorm
        y_eps = F.layer_norm(x + sub.dense(context), (H,), ln1.weight, ln1.bias, eps)
        candidates.append((f"the LayerNorms use {said}, not this layer's layer_norm_eps={ln1.eps:g}: use the "
                           "layer's own LayerNorm modules", F.layer_norm(y_eps + ffn_out.dense(act(ffn_in.dense(y_eps))),
                                                                         (H,), ln2.weight, ln2.bias, eps)))
    for hint, candidate in candidates:
        if torch.allclose(got, candidate, atol=1e-5):
            return hint
    return "post-LN: y = LayerNorm(x + dense(context)), out = LayerNorm(y + FFN(y))"


def _layer_case(student, fields, layer, x, mask, name, strided=False):
    B, T, H = x.shape
    nh = fields["num_attention_heads"]
    with torch.no_grad():
        context, weights = layer.attention.self(x, mask, output_attentions=True)  # (B, T, H), (B, nh, T, T)
        expected, _ = layer(x, mask)  # bertlib's BertLayer
    assert tuple(weights.shape) == (B, nh, T, T)  # the oracle's own shape, not the student's
    with case(name):
        got, calls = student.encoder_layer.call_standing_in({"self_attention": (context, weights)},
                                                            _send(fields, layer), wire.Strided(x) if strided else x,
                                                            mask)
        calls = calls["self_attention"]
        check(len(calls) == 1,
              f"encoder_layer() should call self_attention() once, it called it {len(calls)} times")
        where = calls[0]["where"]
        check((where.get("0") or where.get("attn")) == "args[0].attention.self",
              "self_attention() should get the layer's own attention, layer.attention.self")
        positional = calls[0]["args"]
        call = {"args": positional[1:] if "0" in where else positional, "kwargs": calls[0]["kwargs"]}
        _check_given(call, ["hidden_states"], [x], mask, "self_attention()", "The attention reads the layer's input.")
        got = _tensor(got, (B, T, H), "the layer's output")
        if not torch.allclose(got, expected, atol=1e-5):
            with torch.no_grad():
                hint = _layer_diagnosis(got, layer, x, mask, context)
            raise CheckFailed(f"wrong output ({hint}); {_max_diff(got, expected)}")


def test_layer(student):
    for act in ("gelu", "gelu_new"):
        fields, layer = _tiny(203, BertLayer, hidden_size=12, num_attention_heads=3, intermediate_size=48,
                              hidden_act=act)
        x = torch.randn(2, 5, 12, generator=torch.Generator().manual_seed(203))
        _layer_case(student, fields, layer, x, _padding_mask([5, 3], 5),
                    f"on the visible test's input, hidden_act={act!r}")
    gen = torch.Generator().manual_seed(2301)
    shapes = [(1, 6, 16, 4, "gelu"), (3, 5, 24, 6, "gelu_new"), (2, 8, 32, 8, "gelu"), (2, 4, 8, 2, "gelu_new")]
    for trial, (B, T, H, nh, act) in enumerate(shapes):
        fields, layer = _tiny(2310 + trial, BertLayer, hidden_size=H, num_attention_heads=nh,
                              intermediate_size=4 * H, hidden_act=act)
        x = torch.randn(B, T, H, generator=gen) * 3  # larger inputs: the two GELU forms differ more
        lengths = torch.randint(1, T + 1, (B,), generator=gen).tolist()
        lengths[0] = T
        mask = None if trial == 0 else _padding_mask(lengths, T)
        _layer_case(student, fields, layer, x, mask,
                    f"with B={B}, T={T}, H={H}, nh={nh}, hidden_act={act!r}"
                    + (", no mask" if mask is None else f", real lengths {lengths}"))
    # A config whose layer_norm_eps is not BERT's 1e-12: the LayerNorms are the layer's own modules.
    fields, layer = _tiny(2320, BertLayer, hidden_size=16, num_attention_heads=4, intermediate_size=32,
                          layer_norm_eps=0.1)
    x = torch.randn(2, 6, 16, generator=gen)
    _layer_case(student, fields, layer, x, _padding_mask([6, 4], 6),
                "with B=2, T=6, H=16, nh=4, layer_norm_eps=0.1, real lengths [6, 4]")
    # A layer in train() mode whose dropout probabilities are 0: the same output, and the mode is the caller's.
    fields, layer = _tiny(2340, BertLayer, hidden_size=12, num_attention_heads=3, intermediate_size=24,
                          hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0)
    _layer_case(student, fields, layer.train(), torch.randn(2, 4, 12, generator=gen), _padding_mask([4, 3], 4),
                "with a layer in train() mode whose dropout probabilities are 0, B=2, T=4, H=12, nh=3")
    # The visible test's layer and shape again, other hidden states, arriving as a non-contiguous view.
    fields, layer = _tiny(203, BertLayer, hidden_size=12, num_attention_heads=3, intermediate_size=48)
    _layer_case(student, fields, layer, torch.randn(2, 5, 12, generator=gen), _padding_mask([2, 5], 5),
                "with the visible test's layer and shape, other hidden states (a non-contiguous view), real "
                "lengths [2, 5]", strided=True)
    fields, layer = _tiny(2330, BertLayer, hidden_size=8, num_attention_heads=2, intermediate_size=20)
    _layer_case(student, fields, layer, torch.randn(1, 1, 8, generator=gen), None,
                "with one sequence of one token (B=1, T=1, H=8, nh=2), no mask")
    # Training goes through it: a random gradient of the output, backpropagated through your layer and a
    # stand-in self_attention() that passes it on as the correct one does (to the attention's weights, too).
    fields, layer = _tiny(2350, BertLayer, hidden_size=8, num_attention_heads=2, intermediate_size=16)
    x, mask = torch.randn(2, 3, 8, generator=gen), _padding_mask([3, 2], 3)
    with case("with B=2, T=3, H=8, nh=2, real lengths [3, 2], backpropagating a random gradient of the output"):
        same_gradients(student.encoder_layer, _encoder_layer, _send(fields, layer), x, mask, seed=2351,
                       stand_ins={"self_attention": linearised(_self_attention, layer.attention.self, x, mask)})
