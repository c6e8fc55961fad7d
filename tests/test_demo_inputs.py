"""Chapter 5's demo (course/demos/inputs.py): a sentence pair as ids, segments and attention mask.

Live callbacks (what a slider calls in Jupyter) are called with several values; each static demo state's caption
is checked against an independent computation with bertlib. The page test (tests/test_pages.py) checks the
same captions in the built book."""
from __future__ import annotations

import re

import pytest

from course.demos import inputs as inputs_demo
from course.demos._live import caption_html
from demo_checks import check_editions, live_panel


def test_encode_rows_single(minilm_tokenizer):
    rows = inputs_demo.encode_rows(minilm_tokenizer, "my dog is cute")
    assert [r["token"] for r in rows] == ["[CLS]", "my", "dog", "is", "cute", "[SEP]"]
    assert all(r["segment"] == 0 and r["mask"] == 1 for r in rows)
    assert [r["position"] for r in rows] == list(range(6))
    assert inputs_demo.summary(rows) == "6 positions: 6 in segment A, 0 in segment B, 0 padding"


@pytest.mark.parametrize("max_length,expected", [
    (None, "10 positions: 6 in segment A, 4 in segment B, 0 padding"),
    (8, "8 positions: 5 in segment A, 3 in segment B, 0 padding"),
    (14, "14 positions: 6 in segment A, 4 in segment B, 4 padding"),
])
def test_encode_rows_pair(minilm_tokenizer, max_length, expected):
    rows = inputs_demo.encode_rows(minilm_tokenizer, "my dog is cute", "he likes playing", max_length)
    assert inputs_demo.summary(rows) == expected
    tokens = [r["token"] for r in rows]
    assert tokens[0] == "[CLS]" and tokens.count("[SEP]") == 2
    assert [r["id"] for r in rows] == minilm_tokenizer.convert_tokens_to_ids(tokens)
    for r in rows:
        if r["mask"] == 0:
            assert r["token"] == "[PAD]" and r["segment"] == 0


def test_encode_rows_empty_second_box_means_single(minilm_tokenizer):
    assert inputs_demo.encode_rows(minilm_tokenizer, "hello", "") == inputs_demo.encode_rows(minilm_tokenizer, "hello")


def test_encode_rows_matches_transformers(minilm_tokenizer, minilm_dir):
    import transformers

    hf = transformers.BertTokenizer.from_pretrained(minilm_dir)
    for args in [("Unaffable!",), ("我喜欢机器学习", "he likes playing"), ("my dog", "barks", 9)]:
        assert inputs_demo.encode_rows(minilm_tokenizer, *args) == inputs_demo.encode_rows(hf, *args)
    # where the Rust minilm_tokenizer truncates differently, the demo follows the original rule
    rows = inputs_demo.encode_rows(minilm_tokenizer, "a b c", "d e f g h i j", 8)
    assert [r["token"] for r in rows] == ["[CLS]", "a", "b", "c", "[SEP]", "d", "e", "[SEP]"]


def test_rows_table(minilm_tokenizer):
    """The one table of a pair's inputs (chapter 5's still table and its demo): escaped, a row per input,
    padding in the pad tint, segment B in the segment tint."""
    from course.plots import COLORS, tint

    rows = inputs_demo.encode_rows(minilm_tokenizer, "a <b>", "c", 10)
    page = inputs_demo.rows_table(rows).data
    assert page.count("<tr") == 5 and "&lt;" in page and "<b>" not in page
    n_pad = sum(1 for r in rows if r["mask"] == 0)
    n_b = sum(1 for r in rows if r["mask"] == 1 and r["segment"] == 1)
    assert page.count(tint(COLORS["pad"])) == 4 * n_pad and page.count(tint(COLORS["segment"])) == 4 * n_b


def test_make_demo_follows_the_inputs(minilm_tokenizer):
    w = inputs_demo.make_demo(minilm_tokenizer, "my dog is cute", "he likes playing", 0)
    (box_a, box_b, length), line, figure, table = live_panel(w)
    assert "10 positions" in line.value and table.value.count("<tr") == 5
    box_b.value = ""
    assert "6 positions: 6 in segment A, 0 in segment B" in line.value
    length.value = 12
    assert "12 positions" in line.value and "6 padding" in line.value
    box_b.value = "he likes playing"
    length.value = 2  # shorter than [CLS] A [SEP] B [SEP] can be: an error message, not an exception
    assert line.value.startswith("<code>max_length is too small") and "positions" not in line.value
    assert table.value == "" and table.layout.display == "none" and figure.outputs == ()


def test_static_inputs(minilm_tokenizer):
    from course.demos import inputs as ch

    (d,) = ch.static_demos(minilm_tokenizer)
    enc = minilm_tokenizer("my dog is cute", "he likes playing", max_length=12, truncation=True,
                           padding="max_length")
    html = d.state_at([0, ch.MAX_LENGTHS.index(12)])["html"]._repr_html_()
    for ids in (enc["input_ids"], enc["token_type_ids"], enc["attention_mask"]):
        cells = "".join(f"<td>{v}</td>" for v in ids)
        assert cells in re.sub(r'<td style="[^"]*"', "<td", html)
    assert d.caption(pair=0, max_length=12) == "12 positions: 6 in segment A, 4 in segment B, 2 padding; 0 tokens truncated"
    assert d.caption(pair=0, max_length=8) == "8 positions: 5 in segment A, 3 in segment B, 0 padding; 2 tokens truncated"
    assert d.caption("zh_CN", pair=0, max_length=8) == "8 个位置：片段 A 中 5 个，片段 B 中 3 个，填充 0 个；截断了 2 个词元"
    zh = d.state_at([0, ch.MAX_LENGTHS.index(12)], "zh_CN")["html"]._repr_html_()
    assert "<th>位置</th>" in zh.replace(' style="text-align:left"', "") or ">位置<" in zh
    assert ">词元<" in zh and zh.replace("位置", "position").replace("词元", "token") == html
    assert d.payload("zh_CN")["controls"][1]["labels"] == ["无", "8", "12", "16", "24"]
    check_editions(d)
    # longest first: the long second text of pair 3 loses its tail before the question does
    assert d.caption(pair=3, max_length=16).startswith("16 positions: 6 in segment A, 10 in segment B")
    assert d.caption(pair=1, max_length=0).endswith("0 padding; 0 tokens truncated")
    # the live demo shows, for the same texts and length, the page's very line and table
    live = ch.make_demo(minilm_tokenizer, *ch.PAIRS[3], max_length=16)
    (box_a, box_b, length), line, _, table = live_panel(live)
    for pair, max_length in ((3, 16), (3, 0), (1, 12), (2, 8)):
        box_a.value, box_b.value, length.value = *ch.PAIRS[pair], max_length
        page = d.state_at([pair, ch.MAX_LENGTHS.index(max_length)])
        assert line.value == caption_html(page["caption"]) and table.value == page["html"].data
