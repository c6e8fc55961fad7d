"""Hidden tests of assignment 3 (how many parameters?), run by the grader outside the student's kernel.

Each function grades the graded cell of the same name: it calls the student's functions through
``student`` (their kernel, sandboxed) with configs sent as data, on the visible tests' configs and on
random ones, and checks the counts that come back against bertlib's closed forms, here. See
bertgrader/checks.py.
"""
import contextlib
import dataclasses

import torch

import bertlib
from bertlib import BertConfig
from bertgrader.kernel import wire
from bertgrader.checks import CheckFailed, case, check
from bertgrader.remote import KernelGone, Remote, StudentError

# While the notebook is graded its kernel has these as stubs: bertlib's own counting and its modules.
SWITCHED_OFF = ["bertlib.params.count_parameters", "bertlib.params.embeddings_breakdown",
                "bertlib.params.layer_breakdown", "bertlib.params.count_module_parameters",
                "bertlib.params._linear", "bertlib.params._layer_norm", "bertlib.modeling.BertModel",
                "bertlib.heads.BertForPreTraining", "bertlib.embeddings.BertEmbeddings",
                "bertlib.encoder.BertLayer"]

MODEL_KEYS = {"embeddings", "encoder", "pooler", "total"}
HEAD_KEYS = {"cls.predictions", "cls.seq_relationship"}


def _random_configs(seed, n=6):
    """Fresh, valid configs of all shapes (H a multiple of the head count, as BertConfig demands)."""
    gen = torch.Generator().manual_seed(seed)
    pick = lambda lo, hi: int(torch.randint(lo, hi + 1, (1,), generator=gen))  # noqa: E731
    configs = []
    for _ in range(n):
        heads = pick(1, 16)
        configs.append(BertConfig(vocab_size=pick(50, 120_000), hidden_size=heads * pick(1, 96),
                                  num_attention_heads=heads, num_hidden_layers=pick(1, 48),
                                  intermediate_size=pick(1, 8192), max_position_embeddings=pick(1, 4096),
                                  type_vocab_size=pick(1, 4), num_labels=pick(3, 7)))
    return configs + [ODD, HUGE]


# Fields the closed forms do not read set away from their defaults too (num_labels is not the NSP head's 2,
# type_vocab_size not 2), so a count that reads the wrong field cannot agree with the right one by chance.
ODD = BertConfig(vocab_size=101, hidden_size=36, num_attention_heads=3, num_hidden_layers=3, intermediate_size=52,
                 max_position_embeddings=77, type_vocab_size=3, num_labels=5)
# A configuration far too big to build (about 10^21 parameters): every weight matrix, and every table but the
# segment table, has 2^63 entries or more, so no such tensor can be made, not even on the meta device. The task
# asks for a closed form in Python ints, which counts it exactly; building modules and summing their sizes cannot.
HUGE = BertConfig(vocab_size=3 * 2**31, hidden_size=2**32, num_attention_heads=16, num_hidden_layers=24,
                  intermediate_size=2**32 + 16, max_position_embeddings=2**31 + 1, type_vocab_size=3, num_labels=5)


@contextlib.contextmanager
def _closed_form(cfg):
    """The case of ``cfg``; on HUGE, an error in the student's code is explained (modules cannot be built)."""
    with case(f"with {_name(cfg)}" + (" (too big to build)" if cfg is HUGE else "")):
        try:
            yield
        except StudentError as e:
            if cfg is not HUGE or isinstance(e, KernelGone):
                raise
            raise CheckFailed(f"your code {e}: this configuration is far too big to build (its tensors would "
                              "have 2^63 entries or more); count it in closed form, in Python ints, without "
                              "building modules (not even on the meta device)") from None


def _send(cfg: BertConfig) -> wire.Config:
    """A config as data: the kernel rebuilds the same BertConfig from its fields."""
    return wire.Config({f.name: getattr(cfg, f.name) for f in dataclasses.fields(cfg) if f.name != "extra"})


