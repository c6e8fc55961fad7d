"""Hidden tests of assignment 4 (three embeddings, added), run by the grader outside the student's kernel.

Each function grades the graded cell of the same name: it sends a BertEmbeddings (its weights, as data)
into the student's kernel, calls the student's functions on it, on the visible tests' inputs and on new
ones, and checks the tensors that come back against bertlib's BertEmbeddings, run here. See
bertgrader/checks.py.
"""
import torch
import torch.nn.functional as F

from bertlib import BertConfig, BertEmbeddings
from bertgrader.kernel import wire
from inputs import tiny_embeddings as _tiny_embeddings  # inputs.py, beside the notebook: the visible tests' inputs too
from bertgrader.checks import CheckFailed, case, check, compare_gradients, linearised, same_gradients
from bertgrader.remote import KernelGone, Remote, StudentError

# While the notebook is graded its kernel has this as a stub. Only forward: the kernel still builds the
# BertEmbeddings the grader sends (and the setup cell's _tiny_embeddings).
SWITCHED_OFF = ["bertlib.embeddings.BertEmbeddings.forward"]

TABLES = ("word_embeddings", "position_embeddings", "token_type_embeddings")


def _send(fields, emb):
    """The module as data: the kernel builds BertEmbeddings(BertConfig(**fields)) and loads these weights."""
    return wire.Module.of(emb, wire.Config(fields))


def _tensor(value, shape, what="the output"):
    if isinstance(value, Remote):
        raise CheckFailed(f"expected {what} to be a torch.Tensor, got a {value._target.type_name or 'object'}")
    check(isinstance(value, torch.Tensor), f"expected {what} to be a torch.Tensor, got {type(value).__name__}")
    check(tuple(value.shape) == tuple(shape), f"expected {what} of shape {tuple(shape)}, got {tuple(value.shape)}")
    return value.float()


def _reference_sum(emb, ids, segments=None):
    T = ids.shape[1]
    segments = torch.zeros_like(ids) if segments is None else segments
    with torch.no_grad():
        return (emb.word_embeddings.weight[ids] + emb.position_embeddings.weight[:T][None]
                + emb.token_type_embeddings.weight[segments])


# bertlib's numbers under the notebook's names, with their graph: the references of the gradient checks, and
# what the stand-in of parts 2 and 3 is linearised from (checks.linearised binds the student's call by them).
def _embedding_sum(emb, input_ids, token_type_ids=None):
    T = input_ids.shape[1]
    token_type_ids = torch.zeros_like(input_ids) if token_type_ids is None else token_type_ids
    return (emb.word_embeddings(input_ids) + emb.position_embeddings(torch.arange(T))[None]
            + emb.token_type_embeddings(token_type_ids))


def _embeddings_forward(emb, input_ids, token_type_ids=None):
    return emb(input_ids, token_type_ids)  # bertlib's BertEmbeddings


def _same_gradients_through_sum(student, fields, emb, ids, segments, seed):
    """Gradients of embeddings_forward with a stand-in embedding_sum that passes them on to the tables as the
    correct sum does: a cut in the LayerNorm or dropout shows, a mistake of part 1 does not."""
    same_gradients(student.embeddings_forward, _embeddings_forward, _send(fields, emb), ids, segments, seed=seed,
                   stand_ins={"embedding_sum": linearised(_embedding_sum, emb, ids, segments)})


def _rounded(t):
    return t.double().round(decimals=4).tolist()


def _max_diff(got, expected):
    return f"largest difference {(got - expected).abs().max().item():.3g}"


# ------------------------------------------------------------------------------------------------ part 1
def _sum_diagnosis(got, emb, ids, segments):
    """What a wrong sum looks like, for the message."""
    words, T = emb.word_embeddings.weight[ids], ids.shape[1]
    positions = emb.position_embeddings.weight[:T][None]
    kinds = segments if segments is not None else torch.zeros_like(ids)
    types = emb.token_type_embeddings.weight[kinds]
    with torch.no_grad():
        for hint, candidate in [("the segment embedding is missing", words + positions),
                                ("the position embedding is missing", words + types),
                                ("LayerNorm is applied: part 1 is the sum only (parts 2 and 3 add LayerNorm)",
                                 emb.LayerNorm(words + positions + types))]:
            if torch.allclose(got, candidate, atol=1e-5):
                return hint
    return "expected word + position + segment for every token"


