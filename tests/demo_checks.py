"""What the demo tests (tests/test_demo_*.py) share: a tiny model config and checks of a static demo's parts."""
from __future__ import annotations

import html
import re

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"

# a model small enough that a demo's callbacks run in milliseconds
TINY = dict(hidden_size=32, num_hidden_layers=1, num_attention_heads=2, intermediate_size=64,
            max_position_embeddings=64, attn_implementation="eager")


def png(value) -> bytes:
    """An Image widget's value (a memoryview) as bytes."""
    return bytes(value)


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
