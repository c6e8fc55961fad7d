"""course.static_demo: every state computed in Python, stored once, and shown by the page's script.

The last test opens a demo in headless Chromium from a file (Plotly and static_demo.js as the book copies
them), with every request that is not a local file blocked, and operates each control.
"""
from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from course.static_demo import Buttons, Select, Slider, StaticDemo

ROOT = Path(__file__).resolve().parents[1]


def _state(n, mode, colour="red"):
    import plotly.graph_objects as go

    fig = go.Figure(go.Bar(x=["a", "b"], y=[n, n * 2 if mode == "double" else n]))
    fig.update_layout(title=f"n={n}", height=300)
    html = "<table><tr><td>same</td></tr></table>" if n < 2 else f"<b>{colour}</b>"
    return {"caption": f"n {n}, mode {mode}, colour {colour}", "figure": fig, "html": html}


def _demo():
    return StaticDemo("ch99-test", [Slider("n", "n", values=[0, 1, 2, 3], default=1),
                                    Select("mode", "mode", options=["single", "double"]),
                                    Buttons("colour", "colour", options=["red", "blue"], labels=["Red", "Blue"])],
                      state=_state)


def test_every_combination_is_computed_in_order():
    d = _demo()
    p = d.payload()
    assert d.n_states == len(p["states"]) == 4 * 2 * 2
    assert p["default"] == [1, 0, 0]
    for indices in d.combinations():
        want = _state(**d.values_at(indices))["caption"]
        assert p["states"][d.index_of(indices)]["caption"] == want
    assert d.caption(n=3, mode="double", colour="blue") == "n 3, mode double, colour blue"


def test_shared_parts_are_stored_once():
    p = _demo().payload()
    layouts = {s["layout"] for s in p["states"]}
    assert len(layouts) == 4  # one per title, not one per state
    assert len({s["html"] for s in p["states"]}) == 3  # the "same" table once, then red and blue
    assert all("template" not in json.loads(p["pool"][s["layout"]]) for s in p["states"])


def test_html_shows_the_default_state_without_javascript():
    html = _demo().to_html()
    assert 'data-demo="ch99-test"' in html and "n 1, mode single, colour red" in html
    assert html.count('data-demo-control=') == 3 and '<option value="1">double</option>' in html
    assert 'aria-pressed="true">Red</button>' in html


def test_html_payload_cannot_close_its_script():
    d = StaticDemo("ch99-esc", [Select("s", "s", options=["x"])],
                   state=lambda s: {"caption": "c", "html": "<i>a</i></script><b>x</b>"})
    payload = d.to_html().split("data-demo-payload>", 1)[1]
    assert payload.count("</script>") == 1 and payload.endswith("</script></div>")
    assert json.loads(payload[:-len("</script></div>")])["pool"] == ["<i>a</i></script><b>x</b>"]


@pytest.mark.parametrize("bad, message", [
    (lambda: StaticDemo("Ch5", [Select("a", "a", ["x"])], state=lambda a: {"caption": "c"}), "chNN-"),
    (lambda: StaticDemo("ch06-x", [], state=lambda: {"caption": "c"}), "at least one control"),
    (lambda: StaticDemo("ch06-x", [Select("a", "a", ["x"]), Select("a", "b", ["y"])],
                        state=lambda a: {}), "share a name"),
    (lambda: Slider("a b", "a", values=[1]), "identifier"),
    (lambda: Slider("a", "a", values=[]), "no values"),
    (lambda: Slider("a", "a", values=[1, 1]), "repeats"),
    (lambda: Slider("a", "a", values=[1, 2], default=3), "default"),
    (lambda: Select("a", "a", ["x", "y"], labels=["x"]), "labels"),
    (lambda: StaticDemo("ch06-x", [Slider("a", "a", values=range(100)), Slider("b", "b", values=range(100))],
                        state=lambda a, b: {"caption": "c"}), "states"),
])
def test_bad_demos_are_refused_with_a_reason(bad, message):
    with pytest.raises(ValueError, match=message):
        bad()


def test_a_state_without_caption_is_refused():
    d = StaticDemo("ch06-x", [Select("a", "a", ["x"])], state=lambda a: {"figure": None})
    with pytest.raises(TypeError, match="caption"):
        d.payload()
    d = StaticDemo("ch06-x", [Select("a", "a", ["x"])], state=lambda a: {"caption": "c", "table": 1})
    with pytest.raises(TypeError, match="unknown keys"):
        d.payload()