def test_sum(student):
    f = student.embedding_sum
    fields, emb = _tiny_embeddings(301)
    ids = torch.tensor([[2, 7, 7, 3], [5, 1, 0, 0]])
    segments = torch.tensor([[0, 0, 1, 1], [0, 1, 1, 1]])
    with case("on the visible test's 2 x 4 batch"):
        got = f(_send(fields, emb), ids, segments)
        if isinstance(got, torch.Tensor) and tuple(got.shape) == (2, 4, 24):
            raise CheckFailed("expected shape (B, T, H) = (2, 4, 8), got (2, 4, 24): concatenated instead of added?")
        _tensor(got, (2, 4, 8))
    meanings = {"word_embeddings": (ids, "the token's word"),
                "position_embeddings": (torch.arange(4).expand(2, 4), "position t: row t of the learned table"),
                "token_type_embeddings": (segments, "the segment id")}
    for keep, (index, meaning) in meanings.items():
        # Zero every table but one: what is left must be exactly that table's rows.
        _, only = _tiny_embeddings(301)
        with torch.no_grad():
            for name in TABLES:
                if name != keep:
                    getattr(only, name).weight.zero_()
            expected = getattr(only, keep).weight[index]
        with case(f"on the visible test's batch, with only {keep} non-zero"):
            got = _tensor(f(_send(fields, only), ids, segments), (2, 4, 8))
            check(not torch.allclose(got, torch.zeros_like(got)), f"your sum does not use emb.{keep}")
            extra = got - expected
            check(not (keep != "position_embeddings" and torch.allclose(extra[0], extra[1], atol=1e-6)
                       and extra.abs().max() > 1e-3),
                  f"with only {keep} non-zero your sum still adds a term that depends on the position alone: "
                  "BERT's positions are rows of emb.position_embeddings, a learned table (not sinusoids)")
            check(torch.allclose(got, expected), f"each token should get {meaning}; {_max_diff(got, expected)}")
    with case("on the visible test's batch, with token_type_ids=None"):
        got = _tensor(f(_send(fields, emb), ids), (2, 4, 8))
        expected = _reference_sum(emb, ids)
        check(torch.allclose(got, expected, atol=1e-6),
              f"token_type_ids=None should mean segment 0 for every token; {_max_diff(got, expected)}")

    # Three segments (type_vocab_size=3): segment ids index the table, whatever its size.
    fields, emb = _tiny_embeddings(3305, type_vocab_size=3)
    ids = torch.tensor([[4, 9, 2, 11, 6, 1], [3, 3, 8, 0, 5, 7]])
    segments = torch.tensor([[0, 0, 1, 1, 2, 2], [0, 2, 2, 1, 1, 0]])
    with case("with type_vocab_size=3 and segment ids 0, 1 and 2"):
        got = _tensor(f(_send(fields, emb), ids, segments), (2, 6, 8))
        expected = _reference_sum(emb, ids, segments)
        check(torch.allclose(got, expected, atol=1e-6),
              f"each token adds row token_type_ids[b, t] of emb.token_type_embeddings, for any number of segments; "
              f"{_max_diff(got, expected)}")

    # Ids in the forms callers give them, on the visible test's module: the same shape with other ids, int32,
    # a non-contiguous view; a batch of one token. Then the gradients of the three tables.
    fields, emb = _tiny_embeddings(301)
    gen = torch.Generator().manual_seed(3302)
    ids = torch.randint(0, fields["vocab_size"], (2, 4), generator=gen)
    segments = torch.tensor([[0, 1, 1, 1], [0, 0, 0, 1]])
    for form, sent in [("other int64 ids of the visible test's shape", ids),
                       ("int32 ids and segments", (ids.int(), segments.int())),
                       ("ids and segments that are non-contiguous views", (wire.Strided(ids), wire.Strided(segments)))]:
        given = sent if isinstance(sent, tuple) else (sent, segments)
        expected = _reference_sum(emb, ids, segments)
        with case(f"with {form} (2 x 4: {ids.tolist()}, segments {segments.tolist()})"):
            got = _tensor(f(_send(fields, emb), *given), (2, 4, 8))
            check(torch.allclose(got, expected, atol=1e-6),
                  f"wrong sum ({_sum_diagnosis(got, emb, ids, segments)}); {_max_diff(got, expected)}")
    one = torch.tensor([[7]])
    with case("with one sequence of one token (B=1, T=1) and token_type_ids=None"):
        got = _tensor(f(_send(fields, emb), one), (1, 1, 8))
        check(torch.allclose(got, _reference_sum(emb, one), atol=1e-6),
              f"wrong sum ({_sum_diagnosis(got, emb, one, None)}); {_max_diff(got, _reference_sum(emb, one))}")

    with case(f"on ids {ids.tolist()}, segments {segments.tolist()}, backpropagating a random gradient of the sum"):
        same_gradients(f, _embedding_sum, _send(fields, emb), ids, segments, seed=3303)

    gen = torch.Generator().manual_seed(3301)
    for trial in range(5):
        fields, emb = _tiny_embeddings(3310 + trial)
        B = int(torch.randint(1, 5, (1,), generator=gen))
        T = int(torch.randint(1, fields["max_position_embeddings"] + 1, (1,), generator=gen))
        T = fields["max_position_embeddings"] if trial == 0 else T  # one batch as long as the table allows
        ids = torch.randint(0, fields["vocab_size"], (B, T), generator=gen)
        segments = None if trial == 4 else torch.randint(0, 2, (B, T), generator=gen)
        expected = _reference_sum(emb, ids, segments)
        with case(f"with a {B} x {T} batch" + (" and token_type_ids=None" if segments is None else "")):
            got = f(_send(fields, emb), ids) if segments is None else f(_send(fields, emb), ids, segments)
            got = _tensor(got, (B, T, fields["hidden_size"]))
            check(torch.allclose(got, expected, atol=1e-6),
                  f"wrong sum ({_sum_diagnosis(got, emb, ids, segments)}); {_max_diff(got, expected)}")


