"""Feedback pages that need no network: formulas typeset by a MathJax copied into the page itself.

nbgrader's feedback template loads MathJax 2 from a CDN (nbconvert's ``mathjax()`` macro, called without a
URL), so offline a student sees raw ``$W^O$``. ``OfflineHTMLExporter`` (``GenerateFeedback.exporter_class``
in nbgrader_config.py) removes that script and, on a page whose markdown holds a formula, puts in MathJax 3
(SVG output: its fonts are inside the one script) read from the installed package the book uses
(sphinx-mathjax-offline; nothing third-party is committed). The page stays one file, which is what
``nbgrader release_feedback`` hands back. TeX's ``\\href``, ``\\class``, ``\\style`` (the html package),
``\\require`` and autoloading are off: a student's own markdown cannot make a link or load a script through a
formula. A page that would still load a script from another host is refused, not written.
"""
from __future__ import annotations

import functools
import re
from importlib import metadata

from nbconvert.exporters import HTMLExporter

MATHJAX_PACKAGE = "sphinx-mathjax-offline"
MATHJAX_FILE = "sphinx-mathjax-offline/static/mathjax/tex-svg.js"

# nbconvert's macro (templates/base/mathjax.html.j2), from its first comment to its last.
_CDN_MATHJAX = re.compile(r"<!-- Load mathjax -->.*?<!-- End of mathjax configuration -->", re.S)
_REMOTE_SCRIPT = re.compile(r"<script[^>]*\bsrc\s*=\s*[\"']?(?:https?:)?//", re.I)
_MATH = re.compile(r"\$|\\\(|\\\[")

MATHJAX_CONFIG = """window.MathJax = {
  tex: {inlineMath: [['$', '$'], ['\\\\(', '\\\\)']], processEscapes: true,
        packages: {'[-]': ['autoload', 'require', 'html']}},
  svg: {fontCache: 'global'},
  options: {enableMenu: false}
};"""


class MathJaxUnavailable(RuntimeError):
    """The package MathJax is copied from is not installed."""


@functools.cache
def mathjax_script() -> str:
    """MathJax 3's tex-svg.js from the installed package, safe to put inside a <script> element."""
    try:
        path = metadata.distribution(MATHJAX_PACKAGE).locate_file(MATHJAX_FILE)
        text = path.read_text(encoding="utf-8")
    except (metadata.PackageNotFoundError, OSError) as e:
        raise MathJaxUnavailable(f"feedback pages typeset formulas with MathJax from the package {MATHJAX_PACKAGE} "
                                 f"(a course dependency), which is not installed here: {e}") from None
    return text.replace("</script", "<\\/script")


def has_math(nb) -> bool:
    return any(cell.cell_type == "markdown" and _MATH.search(cell.source) for cell in nb.cells)


def offline_mathjax(html: str, nb) -> str:
    """``html`` without the CDN MathJax; with MathJax inside it if ``nb``'s markdown holds a formula."""
    local = (f"<script>{MATHJAX_CONFIG}</script>\n<script>{mathjax_script()}</script>" if has_math(nb) else "")
    html = _CDN_MATHJAX.sub(lambda _: local, html, count=1)
    if _REMOTE_SCRIPT.search(html):
        raise RuntimeError("this feedback page would load a script from another host (nbconvert's or nbgrader's "
                           "template changed?): refusing to write it")
    return html


class OfflineHTMLExporter(HTMLExporter):
    """nbconvert's HTML exporter whose pages load nothing from the network (see the module docstring)."""

    def from_notebook_node(self, nb, resources=None, **kw):
        output, resources = super().from_notebook_node(nb, resources, **kw)
        return offline_mathjax(output, nb), resources
