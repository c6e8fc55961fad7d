"""course.static_demo: every state computed in Python, stored once, and shown by the page's script.

The last test opens a demo in headless Chromium from a file (Plotly and static_demo.js as the book copies
them), with every request that is not a local file blocked, and operates each control.
"""
from __future__ import annotations

import json
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
    (lambda: StaticDemo("Ch5", [Select("a", "a", ["x"])], state=lambda a: {"caption": "c"}), "lowercase words joined by hyphens"),
    (lambda: StaticDemo("some-demo", [], state=lambda: {"caption": "c"}), "at least one control"),
    (lambda: StaticDemo("some-demo", [Select("a", "a", ["x"]), Select("a", "b", ["y"])],
                        state=lambda a: {}), "share a name"),
    (lambda: Slider("a b", "a", values=[1]), "identifier"),
    (lambda: Slider("a", "a", values=[]), "no values"),
    (lambda: Slider("a", "a", values=[1, 1]), "repeats"),
    (lambda: Slider("a", "a", values=[1, 2], default=3), "default"),
    (lambda: Select("a", "a", ["x", "y"], labels=["x"]), "labels"),
    (lambda: StaticDemo("some-demo", [Slider("a", "a", values=range(100)), Slider("b", "b", values=range(100))],
                        state=lambda a, b: {"caption": "c"}), "states"),
])
def test_bad_demos_are_refused_with_a_reason(bad, message):
    with pytest.raises(ValueError, match=message):
        bad()


def test_a_state_without_caption_is_refused():
    d = StaticDemo("some-demo", [Select("a", "a", ["x"])], state=lambda a: {"figure": None})
    with pytest.raises(TypeError, match="caption"):
        d.payload()
    d = StaticDemo("some-demo", [Select("a", "a", ["x"])], state=lambda a: {"caption": "c", "table": 1})
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


def _luminance(hex_colour: str) -> float:
    """WCAG relative luminance of '#rrggbb'."""
    c = [int(hex_colour[i:i + 2], 16) / 255 for i in (1, 3, 5)]
    r, g, b = (v / 12.92 if v <= 0.04045 else ((v + 0.055) / 1.055) ** 2.4 for v in c)
    return 0.2126 * r + 0.7152 * g + 0.0722 * b


def _contrast(a: str, b: str) -> float:
    hi, lo = sorted((_luminance(a), _luminance(b)), reverse=True)
    return (hi + 0.05) / (lo + 0.05)


def test_a_live_demo_shows_the_page_json_in_a_theme_of_its_own():
    """course.demos._live: make_demo()'s Output shows a state's figure as the page stores it (the very pool
    strings), plus a template that reads on JupyterLab's light and dark backgrounds and that the page drops."""
    from course.demos import _live

    d = _demo()
    indices = [2, 1, 0]
    out = _live.figure_output()
    _live.show(out, d.state_at(indices)["figure"])
    (shown,) = out.outputs
    assert shown["output_type"] == "display_data" and shown["data"]["text/plain"] == "<Figure: n=2>"
    p = d.payload()
    state = p["states"][d.index_of(indices)]
    assert _live.shown(out) == (p["pool"][state["data"]], p["pool"][state["layout"]])
    assert "template" not in json.loads(p["pool"][state["layout"]])  # the page colours by its own theme
    template = shown["data"][_live.MIME]["layout"]["template"]["layout"]
    assert template["paper_bgcolor"] == template["plot_bgcolor"] == "rgba(0,0,0,0)"
    ink = template["font"]["color"]
    assert _contrast(ink, "#ffffff") >= 4.5 and _contrast(ink, "#111111") >= 4.0  # JupyterLab light, dark
    _live.show(out, d.state_at([0, 0, 0])["figure"])
    assert _live.shown(out) != (p["pool"][state["data"]], p["pool"][state["layout"]])
    _live.show(out, None)
    assert out.outputs == () and _live.shown(out) is None


def test_a_live_panel_shows_the_state_of_its_controls():
    """course.demos._live.panel: the line, figure and table a state function gives for its controls' values,
    redrawn on each change; a ValueError (input the state cannot take) becomes the line; rows show every control."""
    import ipywidgets as w

    from course.demos import _live

    def state(n, mode):
        if n == 3:
            raise ValueError("n < 3 & no more")
        return _state(n, mode)

    n, mode = w.IntSlider(value=1, min=0, max=3), w.Dropdown(options=["single", "double"])
    controls, line, figure, table = _live.panel({"n": n, "mode": mode}, state).children
    assert list(controls.children) == [n, mode] and line.value == "<code>n 1, mode single, colour red</code>"
    n.value, mode.value = 2, "double"
    d, p = _demo(), _demo().payload()
    page = p["states"][d.index_of([2, 1, 0])]
    assert _live.shown(figure) == (p["pool"][page["data"]], p["pool"][page["layout"]])
    assert line.value == "<code>n 2, mode double, colour red</code>" and table.value == p["pool"][page["html"]]
    n.value = 3
    assert line.value == "<code>n &lt; 3 &amp; no more</code>" and _live.shown(figure) is None
    assert table.value == "" and table.layout.display == "none"
    assert _live.caption_html("a < b\nc") == "<code>a &lt; b</code><br><code>c</code>"
    with pytest.raises(ValueError, match="missing: mode"):
        _live.panel({"n": n, "mode": mode}, state, rows=[n])


# --- two editions from one execution (issue 31 §2) ------------------------------------------------------------

