"""Chapter 3's demo (course/demos/sizes.py): the parameter count by group, for any width, depth and vocabulary.

Live callbacks (what a slider calls in Jupyter) are called with several values; each static demo state's caption
is checked against an independent computation with bertlib. The page test (tests/test_pages.py) checks the
same captions in the built book."""
from __future__ import annotations


import numpy as np
import pytest

from bertlib import (
    BertConfig, count_parameters,
)
from course.demos import sizes as sizes_demo
from demo_checks import check_editions, live_panel, live_shows


@pytest.mark.parametrize("preset", list(sizes_demo.PRESETS))
def test_grouped_counts_add_up_for_presets(preset):
    cfg = sizes_demo.make_config(**sizes_demo.PRESETS[preset])
    groups = sizes_demo.grouped_counts(cfg)
    assert tuple(groups) == sizes_demo.GROUPS
    assert sum(groups.values()) == count_parameters(cfg)["total"]


def test_presets_match_the_known_sizes():
    base = sizes_demo.make_config(**sizes_demo.PRESETS["BERT-Base"])
    large = sizes_demo.make_config(**sizes_demo.PRESETS["BERT-Large"])
    assert count_parameters(base)["total"] == 109_482_240
    assert count_parameters(large)["total"] == 335_141_888
    assert base == BertConfig.base()


@pytest.mark.parametrize("H,L,V", [(128, 2, 1000), (256, 4, 30522), (768, 12, 30522), (1024, 24, 250000)])
def test_grouped_counts_closed_form(H, L, V):
    cfg = sizes_demo.make_config(H, L, V)
    g = sizes_demo.grouped_counts(cfg)
    I = 4 * H  # noqa: E741 (I: the paper's feed-forward width)
    assert g["word embeddings"] == V * H
    assert g["attention (all layers)"] == L * (4 * H * H + 4 * H + 2 * H)
    assert g["feed-forward (all layers)"] == L * (2 * H * I + I + H + 2 * H)
    assert g["pooler"] == H * H + H
    assert f"{sum(g.values()):,} parameters" in sizes_demo.summary(cfg)


def test_make_config_rejects_odd_width():
    with pytest.raises(ValueError):
        sizes_demo.make_config(100, 2)


@pytest.mark.parametrize("preset", list(sizes_demo.PRESETS))
def test_breakdown_figure(preset):
    cfg = sizes_demo.make_config(**sizes_demo.PRESETS[preset])
    (bars,) = sizes_demo.breakdown_plotly(cfg).data
    assert list(bars.customdata) == list(sizes_demo.GROUPS)
    np.testing.assert_allclose(np.array(bars.y) * 1e6, list(sizes_demo.grouped_counts(cfg).values()), rtol=1e-9)


def test_make_demo_sliders_and_presets():
    w = sizes_demo.make_demo("BERT-Base")
    (presets, hidden, layers, vocab), label, figure, _ = live_panel(w)
    assert "109,482,240" in label.value
    layers.value = 6
    assert "L=6, H=768" in label.value
    presets.value = "BERT-Large"
    assert (hidden.value, layers.value) == (1024, 24) and "335,141,888" in label.value
    presets.value = "MiniLM-L6-H384"
    assert "22,713,216" in label.value
    assert live_shows(figure, sizes_demo.breakdown_plotly(sizes_demo.make_config(384, 6)))


def test_static_sizes():
    from bertlib import BertConfig, count_parameters
    from course.demos import sizes as ch

    (d,) = ch.static_demos()
    assert d.caption(L=12, H=768, A=12, V=30522).startswith(
        f"L=12, H=768, A=12 (64 per head), V=30,522: {count_parameters(BertConfig.base())['total']:,} parameters")
    assert d.caption(L=24, H=1024, A=16, V=30522).split(": ")[1].startswith(
        f"{count_parameters(BertConfig.large())['total']:,} parameters")
    # the heads split H and add nothing: the same count and the same figure for every A that divides H
    totals = {d.caption(L=6, H=384, A=a, V=30522).split(": ")[1] for a in (1, 2, 4, 8, 12, 16)}
    assert len(totals) == 1
    assert d.state_at([0, 0, 4, 0]) == {"caption": "A=12 heads do not divide H=128: each head needs H/A whole "
                                                   "dimensions"}
    total = count_parameters(BertConfig.base())["total"]
    assert d.caption("zh_CN", L=12, H=768, A=12, V=30522).startswith(
        f"L=12，H=768，A=12（每个头 64 维），V=30,522：共 {total:,} 个参数")
    assert d.state_at([0, 0, 4, 0], "zh_CN")["caption"] == "A=12 个头无法整除 H=128：每个头需要 H/A 个完整的维度"
    zh = d.state_at([3, 3, 4, 1], "zh_CN")["figure"]
    assert zh.data[0].y == d.state_at([3, 3, 4, 1])["figure"].data[0].y and zh.layout.yaxis.title.text == "参数（百万）"
    check_editions(d)
    bars = d.state_at([3, 3, 4, 1])["figure"].data[0].y
    assert abs(sum(bars) * 1e6 - count_parameters(BertConfig.base())["total"]) < 1
    # the live demo at BERT-Base (its heads H/64 = 12) shows the very figure the page stores for L=12, H=768, A=12
    (_, _, layers, _), _, figure, _ = live_panel(ch.make_demo("BERT-Base"))
    assert live_shows(figure, d.state_at([3, 3, 4, 1])["figure"])
    layers.value = 6
    assert live_shows(figure, d.state_at([2, 3, 4, 1])["figure"])
    assert not live_shows(figure, d.state_at([3, 3, 4, 1])["figure"])
