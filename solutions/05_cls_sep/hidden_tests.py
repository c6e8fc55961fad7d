"""Hidden tests of assignment 5 ([CLS], [SEP], segments, the head on [CLS]), run by the grader outside the
student's kernel.

Each function grades the graded cell of the same name: it calls the student's functions through
``student`` (their kernel, sandboxed), on the visible tests' inputs and on new ones, and checks the data
that comes back against bertlib, here. See bertgrader/checks.py.
"""
import types

import torch

import bertlib
from bertgrader.kernel import wire
from bertgrader.checks import case, check, kind_of, same_gradients, tensor

# While the notebook is graded its kernel has these as stubs: bertlib's input building and its classifier.
SWITCHED_OFF = [
    "bertlib.tokenizer.BertTokenizer", "bertlib.tokenizer.truncate_sequences",
    "bertlib.nsp.truncate_seq_pair", "bertlib.nsp.encode_nsp_example",
    "bertlib.heads.BertForSequenceClassification", "bertlib.encoder.BertPooler", "bertlib.modeling.BertModel",
]

CLS_ID, SEP_ID, PAD_ID = 101, 102, 0
KEYS = ("input_ids", "token_type_ids", "attention_mask")
# What bertlib's tokenizer methods read of a tokenizer (here, in the grader: never sent to the kernel).
_SPECIAL = types.SimpleNamespace(cls_token_id=CLS_ID, sep_token_id=SEP_ID, pad_token_id=PAD_ID)




def _random_ids(gen, n):
    return torch.randint(1000, 30000, (n,), generator=gen).tolist()


def _ints(value, key):
    """One of the three lists as a list of ints (a 1-d tensor is accepted too, as the visible tests do)."""
    if isinstance(value, torch.Tensor):
        check(value.dim() == 1, f"{key} must be one flat list of ints, got a tensor of shape {tuple(value.shape)}")
        value = value.tolist()
    check(isinstance(value, (list, tuple)), f"{key} must be a list of ints, got {kind_of(value)}")
    out = []
    for x in value:
        if isinstance(x, torch.Tensor) and x.numel() == 1:
            x = x.item()
        check(isinstance(x, (int, float)) and float(x) == int(x),  # bools too: True is 1, as int() reads it
              f"{key} must be a list of ints, but it holds {x!r}")
        out.append(int(x))
    return out


def _as_lists(got):
    check(isinstance(got, dict), f"expected a dict with the keys {list(KEYS)}, got {kind_of(got)}")
    missing = [k for k in KEYS if k not in got]
    check(not missing, f"the dict you return has no {missing}; it holds {sorted(map(str, got))}")
    return {k: _ints(got[k], k) for k in KEYS}


def _compare(got, expected, max_length):
    for key in KEYS:
        check(len(got[key]) == max_length,
              f"{key} has {len(got[key])} entries; all three lists have exactly max_length = {max_length} "
              f"(pad with [PAD] = 0): got {got[key]}")
    for key in KEYS:
        check(got[key] == expected[key], f"{key}: got {got[key]}, expected {expected[key]}")


def _expected_single(ids, max_length):
    kept, _ = bertlib.tokenizer.truncate_sequences(list(ids), None, max_length - 2)
    input_ids = bertlib.BertTokenizer.build_inputs_with_special_tokens(_SPECIAL, kept)
    n_pad = max_length - len(input_ids)
    return {"input_ids": input_ids + [PAD_ID] * n_pad,
            "token_type_ids": bertlib.BertTokenizer.create_token_type_ids_from_sequences(_SPECIAL, kept) + [0] * n_pad,
            "attention_mask": [1] * len(input_ids) + [0] * n_pad}


def _expected_pair(ids_a, ids_b, max_length):
    a, b = bertlib.tokenizer.truncate_sequences(list(ids_a), list(ids_b), max_length - 3)
    out = bertlib.nsp.encode_nsp_example(bertlib.nsp.NspExample(a, b, is_random_next=False), _SPECIAL, max_length)
    return {k: out[k] for k in KEYS}


# ------------------------------------------------------------------------------------------------ part 1
def test_single(student):
    encode = student.encode_single
    with case('on the visible test\'s "hello world !" (3 tokens, max_length=8)'):
        got = _as_lists(encode([7592, 2088, 999], 8))
        _compare(got, {"input_ids": [101, 7592, 2088, 999, 102, 0, 0, 0], "token_type_ids": [0] * 8,
                       "attention_mask": [1, 1, 1, 1, 1, 0, 0, 0]}, 8)
    with case("with 10 tokens and max_length=6"):
        got = _as_lists(encode(list(range(2001, 2011)), 6))["input_ids"]
        check(got == [101, 2001, 2002, 2003, 2004, 102],
              f"got input_ids {got}; BERT keeps the first 6 - 2 = 4 tokens: [101, 2001, 2002, 2003, 2004, 102]")
    gen = torch.Generator().manual_seed(401)
    sizes = [(int(torch.randint(0, 30, (1,), generator=gen)), int(torch.randint(2, 24, (1,), generator=gen)))
             for _ in range(12)]
    for n, max_length in sizes + [(0, 5), (4, 6), (9, 2), (1, 3), (1, 2), (7, 6), (7, 6)]:  # one length twice
        ids = _random_ids(gen, n)
        with case(f"with {n} tokens and max_length={max_length}"):
            _compare(_as_lists(encode(ids, max_length)), _expected_single(ids, max_length), max_length)
    # At the boundary: max_length - 2 tokens fit exactly, max_length - 1 are one too many, max_length two.
    for max_length in (3, 8, 17):
        for n in (max_length - 2, max_length - 1, max_length):
            ids = _random_ids(gen, n)
            with case(f"with {n} tokens and max_length={max_length} (at the limit: max_length - 2 tokens fit)"):
                _compare(_as_lists(encode(ids, max_length)), _expected_single(ids, max_length), max_length)


