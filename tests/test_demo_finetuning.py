"""Chapter 10's demo (course/demos/finetuning.py): the task heads, span decoding and the schedule.

Live callbacks (what a slider calls in Jupyter) are called with several values; each static demo state's caption
is checked against an independent computation with bertlib. The page test (tests/test_pages.py) checks the
same captions in the built book."""
from __future__ import annotations

import math

import pytest
import torch

from bertlib import (
    BertConfig, BertForQuestionAnswering, BertForTokenClassification,
)
from course.demos import finetuning as finetuning_demo
from course.demos._live import caption_html
from demo_checks import TINY, all_captions, by_id, check_editions, check_page_parts, live_panel, live_shows


@pytest.mark.parametrize("num_labels", [2, 5])
def test_heads_shapes_and_parameters(num_labels):
    cfg = BertConfig(vocab_size=50, num_labels=num_labels, **TINY)
    torch.manual_seed(0)
    models = {name: cls(cfg).eval() for name, cls in finetuning_demo.HEADS.items()}
    batch = {"input_ids": torch.randint(50, (3, 7)), "attention_mask": torch.ones(3, 7, dtype=torch.long)}
    shapes = finetuning_demo.head_outputs(models, batch)
    assert shapes["sequence classification"] == {"logits": (3, num_labels)}
    assert shapes["token classification"] == {"logits": (3, 7, num_labels)}
    assert shapes["question answering"] == {"start_logits": (3, 7), "end_logits": (3, 7)}
    formula = finetuning_demo.head_parameters_formula(cfg.hidden_size, num_labels)
    assert {name: finetuning_demo.new_parameters(m) for name, m in models.items()} == formula


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
    r = finetuning_demo.compare_decoders(start, end, mask, max_len)
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
    r = finetuning_demo.compare_decoders(start, end, mask)
    assert r["naive"] == r["decode_span"] == (7, 9) and r["naive_problems"] == []


def test_compare_decoders_too_long():
    mask = torch.ones(40, dtype=torch.bool)
    start, end = torch.zeros(40), torch.zeros(40)
    start[0], end[39] = 5.0, 5.0
    r = finetuning_demo.compare_decoders(start, end, mask, max_answer_length=30)
    assert r["naive_problems"] == ["too long"]
    s, e = r["decode_span"]
    assert e - s < 30


def test_qa_inputs_and_random_heads(minilm_tokenizer, minilm_model):
    qa = finetuning_demo.qa_inputs(minilm_tokenizer)
    tokens, mask = qa["tokens"], qa["context_mask"]
    sep = [i for i, t in enumerate(tokens) if t == "[SEP]"]
    assert len(sep) == 2 and mask.sum() == sep[1] - sep[0] - 1
    assert mask[sep[0] + 1: sep[1]].all() and not mask[: sep[0] + 1].any()
    with torch.no_grad():
        hidden = minilm_model(**qa["encoding"]).last_hidden_state[0]
    a = finetuning_demo.random_head_logits(hidden, 3)
    b = finetuning_demo.random_head_logits(hidden, 3)
    assert torch.equal(a[0], b[0]) and a[0].shape == (len(tokens),)
    for seed in range(5):
        start, end = finetuning_demo.random_head_logits(hidden, seed)
        s, e = finetuning_demo.compare_decoders(start, end, mask)["decode_span"]
        assert mask[s] and mask[e] and s <= e
    rates = finetuning_demo.naive_failure_rate(hidden, mask, n_heads=50)
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

    s = finetuning_demo.schedule_for(n, batch, epochs, 5e-5)
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
    grid = finetuning_demo.PAPER_GRID
    assert (min(grid["learning_rate"]), max(grid["learning_rate"])) == (2e-5, 5e-5)
    assert grid["batch_size"] == (16, 32) and (min(grid["epochs"]), max(grid["epochs"])) == (2, 4)
    ratios = [finetuning_demo.PRETRAINING_LR / lr for lr in grid["learning_rate"]]
    assert max(math.log10(r) for r in ratios) < 1, "fine-tuning lrs are not an order of magnitude smaller"


