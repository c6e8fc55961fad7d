"""The widget demos of chapters 1-5 and the static quiz: every callback with several values.

The callbacks are what the widgets call when a reader moves a slider in Jupyter, so if these pass the
demos work live, not only in their saved state on the static page.
"""
from __future__ import annotations

import re

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np
import pytest
import torch

from bertlib import BertConfig, BertEmbeddings, count_parameters
from course.demos import ch01_visibility, ch03_sizes, ch04_embeddings, ch05_inputs
from course.plots import fig_to_png, html_table
from course.quiz import quiz, quiz_html

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def png(value) -> bytes:
    """An Image widget's value (a memoryview) as bytes."""
    return bytes(value)


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    plt.close("all")


# --- chapter 1: visibility ------------------------------------------------------------------------------------

@pytest.mark.parametrize("T", [1, 2, 5, 9])
def test_visibility_bidirectional_and_causal(T):
    bert = ch01_visibility.visibility(T, is_causal=False)
    gpt = ch01_visibility.visibility(T, is_causal=True)
    assert bert.shape == gpt.shape == (T, T) and bert.dtype == gpt.dtype == bool
    assert bert.all()
    assert np.array_equal(gpt, np.tril(np.ones((T, T), dtype=bool)))
    assert gpt.sum() == T * (T + 1) // 2


def test_visibility_rejects_empty():
    with pytest.raises(ValueError):
        ch01_visibility.visibility(0, is_causal=True)


TOKENS = ["[CLS]", "the", "cat", "sat", "[SEP]"]


@pytest.mark.parametrize("position", [0, 2, 4])
def test_visible_tokens_and_describe(position):
    seen = ch01_visibility.visible_tokens(TOKENS, position)
    assert seen["bert"] == TOKENS
    assert seen["gpt"] == TOKENS[: position + 1]
    text = ch01_visibility.describe(TOKENS, position)
    assert f"BERT sees {len(TOKENS)} of {len(TOKENS)}" in text and f"GPT sees {position + 1}:" in text


@pytest.mark.parametrize("position", [-1, 5])
def test_position_out_of_range(position):
    with pytest.raises(IndexError):
        ch01_visibility.visible_tokens(TOKENS, position)
    with pytest.raises(IndexError):
        ch01_visibility.position_figure(TOKENS, position)


@pytest.mark.parametrize("position", [0, 3, 4])
@pytest.mark.parametrize("with_weights", [False, True])
def test_position_figure_bars(position, with_weights):
    T = len(TOKENS)
    rng = np.random.default_rng(position)
    attn = rng.random((T, T))
    attn_gpt = np.tril(attn)
    attn, attn_gpt = attn / attn.sum(-1, keepdims=True), attn_gpt / attn_gpt.sum(-1, keepdims=True)
    fig = ch01_visibility.position_figure(TOKENS, position, *( (attn, attn_gpt) if with_weights else ()))
    bert_ax, gpt_ax = fig.axes
    # the first T bars are the visible weights; crossed boxes for hidden keys come after them
    bert_heights = [p.get_height() for p in bert_ax.patches[:T]]
    gpt_heights = [p.get_height() for p in gpt_ax.patches[:T]]
    expected_bert = attn[position] if with_weights else np.ones(T)
    np.testing.assert_allclose(bert_heights, expected_bert)
    assert all(h == 0 for h in gpt_heights[position + 1:])  # nothing to the right of the query
    assert len(gpt_ax.patches) == T + (T - 1 - position)  # one crossed box per hidden key
    assert len(bert_ax.patches) == T
    assert fig_to_png(fig).startswith(PNG_MAGIC)


def test_ch01_make_demo_follows_the_slider():
    w = ch01_visibility.make_demo(TOKENS, position=1)
    slider, label, image = w.children
    first = png(image.value)
    assert "query 1" in label.value and first.startswith(PNG_MAGIC)
    slider.value = 4
    assert "query 4" in label.value and "GPT sees 5" in label.value and png(image.value) != first


# --- chapter 3: sizes -----------------------------------------------------------------------------------------