FAKE = {"size": "大小", "mode": "模式", "single": "单", "double": "双", "n {n}, mode {mode}": "n 为 {n}，模式{mode}",
        "Chart: {title}. {caption}": "图表：{title}。{caption}", "chart": "图表", "count {n}": "计数 {n}",
        "The book's page runs this demo; here it shows its first state only. "
        "The chapter's live (ipywidgets) version follows in the notebook.": "书页运行此演示；这里只显示其第一个状态。"}


@pytest.fixture
def chinese(monkeypatch):
    from course import editions

    monkeypatch.setattr(editions, "translations", lambda language: FAKE)
    monkeypatch.setattr(editions, "_missing", {})


def _bilingual():
    """A demo whose numbers cost something (counted) and whose words follow the edition."""
    import functools

    import plotly.graph_objects as go

    from course.editions import tr

    calls = {"numbers": 0, "state": 0}

    @functools.cache
    def numbers(n, mode):
        calls["numbers"] += 1
        return n * (2 if mode == "double" else 1)

    def state(n, mode, language="en"):
        calls["state"] += 1
        value = numbers(n, mode)
        fig = go.Figure(go.Bar(x=[0], y=[value]))
        fig.update_layout(title=tr("count {n}", language).format(n=value))
        return {"caption": tr("n {n}, mode {mode}", language).format(n=n, mode=tr(mode, language)), "figure": fig}

    demo = StaticDemo("two-editions", [Slider("n", "size", values=[1, 2, 3]),
                                       Buttons("mode", "mode", options=["single", "double"], words=True)], state=state)
    return demo, calls


def test_both_editions_come_from_one_computation_of_the_numbers(chinese):
    from course import editions

    d, calls = _bilingual()
    shown = d._repr_html_()  # what the cell displays: both editions
    assert calls == {"numbers": 6, "state": 12}  # the numbers once per state, the words once per edition
    en, zh = editions.keep(shown, "en"), editions.keep(shown, "zh_CN")
    assert en == d.to_html() and zh == d.to_html("zh_CN") and "<!--edition" not in en + zh
    assert "n 1, mode single" in en and "n 为 1，模式单" in zh and "single" not in zh.split("data-demo-payload")[0]
    assert 'aria-pressed="true">单</button>' in zh and '<span class="demo-label">大小</span>' in zh
    assert 'aria-valuetext="大小 = 1"' in zh and '<output class="demo-value">1</output>' in zh
    assert 'aria-label="图表：计数 1。n 为 1，模式单"' in zh and "书页运行此演示" in zh
    p = d.payload("zh_CN")
    assert p["chart"] == "图表：{title}。{caption}" and p["controls"][1]["labels"] == ["单", "双"]
    assert [s["caption"] for s in p["states"]] == [d.caption("zh_CN", n=n, mode=m)
                                                   for n in (1, 2, 3) for m in ("single", "double")]
    assert json.loads(p["pool"][p["states"][5]["layout"]])["title"]["text"] == "计数 6"
    assert d.payload("en")["default"] == p["default"] and len(p["states"]) == len(d.payload("en")["states"])
    assert f'id="demo-{d.demo_id}"' in en and f'id="demo-{d.demo_id}"' in zh  # one per page after keep
    assert editions.untranslated() == []


def test_an_english_only_state_is_computed_once_for_both_editions(chinese):
    calls = []

    def state(n):
        calls.append(n)
        return {"caption": f"n {n}"}

    d = StaticDemo("english-only", [Slider("n", "size", values=[1, 2])], state=state)
    d._repr_html_()
    assert calls == [1, 2]  # not once per edition
    assert d.payload("zh_CN")["states"] == d.payload("en")["states"] and d.payload("zh_CN")["controls"][0]["texts"] == [
        "大小 = 1", "大小 = 2"]
    with pytest.raises(ValueError, match="'language'"):
        Slider("language", "language", values=[1])


def test_the_page_script_speaks_the_page_edition(tmp_path, browser, chinese):
    """The Chinese edition's demo in a browser: its captions, labels and figure name are the Chinese ones."""
    from course.sphinx_ext import plotly_js_path

    d, _ = _bilingual()
    (tmp_path / "plotly.min.js").write_bytes(plotly_js_path().read_bytes())
    (tmp_path / "static_demo.js").write_bytes((ROOT / "course" / "_static" / "static_demo.js").read_bytes())
    (tmp_path / "page.html").write_text(
        '<!doctype html><html lang="zh-CN" data-theme="light"><head><meta charset="utf-8">'
        '<script defer src="plotly.min.js"></script><script defer src="static_demo.js"></script></head>'
        f'<body>{d.to_html("zh_CN")}</body></html>', encoding="utf-8")
    context = browser.new_context()
    try:
        tab = context.new_page()
        tab.route("**/*", lambda r: r.continue_() if r.request.url.startswith("file://") else r.abort())
        tab.goto((tmp_path / "page.html").as_uri())
        tab.wait_for_selector("[data-demo-figure] .main-svg")
        tab.locator('[data-demo-control="n"] input').fill("2")
        tab.locator('[data-demo-control="mode"] button', has_text="双").click()
        assert tab.locator("[data-demo-caption]").inner_text() == d.caption("zh_CN", n=3, mode="double")
        assert tab.locator("[data-demo-figure]").get_attribute("aria-label") == "图表：计数 6。n 为 3，模式双"
        assert tab.locator('[data-demo-control="n"] input').get_attribute("aria-valuetext") == "大小 = 3"
        assert tab.locator("[data-demo-figure] .gtitle").text_content() == "计数 6"
    finally:
        context.close()