def _name(cfg: BertConfig) -> str:
    return (f"V={cfg.vocab_size}, P={cfg.max_position_embeddings}, S={cfg.type_vocab_size}, H={cfg.hidden_size}, "
            f"I={cfg.intermediate_size}, L={cfg.num_hidden_layers}, {cfg.num_attention_heads} heads, "
            f"num_labels={cfg.num_labels}")


def _kind(value) -> str:
    return f"a {value._target.type_name or 'object'}" if isinstance(value, Remote) else type(value).__name__


def _int(value, what):
    """``value`` checked to be a Python int (what travels back as an int: not a tensor, float or numpy int)."""
    shown = "" if isinstance(value, Remote) else f" {value!r}"
    check(isinstance(value, int) and not isinstance(value, bool),
          f"{what}: return a Python int, got {_kind(value)}{shown} (int(...) turns a tensor or a float into one)")
    return value


def _off_by(got, expected, H):
    d = got - expected
    return f"counted {got:,}, expected {expected:,} (you are off by {d:,} = {d / H:g} x H)"


def _dict(got, keys, what):
    check(isinstance(got, dict) and set(got) == keys,
          f"expected a dict with keys {', '.join(sorted(keys))}; got "
          + (f"the keys {sorted(got)}" if isinstance(got, dict) else _kind(got)))
    for key in sorted(keys):
        _int(got[key], f"{what} {key!r}")
    return got


# ------------------------------------------------------------------------------------------------ part 1
def test_embeddings(student):
    f = student.embeddings_params
    with case("BERT-Base (the visible test)"):
        got = _int(f(_send(BertConfig.base())), "the count")
        check(got == 23_837_184, f"BERT-Base's embeddings: {_off_by(got, 23_837_184, 768)}")
    for cfg in _random_configs(201):
        expected = bertlib.params.embeddings_breakdown(cfg)["total"]
        with _closed_form(cfg):
            got = _int(f(_send(cfg)), "the count")
            check(got == expected, f"{_off_by(got, expected, cfg.hidden_size)}: three tables of V, P and S "
                                   "rows, H wide, and one LayerNorm")


# ------------------------------------------------------------------------------------------------ part 2
def test_layer(student):
    f = student.layer_params
    base = BertConfig.base()
    counts = {}
    for heads in (12, 1, 4):
        with case(f"BERT-Base with {heads} attention heads" + (" (the visible test)" if heads == 12 else "")):
            counts[heads] = _int(f(_send(base.replace(num_attention_heads=heads))), "the count")
    check(len(set(counts.values())) == 1,
          f"BERT-Base counted with 12, 1 and 4 attention heads: {', '.join(f'{n:,}' for n in counts.values())}. "
          "The count must not depend on num_attention_heads: the heads split the H columns of Q, K and V "
          "between them, they add no parameters")
    with case("BERT-Base (the visible test)"):
        check(counts[12] == 7_087_872, f"one BERT-Base layer: {_off_by(counts[12], 7_087_872, 768)}")
    for cfg in _random_configs(202):
        expected = bertlib.params.layer_breakdown(cfg)["total"]
        with _closed_form(cfg):
            got = _int(f(_send(cfg)), "the count")
            check(got == expected, f"{_off_by(got, expected, cfg.hidden_size)}: Q, K, V and the attention output "
                                   "(H -> H), H -> I and I -> H, each with its bias, and two LayerNorms")


# ------------------------------------------------------------------------------------------------ part 3
def _model_with_parts(student, parts, cfg):
    """bert_model_params(cfg) in the kernel while the notebook's embeddings_params and layer_params are
    stand-ins returning the correct counts for ``cfg`` (so a part 1 or 2 mistake is not charged again); each
    stand-in must have been given ``cfg`` itself (bert_model_params' own config, passed on)."""
    embeddings, layer = parts[cfg]
    got, calls = student.bert_model_params.call_standing_in({"embeddings_params": embeddings, "layer_params": layer},
                                                            _send(cfg))
    fields = {f.name: getattr(cfg, f.name) for f in dataclasses.fields(cfg) if f.name != "extra"}
    for name in ("embeddings_params", "layer_params"):
        check(calls[name], f"bert_model_params() never called {name}(): use your parts 1 and 2 (while this part "
                           "is graded they are replaced by correct ones)")
    for name, made in calls.items():
        for call in made:
            given = call["args"][0] if call["args"] else next(iter(call["kwargs"].values()), None)
            check(isinstance(given, dict) and {k: given.get(k) for k in fields} == fields,
                  f"{name}() should be given bert_model_params' own cfg, passed on unchanged")
    return got