# ------------------------------------------------------------------------------------------------ part 2
def test_pair(student):
    encode = student.encode_pair
    with case("on the visible test's pair of one token each (max_length=6)"):
        got = _as_lists(encode([1001], [2001], 6))
        _compare(got, {"input_ids": [101, 1001, 102, 2001, 102, 0], "token_type_ids": [0, 0, 0, 1, 1, 0],
                       "attention_mask": [1, 1, 1, 1, 1, 0]}, 6)
    with case("with A of 5 and B of 2 tokens, max_length=8"):
        got = _as_lists(encode([1001, 1002, 1003, 1004, 1005], [2001, 2002], 8))["input_ids"]
        check(got == [101, 1001, 1002, 1003, 102, 2001, 2002, 102],
              f"got input_ids {got}; the longer (A) loses tokens from its end until 3 + 2 <= 8 - 3: "
              "[101, 1001, 1002, 1003, 102, 2001, 2002, 102]")
    with case("with A and B of 4 tokens each, max_length=9"):
        got = _as_lists(encode([1001, 1002, 1003, 1004], [2001, 2002, 2003, 2004], 9))["input_ids"]
        check(got == [101, 1001, 1002, 1003, 102, 2001, 2002, 2003, 102],
              f"got input_ids {got}; on a tie B loses first, then A: each keeps 3")
    gen = torch.Generator().manual_seed(402)
    for _ in range(15):
        n_a, n_b = torch.randint(1, 25, (2,), generator=gen).tolist()
        max_length = int(torch.randint(5, 40, (1,), generator=gen))
        ids_a, ids_b = _random_ids(gen, n_a), _random_ids(gen, n_b)
        with case(f"with A of {n_a} and B of {n_b} tokens, max_length={max_length}"):
            _compare(_as_lists(encode(ids_a, ids_b, max_length)), _expected_pair(ids_a, ids_b, max_length),
                     max_length)
    # At the boundary: A and B of max_length - 3 tokens fit exactly, of max_length - 2 are one too many, of
    # max_length two; the longer is A, B, or neither.
    for max_length, n_a, n_b in [(10, 4, 3), (10, 5, 3), (10, 3, 5), (10, 4, 4), (10, 6, 4), (12, 2, 8), (12, 9, 1),
                                 (12, 5, 5), (6, 2, 2),
                                 # an empty segment (B, A or both), and one shape twice with other tokens
                                 (7, 2, 0), (5, 4, 0), (6, 0, 2), (4, 0, 0), (3, 0, 0), (9, 3, 3), (9, 3, 3)]:
        ids_a, ids_b = _random_ids(gen, n_a), _random_ids(gen, n_b)
        limit = "an empty B: the pair is still [CLS] A [SEP] [SEP]" if n_b == 0 else (
            "an empty A" if n_a == 0 else "at the limit: max_length - 3 tokens fit")
        with case(f"with A of {n_a} and B of {n_b} tokens, max_length={max_length} ({limit})"):
            _compare(_as_lists(encode(ids_a, ids_b, max_length)), _expected_pair(ids_a, ids_b, max_length),
                     max_length)


# ------------------------------------------------------------------------------------------------ part 3
def _linear(weight, bias):
    layer = torch.nn.Linear(weight.shape[1], weight.shape[0])
    with torch.no_grad():
        layer.weight.copy_(weight)
        layer.bias.copy_(bias)
    return layer


def _send(linear):
    return wire.Module.of(linear, linear.in_features, linear.out_features)


def _logits(student, hidden, dense, classifier):
    got = tensor(student.cls_logits(hidden, _send(dense), _send(classifier)), "the logits")
    return got.float()


def _check_deterministic(got, again):
    check(all(torch.equal(got, a) for a in again),
          "calls on the same input gave different logits: leave dropout out (this is inference)")


