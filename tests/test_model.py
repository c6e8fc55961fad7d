"""bertlib's model against transformers: sizes, outputs, losses, checkpoints, padding, bad input."""
import json
import os
import random

import pytest
import torch
import transformers

import bertlib
from bertlib import (
    BertConfig,
    BertForMaskedLM,
    BertForPreTraining,
    BertForQuestionAnswering,
    BertForSequenceClassification,
    BertForTokenClassification,
    BertModel,
    CheckpointMismatchError,
    count_module_parameters,
    count_parameters,
)
from bertlib.attention import eager_attention

TOL = 1e-5


def random_config(rng: random.Random, **overrides) -> BertConfig:
    """A config of odd sizes, so no dimension is accidentally equal to another."""
    heads = rng.choice([1, 2, 3, 5])
    fields = dict(
        vocab_size=rng.randint(50, 300),
        hidden_size=heads * rng.choice([3, 7, 8, 11]),
        num_hidden_layers=rng.randint(1, 3),
        num_attention_heads=heads,
        intermediate_size=rng.randint(10, 70),
        max_position_embeddings=rng.randint(24, 64),
        type_vocab_size=rng.randint(1, 4),
        hidden_act=rng.choice(["gelu", "relu", "gelu_new"]),
        layer_norm_eps=rng.choice([1e-12, 1e-5]),
    )
    return BertConfig(**{**fields, **overrides})


def padded_batch(cfg: BertConfig, gen: torch.Generator, B: int = 4, T: int = 19):
    ids = torch.randint(0, cfg.vocab_size, (B, T), generator=gen)  # (B, T)
    lengths = torch.tensor([T, T - 5, 3, T - 1][:B])
    attention_mask = (torch.arange(T)[None, :] < lengths[:, None]).long()  # (B, T)
    ids = ids.masked_fill(attention_mask == 0, cfg.pad_token_id)
    token_type_ids = torch.randint(0, cfg.type_vocab_size, (B, T), generator=gen) * attention_mask
    return ids, attention_mask, token_type_ids


def to_transformers(model, tmp_path, cls, attn="eager"):
    model.save_pretrained(tmp_path)
    return cls.from_pretrained(tmp_path, attn_implementation=attn).eval()


# ----------------------------------------------------------------------------- sizes
def test_exact_sizes():
    assert count_parameters(BertConfig.base())["total"] == 109_482_240
    assert count_parameters(BertConfig.large())["total"] == 335_141_888
    assert count_parameters(BertConfig.base(), with_pretraining_heads=True)["total"] == 110_106_428
    base = count_parameters(BertConfig.base())
    assert base["embeddings"] == 23_837_184
    assert base["encoder"] == 12 * 7_087_872
    assert base["pooler"] == 590_592


@pytest.mark.parametrize("cls", [BertModel, BertForPreTraining])
def test_module_counts_base_and_large(cls):
    for cfg in (BertConfig.base(), BertConfig.large()):
        model = cls(cfg)
        expected = count_parameters(cfg, with_pretraining_heads=cls is BertForPreTraining)
        assert count_module_parameters(model) == expected
        assert sum(p.numel() for p in model.parameters()) == expected["total"]
        hf_cls = getattr(transformers, cls.__name__)
        if cfg.num_hidden_layers == 12:  # one transformers build is enough to pin the total
            hf = hf_cls(transformers.BertConfig(**{k: v for k, v in cfg.to_dict().items() if k != "model_type"}))
            assert sum(p.numel() for p in hf.parameters()) == expected["total"]


def test_closed_form_equals_module_count_on_random_configs():
    rng = random.Random(0)
    for _ in range(25):
        cfg = random_config(rng)
        assert count_module_parameters(BertModel(cfg)) == count_parameters(cfg)
        assert count_module_parameters(BertForPreTraining(cfg)) == count_parameters(cfg, with_pretraining_heads=True)


# ----------------------------------------------------------------------------- equality with transformers
@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("attn", ["eager", "sdpa"])
def test_bert_model_equals_transformers(tmp_path, seed, attn):
    rng = random.Random(seed)
    cfg = random_config(rng, attn_implementation=attn)
    torch.manual_seed(seed)
    ours = BertModel(cfg).eval()
    theirs = to_transformers(ours, tmp_path, transformers.BertModel, attn)
    ids, mask, types = padded_batch(cfg, torch.Generator().manual_seed(seed))
    with torch.no_grad():
        a = ours(ids, attention_mask=mask, token_type_ids=types)
        b = theirs(input_ids=ids, attention_mask=mask, token_type_ids=types)
    real = mask.bool()
    assert (a.last_hidden_state - b.last_hidden_state)[real].abs().max() <= TOL
    assert (a.pooler_output - b.pooler_output).abs().max() <= TOL