@pytest.mark.parametrize("preset", list(ch03_sizes.PRESETS))
def test_grouped_counts_add_up_for_presets(preset):
    cfg = ch03_sizes.make_config(**ch03_sizes.PRESETS[preset])
    groups = ch03_sizes.grouped_counts(cfg)
    assert tuple(groups) == ch03_sizes.GROUPS
    assert sum(groups.values()) == count_parameters(cfg)["total"]


def test_presets_match_the_known_sizes():
    base = ch03_sizes.make_config(**ch03_sizes.PRESETS["BERT-Base"])
    large = ch03_sizes.make_config(**ch03_sizes.PRESETS["BERT-Large"])
    assert count_parameters(base)["total"] == 109_482_240
    assert count_parameters(large)["total"] == 335_141_888
    assert base == BertConfig.base()


@pytest.mark.parametrize("H,L,V", [(128, 2, 1000), (256, 4, 30522), (768, 12, 30522), (1024, 24, 250000)])
def test_grouped_counts_closed_form(H, L, V):
    cfg = ch03_sizes.make_config(H, L, V)
    g = ch03_sizes.grouped_counts(cfg)
    I = 4 * H  # noqa: E741 (I: the paper's feed-forward width)
    assert g["word embeddings"] == V * H
    assert g["attention (all layers)"] == L * (4 * H * H + 4 * H + 2 * H)
    assert g["feed-forward (all layers)"] == L * (2 * H * I + I + H + 2 * H)
    assert g["pooler"] == H * H + H
    assert f"{sum(g.values()):,} parameters" in ch03_sizes.summary(cfg)


def test_make_config_rejects_odd_width():
    with pytest.raises(ValueError):
        ch03_sizes.make_config(100, 2)


@pytest.mark.parametrize("preset", list(ch03_sizes.PRESETS))
def test_breakdown_figure(preset):
    cfg = ch03_sizes.make_config(**ch03_sizes.PRESETS[preset])
    fig = ch03_sizes.breakdown_figure(cfg)
    bars = fig.axes[0].patches
    assert len(bars) == len(ch03_sizes.GROUPS)
    widths = [b.get_width() * 1e6 for b in bars]
    np.testing.assert_allclose(widths, list(ch03_sizes.grouped_counts(cfg).values()), rtol=1e-9)


def test_ch02_make_demo_sliders_and_presets():
    w = ch03_sizes.make_demo("BERT-Base")
    presets, hidden, layers, vocab, label, image = w.children
    assert "109,482,240" in label.value
    layers.value = 6
    assert "L=6, H=768" in label.value
    presets.value = "BERT-Large"
    assert (hidden.value, layers.value) == (1024, 24) and "335,141,888" in label.value
    presets.value = "MiniLM-L6-H384"
    assert "22,713,216" in label.value and png(image.value).startswith(PNG_MAGIC)


# --- chapter 4: embeddings ------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def pair_inputs(minilm_tokenizer):
    enc = minilm_tokenizer("my dog is cute", "he likes playing", return_tensors="pt")
    return enc["input_ids"], enc["token_type_ids"], minilm_tokenizer.convert_ids_to_tokens(enc["input_ids"][0])


@pytest.mark.parametrize("index", [0, 4, 7, 9])
def test_embedding_parts_add_up_to_the_module(minilm_model, pair_inputs, index):
    ids, seg, tokens = pair_inputs
    emb = minilm_model.embeddings
    parts = ch04_embeddings.embedding_parts(emb, ids, seg, index)
    assert set(parts) == set(ch04_embeddings.PARTS)
    H = minilm_model.config.hidden_size
    assert all(v.shape == (H,) for v in parts.values())
    np.testing.assert_allclose(parts["sum"], parts["token"] + parts["position"] + parts["segment"], atol=1e-6)
    with torch.no_grad():
        expected = emb(ids, seg)[0, index].numpy()
    np.testing.assert_allclose(parts["layernorm"], expected, atol=1e-5)
    np.testing.assert_allclose(parts["segment"],
                               emb.token_type_embeddings.weight[int(seg[0, index])].detach().numpy())
    np.testing.assert_allclose(parts["position"], emb.position_embeddings.weight[index].detach().numpy())


