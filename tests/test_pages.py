"""The built book as a reader opens it from disk (file://) in headless Chromium, with the network blocked.

The book comes from tests/test_book.py's ``book_html`` fixture: the build `make book` made (`make check`
builds it, then runs these tests), or BOOK_BUILD_DIR.

- Every page: no request leaves the machine (every request that is not a local file is counted and
  blocked: the count must be 0) and no JavaScript error (console errors and uncaught exceptions).
- Every chapter has a static demo (course/static_demo.py), and every control of every demo works: each value
  of each control is set as a reader would (slider, drop-down, button), the caption shown must equal what the
  chapter's Python callback computes for that state (``course.demos.chNN_*.static_demos()``), and the
  picture (figure or table) must change whenever the state's figure or table changes.
- Phone (390 px) and dark mode: the page never scrolls sideways (wide tables, outputs and formulas scroll in
  their own box), figures are not shrunk below their natural size, and the quizzes' inline code is legible
  against its background in dark mode. Screenshots of every chapter at 1280 and 390 px, light and dark, go
  to $PAGE_SHOTS (default: pytest's temporary folder; the path is printed). Look at them.

Run:  make book && .venv/bin/python -m pytest -m book -s tests/test_pages.py
"""
from __future__ import annotations

import importlib
import json
import os
import re
from pathlib import Path

import pytest

from test_book import book_html, source_of, toc_pages  # noqa: F401  (book_html: a fixture; browser: conftest's)

ROOT = Path(__file__).resolve().parents[1]
CHAPTERS = [p for p in toc_pages() if p.startswith("chapters/")]
LOCAL = ("file://", "data:", "blob:", "about:")

pytestmark = pytest.mark.book


@pytest.fixture(scope="module")
def shots(tmp_path_factory) -> Path:
    d = Path(os.environ["PAGE_SHOTS"]) if os.environ.get("PAGE_SHOTS") else tmp_path_factory.mktemp("pages")
    d.mkdir(parents=True, exist_ok=True)
    print(f"\npage screenshots in {d}")
    return d


class Tab:
    """A page opened from disk: every request that is not a local file is recorded and aborted, and every
    JavaScript error is recorded."""

    def __init__(self, browser, url: str, width: int = 1280, scheme: str = "light"):
        self.context = browser.new_context(viewport={"width": width, "height": 900}, color_scheme=scheme)
        self.page = self.context.new_page()
        self.external, self.errors, self.requests = [], [], []
        self.page.on("request", lambda r: self.requests.append(r.url))
        self.page.on("console", lambda m: self.errors.append(m.text) if m.type == "error" else None)
        self.page.on("pageerror", lambda e: self.errors.append(str(e)))
        self.page.on("request", lambda r: None if r.url.startswith(LOCAL) else self.external.append(r.url))
        self.page.route(re.compile(r"^(https?|wss?|ftp)://"), lambda r: r.abort())
        self.page.goto(url, wait_until="load")
        self.page.wait_for_timeout(300)  # deferred scripts run and report their errors

    def close(self):
        self.context.close()


def page_url(html: Path, page: str) -> str:
    return (html / f"{page}.html").resolve().as_uri()


def chapter_demos(page: str) -> dict:
    """{demo_id: StaticDemo} from the demo modules the chapter imports (``from course.demos import chNN_x``)."""
    source = source_of(page).read_text(encoding="utf-8")
    demos = {}
    for name in sorted(set(re.findall(r"from course\.demos import (\w+)", source))):
        module = importlib.import_module(f"course.demos.{name}")
        if hasattr(module, "static_demos"):
            demos.update({d.demo_id: d for d in module.static_demos()})
    return demos


# --- every page: offline, no JavaScript error ------------------------------------------------------------------

@pytest.mark.parametrize("page", toc_pages())
def test_page_requests_nothing_external_and_has_no_js_error(page, book_html, browser):
    tab = Tab(browser, page_url(book_html, page))
    try:
        assert tab.external == [], f"{page}: {len(tab.external)} external request(s): {tab.external}"
        assert tab.errors == [], f"{page}: JavaScript errors: {tab.errors}"
        html = (book_html / f"{page}.html").read_text(encoding="utf-8")
        assert "widget-state+json" not in html and "widget-view+json" not in html, f"{page}: dead widgets"
        assert "thebe" not in html.lower().replace("sphinx-thebe.css", ""), f"{page}: Thebe is still loaded"
    finally:
        tab.close()


