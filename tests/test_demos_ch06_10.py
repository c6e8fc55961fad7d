"""The widget demos of chapters 6 to 10: every callback, called with several values, gives the right answer.

The callbacks are what the sliders call in a live notebook, so a callback that is right here is a demo
that works in Jupyter. Model-heavy checks use tiny random configs; chapter 6's padding proof and the QA
decoding use the real all-MiniLM-L6-v2 checkpoint (loaded once).
"""
from __future__ import annotations

import math
import os

import pytest
import torch
import torch.nn.functional as F

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

from bertlib import (
    BertConfig,
    BertForQuestionAnswering,
    BertForTokenClassification,
    mlm_loss,
)
from course.demos import ch06_attention_masks as ch05
from course.demos import ch07_mlm as ch06
from course.demos import ch08_masking as ch07
from course.demos import ch09_nsp as ch08
from course.demos import ch10_finetuning as ch09

TINY = dict(hidden_size=32, num_hidden_layers=1, num_attention_heads=2, intermediate_size=64,
            max_position_embeddings=64, attn_implementation="eager")


@pytest.fixture(autouse=True)
def _agg_backend():
    import matplotlib

    matplotlib.use("Agg")
    yield
    import matplotlib.pyplot as plt

    plt.close("all")


# ============================================================================ chapter 6
@pytest.mark.parametrize("scores,mask", [
    ([2.0, 1.0, 3.0, 2.0, 4.0, 5.0], [1, 1, 1, 1, 0, 0]),
    ([0.0, 0.0, 0.0], [1, 0, 0]),
    ([-3.0, 10.0, 2.5, 7.0], [1, 1, 1, 1]),
    ([100.0, -100.0, 50.0], [0, 1, 1]),
])
def test_masked_softmax_row(scores, mask):
    w = ch05.masked_softmax_row(scores, mask, apply_mask=True)
    assert w.sum().item() == pytest.approx(1.0, abs=1e-6)
    visible = torch.tensor(mask).bool()
    assert (w[~visible] == 0).all(), "hidden keys must get exactly zero weight"
    expected = torch.tensor(scores)[visible].softmax(-1)
    assert torch.allclose(w[visible], expected, atol=1e-6)
    plain = ch05.masked_softmax_row(scores, mask, apply_mask=False)
    assert torch.allclose(plain, torch.tensor(scores).softmax(-1))


def test_masked_softmax_row_all_hidden_is_finite():
    w = ch05.masked_softmax_row([1.0, 2.0, 3.0], [0, 0, 0], apply_mask=True)
    assert torch.isfinite(w).all() and w.sum().item() == pytest.approx(1.0)


@pytest.mark.parametrize("p1,p2", [(4.0, 5.0), (-5.0, -5.0), (0.0, 10.0), (2.5, 1.0)])
def test_padding_share(p1, p2):
    off = ch05.padding_share(p1, p2, apply_mask=False)
    on = ch05.padding_share(p1, p2, apply_mask=True)
    real = [2.0, 1.0, 3.0, 2.0]
    total = sum(math.exp(s) for s in real + [p1, p2])
    assert off["pad_share"] == pytest.approx((math.exp(p1) + math.exp(p2)) / total, rel=1e-5)
    assert on["pad_share"] == 0.0
    assert on["weights"][:4] == pytest.approx(torch.tensor(real).softmax(-1).tolist(), abs=1e-6)
    assert on["tokens"] == list(ch05.TOKENS)


def test_padding_share_worked_example_numbers():
    # The seed source quotes about 21% and 57%; the exact shares are 22.7% and 61.7%.
    w = ch05.padding_share(4.0, 5.0, apply_mask=False)["weights"]
    assert w[4] == pytest.approx(0.2269, abs=1e-4) and w[5] == pytest.approx(0.6169, abs=1e-4)


