"""bertlib.nsp: NSP pairs follow the original rules; every token is tagged with where it came from."""
import random

import pytest

from bertlib.nsp import IS_NEXT, NOT_NEXT, NspExample, create_nsp_examples, encode_nsp_example, truncate_seq_pair


def make_documents(num_docs, seed, sentences=(5, 60), sentence_len=(3, 20)):
    """Documents whose tokens are (doc, sentence, position) tuples, so every token knows its origin."""
    rng = random.Random(seed)
    return [
        [[(d, s, t) for t in range(rng.randint(*sentence_len))] for s in range(rng.randint(*sentences))]
        for d in range(num_docs)
    ]


def doc_of(tokens):
    docs = {token[0] for token in tokens}
    assert len(docs) == 1, f"a segment mixes documents {docs}"
    return docs.pop()


def is_contiguous(tokens, document):
    """True if tokens are a run of consecutive tokens of document (flattened across sentences)."""
    flat = [token for sentence in document for token in sentence]
    start = flat.index(tokens[0])
    return flat[start:start + len(tokens)] == list(tokens)


@pytest.fixture(scope="module")
def documents():
    # long documents: a chunk with a single sentence (at a document's end) is always NotNext, and
    # long documents keep that excess over one half small
    return make_documents(200, seed=0, sentences=(50, 150))


@pytest.fixture(scope="module")
def examples(documents):
    return create_nsp_examples(documents, max_num_tokens=61, rng=random.Random(42), short_seq_prob=0.0)


def test_about_half_are_not_next(examples):
    assert len(examples) >= 2000
    not_next = sum(example.is_random_next for example in examples) / len(examples)
    assert abs(not_next - 0.5) <= 0.03, f"NotNext fraction {not_next:.3f} over {len(examples)} examples"


def test_labels_follow_transformers_convention():
    assert (IS_NEXT, NOT_NEXT) == (0, 1)
    assert NspExample(["a"], ["b"], is_random_next=False).label == 0
    assert NspExample(["a"], ["b"], is_random_next=True).label == 1


def test_every_example_fits_the_budget_and_is_not_empty(documents):
    for max_num_tokens, short_seq_prob in [(61, 0.0), (61, 0.1), (125, 0.1), (13, 0.5), (2, 0.0)]:
        for example in create_nsp_examples(documents, max_num_tokens, random.Random(1), short_seq_prob):
            assert len(example.tokens_a) >= 1 and len(example.tokens_b) >= 1
            assert len(example.tokens_a) + len(example.tokens_b) <= max_num_tokens


def test_not_next_b_comes_from_another_document(documents, examples):
    random_ones = [example for example in examples if example.is_random_next]
    assert random_ones
    for example in random_ones:
        doc_a, doc_b = doc_of(example.tokens_a), doc_of(example.tokens_b)
        assert doc_a != doc_b, "a NotNext B came from A's own document"
        assert is_contiguous(example.tokens_a, documents[doc_a])
        assert is_contiguous(example.tokens_b, documents[doc_b])


def test_is_next_b_comes_after_a_in_the_same_document(documents, examples):
    is_next = [example for example in examples if not example.is_random_next]
    assert is_next
    for example in is_next:
        a, b = example.tokens_a, example.tokens_b
        doc = doc_of(a)
        assert doc_of(b) == doc, "an IsNext B came from another document"
        assert is_contiguous(a, documents[doc]) and is_contiguous(b, documents[doc])
        assert (b[0][1], b[0][2]) > (a[-1][1], a[-1][2]), "B does not come after A"


def test_is_next_b_is_the_next_sentences_when_nothing_is_truncated():
    # A chunk grows until it reaches the budget, so most pairs get truncated (at either end, at
    # random); with a budget larger than any document nothing is, and the continuation is exact.
    documents = make_documents(100, seed=2, sentences=(2, 12), sentence_len=(1, 8))
    examples = create_nsp_examples(documents, max_num_tokens=10_000, rng=random.Random(4))
    is_next = [example for example in examples if not example.is_random_next]
    assert len(is_next) > 30
    for example in is_next:
        a, b = example.tokens_a, example.tokens_b
        doc = doc_of(a)
        assert doc_of(b) == doc and is_contiguous(a, documents[doc]) and is_contiguous(b, documents[doc])
        assert a[0][2] == 0 and b[0][2] == 0, "A and B should start at a sentence start"
        assert a[-1][2] == len(documents[doc][a[-1][1]]) - 1, "A should end at a sentence end"
        assert b[0][1] == a[-1][1] + 1, "B should start with the sentence right after A"


