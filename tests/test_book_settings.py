"""The book's settings that course/sphinx_ext.py applies: the repository button and URL (one setting,
`repository.url` in _config.yml) and notebook downloads that work from disk. The functions are called with
stand-ins for Sphinx's objects; the page test (tests/test_book.py) sees the built result."""
from __future__ import annotations

import base64
import json
import re
from pathlib import Path
from types import SimpleNamespace

import pytest
import yaml

from course import sphinx_ext

ROOT = Path(__file__).resolve().parents[1]


def _config(url):
    return SimpleNamespace(html_theme_options={"repository_url": url, "use_repository_button": True})


@pytest.mark.parametrize("url, shown", [("", False), ("  ", False), (None, False),
                                        ("https://example.org/me/course", True)])
def test_repository_button_follows_the_url(url, shown):
    config = _config(url)
    sphinx_ext._repository_button(None, config)
    assert config.html_theme_options["use_repository_button"] is shown


def test_repository_url_must_be_a_web_address():
    with pytest.raises(ValueError, match="repository.url"):
        sphinx_ext._repository_button(None, _config("github.com/me/course"))


def test_config_has_one_repository_setting_and_no_placeholder():
    cfg = yaml.safe_load((ROOT / "_config.yml").read_text())
    assert "use_repository_button" not in cfg.get("html", {}), "the button follows repository.url"
    assert "url" in cfg["repository"]
    for page in ("intro.md", "README.md"):
        assert "bert-course/bert-from-scratch" not in (ROOT / page).read_text()


@pytest.mark.parametrize("url, shown", [("", "&lt;URL of this course&#x27;s repository&gt;"),
                                        ("https://example.org/me/course", "https://example.org/me/course")])
def test_clone_line_shows_the_setting(url, shown):
    app = SimpleNamespace(config=_config(url))
    context = {"body": "<pre>git clone @REPOSITORY_URL@ bert-course</pre>"}
    sphinx_ext._repository_url_in_text(app, "intro", None, context, None)
    assert context["body"] == f"<pre>git clone {shown} bert-course</pre>"


def test_download_links_carry_their_notebooks(tmp_path):
    nb = tmp_path / "exercises" / "a" / "a.ipynb"
    nb.parent.mkdir(parents=True)
    nb.write_text('{"cells": []}')
    added = []
    app = SimpleNamespace(srcdir=str(tmp_path), add_js_file=lambda name, **kw: added.append(name),
                          env=SimpleNamespace(dlfiles={"exercises/a/a.ipynb": ({"page"}, "0123/a.ipynb")}))
    href = "../_downloads/0123/a.ipynb"
    context = {"body": f'<p><a class="reference download internal" download="" href="{href}">a</a></p>'}
    sphinx_ext._embed_downloads(app, "chapters/x", None, context, None)
    data = re.search(r'<script type="application/json" id="bert-file-downloads">(.*?)</script>',
                     context["body"]).group(1)
    assert base64.b64decode(json.loads(data)[href]) == nb.read_bytes()
    assert added == ["file_downloads.js"]
    plain = {"body": "<p>no downloads</p>"}
    sphinx_ext._embed_downloads(app, "chapters/y", None, plain, None)
    assert plain["body"] == "<p>no downloads</p>" and added == ["file_downloads.js"]


def test_a_page_opened_from_disk_downloads_the_notebook(tmp_path, browser):
    """The script in headless Chromium: a click on a file:// page saves the embedded copy."""
    (tmp_path / "_downloads" / "h").mkdir(parents=True)
    content = b'{"cells": [], "nbformat": 4}'
    (tmp_path / "_downloads" / "h" / "x.ipynb").write_bytes(content)
    (tmp_path / "file_downloads.js").write_text((ROOT / "course" / "_static" / "file_downloads.js").read_text())
    embedded = json.dumps({"_downloads/h/x.ipynb": base64.b64encode(content).decode()})
    (tmp_path / "page.html").write_text(
        '<html><body><a class="reference download internal" download="" href="_downloads/h/x.ipynb">x</a>'
        f'<script type="application/json" id="bert-file-downloads">{embedded}</script>'
        '<script src="file_downloads.js"></script></body></html>')
    context = browser.new_context(accept_downloads=True)
    try:
        page = context.new_page()
        page.goto((tmp_path / "page.html").as_uri())
        with page.expect_download(timeout=10_000) as download:
            page.locator("a.reference.download").click()
        assert download.value.suggested_filename == "x.ipynb"
        assert Path(download.value.path()).read_bytes() == content
    finally:
        context.close()
