"""Chapter 1's demo (course/demos/visibility.py): what each position may attend to, bidirectional and causal.

Live callbacks (what a slider calls in Jupyter) are called with several values; each static demo state's caption
is checked against an independent computation with bertlib. The page test (tests/test_pages.py) checks the
same captions in the built book."""
from __future__ import annotations


import numpy as np
import pytest

from course.demos import visibility as visibility_demo
from demo_checks import check_editions, live_panel, live_shows


@pytest.mark.parametrize("T", [1, 2, 5, 9])
def test_visibility_bidirectional_and_causal(T):
    bert = visibility_demo.visibility(T, is_causal=False)
    gpt = visibility_demo.visibility(T, is_causal=True)
    assert bert.shape == gpt.shape == (T, T) and bert.dtype == gpt.dtype == bool
    assert bert.all()
    assert np.array_equal(gpt, np.tril(np.ones((T, T), dtype=bool)))
    assert gpt.sum() == T * (T + 1) // 2


def test_visibility_rejects_empty():
    with pytest.raises(ValueError):
        visibility_demo.visibility(0, is_causal=True)


TOKENS = ["[CLS]", "the", "cat", "sat", "[SEP]"]


@pytest.mark.parametrize("position", [0, 2, 4])
def test_visible_tokens_and_describe(position):
    seen = visibility_demo.visible_tokens(TOKENS, position)
    assert seen["bert"] == TOKENS
    assert seen["gpt"] == TOKENS[: position + 1]
    text = visibility_demo.describe(TOKENS, position)
    assert f"BERT sees {len(TOKENS)} of {len(TOKENS)}" in text and f"GPT sees {position + 1}:" in text


@pytest.mark.parametrize("position", [-1, 5])
def test_position_out_of_range(position):
    with pytest.raises(IndexError):
        visibility_demo.visible_tokens(TOKENS, position)
    with pytest.raises(IndexError):
        visibility_demo.position_plotly(TOKENS, position)


@pytest.mark.parametrize("position", [0, 3, 4])
@pytest.mark.parametrize("with_weights", [False, True])
def test_position_figure_bars(position, with_weights):
    T = len(TOKENS)
    rng = np.random.default_rng(position)
    attn = rng.random((T, T))
    attn_gpt = np.tril(attn)
    attn, attn_gpt = attn / attn.sum(-1, keepdims=True), attn_gpt / attn_gpt.sum(-1, keepdims=True)
    fig = visibility_demo.position_plotly(TOKENS, position, *((attn, attn_gpt) if with_weights else ()))
    bert_bars, bert_hidden, gpt_bars, gpt_hidden = (np.array(t.y) for t in fig.data)
    np.testing.assert_allclose(bert_bars, attn[position] if with_weights else np.ones(T), atol=1e-4)
    assert not bert_hidden.any()  # BERT hides nothing
    assert not gpt_bars[position + 1:].any()  # nothing to the right of the query
    assert (gpt_hidden > 0).sum() == T - 1 - position  # one crossed bar per hidden key
    assert fig.layout.yaxis.title.text == ("weight" if with_weights else "may attend")


def test_position_figure_wants_both_weights_or_none():
    with pytest.raises(ValueError, match="both models"):
        visibility_demo.position_plotly(TOKENS, 1, np.eye(len(TOKENS)))


def test_make_demo_follows_the_slider():
    w = visibility_demo.make_demo(TOKENS, position=1)
    (slider,), label, figure, _ = live_panel(w)
    assert "query 1" in label.value and live_shows(figure, visibility_demo.position_plotly(TOKENS, 1))
    slider.value = 4
    assert "query 4" in label.value and "GPT sees 5" in label.value
    assert live_shows(figure, visibility_demo.position_plotly(TOKENS, 4))
    assert not live_shows(figure, visibility_demo.position_plotly(TOKENS, 1))


def test_static_positions(minilm_dir, minilm_tokenizer):
    import numpy as np

    from bertlib import BertModel
    from course.demos import visibility as ch

    bi = BertModel.from_pretrained(minilm_dir, attn_implementation="eager")
    gpt = BertModel.from_pretrained(minilm_dir, attn_implementation="eager", is_causal=True)
    (d,) = ch.static_demos(minilm_tokenizer, bi, gpt)
    tokens, attn_bi, attn_gpt = ch.first_layer_attention(minilm_tokenizer, bi, gpt)
    assert d.controls[0].default == tokens.index("it") and d.n_states == len(tokens)
    assert np.allclose(np.triu(attn_gpt, 1), 0) and np.allclose(attn_bi.sum(-1), 1, atol=1e-5)
    for q in (0, 10, len(tokens) - 1):
        out = d.state_at([q])
        assert out["caption"] == f"query {q} ({tokens[q]!r}) reads {len(tokens)} keys (BERT), {q + 1} (GPT) of " \
                                 f"{len(tokens)}"
        bert_bars, _, gpt_bars, hidden = (t.y for t in out["figure"].data)
        assert np.allclose(bert_bars, attn_bi[q], atol=1e-4) and np.allclose(gpt_bars[:q + 1], attn_gpt[q, :q + 1],
                                                                            atol=1e-4)
        assert sum(v > 0 for v in hidden) == len(tokens) - q - 1  # the keys GPT may not read, drawn grey
        zh = d.state_at([q], "zh_CN")  # the Chinese page: the same bars, its own words
        assert zh["caption"] == f"查询 {q}（{tokens[q]!r}）在 {len(tokens)} 个键中读取 {len(tokens)} 个（BERT）、" \
                                f"{q + 1} 个（GPT）"
        assert [t.y for t in zh["figure"].data] == [t.y for t in out["figure"].data]
        assert [a.text for a in zh["figure"].layout.annotations] == ["BERT：双向", "GPT：因果"]
    check_editions(d)
    # the live demo, given the same weights, shows the very figure the page stores for each position
    live = ch.make_demo(tokens, attn_bi, attn_gpt, position=3)
    (slider,), _, figure, _ = live_panel(live)
    for q in (3, 10):
        slider.value = q
        assert live_shows(figure, d.state_at([q])["figure"])