def test_every_sentence_is_used_once_as_a_or_is_next_b():
    # With a budget larger than any document nothing is truncated, so the sentences put back after a
    # random B must come out again: each document is covered exactly once by its own segments.
    documents = make_documents(30, seed=5, sentences=(1, 12), sentence_len=(1, 6))
    examples = create_nsp_examples(documents, max_num_tokens=10_000, rng=random.Random(3))
    own = {d: [] for d in range(len(documents))}
    for example in examples:
        own[doc_of(example.tokens_a)].extend(example.tokens_a)
        if not example.is_random_next:
            own[doc_of(example.tokens_b)].extend(example.tokens_b)
    for d, document in enumerate(documents):
        assert own[d] == [token for sentence in document for token in sentence]


def test_single_sentence_chunks_are_always_not_next():
    documents = [[[f"d{d}s{s}"] * 5 for s in range(4)] for d in range(3)]
    # the target (4 tokens) is reached by every sentence alone: every chunk has one sentence
    examples = create_nsp_examples(documents, max_num_tokens=4, rng=random.Random(0), short_seq_prob=0.0)
    assert examples and all(example.is_random_next for example in examples)


def test_same_seed_same_examples_other_seed_other_examples(documents):
    def run(seed):
        return create_nsp_examples(documents, 61, random.Random(seed))

    assert run(7) == run(7)
    assert run(7) != run(8)


def test_input_documents_are_not_modified(documents):
    before = [[list(sentence) for sentence in doc] for doc in documents]
    create_nsp_examples(documents, 20, random.Random(0), short_seq_prob=0.3)
    assert documents == before


def test_fewer_than_two_documents_is_an_error():
    with pytest.raises(ValueError, match="at least 2"):
        create_nsp_examples([[["a", "b"], ["c"]]], 10, random.Random(0))
    with pytest.raises(ValueError, match="at least 2"):
        create_nsp_examples([[["a", "b"], ["c"]], [], [[]]], 10, random.Random(0))
    with pytest.raises(ValueError, match="max_num_tokens"):
        create_nsp_examples([[["a"]], [["b"]]], 1, random.Random(0))
    with pytest.raises(ValueError, match="short_seq_prob"):
        create_nsp_examples([[["a"]], [["b"]]], 10, random.Random(0), short_seq_prob=1.5)
    with pytest.raises(TypeError):
        create_nsp_examples([[["a"]], [["b"]]], 10, rng=0)


@pytest.mark.parametrize("documents, message", [
    ("The cat sat. The dog barked.", "got one str"),
    (["The cat sat.", "The dog barked."], "got a document that is a str: 'The cat sat.'"),
    ([["The cat sat.", "It was tired."], ["The dog barked."]], "got a sentence that is a str, not tokens"),
    ([[["the", "cat"]], [b"dog"]], "got a sentence that is a bytes"),
], ids=["text", "documents as text", "sentences as text", "bytes"])
def test_text_where_tokens_belong_is_an_error(documents, message):
    """A str would be iterated character by character: each character a document, a sentence or a token."""
    with pytest.raises(TypeError, match=message) as e:
        create_nsp_examples(documents, 10, random.Random(0))
    assert "each a list of sentences, each a list of tokens" in str(e.value)


def expected_lengths(len_a, len_b, budget):
    """Closed form of the rule "pop from the longer, from B on a tie"."""
    if len_a + len_b <= budget:
        return len_a, len_b
    shorter = min(len_a, len_b)
    if 2 * shorter <= budget:  # only the longer one is cut
        return (budget - shorter, shorter) if len_a > len_b else (shorter, budget - shorter)
    return (budget + 1) // 2, budget // 2  # both cut to the middle; ties go against B, so A keeps the odd one


