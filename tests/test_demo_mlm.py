"""Chapter 7's demo (course/demos/mlm.py): the masked-LM loss, over the selected positions only.

Live callbacks (what a slider calls in Jupyter) are called with several values; each static demo state's caption
is checked against an independent computation with bertlib. The page test (tests/test_pages.py) checks the
same captions in the built book."""
from __future__ import annotations

import math

import pytest
import torch
import torch.nn.functional as F

from bertlib import mlm_loss
from bertlib.training.pretrain import pretrain
from bertlib.training.pretrain_config import PretrainConfig
from course.demos import mlm as mlm_demo
from demo_checks import live_panel, live_shows, all_captions, by_id, check_editions, check_page_parts, number_after


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
    tabs = mlm_demo.make_demo()
    assert isinstance(tabs, w.Tab)
    (k, seed), line, figure, table = live_panel(tabs.children[1])
    k.value, seed.value = 5, 2  # the live mask-bug tab shows the page's state for the same controls
    shown = mlm_demo.mask_bug_state(5, 2)
    assert live_shows(figure, shown["figure"]) and table.value == shown["html"].data
    assert shown["caption"] in line.value


# --- the masked-word demo: chapter 11's default run as the head -----------------------------------------------
# A tiny pretraining run stands in for the default one (whose checkpoint the book's build computes); the demo
# reads it through course.runs.checkpoint_dir exactly as it reads the real one.
TINY = PretrainConfig(steps=30, batch_size=16, seq_len=32, hidden_size=32, num_hidden_layers=1,
                      num_attention_heads=2, intermediate_size=64, lr=3e-3, eval_every=10, threads=1)


@pytest.fixture(scope="module")
def tiny_checkpoint(tmp_path_factory):
    out = tmp_path_factory.mktemp("tiny_run") / "checkpoint"
    pretrain(TINY, out=out, progress=False)
    return out


@pytest.fixture(scope="module")
def tiny_head(tiny_checkpoint):
    from course import runs

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(runs, "checkpoint_dir", lambda: str(tiny_checkpoint))
        model, tokenizer = mlm_demo.trained_mlm()
        demos = by_id(mlm_demo.static_demos())  # every default: the run's head, its held-out sentence
    return model, tokenizer, demos


@pytest.fixture(scope="module")
def mlm_demos(tiny_head):
    return tiny_head[2]


def _independent(model, tokenizer, text, position):
    """-ln p, the probabilities and the right id at ``position`` of ``text`` with that word masked: one
    forward pass of its own, the loss from bertlib's mlm_loss."""
    enc = tokenizer(text, return_tensors="pt")
    ids = enc["input_ids"]
    masked = ids.clone()
    masked[0, position] = tokenizer.mask_token_id
    labels = torch.full_like(ids, -100)
    labels[0, position] = ids[0, position]
    with torch.no_grad():
        logits = model(input_ids=masked).logits
    return float(mlm_loss(logits, labels)), logits[0, position].softmax(-1), int(ids[0, position]), ids.size(1)


def test_trained_mlm_is_the_run_checkpoint(tiny_head, tiny_checkpoint):
    from bertlib import BertForPreTraining, BertTokenizer

    model, tokenizer, _ = tiny_head
    saved = BertForPreTraining.from_pretrained(str(tiny_checkpoint)).state_dict()
    assert not model.training
    for name, value in model.state_dict().items():
        assert torch.equal(value, saved[name]), name  # the encoder and the MLM head, as trained
    assert tokenizer.vocab == BertTokenizer.from_pretrained(str(tiny_checkpoint)).vocab
    assert tokenizer.vocab_size == model.config.vocab_size


def test_heldout_sentences_come_from_documents_the_run_never_trained_on(tiny_head):
    from bertlib.training.pretraining_data import load_pretraining_data

    _, tokenizer, _ = tiny_head
    data = load_pretraining_data(TINY.vocab, TINY.heldout_fraction, 0, TINY.max_sentence_tokens)
    found = mlm_demo.heldout_sentences(tokenizer)
    assert len(found) >= 10
    assert {name for name, _ in found} <= set(data.heldout_names)
    assert not {name for name, _ in found} & set(data.train_names)
    assert len({s for _, s in found}) == len(found)
    for _, sentence in found:
        assert mlm_demo.PLAIN_SENTENCE.fullmatch(sentence)
        assert tokenizer.tokenize(sentence) == sentence[:-1].lower().split() + ["."]  # a word is one piece


def test_heldout_sentences_filter(tiny_head):
    from bertlib.training.corpus import Document

    _, tokenizer, _ = tiny_head
    docs = [Document("module:a", "module:a", ("Return the value of the first item.", "not capitalised at all here.",
                                             "Return the value of the first item.", "Too short here.")),
            Document("module:b", "module:b", ("Return the zzqxv of the first item.",))]  # a word of several pieces
    assert mlm_demo.heldout_sentences(tokenizer, docs) == [("module:a", "Return the value of the first item.")]