def test_plots_and_demo(minilm_tokenizer, minilm_model):
    import ipywidgets as w

    qa = finetuning_demo.qa_inputs(minilm_tokenizer)
    with torch.no_grad():
        hidden = minilm_model(**qa["encoding"]).last_hidden_state[0]
    start, end = finetuning_demo.random_head_logits(hidden, 0)
    finetuning_demo.plot_span_scores(start, end, qa["context_mask"], qa["tokens"], 5)  # the chapter's still figure
    assert isinstance(finetuning_demo.make_demo(minilm_tokenizer, hidden), w.Tab)


def test_token_and_qa_heads_from_checkpoint(minilm_dir):
    # The chapter loads MiniLM under each head; the new head is the only freshly initialised part.
    for cls in (BertForTokenClassification, BertForQuestionAnswering):
        model = cls.from_pretrained(minilm_dir, num_labels=4)
        assert finetuning_demo.new_parameters(model) == finetuning_demo.head_parameters_formula(384, 4)[
            "token classification" if cls is BertForTokenClassification else "question answering"]
@pytest.fixture(scope="module")
def heads():
    return finetuning_demo.fresh_heads()


@pytest.fixture(scope="module")
def finetuning_demos(minilm_tokenizer, heads):
    return by_id(finetuning_demo.static_demos(minilm_tokenizer, models=heads))


def test_static_parts(finetuning_demos):
    assert set(finetuning_demos) == {"finetuning-heads", "finetuning-span", "finetuning-schedule"}
    check_page_parts(finetuning_demos["finetuning-heads"])
    check_page_parts(finetuning_demos["finetuning-span"], html_part=False)
    check_page_parts(finetuning_demos["finetuning-schedule"], html_part=False)
    for demo in finetuning_demos.values():
        captions = all_captions(demo)
        assert len(set(captions)) == len(captions)


def test_static_heads_caption_shapes_parameters_and_answer(finetuning_demos, heads, minilm_tokenizer):
    qa = finetuning_demo.qa_inputs(minilm_tokenizer)
    T = len(qa["tokens"])
    H = 384
    formula = finetuning_demo.head_parameters_formula(H, num_labels=3)
    models = heads
    shapes = finetuning_demo.head_outputs(models, qa["encoding"])
    demo = finetuning_demos["finetuning-heads"]
    seq = demo.caption(head="sequence classification")
    assert f"reads the pooled [CLS] vector (1, {H}), outputs logits {shapes['sequence classification']['logits']}" in seq
    tok = demo.caption(head="token classification")
    assert f"(1, {T}, {H}), outputs logits (1, {T}, 3)" in tok
    assert shapes["token classification"]["logits"] == (1, T, 3)
    qa_caption = demo.caption(head="question answering")
    assert f"start_logits (1, {T}), end_logits (1, {T})" in qa_caption
    for name, caption in (("sequence classification", seq), ("token classification", tok),
                          ("question answering", qa_caption)):
        assert f"{formula[name]:,} new parameters" in caption
    with torch.no_grad():
        out = models["question answering"](**qa["encoding"])
    from bertlib import decode_span

    cs, ce, _ = decode_span(out.start_logits[0], out.end_logits[0], qa["context_mask"])
    assert qa["context_mask"][cs] and qa["context_mask"][ce]
    assert qa_caption.endswith(f"span '{' '.join(qa['tokens'][cs:ce + 1])}'")
    with pytest.raises(ValueError, match="head"):
        finetuning_demo.head_reads_and_outputs("translation", models["question answering"], minilm_tokenizer)


