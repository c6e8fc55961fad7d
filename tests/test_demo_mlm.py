"""Chapter 7's demo (course/demos/mlm.py): the masked-LM loss, over the selected positions only.

Live callbacks (what a slider calls in Jupyter) are called with several values; each static demo state's caption
is checked against an independent computation with bertlib. The page test (tests/test_pages.py) checks the
same captions in the built book."""
from __future__ import annotations

import math
import os

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import pytest
import torch
import torch.nn.functional as F

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

from bertlib import (
    mlm_loss,
)
from course.demos import mlm as mlm_demo
from demo_checks import all_captions, by_id, check_page_parts, number_after


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    plt.close("all")


@pytest.mark.parametrize("p,expected", [(0.62, 0.4780), (0.01, 4.6052), (1.0, 0.0), (1 / 30522, 10.3262)])
def test_log_loss(p, expected):
    assert mlm_demo.log_loss(p) == pytest.approx(expected, abs=1e-4)


@pytest.mark.parametrize("p", [0.0, -0.1, 1.5])
def test_log_loss_rejects_bad_p(p):
    with pytest.raises(ValueError):
        mlm_demo.log_loss(p)


@pytest.mark.parametrize("k", [1, 3, 8, 15])
@pytest.mark.parametrize("seed", [0, 7])
def test_compare_losses(k, seed):
    r = mlm_demo.compare_losses(k, seed)
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
    r = mlm_demo.compare_losses(16, 0)
    assert r["mean x mask (bug)"]["loss"] == pytest.approx(r["bertlib mlm_loss"]["loss"], abs=1e-5)


def test_make_batch_labels():
    logits, original, selected, labels = mlm_demo.make_batch(5, seed=3)
    assert logits.shape == (2, 8, 20) and int(selected.sum()) == 5
    assert torch.equal(labels[selected], original[selected]) and (labels[~selected] == -100).all()
    with pytest.raises(ValueError):
        mlm_demo.make_batch(0)
    with pytest.raises(ValueError):
        mlm_demo.make_batch(17)


def test_loss_vs_selected_bug_is_flat():
    curve = mlm_demo.loss_vs_selected(seed=1)
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
    assert mlm_demo.buggy_masked_mean(logits, targets, weights).item() == pytest.approx(mean_all.item(), abs=1e-5)
    labels = torch.where(weights, targets, -100)
    assert mlm_demo.fixed_masked_mean(logits, targets, weights).item() == pytest.approx(
        mlm_loss(logits, labels).item(), abs=1e-5)


def test_plots_and_demo():
    import ipywidgets as w

    mlm_demo.plot_log_loss(0.3)
    mlm_demo.plot_compare(mlm_demo.compare_losses(4, 0))
    assert isinstance(mlm_demo.make_demo(), w.Tab)


@pytest.fixture(scope="module")
def mlm_model():
    return mlm_demo.untrained_mlm()


@pytest.fixture(scope="module")
def mlm_demos(minilm_tokenizer, mlm_model):
    return by_id(mlm_demo.static_demos(tokenizer=minilm_tokenizer, model=mlm_model))


def test_static_ids_and_parts(mlm_demos):
    # no demo of -ln p: the figure above it in the chapter already shows the curve and its marks
    assert set(mlm_demos) == {"mask-bug", "masked-word"}
    check_page_parts(mlm_demos["mask-bug"])
    check_page_parts(mlm_demos["masked-word"])
    for demo in mlm_demos.values():
        captions = all_captions(demo)
        assert len(set(captions)) == len(captions), demo.demo_id  # every control value shows something else


@pytest.mark.parametrize("k", [1, 3, 8, 16])
def test_static_mask_bug_caption_is_the_library_loss(mlm_demos, k):
    logits, original, selected, labels = mlm_demo.make_batch(k, 0)
    right = F.cross_entropy(logits.reshape(-1, logits.size(-1)), labels.reshape(-1), ignore_index=-100)
    mean_all = F.cross_entropy(logits.reshape(-1, logits.size(-1)), original.reshape(-1))
    caption = mlm_demos["mask-bug"].caption(n_selected=k)
    assert caption.startswith(f"{k} of 16 positions selected")
    assert number_after(caption, "right loss") == pytest.approx(float(right), abs=6e-5)
    assert number_after(caption, "bug") == pytest.approx(float(mean_all), abs=6e-5)  # the bug ignores the mask
    assert number_after(caption, "gradient on the unselected:") == 0


def test_static_masked_word_is_the_loss_at_that_position_only(mlm_demos, mlm_model, minilm_tokenizer):
    model = mlm_model
    enc = minilm_tokenizer(mlm_demo.MASKED_SENTENCE, return_tensors="pt")
    ids = enc["input_ids"]
    V = minilm_tokenizer.vocab_size
    for position in (1, 2, 4, ids.size(1) - 2):
        masked = ids.clone()
        masked[0, position] = minilm_tokenizer.mask_token_id
        with torch.no_grad():
            logits = model(input_ids=masked, attention_mask=enc["attention_mask"]).logits[0, position]
        expected = float(-logits.log_softmax(-1)[ids[0, position]])
        word = minilm_tokenizer.convert_ids_to_tokens([int(ids[0, position])])[0]
        caption = mlm_demos["masked-word"].caption(position=position)
        assert f"mask '{word}' (position {position})" in caption
        assert f"1 of {ids.size(1)} positions" in caption
        assert number_after(caption, f"-ln p('{word}') =") == pytest.approx(expected, abs=6e-3)
        # an untrained head on the real encoder is close to a uniform guess over the vocabulary
        assert abs(expected - math.log(V)) < 3.0
    r = mlm_demo.mask_one_word(model, minilm_tokenizer, mlm_demo.MASKED_SENTENCE, 2)
    assert sum(lab != -100 for lab in r["labels"]) == 1 and r["model_reads"][2] == "[MASK]"
    assert 1 <= r["rank_right"] <= V and r["p_right"] == pytest.approx(math.exp(-r["loss"]), rel=1e-4)
    with pytest.raises(ValueError, match="position"):
        mlm_demo.mask_one_word(model, minilm_tokenizer, mlm_demo.MASKED_SENTENCE, 0)  # [CLS] is not a word


def test_static_untrained_head_leaves_the_global_generator_alone(mlm_model):
    torch.manual_seed(123)
    before = torch.random.get_rng_state()
    again = mlm_demo.untrained_mlm()
    assert torch.equal(torch.random.get_rng_state(), before)
    assert torch.equal(again.cls.predictions.transform.dense.weight, mlm_model.cls.predictions.transform.dense.weight)
