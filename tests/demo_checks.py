"""What the demo tests (tests/test_demo_*.py) share: a tiny model config and checks of a static demo's parts."""
from __future__ import annotations

import html
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