@pytest.mark.parametrize("seed", range(4))
def test_pretraining_logits_and_losses_equal_transformers(tmp_path, seed):
    rng = random.Random(100 + seed)
    cfg = random_config(rng)
    torch.manual_seed(seed)
    ours = BertForPreTraining(cfg).eval()
    theirs = to_transformers(ours, tmp_path, transformers.BertForPreTraining)
    gen = torch.Generator().manual_seed(seed)
    ids, mask, types = padded_batch(cfg, gen)
    labels = torch.where((torch.rand(ids.shape, generator=gen) < 0.3) & mask.bool(), ids, -100)
    nsp = torch.randint(0, 2, (ids.size(0),), generator=gen)
    with torch.no_grad():
        a = ours(ids, mask, types, labels=labels, next_sentence_label=nsp)
        b = theirs(input_ids=ids, attention_mask=mask, token_type_ids=types, labels=labels, next_sentence_label=nsp)
    real = mask.bool()
    assert (a.prediction_logits - b.prediction_logits)[real].abs().max() <= TOL
    assert (a.seq_relationship_logits - b.seq_relationship_logits).abs().max() <= TOL
    assert abs(a.loss.item() - b.loss.item()) <= TOL
    # The fast path that projects only the labelled positions gives the same loss.
    with torch.no_grad():
        fast = ours(ids, mask, types, labels=labels, next_sentence_label=nsp, logits_only_at_labels=True)
    assert abs(fast.loss.item() - a.loss.item()) <= TOL
    assert fast.prediction_logits.shape == (int((labels != -100).sum()), cfg.vocab_size)


def test_task_heads_equal_transformers(tmp_path):
    cfg = random_config(random.Random(7), num_labels=3)
    gen = torch.Generator().manual_seed(7)
    ids, mask, types = padded_batch(cfg, gen)
    cases = [
        (BertForSequenceClassification, dict(labels=torch.tensor([0, 2, 1, 1])), ["logits", "loss"]),
        (BertForTokenClassification, dict(labels=torch.randint(0, 3, ids.shape, generator=gen)), ["logits", "loss"]),
        (BertForQuestionAnswering, dict(start_positions=torch.tensor([1, 2, 0, 30]),
                                        end_positions=torch.tensor([3, 2, 1, 4])),
         ["start_logits", "end_logits", "loss"]),
        (BertForMaskedLM, dict(labels=torch.where(mask.bool(), ids, -100)), ["logits", "loss"]),
    ]
    for i, (cls, kwargs, fields) in enumerate(cases):
        torch.manual_seed(i)
        ours = cls(cfg).eval()
        theirs = to_transformers(ours, tmp_path / cls.__name__, getattr(transformers, cls.__name__))
        with torch.no_grad():
            a = ours(ids, mask, types, **kwargs)
            b = theirs(input_ids=ids, attention_mask=mask, token_type_ids=types, **kwargs)
        for f in fields:
            x, y = getattr(a, f), getattr(b, f)
            if x.dim() >= 2 and x.shape[:2] == mask.shape:
                x, y = x[mask.bool()], y[mask.bool()]
            assert (x - y).abs().max() <= TOL, (cls.__name__, f)


@pytest.mark.parametrize("attn", ["eager", "sdpa"])
def test_minilm_equals_transformers(minilm_dir, attn):
    ours = BertModel.from_pretrained(minilm_dir, attn_implementation=attn)
    theirs = transformers.BertModel.from_pretrained(minilm_dir, attn_implementation=attn).eval()
    tok = transformers.BertTokenizerLegacy.from_pretrained(minilm_dir)
    enc = tok(["The cat sat on the mat.", "BERT reads the whole sentence at once, left and right.", "Hi"],
              padding=True, return_tensors="pt")
    ids, mask = enc["input_ids"], enc["attention_mask"]
    types = torch.zeros_like(ids)  # one sentence each: all segment A
    with torch.no_grad():
        a = ours(ids, mask, types)
        b = theirs(input_ids=ids, attention_mask=mask, token_type_ids=types)
    real = mask.bool()
    assert (a.last_hidden_state - b.last_hidden_state)[real].abs().max() <= TOL
    assert (a.pooler_output - b.pooler_output).abs().max() <= TOL
    assert ours.config.num_hidden_layers == 6 and ours.config.hidden_size == 384


