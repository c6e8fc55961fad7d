"""Chapter 12's demo (course/demos/experiments.py): how many seeds a verdict needs.

Each state's caption is checked against an interval computed here by hand, with Student's t quantiles as every
table prints them (scipy.stats.t.ppf(0.975, df)); the live demo shows the page's states. The page test
(tests/test_pages.py) checks the same captions in the built book."""
from __future__ import annotations

import math

import pytest

from course.demos import experiments as demo
from course.demos._live import caption_html
from demo_checks import check_editions, check_page_parts, live_panel, live_shows

T_975 = {1: 12.7062, 2: 4.3027, 3: 3.1824}  # df -> the 97.5% quantile of Student's t

# a clear effect (every seed's difference between +0.11 and +0.20), and one whose seeds disagree
CLEAR = demo.Paired("clear", "accuracy", ("A", "B"), (0.70, 0.80, 0.72, 0.74), (0.58, 0.60, 0.61, 0.60), (0, 1, 2, 3))
NOISY = demo.Paired("noisy", "accuracy", ("A", "B"), (0.70, 0.52, 0.66, 0.58), (0.60, 0.61, 0.55, 0.62), (0, 1, 2, 3))


def by_hand(p: demo.Paired, n: int) -> tuple[float, float, float]:
    d = [a - b for a, b in zip(p.a[:n], p.b[:n])]
    mean = sum(d) / n
    half = T_975[n - 1] * math.sqrt(sum((x - mean) ** 2 for x in d) / (n - 1)) / math.sqrt(n)
    return mean, mean - half, mean + half


@pytest.mark.parametrize("p", [CLEAR, NOISY], ids=lambda p: p.label)
@pytest.mark.parametrize("n", [2, 3, 4])
def test_the_caption_gives_the_interval_and_the_sentence_it_allows(p, n):
    mean, low, high = by_hand(p, n)
    text = demo.caption(p, n)
    assert f"difference {mean:+.3f} (95% interval {low:+.3f} to {high:+.3f}, {n} seeds)" in text, text
    verdict = "A is larger" if low > 0 else "A is smaller" if high < 0 else "no difference we can see"
    assert text.endswith(verdict), text


def test_more_seeds_can_turn_no_difference_into_a_verdict():
    """The demo's point: the clear effect is 'no difference' at two seeds (t = 12.7) and 'larger' from three."""
    assert demo.caption(CLEAR, 2).endswith("no difference we can see")
    assert demo.caption(CLEAR, 3).endswith("A is larger") and demo.caption(CLEAR, 4).endswith("A is larger")
    assert demo.caption(NOISY, 4).endswith("no difference we can see")


def test_one_seed_gives_a_difference_and_no_interval():
    text = demo.caption(CLEAR, 1)
    assert "seed 0 alone" in text and f"{0.70 - 0.58:+.3f}" in text and "no interval" in text
    fig = demo.figure(CLEAR, 1)
    assert [t.name for t in fig.data] == ["A", "B", "difference, per seed"]  # no mean, no error bar
    with pytest.raises(ValueError, match="5 seeds asked, 4 were run"):
        demo.caption(CLEAR, 5)


def test_the_figure_shows_the_seeds_chosen_and_the_interval():
    fig = demo.figure(CLEAR, 3)
    a, b, d, mean = fig.data
    assert list(a.y) == list(CLEAR.a[:3]) and list(b.y) == list(CLEAR.b[:3])
    assert list(d.x) == ["seed 0", "seed 1", "seed 2"]
    m, low, high = by_hand(CLEAR, 3)
    assert mean.y[0] == pytest.approx(m)
    assert mean.y[0] + mean.error_y.array[0] == pytest.approx(high, abs=1e-3)  # the table's t to 4 digits
    assert mean.y[0] - mean.error_y.arrayminus[0] == pytest.approx(low, abs=1e-3)
    # the scores' panel keeps one range whatever the seeds shown, so adding a seed does not rescale it
    assert fig.layout.yaxis.range == demo.figure(CLEAR, 2).layout.yaxis.range
    lo, hi = fig.layout.yaxis2.range
    assert lo < min(0.0, low) and hi > max(0.0, high)  # zero and the interval are on the panel


def test_a_comparison_needs_one_score_of_each_recipe_per_seed():
    with pytest.raises(ValueError, match="one score of each recipe per seed"):
        demo.Paired("bad", "accuracy", ("A", "B"), (0.1, 0.2), (0.1,), (0, 1))
    uneven = demo.Paired("three", "accuracy", ("A", "B"), (0.1, 0.2, 0.3), (0.1, 0.1, 0.1), (0, 1, 2))
    with pytest.raises(ValueError, match="different numbers of seeds"):
        demo.static_demos([CLEAR, uneven])


def test_the_record_round_trips(tmp_path):
    path = demo.save_record([CLEAR, NOISY], tmp_path / "record.json")
    assert demo.load_record(path) == [CLEAR, NOISY]
    with pytest.raises(FileNotFoundError, match="chapter 12"):
        demo.load_record(tmp_path / "missing.json")


def test_static_demo_states_and_live_demo_agree():
    (d,) = demo.static_demos([CLEAR, NOISY])
    check_page_parts(d, html_part=False)
    assert d.n_states == 2 * 4
    assert d.caption(choice=1, n=3) == demo.caption(NOISY, 3)
    live = demo.make_demo([CLEAR, NOISY])
    (pick, seeds), line, figure, table = live_panel(live)
    assert seeds.value == 4 and seeds.max == 4 and table.value == ""
    for choice, n in ((0, 1), (1, 2), (0, 3), (1, 4)):
        pick.value, seeds.value = choice, n
        page = d.state_at([choice, n - 1])
        assert line.value == caption_html(page["caption"])
        assert live_shows(figure, page["figure"])


def test_the_demo_in_chinese_fills_each_comparison_s_numbers_after_translating():
    """The Chinese edition (issue 31 §2): the comparisons as chapter 12 hands them (templates and their fields),
    the verdict's sentence and the interval in Chinese, the numbers the English shows."""
    five = demo.Paired("5. pretrained − from scratch, {n} labels", "topics accuracy, {n} labels",
                       ("pretrained", "from scratch"), CLEAR.a, CLEAR.b, CLEAR.seeds, {"n": 100})
    masking = demo.Paired("3. masking 25% − 15%", "held-out MLM top-1 (masked at 15%)", ("25%", "15%"),
                          NOISY.a, NOISY.b, NOISY.seeds)
    (d,) = demo.static_demos([five, masking])
    check_editions(d)
    assert d.controls[0].shown_labels() == ["5. pretrained − from scratch, 100 labels", "3. masking 25% − 15%"]
    assert d.controls[0].shown_labels("zh_CN") == ["5. 预训练 − 从零开始，100 个标签", "3. 遮住 25% − 15%"]
    en, zh = d.caption(choice=0, n=4), d.caption("zh_CN", choice=0, n=4)
    assert en.endswith("pretrained is larger") and zh.endswith("预训练 更大") and "区间" in zh
    assert d.caption("zh_CN", choice=0, n=1).startswith("5. 预训练 − 从零开始，100 个标签，只看种子 0")