def test_the_page_script_follows_the_controls(tmp_path, browser):
    """The demo in a real browser, opened from disk with the network blocked."""
    from course.sphinx_ext import plotly_js_path

    d = _demo()
    (tmp_path / "plotly.min.js").write_bytes(plotly_js_path().read_bytes())
    (tmp_path / "static_demo.js").write_bytes((ROOT / "course" / "_static" / "static_demo.js").read_bytes())
    (tmp_path / "page.html").write_text(
        '<!doctype html><html data-theme="light"><head><script defer src="plotly.min.js"></script>'
        f'<script defer src="static_demo.js"></script></head><body>{d.to_html()}</body></html>')
    errors, external = [], []
    context = browser.new_context()
    try:
        tab = context.new_page()
        tab.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
        tab.on("pageerror", lambda e: errors.append(str(e)))

        def route(r):
            if r.request.url.startswith("file://"):
                r.continue_()
            else:
                external.append(r.request.url)
                r.abort()

        tab.route("**/*", route)
        tab.goto((tmp_path / "page.html").as_uri())
        tab.wait_for_selector("[data-demo-figure] .main-svg")
        root = tab.locator("[data-demo]")
        title = lambda: tab.locator("[data-demo-figure] .gtitle").text_content()  # noqa: E731
        assert title() == "n=1"
        tab.locator('[data-demo-control="n"] input').fill("3")
        assert tab.locator("[data-demo-caption]").inner_text() == d.caption(n=3, mode="single", colour="red")
        assert title() == "n=3" and tab.locator('[data-demo-control="n"] output').inner_text() == "3"
        tab.locator('[data-demo-control="mode"] select').select_option("1")
        tab.locator('[data-demo-control="colour"] button', has_text="Blue").click()
        assert tab.locator("[data-demo-caption]").inner_text() == d.caption(n=3, mode="double", colour="blue")
        assert tab.locator("[data-demo-html]").inner_text() == "blue"
        assert json.loads(root.get_attribute("data-demo-indices")) == [3, 1, 1]
        ink = lambda: tab.evaluate("getComputedStyle(document.querySelector('.gtitle')).fill")  # noqa: E731
        light = ink()
        tab.evaluate("document.documentElement.dataset.theme = 'dark'")
        tab.wait_for_timeout(100)
        assert ink() != light, "the figure's text keeps its colour in dark mode"
    finally:
        context.close()
    assert not external and not errors, (external, errors)


# --- the static demos of chapters 1-6: what each state says is what bertlib computes -------------------------

@pytest.fixture(scope="module")
def minilm_tokenizer(minilm_dir):
    from bertlib import BertTokenizer

    return BertTokenizer.from_pretrained(minilm_dir)


def test_ch01_positions(minilm_dir, minilm_tokenizer):
    import numpy as np

    from bertlib import BertModel
    from course.demos import ch01_visibility as ch

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


def test_ch02_sizes():
    from bertlib import BertConfig, count_parameters
    from course.demos import ch03_sizes as ch

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
    bars = d.state_at([3, 3, 4, 1])["figure"].data[0].y
    assert abs(sum(bars) * 1e6 - count_parameters(BertConfig.base())["total"]) < 1


def test_ch03_embeddings(minilm_dir, minilm_tokenizer):
    import numpy as np
    import torch

    from bertlib import BertModel
    from course.demos import ch04_embeddings as ch

    emb = BertModel.from_pretrained(minilm_dir).embeddings
    (d,) = ch.static_demos(emb, minilm_tokenizer)
    enc = minilm_tokenizer(*ch.PAIR, return_tensors="pt")
    with torch.no_grad():
        out = emb(enc["input_ids"], enc["token_type_ids"])[0]  # (T, H)
    tokens = minilm_tokenizer.convert_ids_to_tokens(enc["input_ids"][0])
    assert d.controls[0].default == tokens.index("cute")
    for i in range(len(tokens)):
        state = d.state_at([i])
        token, position, segment, total, normed = (np.array(t.y) for t in state["figure"].data)
        assert np.allclose(token + position + segment, total, atol=2e-4)
        assert np.allclose(normed, out[i, :16].numpy(), atol=1e-4)  # the module's own output
        t, p, s, tot = (float(x) for x in re.findall(r"-?\d+\.\d+", state["caption"].split("dimension 0: ")[1]))
        assert abs(t + p + s - tot) <= 0.0015 and abs(tot - float(total[0])) < 6e-4


def test_ch04_inputs(minilm_tokenizer):
    from course.demos import ch05_inputs as ch

    (d,) = ch.static_demos(minilm_tokenizer)
    enc = minilm_tokenizer("my dog is cute", "he likes playing", max_length=12, truncation=True,
                           padding="max_length")
    html = d.state_at([0, ch.MAX_LENGTHS.index(12)])["html"]._repr_html_()
    for ids in (enc["input_ids"], enc["token_type_ids"], enc["attention_mask"]):
        cells = "".join(f"<td>{v}</td>" for v in ids)
        assert cells in re.sub(r'<td style="[^"]*"', "<td", html)
    assert d.caption(pair=0, max_length=12) == "12 positions: 6 in segment A, 4 in segment B, 2 padding; 0 tokens truncated"
    assert d.caption(pair=0, max_length=8) == "8 positions: 5 in segment A, 3 in segment B, 0 padding; 2 tokens truncated"
    # longest first: the long second text of pair 3 loses its tail before the question does
    assert d.caption(pair=3, max_length=16).startswith("16 positions: 6 in segment A, 10 in segment B")
    assert d.caption(pair=1, max_length=0).endswith("0 padding; 0 tokens truncated")


def test_ch05_pad_scores_and_padding(minilm_dir, minilm_tokenizer):
    from bertlib import BertModel
    from course.demos import ch06_attention_masks as ch

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