def test_embedding_parts_worked_example():
    """The source's 4-dimensional example, through the demo's callback."""
    emb = BertEmbeddings(BertConfig(vocab_size=10, hidden_size=4, num_attention_heads=1, intermediate_size=8,
                                    max_position_embeddings=8)).eval()
    with torch.no_grad():
        emb.word_embeddings.weight[7] = torch.tensor([0.6, -0.2, 0.3, 0.5])
        emb.position_embeddings.weight[5] = torch.tensor([0.25, -0.15, 0.20, 0.10])
        emb.token_type_embeddings.weight[1] = -0.1
    parts = ch04_embeddings.embedding_parts(emb, torch.tensor([[0, 0, 0, 0, 0, 7]]),
                                            torch.tensor([[0, 0, 0, 1, 1, 1]]), 5)
    np.testing.assert_allclose(parts["sum"], [0.75, -0.45, 0.40, 0.50], atol=1e-6)
    assert abs(parts["layernorm"].mean()) < 1e-6 and abs(parts["layernorm"].std() - 1) < 1e-4


def test_embedding_parts_bad_input(minilm_model, pair_inputs):
    ids, seg, _ = pair_inputs
    with pytest.raises(IndexError):
        ch04_embeddings.embedding_parts(minilm_model.embeddings, ids, seg, ids.size(1))
    with pytest.raises(ValueError):
        ch04_embeddings.embedding_parts(minilm_model.embeddings, ids[0], seg[0], 0)


@pytest.mark.parametrize("dims", [4, 16])
def test_parts_figure(minilm_model, pair_inputs, dims):
    ids, seg, tokens = pair_inputs
    parts = ch04_embeddings.embedding_parts(minilm_model.embeddings, ids, seg, 4)
    fig = ch04_embeddings.parts_figure(parts, "4: cute (A)", dims=dims)
    assert len(fig.axes) == len(ch04_embeddings.PARTS)
    for ax, key in zip(fig.axes, ch04_embeddings.PARTS):
        np.testing.assert_allclose([p.get_height() for p in ax.patches], parts[key][:dims], atol=1e-6)


def test_token_labels(pair_inputs):
    ids, seg, tokens = pair_inputs
    labels = ch04_embeddings.token_labels(tokens, seg)
    assert labels[0] == "0: [CLS] (A)" and labels[4] == "4: cute (A)" and labels[7] == "7: likes (B)"


def test_ch03_make_demo_follows_the_dropdown(minilm_model, pair_inputs):
    ids, seg, tokens = pair_inputs
    w = ch04_embeddings.make_demo(minilm_model.embeddings, tokens, ids, seg, index=4)
    pick, image = w.children
    first = png(image.value)
    assert first.startswith(PNG_MAGIC)
    pick.value = 7
    assert png(image.value) != first and png(image.value).startswith(PNG_MAGIC)


# --- chapter 5: inputs ----------------------------------------------------------------------------------------

def test_encode_rows_single(minilm_tokenizer):
    rows = ch05_inputs.encode_rows(minilm_tokenizer, "my dog is cute")
    assert [r["token"] for r in rows] == ["[CLS]", "my", "dog", "is", "cute", "[SEP]"]
    assert all(r["segment"] == 0 and r["mask"] == 1 for r in rows)
    assert [r["position"] for r in rows] == list(range(6))
    assert ch05_inputs.summary(rows) == "6 positions: 6 in segment A, 0 in segment B, 0 padding"


@pytest.mark.parametrize("max_length,expected", [
    (None, "10 positions: 6 in segment A, 4 in segment B, 0 padding"),
    (8, "8 positions: 5 in segment A, 3 in segment B, 0 padding"),
    (14, "14 positions: 6 in segment A, 4 in segment B, 4 padding"),
])
def test_encode_rows_pair(minilm_tokenizer, max_length, expected):
    rows = ch05_inputs.encode_rows(minilm_tokenizer, "my dog is cute", "he likes playing", max_length)
    assert ch05_inputs.summary(rows) == expected
    tokens = [r["token"] for r in rows]
    assert tokens[0] == "[CLS]" and tokens.count("[SEP]") == 2
    assert [r["id"] for r in rows] == minilm_tokenizer.convert_tokens_to_ids(tokens)
    for r in rows:
        if r["mask"] == 0:
            assert r["token"] == "[PAD]" and r["segment"] == 0