# --- every chapter: its demos work ------------------------------------------------------------------------------

def _fingerprint(tab, root) -> str:
    """What the reader sees of a demo besides its caption: the drawn figure and the table."""
    return root.evaluate("""r => {
        const f = r.querySelector('[data-demo-figure]'), h = r.querySelector('[data-demo-html]');
        const svg = f && f.style.display !== 'none' ? Array.from(f.querySelectorAll('svg.main-svg'))
            .map(s => s.innerHTML).join('') : '';
        return svg + '|' + (h ? h.innerHTML : '');
    }""")


def _set(control, kind: str, i: int):
    if kind == "slider":
        control.locator("input").fill(str(i))
    elif kind == "select":
        control.locator("select").select_option(str(i))
    else:
        control.locator(f'button[data-demo-index="{i}"]').click()


def _python_picture(demo, indices) -> tuple:
    """What the state's figure and table are, from Python (to know when the picture must change)."""
    from course.static_demo import _as_html, _figure_json

    out = demo.state_at(indices)
    figure = _figure_json(out["figure"]) if out.get("figure") is not None else None
    return figure, _as_html(out.get("html"))


@pytest.mark.parametrize("page", CHAPTERS)
def test_every_demo_control_follows_python(page, book_html, browser):
    demos = chapter_demos(page)
    assert demos, (f"{page} has no static demo: the course.demos module it imports must define static_demos() "
                   "returning the chapter's StaticDemo objects, shown in its '## Demo' section")
    tab = Tab(browser, page_url(book_html, page))
    try:
        roots = tab.page.locator("[data-demo]")
        shown = [roots.nth(k).get_attribute("data-demo") for k in range(roots.count())]
        assert sorted(shown) == sorted(demos), f"{page}: the page shows demos {shown}, Python has {sorted(demos)}"
        for k, demo_id in enumerate(shown):
            demo, root = demos[demo_id], roots.nth(k)
            root.scroll_into_view_if_needed()
            if root.locator("[data-demo-figure]").count():
                root.locator("[data-demo-figure] svg.main-svg").first.wait_for()
            caption = root.locator("[data-demo-caption]")
            indices = json.loads(root.get_attribute("data-demo-indices"))
            assert caption.inner_text() == demo.state_at(indices)["caption"], f"{demo_id}: the first caption"
            before, python_before = _fingerprint(tab, root), _python_picture(demo, indices)
            for c, control in enumerate(demo.controls):
                element = root.locator(f'[data-demo-control="{control.name}"]')
                kind = element.get_attribute("data-demo-kind")
                assert kind == control.kind, f"{demo_id}.{control.name}: shown as {kind}, declared {control.kind}"
                changed, captions = False, set()
                # every value once, then back to the default, so the next control starts from a known state
                for i in [*range(len(control.values)), control.default_index]:
                    _set(element, kind, i)
                    indices = json.loads(root.get_attribute("data-demo-indices"))
                    assert indices[c] == i, f"{demo_id}.{control.name}: set to value {i}, the page says {indices}"
                    want = demo.state_at(indices)["caption"]
                    assert caption.inner_text() == want, f"{demo_id} at {demo.values_at(indices)}"
                    captions.add(want)
                    after, python_after = _fingerprint(tab, root), _python_picture(demo, indices)
                    if python_after != python_before:
                        assert after != before, f"{demo_id} at {demo.values_at(indices)}: the picture did not change"
                        changed = True
                    before, python_before = after, python_after
                # a control may leave the picture alone where Python says so (ch02's heads add no parameters),
                # but it must change what the reader sees
                assert changed or len(captions) > 1 or len(control.values) == 1, \
                    f"{demo_id}.{control.name} changes neither the picture nor the caption"
        assert tab.external == [] and tab.errors == [], (tab.external, tab.errors)
    finally:
        tab.close()


# --- phone and dark mode -----------------------------------------------------------------------------------------

