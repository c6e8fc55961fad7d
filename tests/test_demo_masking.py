"""Chapter 8's demo (course/demos/masking.py): 15% of positions, 80/10/10, seed by seed.

Live callbacks (what a slider calls in Jupyter) are called with several values; each static demo state's caption
is checked against an independent computation with bertlib. The page test (tests/test_pages.py) checks the
same captions in the built book."""
from __future__ import annotations

import re


import pytest
import torch

from bertlib import (
    mask_tokens,
)
from course.demos import masking as masking_demo
from course.demos._live import caption_html
from demo_checks import all_captions, check_editions, check_page_parts, live_panel, live_shows


@pytest.mark.parametrize("seed", [0, 1, 4, 17])
@pytest.mark.parametrize("text", masking_demo.SENTENCES)
def test_mask_sentence(minilm_tokenizer, text, seed):
    rows = masking_demo.mask_sentence(minilm_tokenizer, text, seed)
    assert rows == masking_demo.mask_sentence(minilm_tokenizer, text, seed), "same seed, same draw"
    assert rows[0]["token"] == "[CLS]" and rows[-1]["token"] == "[SEP]"
    for row in rows:
        if not row["eligible"]:
            assert not row["selected"], "special tokens are never selected"
        if row["selected"]:
            assert row["label"] == row["token"]
            assert row["outcome"] in masking_demo.OUTCOMES
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
    rows = masking_demo.mask_sentence(minilm_tokenizer, masking_demo.SENTENCES[1], 0, p, m, r)
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
    text = masking_demo.SENTENCES[0]
    seed = masking_demo.first_seed_with_all_outcomes(minilm_tokenizer, text)
    outcomes = {row["outcome"] for row in masking_demo.mask_sentence(minilm_tokenizer, text, seed)}
    assert set(masking_demo.OUTCOMES) <= outcomes
    for earlier in range(seed):
        assert not set(masking_demo.OUTCOMES) <= {row["outcome"] for row in masking_demo.mask_sentence(minilm_tokenizer, text, earlier)}


@pytest.mark.parametrize("p,m,r", [(0.15, 0.8, 0.1), (0.4, 0.8, 0.1), (0.15, 1.0, 0.0), (0.3, 0.5, 0.25)])
def test_draw_statistics(minilm_tokenizer, p, m, r):
    ids = minilm_tokenizer(masking_demo.SENTENCES[0], return_tensors="pt")["input_ids"][0]
    stats = masking_demo.draw_statistics(ids, 4000, 0, p, m, r, mask_token_id=minilm_tokenizer.mask_token_id,
                                 vocab_size=minilm_tokenizer.vocab_size, special_ids=minilm_tokenizer.all_special_ids)
    assert stats["n_eligible"] == len(ids) - 2
    assert len(stats["counts"]) == 4000 and max(stats["counts"]) <= stats["n_eligible"]
    for key in ("selected", "masked", "random", "unchanged"):
        assert stats[key] == pytest.approx(stats["expected"][key], abs=0.02), key
    assert stats["masked"] + stats["random"] + stats["unchanged"] == pytest.approx(1.0)
    closed = masking_demo.visible_token_odds(p, m, r)
    for key in ("mask_share_of_input", "visible_is_target", "visible_is_corrupted"):
        assert stats[key] == pytest.approx(closed[key], abs=0.01), key


@pytest.mark.parametrize("seq_len,expected", [(5, 1), (10, 2), (22, 3), (128, 19), (512, 20), (1, 1)])
def test_original_num_to_predict(seq_len, expected):
    assert masking_demo.original_num_to_predict(seq_len) == expected


def test_original_num_to_predict_cap_and_rate():
    assert masking_demo.original_num_to_predict(512, max_predictions_per_seq=77) == 77
    assert masking_demo.original_num_to_predict(100, masked_lm_prob=0.4) == 20  # capped
    assert masking_demo.original_num_to_predict(100, masked_lm_prob=0.4, max_predictions_per_seq=100) == 40