# ------------------------------------------------------------------------------------------- parts 2 and 3
def _forward_on_sum(student, fields, emb, summed, ids, segments=None, seed=None):
    """embeddings_forward in the kernel while the notebook's embedding_sum is a stand-in returning ``summed``
    (the correct sum, so a part-1 mistake is not charged again); ``emb`` travels in its train/eval mode;
    ``seed``: torch.manual_seed first (dropout draws from torch's global generator)."""
    got, _ = student.embeddings_forward.call_standing_in({"embedding_sum": summed}, _send(fields, emb), ids, segments,
                                                         manual_seed=seed)
    return got


def _eval_mode_check(got, expected, p):
    """The eval-mode output must be LayerNorm's, with no dropout: a message about dropout when it is on
    (every value either zero or the expected one scaled by 1/(1-p), as dropout in training mode gives)."""
    if p <= 0 or torch.allclose(got, expected, atol=1e-4):
        return
    if ((got == 0) | torch.isclose(got, expected / (1 - p), atol=1e-4)).all():
        raise CheckFailed(
            f"in eval mode {(got == 0).float().mean().item():.0%} of your output values are zero and the others "
            f"are scaled by 1/(1-p) = {1 / (1 - p):.3g}: dropout is on in eval mode. Dropout is active in training "
            f"only: emb.dropout (an nn.Dropout) follows emb.train() / emb.eval(), while F.dropout(x, p) drops "
            f"unless you pass training=emb.training")


