"""What the demo tests (tests/test_demo_*.py) share: a tiny model config and checks of a static demo's parts."""
from __future__ import annotations

import html
import json
import re

# a model small enough that a demo's callbacks run in milliseconds
TINY = dict(hidden_size=32, num_hidden_layers=1, num_attention_heads=2, intermediate_size=64,
            max_position_embeddings=64, attn_implementation="eager")


def live_shows(output, figure) -> bool:
    """Whether a live demo's Output widget shows ``figure``: the same JSON as the page stores for it
    (``course.demos._live``: the live bundle is that JSON plus a theme template the page drops)."""
    from course.demos._live import shown
    from course.static_demo import _figure_json

    got = shown(output)
    assert got is not None, "the live demo shows no figure"
    return got == _figure_json(figure)


def live_panel(box) -> tuple:
    """A live panel's parts (``course.demos._live.panel``): its controls in reading order (the rows' widgets,
    the demo's own buttons included), its line, figure and table."""
    import ipywidgets as w

    def flat(x):
        return [c for child in x.children for c in flat(child)] if isinstance(x, w.Box) else [x]

    controls, line, figure, table = box.children
    return flat(controls), line, figure, table


def by_id(demos) -> dict:
    return {d.demo_id: d for d in demos}


def all_captions(demo) -> list[str]:
    return [s["caption"] for s in demo.payload()["states"]]


def check_page_parts(demo, *, figure=True, html_part=True):
    """Every state has the parts the page shows, and the rendered page part holds the default caption."""
    p = demo.payload()
    assert len(p["states"]) == demo.n_states
    for s in p["states"]:
        assert ("data" in s) == figure and ("html" in s) == html_part, (demo.demo_id, s.keys())
    page = demo.to_html()
    default = p["states"][demo.index_of(p["default"])]["caption"]
    assert f'data-demo="{demo.demo_id}"' in page
    assert html.escape(default) in page


def number_after(text: str, label: str) -> float:
    m = re.search(re.escape(label) + r"\s*(-?[0-9.,]+)", text)
    assert m, (label, text)
    return float(m.group(1).replace(",", "").rstrip("."))


# --- the two editions (issue 31 §2: course/editions.py, course/static_demo.py) ----------------------------------

_NUMBER = re.compile(r"-?\d+(?:[.,]\d+)*(?:e[-+]?\d+)?%?")
_CJK = re.compile(r"[\u4e00-\u9fff]")


def numbers_in(obj) -> list:
    """Every number in a caption, a table's HTML or a figure's JSON (its strings' numbers too), in order: what
    both editions must show alike."""
    if isinstance(obj, str):
        if obj[:1] in "[{":
            try:
                return numbers_in(json.loads(obj))
            except ValueError:
                pass
        return _NUMBER.findall(html.unescape(re.sub(r"<[^>]+>", " ", obj)))  # &#x27; is no number
    if isinstance(obj, bool) or obj is None:
        return []
    if isinstance(obj, (int, float)):
        return [obj]
    if isinstance(obj, dict):
        return [n for k in sorted(obj) for n in numbers_in(obj[k])]
    return [n for v in obj for n in numbers_in(v)]


def check_editions(demo, language: str = "zh_CN"):
    """The Chinese edition of a static demo, from the same states: every word it asks ``editions.tr`` for is
    translated, each caption is Chinese and shows the English caption's numbers, each figure and table holds the
    same numbers, and the page part is the Chinese one (what ``editions.keep`` leaves on a Chinese page)."""
    from course import editions

    saved = editions._missing.pop(language, None)
    demo._payloads.pop(language, None)
    try:
        zh = demo.payload(language)
        page = demo.to_html(language)
        missing = editions.untranslated(language)
    finally:
        editions._missing.pop(language, None)
        if saved is not None:
            editions._missing[language] = saved
    assert not missing, f"{demo.demo_id}: untranslated in {language}: {missing}"
    en = demo.payload()
    assert zh["default"] == en["default"] and len(zh["states"]) == len(en["states"]) == demo.n_states
    for a, b in zip(en["states"], zh["states"]):
        assert _CJK.search(b["caption"]), (demo.demo_id, b["caption"])
        # the same numbers, in the order the Chinese sentence puts them
        assert sorted(numbers_in(a["caption"])) == sorted(numbers_in(b["caption"])), (a["caption"], b["caption"])
        for part in ("data", "html"):
            assert (part in a) == (part in b), (demo.demo_id, part)
            if part in a:
                assert numbers_in(json.loads(en["pool"][a[part]]) if part == "data" else en["pool"][a[part]]) == \
                    numbers_in(json.loads(zh["pool"][b[part]]) if part == "data" else zh["pool"][b[part]]), \
                    (demo.demo_id, part, a["caption"])
    for c in demo.controls:  # a control's name is Chinese, or code ("max_length") that every edition writes alike
        name = c.shown_label(language)
        assert _CJK.search(name) or (re.fullmatch(r"\w+", name) and name == c.label), (demo.demo_id, name)
    default = zh["states"][demo.index_of(zh["default"])]["caption"]
    assert html.escape(default) in page and f'data-demo="{demo.demo_id}"' in page
    assert editions.keep(demo._repr_html_(), language) == page
    assert editions.keep(demo._repr_html_(), "en") == demo.to_html()