def test_encode_rows_empty_second_box_means_single(minilm_tokenizer):
    assert ch05_inputs.encode_rows(minilm_tokenizer, "hello", "") == ch05_inputs.encode_rows(minilm_tokenizer, "hello")


def test_encode_rows_matches_transformers(minilm_tokenizer, minilm_dir):
    import transformers

    hf = transformers.BertTokenizer.from_pretrained(minilm_dir)
    for args in [("Unaffable!",), ("我喜欢机器学习", "he likes playing"), ("my dog", "barks", 9)]:
        assert ch05_inputs.encode_rows(minilm_tokenizer, *args) == ch05_inputs.encode_rows(hf, *args)
    # where the Rust minilm_tokenizer truncates differently, the demo follows the original rule
    rows = ch05_inputs.encode_rows(minilm_tokenizer, "a b c", "d e f g h i j", 8)
    assert [r["token"] for r in rows] == ["[CLS]", "a", "b", "c", "[SEP]", "d", "e", "[SEP]"]


def test_rows_html(minilm_tokenizer):
    rows = ch05_inputs.encode_rows(minilm_tokenizer, "a <b>", "c", 10)
    page = ch05_inputs.rows_html(rows)
    assert page.count("<tr>") == 5 and "&lt;" in page and "<b>" not in page
    assert page.count(ch05_inputs.PAD_COLOR) == 5 * sum(1 for r in rows if r["mask"] == 0)


def test_ch04_make_demo_follows_the_inputs(minilm_tokenizer):
    w = ch05_inputs.make_demo(minilm_tokenizer, "my dog is cute", "he likes playing", 0)
    box_a, box_b, length, out = w.children
    assert "10 positions" in out.value
    box_b.value = ""
    assert "6 positions: 6 in segment A, 0 in segment B" in out.value
    length.value = 12
    assert "12 positions" in out.value and "6 padding" in out.value
    box_b.value = "he likes playing"
    length.value = 2  # shorter than [CLS] A [SEP] B [SEP] can be: an error message, not an exception
    assert "positions" not in out.value and out.value.startswith("<p><code>")


# --- shared helpers: quiz and table ---------------------------------------------------------------------------

QUESTIONS = [
    ("How are the embeddings combined?", ["concatenated", "added", "`max`"], 1, "They are added."),
    ("Is 1 < 2?", ["yes", "no"], "A", "Of course & obviously."),
]


def test_quiz_html_marks_exactly_one_right_answer_per_question():
    page = quiz_html(QUESTIONS)
    assert page.count('type="radio"') == 5
    assert page.count('class="fb ok"') == 2  # one right mark per question
    items = page.split('<li class="q">')[1:]
    for item, (_, options, answer, _) in zip(items, QUESTIONS):
        labels = re.findall(r"<label>.*?</label>", item)
        right = [i for i, lab in enumerate(labels) if "fb ok" in lab]
        assert right == [answer if isinstance(answer, int) else ord(answer) - ord("A")]
    assert "<code>max</code>" in page and "1 &lt; 2" in page and "&amp; obviously" in page
    assert "<script" not in page  # works on a static page


def test_quiz_names_are_stable_and_distinct():
    a, b = quiz_html(QUESTIONS), quiz_html(QUESTIONS[:1])
    assert a == quiz_html(QUESTIONS)
    name_a = set(re.findall(r'name="([^"]+)"', a))
    name_b = set(re.findall(r'name="([^"]+)"', b))
    assert len(name_a) == 2 and not name_a & name_b


@pytest.mark.parametrize("bad", [
    [],
    [("q", ["only one"], 0, "why")],
    [("q", ["a", "b"], 2, "why")],
    [("q", ["a", "b"], "C", "why")],
    [("q", ["a", "b"], 0)],
])
def test_quiz_rejects_bad_questions(bad):
    with pytest.raises(ValueError):
        quiz_html(bad)


def test_quiz_display_object():
    assert quiz(QUESTIONS).data == quiz_html(QUESTIONS)
    assert "<strong>Title</strong>" in quiz_html(QUESTIONS, title="Title")


def test_html_table():
    t = html_table(["name", "count"], [["a <b>", 1234567], ["c", 8]]).data
    assert "1,234,567" in t and "a &lt;b&gt;" in t and t.count("<tr>") == 3
    assert 'style="text-align:right">1,234,567' in t
