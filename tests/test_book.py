"""The built book, opened in a real browser.

The session fixture ``book_html`` takes the book `make book` built (``BOOK_BUILD_DIR``, the ``_build``
folder or its ``html`` folder, or the repository's ``_build``) and fails if it is missing or older than a
page's source: `make check` builds it before the tests. Every page of the table of contents is then opened
in headless Chromium, served over local HTTP with every request to another host blocked (the book must
not need the network to show its content): each page has its title, every image loads, no page shows a
traceback or stderr output, no request is made to another host (the book must open offline: nothing is
fetched from a CDN), and no JavaScript error occurs. tests/test_pages.py opens the pages from disk and
operates the static demos. A full-page screenshot of each page is saved under
pytest's temporary folder (the path is printed); look at them.

Run:  make book && .venv/bin/python -m pytest -m book -s tests/test_book.py
"""
from __future__ import annotations

import functools
import http.server
import os
import re
import shlex
import threading
from pathlib import Path

import pytest
import yaml

from course.build import toc_pages

ROOT = Path(__file__).resolve().parents[1]


# --- the build command, as the Makefile and the workflow state it -------------------------------------------

def _jupyter_book_args(command: str) -> list[str] | None:
    """['build', '.', '-W', ...] from a shell line that runs jupyter-book, else None."""
    words = shlex.split(command.replace("$(VENV)", ".venv"))
    for i, w in enumerate(words):
        if w == "jupyter-book" or w.endswith("/jupyter-book"):
            return words[i + 1:]
    return None


def make_book_args() -> list[str]:
    """The jupyter-book arguments of the Makefile's `book` recipe."""
    lines = (ROOT / "Makefile").read_text().splitlines()
    start = next(i for i, line in enumerate(lines) if re.match(r"^book\s*:", line))
    for line in lines[start + 1:]:
        if not line.startswith("\t"):
            break
        args = _jupyter_book_args(line.strip())
        if args is not None:
            return args
    raise AssertionError("the Makefile's book recipe does not run jupyter-book")


def source_of(page: str) -> Path:
    for ext in (".md", ".ipynb"):
        if (ROOT / f"{page}{ext}").exists():
            return ROOT / f"{page}{ext}"
    raise FileNotFoundError(page)


def expected_title(page: str) -> str:
    """The text of the page's first level-1 heading, with Markdown markup removed."""
    text = source_of(page).read_text(encoding="utf-8")
    m = re.search(r"^# (.+)$", text, flags=re.M)
    assert m, f"{page} has no level-1 heading"
    return re.sub(r"[`*_]", "", m.group(1)).strip()


# --- fixtures -------------------------------------------------------------------------------------------------

def _fresh(html_dir: Path) -> bool:
    """Every page is built, and built after its source last changed."""
    for page in toc_pages():
        out = html_dir / f"{page}.html"
        if not out.exists() or out.stat().st_mtime < source_of(page).stat().st_mtime:
            return False
    return True


@pytest.fixture(scope="session")
def book_html() -> Path:
    """The book `make book` built (BOOK_BUILD_DIR, or the repository's _build): nothing is built here, so no
    test process waits for another's build. `make check` builds it first."""
    given = os.environ.get("BOOK_BUILD_DIR")
    root = Path(given) if given else ROOT / "_build"
    html_dir = root / "html" if (root / "html").is_dir() else root
    if not _fresh(html_dir):
        pytest.fail(f"{html_dir} holds no fresh build of every page: run `make book` first (`make check` does)")
    return html_dir


@pytest.fixture(scope="session")
def base_url(book_html):
    handler = functools.partial(_QuietHandler, directory=str(book_html))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/"
    server.shutdown()


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):  # keep pytest's output readable
        pass


@pytest.fixture(scope="session")
def screenshot_dir(tmp_path_factory) -> Path:
    d = tmp_path_factory.mktemp("screenshots")
    print(f"\nscreenshots in {d}")
    return d


# --- the tests ------------------------------------------------------------------------------------------------

_UNRENDERED_ROLE = re.compile(r"\{[a-z]+(:[a-z]+)?\}`")  # e.g. {glue:text}`name` left as text