def test_truncate_seq_pair_rule_on_random_lengths():
    rng = random.Random(0)
    for _ in range(3000):
        len_a, len_b, budget = rng.randint(0, 80), rng.randint(0, 80), rng.randint(0, 120)
        a, b = list(range(len_a)), list(range(100, 100 + len_b))
        truncate_seq_pair(a, b, budget)  # rng=None: always from the end
        assert (len(a), len(b)) == expected_lengths(len_a, len_b, budget), (len_a, len_b, budget)
        assert a == list(range(len(a))) and b == list(range(100, 100 + len(b)))

        a, b = list(range(len_a)), list(range(100, 100 + len_b))
        truncate_seq_pair(a, b, budget, rng=random.Random(budget))  # front or back at random
        assert (len(a), len(b)) == expected_lengths(len_a, len_b, budget)
        assert a == list(range(a[0], a[0] + len(a))) if a else True  # still a contiguous slice
        assert b == list(range(b[0], b[0] + len(b))) if b else True


def test_truncate_seq_pair_with_rng_cuts_both_ends():
    a, b = list(range(100)), [1000]
    truncate_seq_pair(a, b, 51, rng=random.Random(0))
    assert len(a) == 50 and 0 < a[0] and a[-1] < 99, "expected tokens removed from the front and the back"


def test_truncate_seq_pair_examples():
    a, b = list("abcdef"), list("xy")
    truncate_seq_pair(a, b, 5)
    assert (a, b) == (list("abc"), list("xy"))
    a, b = list("abc"), list("xyz")
    truncate_seq_pair(a, b, 4)
    assert (a, b) == (list("ab"), list("xy"))
    a, b = list("abc"), list("xyz")
    truncate_seq_pair(a, b, 5)
    assert (a, b) == (list("abc"), list("xy"))


class StubTokenizer:
    pad_token_id, cls_token_id, sep_token_id = 0, 101, 102
    vocab = {"the": 1996, "cat": 4937, "sat": 2938, "down": 2091}

    def convert_tokens_to_ids(self, tokens):
        return [self.vocab[token] for token in tokens]


def test_encode_nsp_example_layout():
    example = NspExample(["the", "cat"], ["sat", "down", "the"], is_random_next=True)
    encoded = encode_nsp_example(example, StubTokenizer(), max_length=10)
    assert encoded == {
        "input_ids": [101, 1996, 4937, 102, 2938, 2091, 1996, 102, 0, 0],
        "token_type_ids": [0, 0, 0, 0, 1, 1, 1, 1, 0, 0],
        "attention_mask": [1, 1, 1, 1, 1, 1, 1, 1, 0, 0],
        "next_sentence_label": 1,
    }


def test_encode_nsp_example_with_ids_and_exact_length():
    example = NspExample([7, 8], [9], is_random_next=False)
    encoded = encode_nsp_example(example, StubTokenizer(), max_length=6)
    assert encoded["input_ids"] == [101, 7, 8, 102, 9, 102]
    assert encoded["token_type_ids"] == [0, 0, 0, 0, 1, 1]
    assert encoded["attention_mask"] == [1] * 6
    assert encoded["next_sentence_label"] == 0
    with pytest.raises(ValueError, match="max_length"):
        encode_nsp_example(example, StubTokenizer(), max_length=5)


def test_encode_every_created_example_fits_max_seq_length():
    documents = [[[f"w{d}{s}{t}" for t in range(2 + (s + d) % 7)] for s in range(9)] for d in range(6)]

    class Vocab(StubTokenizer):
        def convert_tokens_to_ids(self, tokens):
            return [1000 + len(token) for token in tokens]

    max_seq_length = 16
    for example in create_nsp_examples(documents, max_seq_length - 3, random.Random(0)):
        encoded = encode_nsp_example(example, Vocab(), max_seq_length)
        assert all(len(encoded[key]) == max_seq_length for key in ("input_ids", "token_type_ids", "attention_mask"))
        sep = [i for i, token in enumerate(encoded["input_ids"]) if token == 102]
        assert sep == [len(example.tokens_a) + 1, len(example.tokens_a) + len(example.tokens_b) + 2]


def test_encode_matches_the_bertlib_tokenizer_on_a_pair(minilm_dir):
    tokenizer_module = pytest.importorskip("bertlib.tokenizer")
    tokenizer = tokenizer_module.BertTokenizer.from_pretrained(minilm_dir)
    text_a, text_b = "The cat sat on the mat.", "Then it fell asleep in the sun."
    example = NspExample(tokenizer.tokenize(text_a), tokenizer.tokenize(text_b), is_random_next=False)
    encoded = encode_nsp_example(example, tokenizer, max_length=24)
    expected = tokenizer(text_a, text_b, padding="max_length", max_length=24)
    for key in ("input_ids", "token_type_ids", "attention_mask"):
        assert encoded[key] == list(expected[key]), key