def test_head(student):
    H = 4
    hidden = torch.tensor([[[0.5, -0.5, 0.0, 1.0],   # [CLS]
                            [2.0, 2.0, 2.0, 2.0],    # a word
                            [-3.0, 1.0, 0.0, 0.0],   # [SEP]
                            [9.0, 9.0, 9.0, 9.0]]])  # [PAD]
    identity, pick = _linear(torch.eye(H), torch.zeros(H)), _linear(torch.eye(H)[:2], torch.zeros(2))
    with case("on the visible test's sequence (an identity pooler, a classifier that picks 2 features)"):
        got = _logits(student, hidden, identity, pick)
        check(tuple(got.shape) == (1, 2), f"expected logits of shape (B, num_labels) = (1, 2), got {tuple(got.shape)}")
        _check_deterministic(got, [_logits(student, hidden, identity, pick) for _ in range(3)])
        candidates = {"[CLS] (position 0)": hidden[:, 0], "[SEP]": hidden[:, 2], "the last position": hidden[:, -1],
                      "the mean over positions": hidden.mean(1)}
        expected = torch.tanh(candidates["[CLS] (position 0)"])[:, :2]
        seen = [name for name, v in candidates.items() if torch.allclose(got, torch.tanh(v)[:, :2], atol=1e-5)]
        kept = got != 0
        ratio = got[kept] / expected[kept] if kept.any() else torch.zeros(1)
        if not seen and bool((ratio > 1.0001).all()) and torch.allclose(ratio, ratio[:1].expand_as(ratio), atol=1e-4):
            seen = ["a dropout of the pooled vector (zeros, and the rest scaled by 1 / (1 - p)): leave dropout out, "
                    "this is inference"]
        check(torch.allclose(got, expected, atol=1e-5),
              f"got logits {got.tolist()}, expected {expected.tolist()} from the [CLS] vector through dense and tanh"
              + (f"; yours come from {seen[0]}" if seen else ""))
    gen = torch.Generator().manual_seed(403)
    for trial in range(3):
        torch.manual_seed(4030 + trial)
        cfg = bertlib.BertConfig(vocab_size=60, hidden_size=16, num_hidden_layers=1, num_attention_heads=2,
                                 intermediate_size=24, num_labels=3 + trial)
        model = bertlib.BertForSequenceClassification(cfg).eval()
        with torch.no_grad():  # biases start at 0: make them count, so that a layer without its bias shows
            for layer in (model.bert.pooler.dense, model.classifier):
                layer.bias.copy_(torch.randn(layer.bias.shape, generator=gen) * 0.5)
        lengths = torch.randint(2, 10, (4,), generator=gen)
        T = int(lengths.max())
        mask = (torch.arange(T)[None] < lengths[:, None]).long()
        ids = torch.randint(1, 60, (4, T), generator=gen) * mask
        with torch.no_grad():
            hidden = model.bert(ids, attention_mask=mask).last_hidden_state  # (B, T, H)
            expected = model(ids, attention_mask=mask).logits  # (B, num_labels)
        with case(f"with a batch of 4 padded sequences (lengths {lengths.tolist()}) from a small BERT, "
                  f"H=16 and num_labels={cfg.num_labels}"):
            dense, classifier = model.bert.pooler.dense, model.classifier
            got = _logits(student, hidden, dense, classifier)
            check(tuple(got.shape) == tuple(expected.shape),
                  f"expected logits of shape (B, num_labels) = {tuple(expected.shape)}, got {tuple(got.shape)}")
            _check_deterministic(got, [_logits(student, hidden, dense, classifier)])
            with torch.no_grad():
                first_row = classifier(torch.tanh(dense(hidden[:1, 0]))).expand_as(expected)
                no_bias = torch.tanh(hidden[:, 0] @ dense.weight.T) @ classifier.weight.T
            wrong_rows = [b for b in range(4) if not torch.allclose(got[b], expected[b], atol=1e-5)]
            other = torch.randn(hidden.shape, generator=gen)  # the same shape, other content
            with torch.no_grad():
                expected_other = classifier(torch.tanh(dense(other[:, 0])))
            got_other = _logits(student, other, dense, classifier)
            check(torch.allclose(got_other, expected_other, atol=1e-5),
                  "on a second batch of the same shape, other vectors, the logits are not that batch's: they "
                  "come from each call's own last_hidden_state (nothing kept from an earlier call)")
            if trial == 0:  # fine-tuning trains through the head: its gradients, against the reference's
                def reference(h, pooler, head):
                    return head(torch.tanh(pooler(h[:, 0])))

                same_gradients(student.cls_logits, reference, hidden, _send(dense), _send(classifier), seed=404)
            check(not wrong_rows,
                  f"the logits of rows {wrong_rows} differ from BertForSequenceClassification's"
                  + ("; every row gets the logits of row 0: read each sequence's own [CLS], "
                     "last_hidden_state[:, 0]" if torch.allclose(got, first_row, atol=1e-5) else
                     "; they are those of the layers' weights without their biases: call the layers, "
                     "pooler_dense(x) and classifier(x)" if torch.allclose(got, no_bias, atol=1e-5) else
                     ": each row's logits come from its own [CLS] vector, through pooler_dense, tanh and "
                     "classifier"))