def test_padding_does_not_change_real_positions(minilm_dir):
    model = BertModel.from_pretrained(minilm_dir)
    gen = torch.Generator().manual_seed(0)
    ids = torch.randint(1000, 5000, (2, 9), generator=gen)
    with torch.no_grad():
        short = model(ids, torch.ones_like(ids)).last_hidden_state  # (2, 9, H)
        for extra in (1, 7, 40):
            padded = torch.cat([ids, torch.zeros(2, extra, dtype=torch.long)], dim=1)
            mask = torch.cat([torch.ones_like(ids), torch.zeros(2, extra, dtype=torch.long)], dim=1)
            long = model(padded, mask).last_hidden_state[:, :9]
            assert (long - short).abs().max() <= TOL
            # Without the mask the padding leaks into the real tokens: the mask is what makes the test pass.
            unmasked = model(padded).last_hidden_state[:, :9]
            assert (unmasked - short).abs().max() > 1e-2


def test_eager_and_sdpa_paths_agree():
    cfg = random_config(random.Random(3), num_hidden_layers=2)
    torch.manual_seed(0)
    eager = BertModel(cfg.replace(attn_implementation="eager")).eval()
    sdpa = BertModel(cfg.replace(attn_implementation="sdpa")).eval()
    sdpa.load_state_dict(eager.state_dict())
    ids, mask, types = padded_batch(cfg, torch.Generator().manual_seed(1))
    for causal in (False, True):
        eager.config = eager.config.replace(is_causal=causal)
        sdpa.config = sdpa.config.replace(is_causal=causal)
        with torch.no_grad():
            a = eager(ids, mask, types).last_hidden_state
            b = sdpa(ids, mask, types).last_hidden_state
        assert (a - b).abs().max() <= TOL


def test_causal_mask_hides_the_right_context():
    cfg = random_config(random.Random(4), is_causal=True)
    model = BertModel(cfg).eval()
    ids = torch.randint(0, cfg.vocab_size, (1, 10), generator=torch.Generator().manual_seed(0))
    changed = ids.clone()
    changed[0, 6:] = (changed[0, 6:] + 1) % cfg.vocab_size
    with torch.no_grad():
        a, b = model(ids).last_hidden_state, model(changed).last_hidden_state
        probs = model(ids, output_attentions=True).attentions[0][0, 0]  # (T, T)
    assert (a[:, :6] - b[:, :6]).abs().max() <= TOL  # positions 0..5 never saw 6..9
    assert (a[:, 6:] - b[:, 6:]).abs().max() > 1e-3
    assert torch.all(probs.triu(diagonal=1) == 0)


def test_eager_attention_worked_example():
    # One head, three tokens; the third is padding. Padding must get zero weight after the softmax.
    q = k = torch.tensor([[[[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]]]])  # (1, 1, 3, 2)
    v = torch.eye(3)[None, None, :, :2]
    mask = bertlib.additive_mask(bertlib.padding_visibility(torch.tensor([[1, 1, 0]])))
    _, probs = eager_attention(q, k, v, mask)
    assert torch.all(probs[..., 2] == 0)
    assert torch.allclose(probs.sum(-1), torch.ones(1, 1, 3))


def test_all_padding_row_is_finite():
    cfg = random_config(random.Random(5))
    for attn in ("eager", "sdpa"):
        model = BertModel(cfg.replace(attn_implementation=attn)).eval()
        ids = torch.zeros(2, 6, dtype=torch.long)
        mask = torch.tensor([[1, 1, 1, 0, 0, 0], [0, 0, 0, 0, 0, 0]])
        with torch.no_grad():
            out = model(ids, mask)
        assert torch.isfinite(out.last_hidden_state).all() and torch.isfinite(out.pooler_output).all()