def test_layernorm(student):
    x = torch.tensor([[[1.0, 2.0, 3.0, 4.0], [0.0, 0.0, 0.0, 8.0]]])  # (1, 2, 4)
    fields, emb = _tiny_embeddings(302, hidden_size=4, num_attention_heads=1)
    with torch.no_grad():
        emb.LayerNorm.weight.fill_(1.0)
        emb.LayerNorm.bias.fill_(0.0)
    ids = torch.zeros(1, 2, dtype=torch.long)
    expected = torch.tensor([[[-1.3416, -0.4472, 0.4472, 1.3416], [-0.5774, -0.5774, -0.5774, 1.7321]]])
    with case("on the visible test's sum, in eval mode"):
        got = _tensor(_forward_on_sum(student, fields, emb, x, ids), (1, 2, 4))
        _eval_mode_check(got, expected, fields["hidden_dropout_prob"])
        check(torch.allclose(got, expected, atol=1e-4),
              f"in eval mode each token's vector should be normalised to mean 0 and variance 1 (LayerNorm with "
              f"weight 1, bias 0), giving {_rounded(expected)}; got {_rounded(got)}")

    cases = [(3320 + trial, 0.1, torch.Generator().manual_seed(trial)) for trial in range(3)]
    cases.append((3323, 0.5, torch.Generator().manual_seed(3)))  # a large p: dropout must be off all the same
    cases.append((3324, 0.1, torch.Generator().manual_seed(4), 0.1))  # not BERT's eps: LayerNorm is emb's own
    for seed, p, gen, *eps in cases:
        fields, emb = _tiny_embeddings(seed, p=p, **({"layer_norm_eps": eps[0]} if eps else {}))
        ids = torch.randint(0, fields["vocab_size"], (3, 9), generator=gen)
        segments = (torch.arange(9) >= 4).long().expand(3, 9)
        summed = _reference_sum(emb, ids, segments)
        with torch.no_grad():
            expected = emb(ids, segments)  # bertlib's BertEmbeddings, in eval mode
            plain = F.layer_norm(summed, summed.shape[-1:])
        with case(f"with a 3 x 9 batch, LayerNorm weights not 1 and 0, hidden_dropout_prob={p}, "
                  + (f"layer_norm_eps={eps[0]}, " if eps else "") + "in eval mode"):
            got = _tensor(_forward_on_sum(student, fields, emb, summed, ids, segments), (3, 9, 8))
            _eval_mode_check(got, expected, p)
            ln = emb.LayerNorm
            check(not (eps and torch.allclose(got, F.layer_norm(summed, (8,), ln.weight, ln.bias), atol=1e-5)),
                  f"your LayerNorm uses torch's default eps (1e-5), not this config's layer_norm_eps={ln.eps:g}: "
                  "use emb.LayerNorm itself")
            check(not torch.allclose(got, plain, atol=1e-5) or torch.allclose(plain, expected, atol=1e-5),
                  "your output is normalised, but without LayerNorm's learned weight and bias: use emb.LayerNorm "
                  "itself (here its weight is not 1 and its bias not 0)")
            check(torch.allclose(got, expected, atol=1e-5),
                  f"the eval-mode output differs from BertEmbeddings': dropout(LayerNorm(sum)) with emb.LayerNorm "
                  f"and emb.dropout; {_max_diff(got, expected)}")
    # Training goes through it, in eval mode too (eval() switches dropout off, not gradients).
    fields, emb = _tiny_embeddings(3325)
    ids, segments = torch.tensor([[5, 9, 2, 30], [7, 7, 1, 0]]), torch.tensor([[0, 0, 1, 1], [0, 1, 1, 1]])
    with case(f"on ids {ids.tolist()}, segments {segments.tolist()}, in eval mode, backpropagating a random "
              "gradient of the output"):
        _same_gradients_through_sum(student, fields, emb, ids, segments, seed=3326)


def test_dropout(student):
    for seed, p, shape in [(303, 0.5, (4, 16, 32)), (3330, 0.2, (8, 32, 64)), (3331, 0.35, (8, 32, 64))]:
        # Your forward in eval and in train mode on the same sum: training must only drop and rescale.
        x = torch.randn(shape, generator=torch.Generator().manual_seed(seed)) * 3 + 1
        fields, emb = _tiny_embeddings(seed, p=p, hidden_size=shape[-1], num_attention_heads=1)
        ids = torch.zeros(shape[:2], dtype=torch.long)
        with torch.no_grad():
            reference = emb.LayerNorm(x)  # what eval mode gives
        name = "the visible test's sum" if seed == 303 else f"a {' x '.join(map(str, shape))} sum"
        with case(f"on {name}, hidden_dropout_prob={p}"):
            evaluated = _tensor(_forward_on_sum(student, fields, emb.eval(), x, ids), shape, "the eval-mode output")
            _eval_mode_check(evaluated, reference, p)
            trained = _tensor(_forward_on_sum(student, fields, emb.train(), x, ids, seed=seed), shape,
                              "the train-mode output")
            dropped = trained == 0
            share = dropped.float().mean().item()
            check(abs(share - p) < 0.05,
                  f"in train mode {share:.0%} of the values are zero; dropout with p={p} zeroes about {p:.0%}"
                  + (" (dropout comes last, on LayerNorm's output: a LayerNorm after it shifts the zeros away; "
                     "and emb.dropout must run in train mode)" if share < 0.01 else ""))
            check(torch.allclose(trained[~dropped], evaluated[~dropped] / (1 - p), atol=1e-5),
                  "in train mode the values kept should be the eval-mode output scaled by 1/(1-p): dropout comes "
                  "after LayerNorm")
            again = _tensor(_forward_on_sum(student, fields, emb.train(), x, ids, seed=seed + 1), shape,
                            "the train-mode output")
            check(not torch.equal(again == 0, dropped),
                  "with another torch seed your dropout zeroes exactly the same values: dropout draws from torch's "
                  "random numbers (emb.dropout does), not from a generator of your own with a fixed seed")
    # Training backpropagates through the train-mode output. With hidden_dropout_prob=0 dropout drops nothing (a
    # hand-written one neither), so the gradient in train mode is the one your eval mode gives: compared with
    # yours, not bertlib's, so that a LayerNorm mistake (part 2's) is not charged here again.
    fields, emb = _tiny_embeddings(3332, p=0.0)
    ids, segments = torch.tensor([[3, 8, 8, 41], [6, 2, 0, 0]]), torch.tensor([[0, 1, 1, 1], [0, 0, 1, 1]])
    stand_ins = {"embedding_sum": linearised(_embedding_sum, emb, ids, segments)}
    cotangent = torch.randn(2, 4, fields["hidden_size"], generator=torch.Generator().manual_seed(3333))
    with case(f"on ids {ids.tolist()}, segments {segments.tolist()}, hidden_dropout_prob=0, backpropagating a "
              "random gradient of the train-mode output"):
        f = student.embeddings_forward
        in_eval = f.gradients(cotangent, _send(fields, emb.eval()), ids, segments, stand_ins=stand_ins)
        in_train = f.gradients(cotangent, _send(fields, emb.train()), ids, segments, stand_ins=stand_ins)
        if in_eval.get("connected") is True:
            compare_gradients(in_train, in_eval["grads"], cotangent.shape, whose="your eval-mode output's")
        check(in_train.get("connected") is True,
              "in train mode no gradient flows back through your output at all (is dropout applied to a detached "
              "copy, through .data, or under torch.no_grad()?)")