@pytest.mark.parametrize("T,n_pad", [(6, 2), (4, 0), (8, 7), (1, 0)])
def test_visibility(T, n_pad):
    pad = ch05.visibility("padding", T, n_pad)
    causal = ch05.visibility("causal", T, n_pad)
    both = ch05.visibility("padding+causal", T, n_pad)
    assert pad.shape == causal.shape == both.shape == (T, T)
    assert pad[:, :T - n_pad].all() and not pad[:, T - n_pad:].any()
    assert torch.equal(causal, torch.ones(T, T, dtype=torch.bool).tril())
    assert torch.equal(both, pad & causal)


def test_visibility_rejects_bad_arguments():
    with pytest.raises(ValueError):
        ch05.visibility("sideways", 4, 1)
    with pytest.raises(ValueError):
        ch05.visibility("padding", 4, 4)


@pytest.mark.parametrize("sentence,n_pad", [("my dog is cute", 1), ("my dog is cute", 7),
                                            ("我喜欢机器学习", 3)])
def test_padding_effect_on_real_checkpoint(minilm_model, minilm_tokenizer, sentence, n_pad):
    masked = ch05.padding_effect(minilm_model, minilm_tokenizer, sentence, n_pad, use_mask=True)
    unmasked = ch05.padding_effect(minilm_model, minilm_tokenizer, sentence, n_pad, use_mask=False)
    layers = minilm_model.config.num_hidden_layers + 1
    assert len(masked["per_layer"]) == len(unmasked["per_layer"]) == layers
    assert masked["per_layer"][0] == 0.0 and unmasked["per_layer"][0] == 0.0  # embeddings do not mix
    assert masked["final"] < 1e-4, "with the mask, padding must not change the real tokens"
    assert unmasked["final"] > 0.05, "without the mask, padding leaks into the real tokens"
    assert masked["tokens"][0] == "[CLS]" and masked["tokens"][-1] == "[SEP]"


def test_ch05_plots_and_demo(minilm_model, minilm_tokenizer):
    import ipywidgets as w

    ch05.plot_padding_share(ch05.padding_share(4, 5, False))
    r = ch05.padding_effect(minilm_model, minilm_tokenizer, "my dog is cute", 2, True)
    ch05.plot_padding_effect(r, ch05.padding_effect(minilm_model, minilm_tokenizer, "my dog is cute", 2, False))
    assert isinstance(ch05.make_demo(), w.VBox)
    assert isinstance(ch05.make_demo(minilm_model, minilm_tokenizer), w.Tab)


# ============================================================================ chapter 7
@pytest.mark.parametrize("p,expected", [(0.62, 0.4780), (0.01, 4.6052), (1.0, 0.0), (1 / 30522, 10.3262)])
def test_log_loss(p, expected):
    assert ch06.log_loss(p) == pytest.approx(expected, abs=1e-4)


@pytest.mark.parametrize("p", [0.0, -0.1, 1.5])
def test_log_loss_rejects_bad_p(p):
    with pytest.raises(ValueError):
        ch06.log_loss(p)


@pytest.mark.parametrize("k", [1, 3, 8, 15])
@pytest.mark.parametrize("seed", [0, 7])
def test_compare_losses(k, seed):
    r = ch06.compare_losses(k, seed)
    right = r["bertlib mlm_loss"]["loss"]
    for name in ("ignore_index=-100", "reduction='none' x mask"):
        assert r[name]["loss"] == pytest.approx(right, abs=1e-5)
        assert r[name]["grad_on_unselected"] == 0.0
    assert r["bertlib mlm_loss"]["grad_on_unselected"] == 0.0
    assert r["bertlib mlm_loss"]["grad_on_selected"] > 0
    # the bug is the mean over every position, and sends gradient to the unselected ones
    assert r["mean x mask (bug)"]["loss"] == pytest.approx(r["mean over all positions"]["loss"], abs=1e-5)
    assert r["mean x mask (bug)"]["grad_on_unselected"] > 0


def test_compare_losses_all_selected_bug_coincides():
    r = ch06.compare_losses(16, 0)
    assert r["mean x mask (bug)"]["loss"] == pytest.approx(r["bertlib mlm_loss"]["loss"], abs=1e-5)