@pytest.mark.parametrize("n,p", [(1, 0.15), (20, 0.15), (7, 0.5), (50, 0.4)])
def test_binomial_pmf(n, p):
    pmf = masking_demo.binomial_pmf(n, p)
    assert len(pmf) == n + 1 and sum(pmf) == pytest.approx(1.0)
    assert sum(k * q for k, q in enumerate(pmf)) == pytest.approx(n * p)
    assert pmf[0] == pytest.approx((1 - p) ** n)


def test_visible_token_odds():
    o = masking_demo.visible_token_odds()
    assert o["mask_share_of_input"] == pytest.approx(0.12)
    assert o["visible_is_target"] == pytest.approx(0.03 / 0.88)
    assert o["visible_is_corrupted"] == pytest.approx(0.015 / 0.88)
    all_mask = masking_demo.visible_token_odds(0.15, 1.0, 0.0)
    assert all_mask["visible_is_target"] == 0.0 and all_mask["visible_is_corrupted"] == 0.0


def test_rendering_and_demo(minilm_tokenizer):
    import ipywidgets as w

    rows = masking_demo.mask_sentence(minilm_tokenizer, masking_demo.SENTENCES[0], 4)
    html = masking_demo.rows_html(rows)
    assert html.count("<tr") == len(rows) + 1 and "[CLS]" in html  # a header row, then one per position
    ids = minilm_tokenizer(masking_demo.SENTENCES[2], return_tensors="pt")["input_ids"][0]
    stats = masking_demo.draw_statistics(ids, 500, 1, mask_token_id=minilm_tokenizer.mask_token_id,
                                 vocab_size=minilm_tokenizer.vocab_size, special_ids=minilm_tokenizer.all_special_ids)
    masking_demo.plot_statistics(stats, masking_demo.original_num_to_predict(len(ids)))  # the chapter's still figure
    line = masking_demo.statistics_line(stats, 500)
    assert line.startswith(f"500 draws: {stats['selected']:.1%} of the eligible positions selected (expected 15.0%)")
    assert isinstance(masking_demo.make_demo(minilm_tokenizer), w.VBox)


def test_live_demo_shows_the_page_state(seeds_demo, minilm_tokenizer):
    """For the page's sentence and rates, the live demo shows the page's very table, line and figure for the
    same seed; other rates change the figure's expected lines and the table."""
    live = masking_demo.make_demo(minilm_tokenizer, n_draws=200)
    (_, seed, _, m, r), label, figure, table = live_panel(live)
    for s in (0, 7, 49):
        seed.value = s
        page = seeds_demo.state_at([masking_demo.DEMO_SEEDS.index(s)])
        assert live_shows(figure, page["figure"]) and table.value == page["html"]
        assert label.value.startswith(caption_html(page["caption"]) + "<br><code>200 draws: ")
    m.value = 0.5
    assert not live_shows(figure, page["figure"]) and label.value.count("expected") == 2
    assert r.max == 0.5  # the three shares of the selected positions sum to 1
    expected_mask_line = figure.outputs[0]["data"]["application/vnd.plotly.v1+json"]["data"][1]["y"]
    assert expected_mask_line[0] == pytest.approx(0.5, abs=1e-4)  # the dotted [MASK] line follows the rate
    seed.value = 120  # past the page's seeds: the axis grows to hold them
    assert figure.outputs[0]["data"]["application/vnd.plotly.v1+json"]["layout"]["xaxis"]["range"] == [-0.5, 120.5]


@pytest.fixture(scope="module")
def seeds_demo(minilm_tokenizer):
    (demo,) = masking_demo.static_demos(minilm_tokenizer)
    return demo


def test_static_parts_and_captions_differ(seeds_demo):
    assert seeds_demo.demo_id == "masking-seeds"
    check_page_parts(seeds_demo)
    captions = all_captions(seeds_demo)
    assert len(set(captions)) == len(captions)