# ------------------------------------------------------------------------------------------------ part 4
def _raises_value_error(call, what):
    """Check that ``call()`` raises ValueError in the student's kernel; ``what`` says why it should."""
    try:
        got = call()
    except KernelGone:
        raise
    except StudentError as e:
        check(e.error_type == "ValueError", f"{what} should raise ValueError; your code {e}")
        return
    raise CheckFailed(f"{what} should raise ValueError, got {got!r}")


def _shape(student, cfg_fields, B, T):
    try:
        got = student.embeddings_output_shape(wire.Config(cfg_fields), B, T)
    except KernelGone:
        raise
    except StudentError as e:
        P = cfg_fields["max_position_embeddings"]
        if T == P and e.error_type == "ValueError":
            raise CheckFailed(f"seq_len={T} = max_position_embeddings raised ValueError, but it fits: its positions "
                              f"are 0..{P - 1}, rows of the table. Only a longer sequence has no embedding") from None
        raise
    check(isinstance(got, (tuple, list, torch.Size)) and all(isinstance(n, int) for n in got),
          f"expected a tuple of ints, got {got!r}")
    return tuple(got)


def test_shape(student):
    base = {"max_position_embeddings": 512}  # the rest: BERT-Base's defaults
    with case("BERT-Base, 2 sequences of 128 tokens (the visible test)"):
        got = _shape(student, base, 2, 128)
        check(got == (2, 128, 768), f"got {got}, expected (2, 128, 768)")
    with case("BERT-Base, 513 tokens (the visible test)"):
        _raises_value_error(lambda: student.embeddings_output_shape(wire.Config(base), 1, 513),
                            "BERT-Base has 512 learned positions: 513 tokens")
    gen = torch.Generator().manual_seed(3340)
    for trial in range(4):
        P = int(torch.randint(4, 40, (1,), generator=gen))
        H = int(torch.randint(1, 9, (1,), generator=gen)) * 2
        fields = dict(vocab_size=30, hidden_size=H, num_attention_heads=2, max_position_embeddings=P)
        ref = BertEmbeddings(BertConfig(**fields)).eval()
        for B, T in ((1, P), (3, max(1, P // 2))):
            with torch.no_grad():
                expected = tuple(ref(torch.zeros(B, T, dtype=torch.long)).shape)
            with case(f"with hidden_size={H}, max_position_embeddings={P}, batch_size={B}, seq_len={T}"):
                got = _shape(student, fields, B, T)
                check(got == expected, f"got {got}, expected {expected}"
                      + (": added, not concatenated, the width stays H" if got[-1:] == (3 * H,) else ""))
        with case(f"with max_position_embeddings={P} and seq_len={P + 1}"):
            _raises_value_error(lambda: student.embeddings_output_shape(wire.Config(fields), 2, P + 1),
                                f"a table of {P} learned positions has no row for position {P}: seq_len={P + 1}")