_CONTRAST = """e => {
    const rgb = c => (c.match(/[\\d.]+/g) || []).map(Number);
    const lum = ([r, g, b]) => {
        const f = v => { v /= 255; return v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4; };
        return 0.2126 * f(r) + 0.7152 * f(g) + 0.0722 * f(b);
    };
    let bg = null;
    for (let a = e; a; a = a.parentElement) {
        const c = rgb(getComputedStyle(a).backgroundColor);
        if (c.length === 3 || (c.length === 4 && c[3] > 0.5)) { bg = c.slice(0, 3); break; }
    }
    bg = bg || [255, 255, 255];
    const l1 = lum(rgb(getComputedStyle(e).color).slice(0, 3)), l2 = lum(bg);
    return (Math.max(l1, l2) + 0.05) / (Math.min(l1, l2) + 0.05);
}"""


@pytest.mark.parametrize("scheme", ["light", "dark"])
@pytest.mark.parametrize("width", [1280, 390])
@pytest.mark.parametrize("page", CHAPTERS)
def test_phone_and_dark_mode(page, width, scheme, book_html, browser, shots):
    tab = Tab(browser, page_url(book_html, page), width=width, scheme=scheme)
    try:
        p = tab.page
        assert p.evaluate("document.documentElement.dataset.theme") == scheme, "the theme does not follow the OS"
        for fig in p.locator("[data-demo-figure]").all():
            fig.scroll_into_view_if_needed()
            fig.locator("svg.main-svg").first.wait_for()
        p.screenshot(path=str(shots / f"{Path(page).name}-{width}-{scheme}.png"), full_page=True)
        scroll = p.evaluate("document.documentElement.scrollWidth")
        assert scroll <= width, f"{page} at {width} px scrolls sideways ({scroll} px wide)"
        if width < 600:
            shrunk = p.evaluate("""Array.from(document.querySelectorAll('.cell_output img'))
                .filter(i => i.naturalWidth && i.getBoundingClientRect().width < 0.95 * Math.min(i.naturalWidth, 1000))
                .map(i => i.src.split('/').pop() + ' ' + Math.round(i.getBoundingClientRect().width) + '/' + i.naturalWidth)""")
            assert not shrunk, f"{page}: figures shrunk on a phone: {shrunk}"
        low = [(t, round(r, 1)) for t, r in
               ((c.inner_text(), c.evaluate(_CONTRAST)) for c in p.locator(".bert-quiz code, .static-demo").all())
               if r < 4.5]
        assert not low, f"{page} ({scheme}): text hard to read against its background (contrast < 4.5): {low}"
        assert tab.external == [] and tab.errors == [], (tab.external, tab.errors)
    finally:
        tab.close()


# --- page weight --------------------------------------------------------------------------------------------------

FIRST_LOAD_BUDGET = 6_000_000  # bytes a chapter's first load may read (README: "under 6 MB")


def test_page_weight_first_load_stays_within_budget(book_html, browser):
    """Every file a chapter page reads on its first load (HTML, scripts, styles, fonts, images), summed from
    disk: within the budget, with Plotly's cartesian bundle. Prints each page's weight and its heaviest files."""
    from course.sphinx_ext import plotly_js_name

    if not plotly_js_name().startswith("plotly-cartesian"):
        pytest.skip("the book ships plotly's full bundle (npm could not install the cartesian one: make js)")
    rows = []
    for page in toc_pages():
        tab = Tab(browser, page_url(book_html, page))
        try:
            tab.page.wait_for_timeout(500)  # deferred scripts load their fonts and images
            urls = list(tab.requests)
        finally:
            tab.close()
        files = {}
        for url in urls:
            if url.startswith("file://"):
                path = Path(re.sub(r"[?#].*$", "", url[len("file://"):]))
                if path.is_file():
                    files[path] = path.stat().st_size
        total = sum(files.values())
        heaviest = sorted(files.items(), key=lambda kv: -kv[1])[:3]
        rows.append((total, page, ", ".join(f"{p.name} {n / 1e6:.1f} MB" for p, n in heaviest)))
    for total, page, heaviest in sorted(rows, reverse=True):
        print(f"{page:32s} {total / 1e6:5.2f} MB  ({heaviest})")
    over = [(page, total) for total, page, _ in rows if total > FIRST_LOAD_BUDGET and page.startswith("chapters/")]
    assert not over, f"chapter pages over {FIRST_LOAD_BUDGET / 1e6:.0f} MB on first load: {over}"