def test_static_opens_on_every_seed(seeds_demo):
    """The page opens on the last seed: the chart holds the running shares of all the seeds, not one point."""
    default = seeds_demo.payload()["default"]
    assert seeds_demo.values_at(default)["seed"] == masking_demo.DEMO_SEEDS[-1]
    figure = seeds_demo.state_at(default)["figure"]
    assert len(figure.data[0].x) == len(masking_demo.DEMO_SEEDS)


@pytest.mark.parametrize("seed", [0, 2, 7, 49])
def test_static_caption_is_bertlib_masking_of_that_seed(seeds_demo, minilm_tokenizer, seed):
    """Recount with bertlib.mask_tokens directly: this seed's draw and the running totals of seeds 0..seed."""
    enc = minilm_tokenizer(masking_demo.SENTENCES[0], return_tensors="pt")
    totals = {"[MASK]": 0, "random": 0, "unchanged": 0}
    for s in range(seed + 1):
        inputs, labels = mask_tokens(enc["input_ids"], tokenizer=minilm_tokenizer, attention_mask=enc["attention_mask"],
                                     generator=torch.Generator().manual_seed(s))
        sel = labels[0] != -100
        counts = {"[MASK]": int((inputs[0][sel] == minilm_tokenizer.mask_token_id).sum()),
                  "unchanged": int((inputs[0][sel] == enc["input_ids"][0][sel]).sum())}
        counts["random"] = int(sel.sum()) - counts["[MASK]"] - counts["unchanged"]
        totals = {k: totals[k] + counts[k] for k in totals}
    n = sum(totals.values())
    caption = seeds_demo.caption(seed=seed)
    assert caption.startswith(f"seed {seed}: {int(sel.sum())} of {enc['input_ids'].size(1) - 2} tokens selected "
                              f"({counts['[MASK]']} [MASK], {counts['random']} random, "
                              f"{counts['unchanged']} unchanged)")
    shares = " / ".join(f"{totals[k] / n:.0%}" for k in ("[MASK]", "random", "unchanged"))
    assert caption.endswith(f"seeds 0-{seed}: {n} selected, {shares} [MASK] / random / unchanged")
    state = seeds_demo.state_at([masking_demo.DEMO_SEEDS.index(seed)])
    assert state["html"].count("<tr") == enc["input_ids"].size(1) + 1  # the draw's table: one row per position


def test_static_running_shares_approach_80_10_10(minilm_tokenizer):
    runs = masking_demo.running_outcomes(minilm_tokenizer, masking_demo.SENTENCES[0], range(200))
    totals = runs[-1]["totals"]
    n = sum(totals.values())
    assert n > 400
    assert totals["[MASK]"] / n == pytest.approx(0.8, abs=0.06)
    assert totals["random"] / n == pytest.approx(0.1, abs=0.05)
    assert totals["unchanged"] / n == pytest.approx(0.1, abs=0.05)
    exp = masking_demo.expected_shares(0.8, 0.1, 30522)
    assert sum(exp.values()) == pytest.approx(1.0) and exp["masked"] > 0.8 > exp["masked"] - 1e-5


def test_static_demo_and_step_table_in_chinese(seeds_demo, minilm_tokenizer):
    """The Chinese edition from the same draws (issue 31 §2): the demo's words translated with the same numbers;
    the step-by-step table's header and outcomes in Chinese, [MASK] and the tokens as they are."""
    check_editions(seeds_demo)
    rows = masking_demo.mask_sentence(minilm_tokenizer, masking_demo.SENTENCES[0], 3)
    zh, en = masking_demo.rows_html(rows, "zh_CN"), masking_demo.rows_html(rows)
    assert "如何处理" in zh and "what happens" in en and "what happens" not in zh
    assert zh.count("<tr") == en.count("<tr") and all(row["token"] in zh for row in rows)
    assert re.findall(r"\d+", re.sub(r"<[^>]+>|style=\"[^\"]*\"", " ", zh)) == \
        re.findall(r"\d+", re.sub(r"<[^>]+>|style=\"[^\"]*\"", " ", en))
