"""Chapter 6's demo (course/demos/attention_masks.py): padding hidden by the attention mask.

Live callbacks (what a slider calls in Jupyter) are called with several values; each static demo state's caption
is checked against an independent computation with bertlib. The page test (tests/test_pages.py) checks the
same captions in the built book."""
from __future__ import annotations

import math

import pytest
import torch

from course.demos import attention_masks as attention_masks_demo
from course.demos._live import caption_html
from demo_checks import check_editions, live_panel, live_shows


@pytest.mark.parametrize("scores,mask", [
    ([2.0, 1.0, 3.0, 2.0, 4.0, 5.0], [1, 1, 1, 1, 0, 0]),
    ([0.0, 0.0, 0.0], [1, 0, 0]),
    ([-3.0, 10.0, 2.5, 7.0], [1, 1, 1, 1]),
    ([100.0, -100.0, 50.0], [0, 1, 1]),
])
def test_masked_softmax_row(scores, mask):
    w = attention_masks_demo.masked_softmax_row(scores, mask, apply_mask=True)
    assert w.sum().item() == pytest.approx(1.0, abs=1e-6)
    visible = torch.tensor(mask).bool()
    assert (w[~visible] == 0).all(), "hidden keys must get exactly zero weight"
    expected = torch.tensor(scores)[visible].softmax(-1)
    assert torch.allclose(w[visible], expected, atol=1e-6)
    plain = attention_masks_demo.masked_softmax_row(scores, mask, apply_mask=False)
    assert torch.allclose(plain, torch.tensor(scores).softmax(-1))


def test_masked_softmax_row_all_hidden_is_finite():
    w = attention_masks_demo.masked_softmax_row([1.0, 2.0, 3.0], [0, 0, 0], apply_mask=True)
    assert torch.isfinite(w).all() and w.sum().item() == pytest.approx(1.0)


@pytest.mark.parametrize("p1,p2", [(4.0, 5.0), (-5.0, -5.0), (0.0, 10.0), (2.5, 1.0)])
def test_padding_share(p1, p2):
    off = attention_masks_demo.padding_share(p1, p2, apply_mask=False)
    on = attention_masks_demo.padding_share(p1, p2, apply_mask=True)
    real = [2.0, 1.0, 3.0, 2.0]
    total = sum(math.exp(s) for s in real + [p1, p2])
    assert off["pad_share"] == pytest.approx((math.exp(p1) + math.exp(p2)) / total, rel=1e-5)
    assert on["pad_share"] == 0.0
    assert on["weights"][:4] == pytest.approx(torch.tensor(real).softmax(-1).tolist(), abs=1e-6)
    assert on["tokens"] == list(attention_masks_demo.TOKENS)


def test_padding_share_worked_example_numbers():
    # The seed source quotes about 21% and 57%; the exact shares are 22.7% and 61.7%.
    w = attention_masks_demo.padding_share(4.0, 5.0, apply_mask=False)["weights"]
    assert w[4] == pytest.approx(0.2269, abs=1e-4) and w[5] == pytest.approx(0.6169, abs=1e-4)


@pytest.mark.parametrize("T,n_pad", [(6, 2), (4, 0), (8, 7), (1, 0)])
def test_visibility(T, n_pad):
    pad = attention_masks_demo.visibility("padding", T, n_pad)
    causal = attention_masks_demo.visibility("causal", T, n_pad)
    both = attention_masks_demo.visibility("padding+causal", T, n_pad)
    assert pad.shape == causal.shape == both.shape == (T, T)
    assert pad[:, :T - n_pad].all() and not pad[:, T - n_pad:].any()
    assert torch.equal(causal, torch.ones(T, T, dtype=torch.bool).tril())
    assert torch.equal(both, pad & causal)


def test_visibility_rejects_bad_arguments():
    with pytest.raises(ValueError):
        attention_masks_demo.visibility("sideways", 4, 1)
    with pytest.raises(ValueError):
        attention_masks_demo.visibility("padding", 4, 4)


@pytest.mark.parametrize("sentence,n_pad", [("my dog is cute", 1), ("my dog is cute", 7),
                                            ("我喜欢机器学习", 3)])