@pytest.mark.book
@pytest.mark.parametrize("page", toc_pages())
def test_page_renders(page, base_url, browser, screenshot_dir):
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    tab = context.new_page()
    console_errors, page_errors, blocked = [], [], []
    tab.on("console", lambda m: console_errors.append(m.text) if m.type == "error" else None)
    tab.on("pageerror", lambda e: page_errors.append(str(e)))

    def route(r):
        if r.request.url.startswith(base_url):
            r.continue_()
        else:
            blocked.append(r.request.url)
            r.abort()

    tab.route("**/*", route)
    try:
        response = tab.goto(base_url + f"{page}.html", wait_until="load")
        assert response is not None and response.ok, f"{page}.html did not load"
        tab.wait_for_timeout(300)  # let deferred scripts run and report their errors
        tab.screenshot(path=str(screenshot_dir / f"{page.replace('/', '__')}.png"), full_page=True)

        title = expected_title(page)
        h1 = tab.locator("main h1").first.inner_text()
        assert title in h1.replace("\u00b6", "").replace("#", "").strip(), f"h1 is {h1!r}, expected {title!r}"
        assert title in tab.title(), f"<title> is {tab.title()!r}, expected it to contain {title!r}"

        images = tab.evaluate("Array.from(document.images).map(i => [i.currentSrc || i.src, i.naturalWidth])")
        broken = [src for src, width in images if width == 0]
        assert not broken, f"images that did not load: {broken}"

        article = tab.locator("main").inner_text()
        assert "Traceback (most recent call last)" not in article, "the page shows a Python traceback"
        prose = tab.evaluate("Array.from(document.querySelectorAll('main p, main li, main td, main dd'))"
                             ".filter(e => !e.closest('pre, .cell_input')).map(e => e.innerText)")
        unrendered = [t for t in prose if _UNRENDERED_ROLE.search(t)]
        assert not unrendered, f"MyST roles shown as text (a typo in the source?): {unrendered}"
        n_bad = tab.locator(".output.stderr, .output.traceback, .output.error, .cell_output .traceback").count()
        assert n_bad == 0, f"the page shows {n_bad} stderr/error output(s)"

        _check_static_interaction(tab)

        assert not console_errors + page_errors, f"JavaScript errors: {console_errors + page_errors}"
        assert not blocked, f"requests to other hosts (the page must work offline): {blocked}"
    finally:
        context.close()


def _check_static_interaction(tab):
    """What a reader does without a kernel works: a quiz answer marks itself right or wrong, "Show
    answer" and the interview questions' dropdowns open."""
    for quiz in tab.locator(".bert-quiz").all():
        question = quiz.locator("li.q").first
        right = question.locator("label", has=tab.locator(".fb.ok"))
        wrong = question.locator("label", has=tab.locator(".fb.no")).first
        assert not right.locator(".fb.ok").is_visible()
        wrong.locator("input").check()
        assert wrong.locator(".fb.no").is_visible() and not right.locator(".fb.ok").is_visible()
        right.locator("input").check()
        assert right.locator(".fb.ok").is_visible() and not wrong.locator(".fb.no").is_visible()
        answer = question.locator("details")
        answer.locator("summary").click()
        assert answer.get_attribute("open") is not None
    dropdowns = tab.locator("details.sd-dropdown")
    if dropdowns.count():
        first = dropdowns.first
        first.locator("summary").click()
        assert first.get_attribute("open") is not None
        assert first.locator(".sd-summary-content, .sd-card-body").first.is_visible()


def test_workflow_runs_the_make_book_command():
    """CI builds the book exactly as `make book` does, then publishes _build/html to GitHub Pages."""
    wf = yaml.safe_load((ROOT / ".github" / "workflows" / "book.yml").read_text())
    triggers = wf.get("on", wf.get(True))  # YAML 1.1 reads a bare `on` as True
    assert "main" in triggers["push"]["branches"]
    runs = [step["run"] for job in wf["jobs"].values() for step in job.get("steps", []) if "run" in step]
    commands = [line.strip() for run in runs for line in run.splitlines() if line.strip()]
    built = [_jupyter_book_args(c) for c in commands]
    built = [a for a in built if a is not None]
    uses_make = any(re.fullmatch(r"make\s+book", c) for c in commands)
    assert uses_make or built, "the workflow never builds the book"
    for args in built:
        assert args == make_book_args(), f"workflow runs jupyter-book {args}, make book runs {make_book_args()}"
    uploads = [step for job in wf["jobs"].values() for step in job.get("steps", [])
               if "upload-pages-artifact" in step.get("uses", "")]
    assert uploads and uploads[0]["with"]["path"] == "_build/html"
    assert any("deploy-pages" in step.get("uses", "") for job in wf["jobs"].values()
               for step in job.get("steps", []))


def test_config_is_strict():
    """The build executes chapters with the cache, a finite timeout, and no global allow_errors."""
    cfg = yaml.safe_load((ROOT / "_config.yml").read_text())
    ex = cfg["execute"]
    assert ex["execute_notebooks"] == "cache"
    assert 0 < ex["timeout"] <= 600
    assert ex.get("allow_errors", False) is False
    assert make_book_args()[:2] == ["build", "."] and {"-W", "-n", "--keep-going"} <= set(make_book_args())


def test_every_released_exercise_is_offered_for_download():
    """exercises.md links each student notebook under exercises/ with a download role."""
    page = (ROOT / "exercises.md").read_text(encoding="utf-8")
    for nb in sorted((ROOT / "exercises").glob("*/*.ipynb")):
        rel = nb.relative_to(ROOT).as_posix()
        assert re.search(r"\{download\}`[^`]*<" + re.escape(rel) + ">`", page), f"{rel} has no download link"


def test_glossary_numbers():
    """The glossary is a notebook whose numbers are glued: every glue role it uses is set by its code cell."""
    text = (ROOT / "glossary.md").read_text(encoding="utf-8")
    assert text.startswith("---\njupytext:"), "the glossary must be a MyST notebook so that it is executed"
    used = set(re.findall(r"\{glue:[a-z]+\}`([A-Za-z0-9_]+)", text))
    glued = set(re.findall(r"glue\(\"([A-Za-z0-9_]+)\"", text))
    assert used and used <= glued, sorted(used - glued)