def test_model(student):
    base, large = BertConfig.base(), BertConfig.large()
    known = {base: (23_837_184, 7_087_872), large: (31_782_912, 12_596_224)}
    with case("BERT-Base (the visible test; your parts 1 and 2 replaced by correct ones)"):
        got = _dict(_model_with_parts(student, known, base), MODEL_KEYS, "BERT-Base")
        expected = {"embeddings": 23_837_184, "encoder": 85_054_464, "pooler": 590_592, "total": 109_482_240}
        for key in ("embeddings", "encoder", "pooler", "total"):
            check(got[key] == expected[key], f"BERT-Base {key}: counted {got[key]:,}, expected {expected[key]:,}")
    with case("BERT-Large (the visible test)"):
        got = _dict(_model_with_parts(student, known, large), MODEL_KEYS, "BERT-Large")
        check(got["total"] == 335_141_888, f"BERT-Large: counted {got['total']:,}, expected 335,141,888")

    configs = _random_configs(203) + [BertConfig(vocab_size=97, hidden_size=24, num_attention_heads=3,
                                                 num_hidden_layers=2, intermediate_size=40)]
    parts = {c: (bertlib.params.embeddings_breakdown(c)["total"], bertlib.params.layer_breakdown(c)["total"])
             for c in configs}
    small = configs[-1]
    if bertlib.count_module_parameters(bertlib.BertModel(small))["total"] != bertlib.count_parameters(small)["total"]:
        raise CheckFailed("the grader's closed form disagrees with torch's count (tell your instructor)")
    for cfg in configs:
        expected = bertlib.count_parameters(cfg)
        with _closed_form(cfg):
            got = _dict(_model_with_parts(student, {cfg: parts[cfg]}, cfg), MODEL_KEYS, "the count")
            for key, meaning in [("embeddings", "embeddings_params(cfg)"), ("encoder", "L layers"),
                                 ("pooler", "a dense H -> H, with its bias"),
                                 ("total", "the sum of the other three")]:
                check(got[key] == expected[key], f"{key}: counted {got[key]:,}, expected {expected[key]:,} ({meaning})")


# ------------------------------------------------------------------------------------------------ part 4
def test_heads(student):
    f = student.pretraining_heads_params
    with case("BERT-Base (the visible test)"):
        got = _dict(f(_send(BertConfig.base())), HEAD_KEYS, "BERT-Base")
        check(got["cls.seq_relationship"] == 1_538,
              f"NSP head: counted {got['cls.seq_relationship']:,}, expected 1,538")
        check(got["cls.predictions"] == 622_650,
              f"MLM head: counted {got['cls.predictions']:,}, expected 622,650 (off by "
              f"{got['cls.predictions'] - 622_650:,}; V x H = 23,440,896 would mean the tied decoder is counted twice)")
    for cfg in _random_configs(204):
        full = bertlib.count_parameters(cfg, with_pretraining_heads=True)
        H, V = cfg.hidden_size, cfg.vocab_size
        with _closed_form(cfg):
            got = _dict(f(_send(cfg)), HEAD_KEYS, "the count")
            nsp, mlm = got["cls.seq_relationship"], full["cls.seq_relationship"]
            check(nsp == mlm, f"NSP head: counted {nsp:,}, expected {mlm:,} (a linear layer H -> 2, with its bias: two "
                              "outputs, IsNext and NotNext, whatever the config's num_labels or type_vocab_size)")
            got_mlm, mlm = got["cls.predictions"], full["cls.predictions"]
            check(got_mlm == mlm, f"MLM head: counted {got_mlm:,}, expected {mlm:,} (off by {got_mlm - mlm:,}"
                                  + (": the tied V x H decoder weight counted again" if got_mlm - mlm == V * H else
                                     "; the transform (dense H -> H and LayerNorm) plus one bias per word") + ")")