def test_make_batch_labels():
    logits, original, selected, labels = ch06.make_batch(5, seed=3)
    assert logits.shape == (2, 8, 20) and int(selected.sum()) == 5
    assert torch.equal(labels[selected], original[selected]) and (labels[~selected] == -100).all()
    with pytest.raises(ValueError):
        ch06.make_batch(0)
    with pytest.raises(ValueError):
        ch06.make_batch(17)


def test_loss_vs_selected_bug_is_flat():
    curve = ch06.loss_vs_selected(seed=1)
    assert len(curve["n_selected"]) == len(curve["right"]) == len(curve["bug"]) == 16
    assert max(curve["bug"]) - min(curve["bug"]) < 1e-5
    assert max(curve["right"]) - min(curve["right"]) > 0.1
    assert curve["right"][-1] == pytest.approx(curve["bug"][-1], abs=1e-5)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_buggy_and_fixed_masked_mean(seed):
    g = torch.Generator().manual_seed(seed)
    logits = torch.randn(3, 5, 11, generator=g)
    targets = torch.randint(11, (3, 5), generator=g)
    weights = torch.rand(3, 5, generator=g) < 0.4
    weights[0, 0] = True
    mean_all = F.cross_entropy(logits.view(-1, 11), targets.view(-1))
    assert ch06.buggy_masked_mean(logits, targets, weights).item() == pytest.approx(mean_all.item(), abs=1e-5)
    labels = torch.where(weights, targets, -100)
    assert ch06.fixed_masked_mean(logits, targets, weights).item() == pytest.approx(
        mlm_loss(logits, labels).item(), abs=1e-5)


def test_ch06_plots_and_demo():
    import ipywidgets as w

    ch06.plot_log_loss(0.3)
    ch06.plot_compare(ch06.compare_losses(4, 0))
    assert isinstance(ch06.make_demo(), w.Tab)


# ============================================================================ chapter 8
@pytest.mark.parametrize("seed", [0, 1, 4, 17])
@pytest.mark.parametrize("text", ch07.SENTENCES)
def test_mask_sentence(minilm_tokenizer, text, seed):
    rows = ch07.mask_sentence(minilm_tokenizer, text, seed)
    assert rows == ch07.mask_sentence(minilm_tokenizer, text, seed), "same seed, same draw"
    assert rows[0]["token"] == "[CLS]" and rows[-1]["token"] == "[SEP]"
    for row in rows:
        if not row["eligible"]:
            assert not row["selected"], "special tokens are never selected"
        if row["selected"]:
            assert row["label"] == row["token"]
            assert row["outcome"] in ch07.OUTCOMES
            if row["outcome"] == "[MASK]":
                assert row["model_reads"] == "[MASK]"
            elif row["outcome"] == "unchanged":
                assert row["model_reads"] == row["token"]
            else:
                assert row["model_reads"] != row["token"]
        else:
            assert row["label"] == -100 and row["model_reads"] == row["token"] and row["outcome"] == ""


@pytest.mark.parametrize("p,m,r", [(1.0, 1.0, 0.0), (1.0, 0.0, 1.0), (1.0, 0.0, 0.0), (0.0, 0.8, 0.1)])
def test_mask_sentence_extreme_rates(minilm_tokenizer, p, m, r):
    rows = ch07.mask_sentence(minilm_tokenizer, ch07.SENTENCES[1], 0, p, m, r)
    eligible = [row for row in rows if row["eligible"]]
    if p == 0.0:
        assert not any(row["selected"] for row in rows)
        return
    assert all(row["selected"] for row in eligible)
    expected = "[MASK]" if m == 1.0 else ("unchanged" if r == 0.0 else None)
    if expected:
        assert all(row["outcome"] == expected for row in eligible)
    else:  # all random; a random id can equal the original once in V draws
        assert sum(row["outcome"] == "random" for row in eligible) >= len(eligible) - 1