# ----------------------------------------------------------------------------- checkpoints
def test_transformers_checkpoint_loads_in_bertlib(tmp_path):
    cfg = random_config(random.Random(8))
    hf_cfg = transformers.BertConfig(**{k: v for k, v in cfg.to_dict().items() if k != "model_type"})
    torch.manual_seed(0)
    theirs = transformers.BertForPreTraining(hf_cfg).eval()
    theirs.save_pretrained(tmp_path)
    ours = BertForPreTraining.from_pretrained(tmp_path)
    ids, mask, types = padded_batch(cfg, torch.Generator().manual_seed(2))
    with torch.no_grad():
        a = ours(ids, mask, types).prediction_logits
        b = theirs(input_ids=ids, attention_mask=mask, token_type_ids=types).prediction_logits
    assert (a - b)[mask.bool()].abs().max() <= TOL
    # A bare encoder loads from the same checkpoint, ignoring the heads, as transformers does.
    BertModel.from_pretrained(tmp_path)
    # Decoder weight is tied to the word embeddings after loading.
    assert ours.cls.predictions.decoder.weight.data_ptr() == ours.bert.embeddings.word_embeddings.weight.data_ptr()


def test_old_checkpoint_names_load(tmp_path):
    """gamma/beta LayerNorm names and a `bert.` prefix, as in TF-converted pytorch_model.bin files."""
    cfg = random_config(random.Random(9))
    torch.manual_seed(0)
    src = BertForPreTraining(cfg).eval()
    old = {}
    for k, v in src.state_dict().items():
        k = k.replace("LayerNorm.weight", "LayerNorm.gamma").replace("LayerNorm.bias", "LayerNorm.beta")
        old[k] = v.clone()
    old["bert.embeddings.position_ids"] = torch.arange(cfg.max_position_embeddings)[None]
    old["cls.predictions.decoder.bias"] = old["cls.predictions.bias"].clone()
    torch.save(old, tmp_path / "pytorch_model.bin")
    cfg.to_json_file(tmp_path / "config.json")
    loaded = BertForPreTraining.from_pretrained(tmp_path)
    base = BertModel.from_pretrained(tmp_path)
    ids, mask, types = padded_batch(cfg, torch.Generator().manual_seed(3))
    with torch.no_grad():
        assert torch.equal(loaded(ids, mask, types).prediction_logits, src(ids, mask, types).prediction_logits)
        assert torch.equal(base(ids, mask, types).last_hidden_state, src.bert(ids, mask, types).last_hidden_state)


def test_missing_and_unexpected_keys_are_named(tmp_path):
    cfg = random_config(random.Random(10))
    model = BertModel(cfg)
    sd = model.state_dict()
    cfg.to_json_file(tmp_path / "config.json")
    broken = dict(sd)
    del broken["encoder.layer.0.attention.self.query.weight"]
    broken["encoder.layer.0.surprise.weight"] = torch.zeros(2)
    torch.save(broken, tmp_path / "pytorch_model.bin")
    with pytest.raises(CheckpointMismatchError) as e:
        BertModel.from_pretrained(tmp_path)
    assert "encoder.layer.0.attention.self.query.weight" in str(e.value)
    assert "encoder.layer.0.surprise.weight" in str(e.value)


def test_fine_tuning_head_is_fresh_unless_strict(minilm_dir):
    model = BertForSequenceClassification.from_pretrained(minilm_dir, num_labels=3)
    assert model.newly_initialized_weights == ["classifier.weight", "classifier.bias"]
    with pytest.raises(CheckpointMismatchError, match="classifier.weight"):
        BertForSequenceClassification.from_pretrained(minilm_dir, strict=True)


def test_config_reads_transformers_json_with_unknown_keys(tmp_path, minilm_dir):
    raw = json.loads((minilm_dir / "config.json").read_text())
    cfg = BertConfig.from_json_file(minilm_dir / "config.json")
    assert (cfg.hidden_size, cfg.num_hidden_layers, cfg.vocab_size) == (384, 6, 30522)
    path = tmp_path / "config.json"
    path.write_text(json.dumps({**raw, "some_future_field": [1, 2], "gradient_checkpointing": False}))
    cfg2 = BertConfig.from_json_file(path)
    assert cfg2.extra["some_future_field"] == [1, 2]
    assert cfg2 == cfg
    cfg2.to_json_file(tmp_path / "again.json")
    assert json.loads((tmp_path / "again.json").read_text())["some_future_field"] == [1, 2]
    assert transformers.BertConfig.from_json_file(tmp_path / "again.json").hidden_size == 384