def test_padding_effect_on_real_checkpoint(minilm_model, minilm_tokenizer, sentence, n_pad):
    masked = attention_masks_demo.padding_effect(minilm_model, minilm_tokenizer, sentence, n_pad, use_mask=True)
    unmasked = attention_masks_demo.padding_effect(minilm_model, minilm_tokenizer, sentence, n_pad, use_mask=False)
    layers = minilm_model.config.num_hidden_layers + 1
    assert len(masked["per_layer"]) == len(unmasked["per_layer"]) == layers
    assert masked["per_layer"][0] == 0.0 and unmasked["per_layer"][0] == 0.0  # embeddings do not mix
    assert masked["final"] < 1e-4, "with the mask, padding must not change the real tokens"
    assert unmasked["final"] > 0.05, "without the mask, padding leaks into the real tokens"
    assert masked["tokens"][0] == "[CLS]" and masked["tokens"][-1] == "[SEP]"


def test_plots_and_demo(minilm_model, minilm_tokenizer):
    import ipywidgets as w

    attention_masks_demo.plot_padding_share(attention_masks_demo.padding_share(4, 5, False))
    r = attention_masks_demo.padding_effect(minilm_model, minilm_tokenizer, "my dog is cute", 2, True)
    attention_masks_demo.plot_padding_effect(r, attention_masks_demo.padding_effect(minilm_model, minilm_tokenizer, "my dog is cute", 2, False))
    assert isinstance(attention_masks_demo.make_demo(), w.VBox)
    assert isinstance(attention_masks_demo.make_demo(minilm_model, minilm_tokenizer), w.Tab)  # (matplotlib: the chapter's still figures)


def test_static_pad_scores_and_padding(minilm_dir, minilm_tokenizer):
    from bertlib import BertModel
    from course.demos import attention_masks as ch

    model = BertModel.from_pretrained(minilm_dir).eval()
    scores, padding = ch.static_demos(model, minilm_tokenizer)
    off = ch.padding_share(4, 5, False)["pad_share"]
    assert scores.caption(pad_score_1=4.0, pad_score_2=5.0) == \
        f"[PAD] scores 4 and 5: {off:.1%} of the attention on [PAD] without the mask, 0.0% with it"
    weights = [t.y for t in scores.state_at([6, 6])["figure"].data]
    assert sum(weights[0][4:]) > 0.99 and list(weights[1][4:]) == [0.0, 0.0]  # scores 8 and 9: nearly all on [PAD]
    caption = padding.caption(sentence=ch.SENTENCES[0], n_pad=8)
    with_mask = ch.padding_effect(model, minilm_tokenizer, ch.SENTENCES[0], 8, True)
    without = ch.padding_effect(model, minilm_tokenizer, ch.SENTENCES[0], 8, False)
    assert caption == ch.effect_caption(with_mask, without, 8)
    assert with_mask["final"] < 1e-4 < 0.1 < without["final"]
    assert scores.caption("zh_CN", pad_score_1=4.0, pad_score_2=5.0) == \
        f"[PAD] 分数为 4 和 5：不加掩码时 {off:.1%} 的注意力落在 [PAD] 上，加掩码时为 0.0%"
    assert padding.caption("zh_CN", sentence=ch.SENTENCES[0], n_pad=8) == ch.effect_caption(with_mask, without, 8, "zh_CN")
    assert ch.effect_caption(with_mask, without, 8, "zh_CN").startswith("额外 8 个 [PAD]：最后一层的真实词元")
    check_editions(scores)
    check_editions(padding)
    # the live demo shows, for the same control values, the page's very figures and lines
    live = ch.make_demo(model, minilm_tokenizer)
    (pad1, pad2), toy_label, toy_figure, _ = live_panel(live.children[0])
    for p1, p2 in ((4.0, 5.0), (8.0, 9.0), (-4.0, 1.0)):
        pad1.value, pad2.value = p1, p2
        page = scores.state_at([ch.PAD_SCORES_1.index(p1), ch.PAD_SCORES_2.index(p2)])
        assert live_shows(toy_figure, page["figure"]) and toy_label.value == caption_html(page["caption"])
    (sentence, n_pad), real_label, real_figure, _ = live_panel(live.children[1])
    for s, n in ((ch.SENTENCES[0], 8), (ch.SENTENCES[2], 1)):
        sentence.value, n_pad.value = s, n
        page = padding.state_at([ch.SENTENCES.index(s), ch.N_PADS.index(n)])
        assert live_shows(real_figure, page["figure"]) and real_label.value == caption_html(page["caption"])