def test_first_seed_with_all_outcomes(minilm_tokenizer):
    text = ch07.SENTENCES[0]
    seed = ch07.first_seed_with_all_outcomes(minilm_tokenizer, text)
    outcomes = {row["outcome"] for row in ch07.mask_sentence(minilm_tokenizer, text, seed)}
    assert set(ch07.OUTCOMES) <= outcomes
    for earlier in range(seed):
        assert not set(ch07.OUTCOMES) <= {row["outcome"] for row in ch07.mask_sentence(minilm_tokenizer, text, earlier)}


@pytest.mark.parametrize("p,m,r", [(0.15, 0.8, 0.1), (0.4, 0.8, 0.1), (0.15, 1.0, 0.0), (0.3, 0.5, 0.25)])
def test_draw_statistics(minilm_tokenizer, p, m, r):
    ids = minilm_tokenizer(ch07.SENTENCES[0], return_tensors="pt")["input_ids"][0]
    stats = ch07.draw_statistics(ids, 4000, 0, p, m, r, mask_token_id=minilm_tokenizer.mask_token_id,
                                 vocab_size=minilm_tokenizer.vocab_size, special_ids=minilm_tokenizer.all_special_ids)
    assert stats["n_eligible"] == len(ids) - 2
    assert len(stats["counts"]) == 4000 and max(stats["counts"]) <= stats["n_eligible"]
    for key in ("selected", "masked", "random", "unchanged"):
        assert stats[key] == pytest.approx(stats["expected"][key], abs=0.02), key
    assert stats["masked"] + stats["random"] + stats["unchanged"] == pytest.approx(1.0)
    closed = ch07.visible_token_odds(p, m, r)
    for key in ("mask_share_of_input", "visible_is_target", "visible_is_corrupted"):
        assert stats[key] == pytest.approx(closed[key], abs=0.01), key


@pytest.mark.parametrize("seq_len,expected", [(5, 1), (10, 2), (22, 3), (128, 19), (512, 20), (1, 1)])
def test_original_num_to_predict(seq_len, expected):
    assert ch07.original_num_to_predict(seq_len) == expected


def test_original_num_to_predict_cap_and_rate():
    assert ch07.original_num_to_predict(512, max_predictions_per_seq=77) == 77
    assert ch07.original_num_to_predict(100, masked_lm_prob=0.4) == 20  # capped
    assert ch07.original_num_to_predict(100, masked_lm_prob=0.4, max_predictions_per_seq=100) == 40


@pytest.mark.parametrize("n,p", [(1, 0.15), (20, 0.15), (7, 0.5), (50, 0.4)])
def test_binomial_pmf(n, p):
    pmf = ch07.binomial_pmf(n, p)
    assert len(pmf) == n + 1 and sum(pmf) == pytest.approx(1.0)
    assert sum(k * q for k, q in enumerate(pmf)) == pytest.approx(n * p)
    assert pmf[0] == pytest.approx((1 - p) ** n)


def test_visible_token_odds():
    o = ch07.visible_token_odds()
    assert o["mask_share_of_input"] == pytest.approx(0.12)
    assert o["visible_is_target"] == pytest.approx(0.03 / 0.88)
    assert o["visible_is_corrupted"] == pytest.approx(0.015 / 0.88)
    all_mask = ch07.visible_token_odds(0.15, 1.0, 0.0)
    assert all_mask["visible_is_target"] == 0.0 and all_mask["visible_is_corrupted"] == 0.0


def test_ch07_rendering_and_demo(minilm_tokenizer):
    import ipywidgets as w

    rows = ch07.mask_sentence(minilm_tokenizer, ch07.SENTENCES[0], 4)
    html = ch07.rows_html(rows)
    assert html.count("<tr") == len(rows) + 1 and "[CLS]" in html  # a header row, then one per position
    ids = minilm_tokenizer(ch07.SENTENCES[2], return_tensors="pt")["input_ids"][0]
    stats = ch07.draw_statistics(ids, 500, 1, mask_token_id=minilm_tokenizer.mask_token_id,
                                 vocab_size=minilm_tokenizer.vocab_size, special_ids=minilm_tokenizer.all_special_ids)
    ch07.plot_statistics(stats, ch07.original_num_to_predict(len(ids)))
    assert isinstance(ch07.make_demo(minilm_tokenizer), w.VBox)