def test_static_span_caption_is_both_decoders_on_that_head(finetuning_demos, heads, minilm_tokenizer):
    from bertlib import decode_span

    qa = finetuning_demo.qa_inputs(minilm_tokenizer)
    with torch.no_grad():
        hidden = heads["question answering"].bert(**qa["encoding"]).last_hidden_state[0]  # (T, H)
    invalid = 0
    for seed in finetuning_demo.SPAN_SEEDS:
        start, end = finetuning_demo.random_head_logits(hidden, seed)
        ns, ne = int(start.argmax()), int(end.argmax())
        cs, ce, _ = decode_span(start, end, qa["context_mask"], 30)
        caption = finetuning_demos["finetuning-span"].caption(seed=seed)
        assert f"naive argmax tokens {ns}..{ne} " in caption
        assert caption.endswith(f"decode_span tokens {cs}..{ce} '{' '.join(qa['tokens'][cs:ce + 1])}'")
        bad = ne < ns or not (qa["context_mask"][ns] and qa["context_mask"][ne])
        assert ("(valid)" in caption) == (not bad)
        invalid += bad
    assert invalid > 0  # the demo shows the failure the chapter describes


@pytest.mark.parametrize("batch,lr,epochs", [(16, 5e-5, 2), (32, 2e-5, 3), (32, 3e-5, 4)])
def test_static_schedule_caption(finetuning_demos, batch, lr, epochs):
    total = math.ceil(10_000 / batch) * epochs
    caption = finetuning_demos["finetuning-schedule"].caption(batch_size=batch, learning_rate=lr, epochs=epochs)
    warmup = round(total * 0.1)  # bertlib.training.loop.warmup_steps: 10% of the updates, rounded
    assert f"{total:,} steps, {warmup:,} of warm-up" in caption
    state = finetuning_demos["finetuning-schedule"].state_at(
        [finetuning_demo.PAPER_GRID["batch_size"].index(batch), finetuning_demo.PAPER_GRID["learning_rate"].index(lr),
         finetuning_demo.PAPER_GRID["epochs"].index(epochs)])
    (trace,) = state["figure"].data
    assert list(trace.x) == [0, warmup - 1, total] and max(trace.y) == pytest.approx(lr)
    assert trace.y[0] == pytest.approx(lr / warmup) and trace.y[-1] == 0.0  # the first update already moves


def test_live_demo_shows_the_page_states(finetuning_demos, heads, minilm_tokenizer):
    """For the page's control values the live demo shows the page's very line and figure; the live-only
    controls (the longest answer, the number of examples) change them."""
    qa = finetuning_demo.qa_inputs(minilm_tokenizer)
    with torch.no_grad():
        hidden = heads["question answering"].bert(**qa["encoding"]).last_hidden_state[0]  # (T, H)
    span_tab, schedule_tab = finetuning_demo.make_demo(minilm_tokenizer, hidden).children
    (seed, max_len), span_text, span_figure, _ = live_panel(span_tab)
    for s in (0, 7, 19):
        seed.value = s
        page = finetuning_demos["finetuning-span"].state_at([finetuning_demo.SPAN_SEEDS.index(s)])
        assert live_shows(span_figure, page["figure"]) and span_text.value == caption_html(page["caption"])
    max_len.value = 2
    assert not live_shows(span_figure, page["figure"])
    (n, batch, lr, epochs), sched_text, sched_figure, _ = live_panel(schedule_tab)
    grid = finetuning_demo.PAPER_GRID
    for b, r, e in ((16, 5e-5, 2), (32, 2e-5, 3)):
        batch.value, lr.value, epochs.value = b, r, e
        page = finetuning_demos["finetuning-schedule"].state_at(
            [grid["batch_size"].index(b), grid["learning_rate"].index(r), grid["epochs"].index(e)])
        assert live_shows(sched_figure, page["figure"]) and sched_text.value == caption_html(page["caption"])
    n.value = 1000
    assert "on 1,000 examples: 96 steps" in sched_text.value and not live_shows(sched_figure, page["figure"])


def test_static_demos_in_chinese(finetuning_demos):
    """The Chinese edition from the same heads (issue 31 §2): the heads' names are buttons in Chinese, each
    caption Chinese with its numbers, the span's problems named in Chinese."""
    for d in finetuning_demos.values():
        check_editions(d)
    heads = finetuning_demos["finetuning-heads"]
    assert heads.controls[0].shown_labels("zh_CN") == ["序列分类", "词元分类", "问答"]
    assert heads.caption("zh_CN", head="question answering").startswith("问答：读取 每个词元的向量")