# ----------------------------------------------------------------------------- bad input
@pytest.fixture(scope="module")
def small_model():
    return BertModel(BertConfig(vocab_size=50, hidden_size=8, num_hidden_layers=1, num_attention_heads=2,
                                intermediate_size=16, max_position_embeddings=12, type_vocab_size=2)).eval()


@pytest.mark.parametrize("kwargs, message", [
    (dict(input_ids=torch.tensor([[1, 2, 50]])), "outside the vocabulary"),
    (dict(input_ids=torch.tensor([[1, -1]])), "outside the vocabulary"),
    (dict(input_ids=torch.ones(1, 13, dtype=torch.long)), "max_position_embeddings"),
    (dict(input_ids=torch.ones(1, 4, dtype=torch.long), token_type_ids=torch.tensor([[0, 1, 2, 0]])), "token_type_ids"),
    (dict(input_ids=torch.ones(2, 4, dtype=torch.long), attention_mask=torch.ones(2, 5)), "attention_mask has shape"),
    (dict(input_ids=torch.ones(4, dtype=torch.long)), "2-D"),
    (dict(input_ids=torch.ones(1, 4)), "integers"),
    (dict(input_ids=torch.ones(2, 0, dtype=torch.long)), r"input_ids is an empty sequence, shape \(2, 0\)"),
    (dict(input_ids=torch.ones(1, 4, dtype=torch.long), token_type_ids=torch.zeros(1, 4)),
     "token_type_ids must hold integers .* not torch.float32"),
    (dict(input_ids=torch.ones(1, 4, dtype=torch.long), position_ids=torch.tensor([[0, 1, -1, 2]])),
     r"position_ids must be in \[0, max_position_embeddings=12\), got values from -1 to 2"),
    (dict(input_ids=torch.ones(1, 4, dtype=torch.long), position_ids=torch.tensor([[0, 1, 2, 12]])),
     r"position_ids must be in \[0, max_position_embeddings=12\)"),
    (dict(input_ids=torch.ones(1, 4, dtype=torch.long), position_ids=torch.arange(4.0)[None]),
     "position_ids must be a tensor of integers"),
    (dict(input_ids=torch.ones(2, 4, dtype=torch.long), position_ids=torch.arange(5)[None]),
     r"position_ids has shape \(1, 5\) but input_ids has \(2, 4\)"),
    (dict(input_ids=torch.ones(1, 4, dtype=torch.long), attention_mask=[[1, 1, 1, 1]]),
     "attention_mask must be a tensor, got list"),
])
def test_bad_input_raises_clear_value_error(small_model, kwargs, message):
    with pytest.raises(ValueError, match=message):
        small_model(**kwargs)


def test_position_ids_of_every_accepted_shape_give_the_default_output(small_model):
    ids = torch.tensor([[3, 4, 5, 6], [7, 8, 9, 10]])
    expected = small_model(ids).last_hidden_state
    for pos in (torch.arange(4), torch.arange(4)[None], torch.arange(4).expand(2, 4)):
        torch.testing.assert_close(small_model(ids, position_ids=pos).last_hidden_state, expected)


@pytest.mark.parametrize("fields, message", [
    (dict(num_attention_heads=0), "num_attention_heads must be a positive integer, got 0"),
    (dict(hidden_size="768"), "hidden_size must be a positive integer, got '768'"),
    (dict(hidden_size=768.0), "hidden_size must be a positive integer, got 768.0"),
    (dict(num_hidden_layers=-2), "num_hidden_layers must be a positive integer, got -2"),
    (dict(vocab_size=True), "vocab_size must be a positive integer, got True"),
    (dict(intermediate_size=None), "intermediate_size must be a positive integer, got None"),
    (dict(max_position_embeddings=0), "max_position_embeddings must be a positive integer"),
    (dict(type_vocab_size=0), "type_vocab_size must be a positive integer"),
    (dict(num_labels=0), "num_labels must be a positive integer"),
    (dict(pad_token_id=30522), r"pad_token_id must be an id in \[0, vocab_size=30522\)"),
    (dict(hidden_dropout_prob=1.5), r"hidden_dropout_prob must be a probability in \[0, 1\], got 1.5"),
    (dict(attention_probs_dropout_prob="0.1"), "attention_probs_dropout_prob must be a probability"),
    (dict(classifier_dropout=-0.1), "classifier_dropout must be a probability"),
    (dict(layer_norm_eps=0), "layer_norm_eps must be a positive number, got 0"),
    (dict(initializer_range=float("nan")), "initializer_range must be a number >= 0"),
], ids=lambda x: ",".join(x) if isinstance(x, dict) else "")
def test_bad_config_field_names_the_field(fields, message):
    with pytest.raises(ValueError, match=message):
        BertConfig(**fields)