# ============================================================================ chapter 9
@pytest.mark.parametrize("seed", [0, 3, 11])
@pytest.mark.parametrize("max_len,short", [(48, 0.1), (16, 0.0), (128, 0.5), (8, 1.0)])
def test_make_pairs(minilm_tokenizer, seed, max_len, short):
    examples = ch08.make_pairs(minilm_tokenizer, seed, max_len, short)
    assert examples == ch08.make_pairs(minilm_tokenizer, seed, max_len, short), "same seed, same pairs"
    assert examples
    for e in examples:
        assert 1 <= len(e.tokens_a) and 1 <= len(e.tokens_b)
        assert len(e.tokens_a) + len(e.tokens_b) <= max_len - 3
        assert e.label in (0, 1) and e.label == int(e.is_random_next)
    rows = ch08.pair_rows(examples)
    assert [r["label"] for r in rows] == [e.label for e in examples]
    assert all(r["name"] == ("NotNext" if r["label"] else "IsNext") for r in rows)


def test_is_next_pairs_are_contiguous(minilm_tokenizer):
    docs = ch08.tokenized_documents(minilm_tokenizer)
    assert len(docs) == len(ch08.DOCUMENTS)
    flat = [" ".join(" ".join(sentence) for sentence in doc) for doc in docs]
    for seed in range(10):
        for e in ch08.make_pairs(minilm_tokenizer, seed, 64, 0.0):
            if e.label == 0:
                joined = " ".join(e.tokens_a + e.tokens_b)
                assert any(joined in doc for doc in flat), "an IsNext pair is contiguous text of one document"


def test_detokenize():
    assert ch08.detokenize(["play", "##ing", "chess", "."]) == "playing chess ."


@pytest.mark.parametrize("length", [24, 48])
def test_not_next_share_above_half(minilm_tokenizer, length):
    share = ch08.not_next_share(minilm_tokenizer, range(30), max_seq_length=length)
    assert share["n"] > 0 and 0.5 < share["not_next"] < 0.8


@pytest.mark.parametrize("z0,z1,label", [(2.0, -1.0, 0), (2.0, -1.0, 1), (0.0, 0.0, 0), (-3.0, 4.0, 1)])
def test_nsp_loss_for(z0, z1, label):
    logp = torch.tensor([z0, z1]).log_softmax(-1)
    assert ch08.nsp_loss_for(z0, z1, label) == pytest.approx(-logp[label].item(), abs=1e-6)


def test_nsp_loss_for_rejects_bad_label():
    with pytest.raises(ValueError):
        ch08.nsp_loss_for(0.0, 0.0, 2)


def test_sop_examples_and_overlap_shortcut(minilm_tokenizer):
    nsp = [e for s in range(40) for e in ch08.make_pairs(minilm_tokenizer, s, 48)]
    sop = ch08.sop_examples(nsp, seed=0)
    is_next = [e for e in nsp if e.label == 0]
    assert len(sop) == len(is_next)
    for original, pair in zip(is_next, sop):
        if pair.label == 1:
            assert pair.tokens_a == original.tokens_b and pair.tokens_b == original.tokens_a
        else:
            assert pair.tokens_a == original.tokens_a and pair.tokens_b == original.tokens_b
    r_nsp, r_sop = ch08.overlap_shortcut(nsp), ch08.overlap_shortcut(sop)
    assert r_nsp["accuracy"] > r_nsp["majority"] + 0.05, "topic overlap should beat guessing on NSP"
    assert r_sop["accuracy"] <= r_sop["majority"] + 1e-9, "word overlap cannot see order"
    with pytest.raises(ValueError):
        ch08.overlap_shortcut([])


def test_content_words():
    assert ch08.content_words(["the", "queen", "lays", "the", "eggs", "."]) == {"queen", "lays", "eggs"}


