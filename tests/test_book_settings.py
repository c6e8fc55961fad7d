"""The book's settings that course/sphinx_ext.py applies: the repository button and URL (one setting,
`repository.url` in _config.yml), notebook downloads that work from disk, figures' captions and alt text, and
which Plotly bundle ships. The functions are called with stand-ins for Sphinx's objects; the page test
(tests/test_pages.py) sees the built result."""
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


@pytest.mark.parametrize("url", ["", "https://example.org/me/course"])
def test_clone_line_shows_the_setting_or_is_left_out(url):
    """With a URL the clone line names it; without one the line is left out (no placeholder in the page), and
    the code block keeps its other lines and its opening tags."""
    app = SimpleNamespace(config=_config(url))
    body = ('<div class="highlight"><pre><span></span>git<span class="w"> </span>clone<span class="w"> </span>'
            '@REPOSITORY_URL@<span class="w"> </span>bert-course\ncd<span class="w"> </span>bert-course\n</pre></div>')
    context = {"body": body}
    sphinx_ext._repository_url_in_text(app, "intro", None, context, None)
    if url:
        assert context["body"] == body.replace("@REPOSITORY_URL@", url)
    else:
        assert context["body"] == ('<div class="highlight"><pre><span></span>cd<span class="w"> </span>bert-course\n'
                                   '</pre></div>')


def test_a_figure_carries_its_caption_and_alt_text_into_the_page(tmp_path):
    """course.plots writes a figure's caption and alt text into its PNG; the extension makes the image a
    <figure> with that alt text and a caption. A PNG without them is left alone."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from docutils import nodes
    from docutils.utils import new_document
    from IPython.core.pylabtools import print_figure

    from course import plots

    fig, (a, b) = plt.subplots(1, 2)
    a.bar(["BERT", "GPT"], [3, 1])
    a.set_title("who notices?")
    a.set_ylabel("change")
    plots.visibility_heatmap(b, [[1, 0], [1, 1]], ["x", "y"], title="GPT")
    fig.suptitle("Two readers")
    caption, alt = plots.describe_figure(fig)
    assert caption == "Two readers"
    assert "2 panels" in alt and "bar chart of 2 bars" in alt and "who notices?" in alt and "BERT, GPT" in alt
    assert "heat map" in alt and "query (looks)" in alt
    (tmp_path / "described.png").write_bytes(print_figure(fig, "png", metadata={"Title": caption, "Description": alt}))
    (tmp_path / "plain.png").write_bytes(print_figure(fig, "png"))
    plt.close(fig)
    assert plots.png_text((tmp_path / "described.png").read_bytes())["Description"] == alt

    doc = new_document("page")
    for name in ("described.png", "plain.png"):
        box = nodes.container(classes=["cell_output"])
        box += nodes.image(uri=f"/{name}")
        doc += box
    sphinx_ext._describe_figures(SimpleNamespace(srcdir=str(tmp_path)), doc, "page")
    described, plain = list(doc.findall(nodes.image))
    assert described["alt"] == alt and isinstance(described.parent, nodes.figure)
    assert described.parent["ids"], "Sphinx's HTML writer warns about (and -W fails on) a figure without an id"
    assert described.parent.next_node(nodes.caption).astext() == "Two readers"
    assert "alt" not in plain and isinstance(plain.parent, nodes.container)


def test_the_book_says_which_plotly_it_ships(tmp_path, monkeypatch):
    """The cartesian bundle when npm installed the version the plotly package needs; else the full bundle,
    with the reason (which the build prints in red)."""
    import sys

    monkeypatch.setattr(sys, "prefix", str(tmp_path))
    path, why = sphinx_ext.plotly_js_choice()
    assert path.name == "plotly.min.js" and "missing" in why and "make js" in why
    cartesian = tmp_path / sphinx_ext.CARTESIAN_JS
    cartesian.parent.mkdir(parents=True)
    cartesian.write_text("/** plotly.js (cartesian - minified) v0.0.1 */")
    path, why = sphinx_ext.plotly_js_choice()
    assert path.name == "plotly.min.js" and "0.0.1" in why
    version = sphinx_ext._plotly_js_version(sphinx_ext.plotly_js_choice()[0])
    cartesian.write_text(f"/** plotly.js (cartesian - minified) v{version} */")
    assert sphinx_ext.plotly_js_choice() == (cartesian, "the cartesian bundle")


def test_download_links_carry_their_notebooks(tmp_path):
    nb = tmp_path / "exercises" / "a" / "a.ipynb"
    nb.parent.mkdir(parents=True)
    nb.write_text('{"cells": []}')
    inputs = nb.parent / "inputs.py"  # the exercise's inputs, which its setup cell imports: embedded too
    inputs.write_text("def padding_mask(): ...\n")
    added = []
    app = SimpleNamespace(srcdir=str(tmp_path), add_js_file=lambda name, **kw: added.append(name),
                          env=SimpleNamespace(dlfiles={"exercises/a/a.ipynb": ({"page"}, "0123/a.ipynb"),
                                                       "exercises/a/inputs.py": ({"page"}, "4567/inputs.py")}))
    href, href_py = "../_downloads/0123/a.ipynb", "../_downloads/4567/inputs.py"
    context = {"body": f'<p><a class="reference download internal" download="" href="{href}">a</a>'
                       f'<a class="reference download internal" download="" href="{href_py}">inputs.py</a></p>'}
    sphinx_ext._embed_downloads(app, "chapters/x", None, context, None)
    data = re.search(r'<script type="application/json" id="bert-file-downloads">(.*?)</script>',
                     context["body"]).group(1)
    assert base64.b64decode(json.loads(data)[href]) == nb.read_bytes()
    assert base64.b64decode(json.loads(data)[href_py]) == inputs.read_bytes()
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


def test_figure_words_are_plain_text_and_only_what_is_drawn():
    """Alt text reads tick labels as words (no mathtext) and names only the ticks inside the axes' range."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    from course import plots

    assert plots.plain_text(r"$\mathdefault{10^{-6}}$ and $\sqrt{d_k}$") == "10^-6 and sqrt(d_k)"
    fig, ax = plt.subplots()
    ax.plot(np.logspace(-5, 0, 10), np.arange(10))
    ax.set_xscale("log")
    fig.canvas.draw()
    _caption, alt = plots.describe_figure(fig)
    plt.close(fig)
    assert "$" not in alt and "10^-5" in alt and "10^0" in alt
    assert "10^-6" not in alt and "10^1" not in alt, alt  # ticks matplotlib keeps outside the drawn range


@pytest.mark.parametrize("cmap", ["Blues", "viridis", "Greys"])
def test_heatmap_numbers_are_dark_on_light_cells_and_light_on_dark(cmap):
    """The annotation's colour follows the cell's own luminance (a light colour map such as Blues starts
    light: white text there was unreadable)."""
    import matplotlib.pyplot as plt
    import numpy as np

    from course import plots

    fig, ax = plt.subplots()
    plots.matrix_heatmap(ax, np.linspace(0, 1, 6).reshape(2, 3), annotate=True, cmap=cmap)
    im = ax.images[0]
    for text, value in zip(ax.texts, np.linspace(0, 1, 6)):
        r, g, b, _ = im.cmap(im.norm(value))
        luminance = 0.2126 * r + 0.7152 * g + 0.0722 * b
        assert text.get_color() == ("black" if luminance > 0.45 else "white"), (cmap, value, luminance)
    assert {t.get_color() for t in ax.texts} == {"black", "white"}, "both ends of the map are covered"
    plt.close(fig)