def test_config_accepts_ints_for_floats_and_no_pad_or_classifier_dropout():
    cfg = BertConfig(hidden_dropout_prob=0, layer_norm_eps=1, pad_token_id=None, classifier_dropout=None)
    assert cfg.hidden_dropout_prob == 0 and cfg.pad_token_id is None


@pytest.mark.parametrize("text, message", [
    ("", "is empty"),
    ("  \n", "is empty"),
    ('{"hidden_size": 384, "num_hidden', "is not valid JSON"),
    ("[1, 2]", "must hold a JSON object .* holds a list"),
    ('"bert"', "must hold a JSON object .* holds a str"),
    ('{"hidden_size": "768"}', "hidden_size must be a positive integer, got '768'"),
    ('{"num_attention_heads": 0}', "num_attention_heads must be a positive integer, got 0"),
], ids=["empty", "blank", "truncated", "list", "string", "string size", "zero heads"])
def test_bad_config_file_names_the_file(tmp_path, text, message):
    (tmp_path / "config.json").write_text(text)
    with pytest.raises(ValueError, match=message) as e:
        BertConfig.from_json_file(tmp_path / "config.json")
    assert str(tmp_path / "config.json") in str(e.value)
    with pytest.raises(ValueError, match=message):
        BertModel.from_pretrained(tmp_path)


def test_binary_config_file_names_the_file(tmp_path):
    (tmp_path / "config.json").write_bytes(b"\x80\x81\xff")
    with pytest.raises(ValueError, match="config.json is not a UTF-8 text file"):
        BertConfig.from_json_file(tmp_path / "config.json")


@pytest.mark.skipif(os.name != "posix", reason="POSIX permissions")
def test_saved_files_have_ordinary_permissions(tmp_path):
    """safetensors writes 0600; a checkpoint is shared like any other file (0644 under umask 022)."""
    old = os.umask(0o022)
    try:
        BertForPreTraining(BertConfig(vocab_size=10, hidden_size=8, num_hidden_layers=1, num_attention_heads=2,
                                      intermediate_size=16)).save_pretrained(tmp_path)
    finally:
        os.umask(old)
    modes = {p.name: p.stat().st_mode & 0o777 for p in tmp_path.iterdir()}
    assert modes == {"config.json": 0o644, "model.safetensors": 0o644}, modes  # and no temporary file left


@pytest.mark.parametrize("name", ["model.safetensors", "pytorch_model.bin"])
@pytest.mark.parametrize("keep", [0, 0.5], ids=["empty", "half"])
def test_truncated_weight_file_names_the_file(tmp_path, name, keep):
    model = BertModel(BertConfig(vocab_size=30, hidden_size=8, num_hidden_layers=1, num_attention_heads=2,
                                 intermediate_size=16))
    model.save_pretrained(tmp_path)
    if name == "pytorch_model.bin":
        (tmp_path / "model.safetensors").unlink()
        torch.save(model.state_dict(), tmp_path / name)
    data = (tmp_path / name).read_bytes()
    (tmp_path / name).write_bytes(data[:int(len(data) * keep)])
    with pytest.raises(bertlib.UnreadableWeightsError, match="truncated") as e:
        BertModel.from_pretrained(tmp_path)
    assert str(tmp_path / name) in str(e.value)
    assert isinstance(e.value, ValueError)


def test_bad_config_and_missing_weights(tmp_path):
    with pytest.raises(ValueError, match="divisible"):
        BertConfig(hidden_size=100, num_attention_heads=12)
    BertConfig().to_json_file(tmp_path / "config.json")
    with pytest.raises(ValueError, match="no weight file"):
        BertModel.from_pretrained(tmp_path)
    with pytest.raises(FileNotFoundError):
        BertModel.from_pretrained(tmp_path / "nowhere")