def test_word_losses_mask_one_word_at_a_time(tiny_head):
    model, tokenizer, _ = tiny_head
    text = "Return the value of the first item."
    losses = mlm_demo.word_losses(model, tokenizer, text)
    assert losses.shape == (len(tokenizer.tokenize(text)),)
    for j, value in enumerate(losses.tolist()):
        assert value == pytest.approx(_independent(model, tokenizer, text, j + 1)[0], abs=1e-4)


def test_pick_sentence_is_the_lowest_mean_loss(tiny_head):
    import statistics

    model, tokenizer, _ = tiny_head
    candidates = mlm_demo.heldout_sentences(tokenizer)[:12]
    means = {s: statistics.mean(_independent(model, tokenizer, s, j)[0]
                                for j in range(1, len(tokenizer.tokenize(s)) + 1)) for _, s in candidates}
    pick = mlm_demo.pick_sentence(model, tokenizer, candidates)
    assert pick["sentence"] == min(means, key=means.get)
    assert pick["document"] == dict((s, n) for n, s in candidates)[pick["sentence"]]
    assert pick["mean_loss"] == pytest.approx(min(means.values()), abs=1e-4)
    assert pick["median_mean_loss"] == pytest.approx(statistics.median(means.values()), abs=1e-4)
    assert pick["candidates"] == len(candidates)
    with pytest.raises(ValueError, match="no candidate"):
        mlm_demo.pick_sentence(model, tokenizer, [])


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


def test_static_masked_word_is_the_head_at_that_position_only(tiny_head):
    model, tokenizer, demos = tiny_head
    demo = demos["masked-word"]
    sentence = mlm_demo.pick_sentence(model, tokenizer, mlm_demo.heldout_sentences(tokenizer))["sentence"]
    words = tokenizer.tokenize(sentence)
    assert demo.controls[0].values == list(range(1, len(words) + 1))
    for position in range(1, len(words) + 1):
        loss, probs, right, T = _independent(model, tokenizer, sentence, position)
        word = words[position - 1]
        caption = demo.caption(position=position)
        assert caption.startswith(f"mask '{word}' (position {position}): the loss reads 1 of {T} positions")
        assert number_after(caption, f"-ln p('{word}') =") == pytest.approx(loss, abs=6e-3)
        top = probs.topk(3)
        guesses = ", ".join(f"{t} {p:.2f}" for t, p in zip(tokenizer.convert_ids_to_tokens(top.indices.tolist()),
                                                            top.values.tolist()))
        assert f"top guesses {guesses};" in caption
        rank = int((probs > probs[right]).sum()) + 1
        assert caption.endswith(f"'{word}' ranks {rank:,} of {tokenizer.vocab_size:,}")
    # it opens on the most probable word of four letters or more
    long = [j + 1 for j, w in enumerate(words) if w.isalpha() and len(w) >= mlm_demo.MIN_LETTERS]
    if long:
        losses = {j: _independent(model, tokenizer, sentence, j)[0] for j in long}
        assert demo.controls[0].default == min(losses, key=losses.get)
    r = mlm_demo.mask_one_word(model, tokenizer, sentence, 2)
    assert sum(lab != -100 for lab in r["labels"]) == 1 and r["model_reads"][2] == "[MASK]"
    assert r["p_right"] == pytest.approx(math.exp(-r["loss"]), rel=1e-4)
    with pytest.raises(ValueError, match="position"):
        mlm_demo.mask_one_word(model, tokenizer, sentence, 0)  # [CLS] is not a word


def test_static_demos_want_the_model_s_tokenizer(tiny_head):
    model, _, _ = tiny_head
    with pytest.raises(ValueError, match="tokenizer"):
        mlm_demo.static_demos(model=model)


@pytest.mark.book
def test_the_book_s_head_guesses_sensibly():
    """The head the built book shows (chapter 11's default run): on the sentence it opens on, the right word is
    among its first guesses, and the sentence reads far better than a uniform guess."""
    from course import runs

    if not runs.is_cached("pretraining"):
        pytest.fail("chapter 11's default run is not computed: run `make book` first")
    model, tokenizer = mlm_demo.trained_mlm()
    pick = mlm_demo.pick_sentence(model, tokenizer, mlm_demo.heldout_sentences(tokenizer))
    assert pick["mean_loss"] < pick["median_mean_loss"] < math.log(tokenizer.vocab_size) / 2
    position = mlm_demo.default_position(model, tokenizer, pick["sentence"])
    r = mlm_demo.mask_one_word(model, tokenizer, pick["sentence"], position)
    assert r["rank_right"] <= 3 and r["top"][0][1] > 0.1, r


def test_static_demos_in_chinese(mlm_demos):
    """The Chinese edition of both demos, from the same states (issue 31 §2): every word translated, each caption
    Chinese with the English caption's numbers, the same numbers in every figure and table."""
    for d in mlm_demos.values():
        check_editions(d)
    zh = mlm_demos["mask-bug"].caption("zh_CN", n_selected=3)
    assert zh.startswith("16 个位置中选中 3 个：正确的损失") and "错误写法" in zh
    table = mlm_demos["masked-word"].state_at([0], "zh_CN")["html"]
    assert "计入损失" in str(table._repr_html_() if hasattr(table, "_repr_html_") else table)