def test_ch08_rendering_and_demo(minilm_tokenizer):
    import ipywidgets as w

    rows = ch08.pair_rows(ch08.make_pairs(minilm_tokenizer, 0))
    html = ch08.pairs_html(rows)
    assert "IsNext" in html or "NotNext" in html
    assert html.count("<tr") == len(rows) + 1
    assert isinstance(ch08.make_demo(minilm_tokenizer), w.Tab)


# ============================================================================ chapter 10
@pytest.mark.parametrize("num_labels", [2, 5])
def test_heads_shapes_and_parameters(num_labels):
    cfg = BertConfig(vocab_size=50, num_labels=num_labels, **TINY)
    torch.manual_seed(0)
    models = {name: cls(cfg).eval() for name, cls in ch09.HEADS.items()}
    batch = {"input_ids": torch.randint(50, (3, 7)), "attention_mask": torch.ones(3, 7, dtype=torch.long)}
    shapes = ch09.head_outputs(models, batch)
    assert shapes["sequence classification"] == {"logits": (3, num_labels)}
    assert shapes["token classification"] == {"logits": (3, 7, num_labels)}
    assert shapes["question answering"] == {"start_logits": (3, 7), "end_logits": (3, 7)}
    formula = ch09.head_parameters_formula(cfg.hidden_size, num_labels)
    assert {name: ch09.new_parameters(m) for name, m in models.items()} == formula


def _qa_case(T=12, context=range(5, 11)):
    mask = torch.zeros(T, dtype=torch.bool)
    mask[list(context)] = True
    return mask


@pytest.mark.parametrize("max_len", [1, 2, 3, 30])
def test_compare_decoders_handmade(max_len):
    mask = _qa_case()
    start, end = torch.zeros(12), torch.zeros(12)
    start[3], end[2] = 5.0, 4.5  # the naive pick: in the question, end before start
    start[6], end[8] = 4.0, 4.0  # the answer: tokens 6..8
    r = ch09.compare_decoders(start, end, mask, max_len)
    assert r["naive"] == (3, 2)
    assert "end before start" in r["naive_problems"] and "outside the context" in r["naive_problems"]
    s, e = r["decode_span"]
    assert mask[s] and mask[e] and s <= e and e - s < max_len
    if max_len >= 3:
        assert (s, e) == (6, 8) and r["score"] == pytest.approx(8.0)


def test_compare_decoders_valid_naive_agrees():
    mask = _qa_case()
    start, end = torch.zeros(12), torch.zeros(12)
    start[7], end[9] = 3.0, 3.0
    r = ch09.compare_decoders(start, end, mask)
    assert r["naive"] == r["decode_span"] == (7, 9) and r["naive_problems"] == []


def test_compare_decoders_too_long():
    mask = torch.ones(40, dtype=torch.bool)
    start, end = torch.zeros(40), torch.zeros(40)
    start[0], end[39] = 5.0, 5.0
    r = ch09.compare_decoders(start, end, mask, max_answer_length=30)
    assert r["naive_problems"] == ["too long"]
    s, e = r["decode_span"]
    assert e - s < 30


def test_qa_inputs_and_random_heads(minilm_tokenizer, minilm_model):
    qa = ch09.qa_inputs(minilm_tokenizer)
    tokens, mask = qa["tokens"], qa["context_mask"]
    sep = [i for i, t in enumerate(tokens) if t == "[SEP]"]
    assert len(sep) == 2 and mask.sum() == sep[1] - sep[0] - 1
    assert mask[sep[0] + 1: sep[1]].all() and not mask[: sep[0] + 1].any()
    with torch.no_grad():
        hidden = minilm_model(**qa["encoding"]).last_hidden_state[0]
    a = ch09.random_head_logits(hidden, 3)
    b = ch09.random_head_logits(hidden, 3)
    assert torch.equal(a[0], b[0]) and a[0].shape == (len(tokens),)
    for seed in range(5):
        start, end = ch09.random_head_logits(hidden, seed)
        s, e = ch09.compare_decoders(start, end, mask)["decode_span"]
        assert mask[s] and mask[e] and s <= e
    rates = ch09.naive_failure_rate(hidden, mask, n_heads=50)
    assert rates["n_heads"] == 50
    assert all(0.0 <= rates[k] <= 1.0 for k in ("invalid", "end before start", "outside the context", "too long"))
    assert rates["invalid"] >= max(rates["end before start"], rates["outside the context"])
    assert rates["invalid"] > 0.3, "random heads should often fool the naive decoder"


@pytest.mark.parametrize("n,batch,epochs", [(10_000, 32, 3), (100, 16, 2), (33, 32, 4)])
def test_schedule_for_is_the_schedule_bertlib_trains_with(n, batch, epochs):
    """The demo's curve is what bertlib's scheduler hands the optimizer, update by update; transformers'
    get_linear_schedule_with_warmup is the same curve, one update later during the warm-up."""
    import transformers

    from bertlib.training.loop import make_scheduler

    s = ch09.schedule_for(n, batch, epochs, 5e-5)
    assert s["steps_per_epoch"] == math.ceil(n / batch) and s["total_steps"] == s["steps_per_epoch"] * epochs
    assert s["warmup_steps"] == max(1, round(0.1 * s["total_steps"])) and len(s["lr"]) == s["total_steps"]
    ours = torch.optim.SGD([torch.zeros(1, requires_grad=True)], lr=5e-5)
    theirs = torch.optim.SGD([torch.zeros(1, requires_grad=True)], lr=5e-5)
    ours_sched = make_scheduler(ours, s["total_steps"], 0.1)
    theirs_sched = transformers.get_linear_schedule_with_warmup(theirs, s["warmup_steps"], s["total_steps"])
    w = s["warmup_steps"]
    for step in range(s["total_steps"]):
        assert ours.param_groups[0]["lr"] == pytest.approx(s["lr"][step], abs=1e-15)
        if step >= w:  # after the warm-up the two agree exactly
            assert theirs.param_groups[0]["lr"] == pytest.approx(s["lr"][step], abs=1e-15)
        ours.step(), theirs.step()
        ours_sched.step(), theirs_sched.step()
    assert max(s["lr"]) == pytest.approx(5e-5) and s["lr"][w - 1] == pytest.approx(5e-5)


def test_paper_grid_matches_sources():
    grid = ch09.PAPER_GRID
    assert (min(grid["learning_rate"]), max(grid["learning_rate"])) == (2e-5, 5e-5)
    assert grid["batch_size"] == (16, 32) and (min(grid["epochs"]), max(grid["epochs"])) == (2, 4)
    ratios = [ch09.PRETRAINING_LR / lr for lr in grid["learning_rate"]]
    assert max(math.log10(r) for r in ratios) < 1, "fine-tuning lrs are not an order of magnitude smaller"


def test_ch09_plots_and_demo(minilm_tokenizer, minilm_model):
    import ipywidgets as w

    qa = ch09.qa_inputs(minilm_tokenizer)
    with torch.no_grad():
        hidden = minilm_model(**qa["encoding"]).last_hidden_state[0]
    start, end = ch09.random_head_logits(hidden, 0)
    ch09.plot_span_scores(start, end, qa["context_mask"], qa["tokens"], 5)
    ch09.plot_schedule(ch09.schedule_for(1000, 32, 3, 3e-5))
    assert isinstance(ch09.make_demo(minilm_tokenizer, hidden), w.Tab)


def test_token_and_qa_heads_from_checkpoint(minilm_dir):
    # The chapter loads MiniLM under each head; the new head is the only freshly initialised part.
    for cls in (BertForTokenClassification, BertForQuestionAnswering):
        model = cls.from_pretrained(minilm_dir, num_labels=4)
        assert ch09.new_parameters(model) == ch09.head_parameters_formula(384, 4)[
            "token classification" if cls is BertForTokenClassification else "question answering"]
