"""What a page shows of a student's notebook is HTML from an allow-list, cleaned after it is rendered.

nbgrader 0.9.6's formgrade and feedback templates render a markdown cell with ``markdown2html`` and put the
result in the page as it is (nbconvert's ``sanitize_html`` reaches only its own templates), so a link to
``javascript:`` (or ``java&#x73;cript:``, which the browser decodes) in a student's markdown was live in the
instructor's formgrader and in the feedback page. Cleaning the markdown *source* cannot see such a link;
cleaning the *rendered* HTML can: this module's ``markdown2html`` renders as nbconvert's does, then keeps
only the tags, attributes and URL schemes below (nh3, in pieces, so in linear time: bleach, nbconvert's,
takes quadratic time, 18 s on 128 KB of ``<b>x``). ``clean_html`` replaces nbconvert's bleach-based filter of the
same name, which nbconvert's templates apply to HTML outputs and raw cells. ``install(c)``
(nbgrader_config.py) registers both filters for every ``HTMLExporter`` the configuration reaches:
``generate_feedback``'s, the formgrader's (it builds ``HTMLExporter(config=...)`` from the same file) and
``jupyter nbconvert --config nbgrader_config.py``'s; and ``SafePage``, a preprocessor that leaves a page
only inert outputs and cell metadata of a known form, whatever the notebook file says.

Kept: text formatting, lists, tables, headings, code, links to http(s)/mailto/relative URLs, images from
http(s), relative URLs or ``data:image/png|jpeg|gif`` only. Gone: script, style, iframe, object, embed,
form and its controls, svg, math, event handlers, ``style`` and ``data-*`` attributes, any class but
code highlighting's, ``javascript:``/``vbscript:``/``data:`` links. A student's ``id`` is prefixed with
``student-`` (and ``#`` links to it), so no element of theirs takes the id of one of the page's own
(the formgrader finds its score boxes by the grade id). MathJax keeps working: formulas are text.

Work is bounded: a markdown cell longer than ``MAX_MARKDOWN_CHARS`` is shown as escaped text, not
rendered (mistune is linear but slow, about 1.5 s for 64 KB of the worst input found); a page shows at
most ``MAX_PAGE_MARKDOWN_CHARS`` of markdown, ``MAX_PAGE_CODE_CHARS`` of code and ``MAX_PAGE_OUTPUT_CHARS``
of outputs (``SafePage``), and HTML longer than ``MAX_HTML_CHARS`` is cut before cleaning.
"""
from __future__ import annotations

import html
import re

import nh3
from jinja2 import pass_context
from nbconvert.preprocessors import Preprocessor

MAX_MARKDOWN_CHARS = 64 * 1024  # one cell's markdown rendered as markdown; longer is shown as text
# What one page shows of a notebook (SafePage): past these, a cell's markdown, code or outputs are not shown,
# a line says so. A notebook of this course shows about 20 KB; a page stays a few MB whatever the notebook.
MAX_PAGE_MARKDOWN_CHARS = 512 * 1024
MAX_PAGE_CODE_CHARS = 512 * 1024
MAX_CODE_CHARS = 64 * 1024  # one code cell's source shown
MAX_PAGE_OUTPUT_CHARS = 2 * 2**20  # outputs' text and images, all cells together
MAX_HTML_CHARS = 2 * 2**20  # HTML cleaned in one call; longer is cut first
PIECE_CHARS = 8 * 1024  # cleaned at once (clean_html): a rendered markdown cell of this course is under 4 KB

TAGS = {"a", "abbr", "b", "blockquote", "br", "caption", "code", "col", "colgroup", "dd", "del", "details",
        "div", "dl", "dt", "em", "figcaption", "figure", "h1", "h2", "h3", "h4", "h5", "h6", "hr", "i", "img",
        "ins", "kbd", "li", "mark", "ol", "p", "pre", "q", "s", "samp", "small", "span", "strong", "sub",
        "summary", "sup", "table", "tbody", "td", "tfoot", "th", "thead", "tr", "u", "ul", "var"}
ATTRIBUTES = {"a": {"href", "title"}, "img": {"src", "alt", "title", "width", "height"},
              "td": {"colspan", "rowspan", "align"}, "th": {"colspan", "rowspan", "align", "scope"},
              "ol": {"start"}, "abbr": {"title"}, **{f"h{i}": {"id"} for i in range(1, 7)}}
URL_SCHEMES = {"http", "https", "mailto", "data"}  # data: only on an image (attribute filter below)
# Code highlighting's classes (pygments, as nbconvert's markdown renderer writes them) and the heading anchor.
try:
    from pygments.token import STANDARD_TYPES

    _PYGMENTS = {name for name in STANDARD_TYPES.values() if name}
except ImportError:  # pragma: no cover (nbconvert depends on pygments)
    _PYGMENTS = set()
CLASSES = {"span": _PYGMENTS, "div": {"highlight"}, "a": {"anchor-link"}}
ID_PREFIX = "student-"
_DATA_IMAGE = re.compile(r"data:image/(?:png|jpeg|gif);base64,[A-Za-z0-9+/=\s]*\Z", re.I)
_SPACE = re.compile(r"[\x00-\x20\x7f]+")


def _attribute(tag: str, attr: str, value: str) -> str | None:
    if attr == "id":
        return ID_PREFIX + value
    if tag == "a" and attr == "href":
        flat = _SPACE.sub("", value).lower()
        if flat.startswith("data:"):
            return None
        if value.startswith("#"):
            return "#" + ID_PREFIX + value[1:]
    if tag == "img" and attr == "src" and _SPACE.sub("", value).lower().startswith("data:"):
        return value if _DATA_IMAGE.match(value.strip()) else None
    return value


_CLEANER = nh3.Cleaner(tags=TAGS, attributes=ATTRIBUTES, url_schemes=URL_SCHEMES, attribute_filter=_attribute,
                       allowed_classes=CLASSES, clean_content_tags={"script", "style", "template", "textarea"},
                       strip_comments=True, link_rel="noopener noreferrer nofollow")


def pieces(text: str, size: int = PIECE_CHARS):
    """``text`` in consecutive pieces of at most ``size`` characters, each cut after a line end (else before
    a tag) near its end where there is one."""
    start = 0
    while len(text) - start > size:
        end = start + size
        cut = text.rfind("\n", end - size // 4, end) + 1 or text.rfind("<", end - size // 4, end)
        end = cut if cut > start else end
        yield text[start:end]
        start = end
    yield text[start:]


def clean_html(fragment) -> str:
    """``fragment`` (HTML, str or bytes) with only the allow-list's tags, attributes and URLs; at most
    ``MAX_HTML_CHARS`` of it, cleaned in pieces of ``PIECE_CHARS``. html5ever (under nh3) takes time
    quadratic in how deeply tags nest, and 256 KB of ``<b>x`` nests 65,536 deep: piece by piece the time is
    linear in the length. Each piece is cleaned on its own (its open tags closed, its escaped text and
    complete tags only), so pieces put together are safe as each is; a tag open across a cut is closed at it."""
    text = fragment.decode("utf-8", "replace") if isinstance(fragment, bytes) else str(fragment)
    cut = len(text) > MAX_HTML_CHARS
    cleaned = "".join(_CLEANER.clean(piece) for piece in pieces(text[:MAX_HTML_CHARS]))
    return cleaned + (f"<p><em>... cut at {MAX_HTML_CHARS} characters ...</em></p>" if cut else "")


# TeX commands that make a link, set a class, style or id, or load code, in MathJax 2 (which the formgrader
# page loads from a CDN, the html extension autoloaded) or 3: written out as text in a student's formula.
_TEX_ACTIVE = re.compile(r"\\(href|class|cssId|style|require|unicode|data|html|mmlToken|bbox|toggle|"
                         r"texttip|statusline|tooltip|fontface)(?![A-Za-z])")


def inert_tex(text: str) -> str:
    """``\\href`` and its kind in (cleaned, so entity-free) HTML text shown as ``\\backslash href``."""
    return _TEX_ACTIVE.sub(lambda m: r"\backslash{}\mathrm{" + m.group(1) + "}", text)


# The page as a whole (the feedback exporter's output, after its template ran): the template's layout kept
# (any tag of a page's body but script, style and embedding ones; classes and ids), no script, handler,
# style attribute, form or script URL, whatever route put it there. The <head> is the template's own.
_PAGE_TAGS = TAGS | {"section", "article", "aside", "header", "footer", "main", "nav", "label", "center",
                     "font", "big", "cite", "dfn", "tt", "strike", "bdi", "bdo", "ruby", "rt", "rp", "wbr",
                     "time", "figure", "address", "hgroup"}
_PAGE_ATTRIBUTES = {"*": {"class", "id", "name", "title", "role", "tabindex", "lang", "dir", "align"},
                    "a": {"href"}, "img": {"src", "alt", "width", "height"}, "td": {"colspan", "rowspan"},
                    "th": {"colspan", "rowspan", "scope"}, "ol": {"start"}}


def _page_attribute(tag: str, attr: str, value: str) -> str | None:
    if tag == "a" and attr == "href" and _SPACE.sub("", value).lower().startswith("data:"):
        return None
    if tag == "img" and attr == "src" and _SPACE.sub("", value).lower().startswith("data:"):
        return value if _DATA_IMAGE.match(value.strip()) else None
    return value


_PAGE_CLEANER = nh3.Cleaner(tags=_PAGE_TAGS, attributes=_PAGE_ATTRIBUTES, url_schemes=URL_SCHEMES,
                            attribute_filter=_page_attribute, generic_attribute_prefixes={"aria-"},
                            clean_content_tags={"script", "style", "template", "textarea"}, strip_comments=True,
                            link_rel=None)
_BODY = re.compile(r"<body\b[^>]*>(.*)</body>", re.S | re.I)


def clean_page(page: str) -> str:
    """A whole page (a template's output) with its <body> cleaned by the page allow-list; its <head>, which
    holds the template's own scripts (MathJax) and styles, as it is."""
    m = _BODY.search(page)
    if m is None:
        raise ValueError("clean_page: no <body>...</body> in this page (a template without a body?)")
    return page[:m.start(1)] + _PAGE_CLEANER.clean(m.group(1)) + page[m.end(1):]


def as_text(source: str, why: str) -> str:
    """Markdown shown, not rendered: escaped, in a <pre>, with the reason."""
    return f"<p><em>{html.escape(why)}</em></p><pre>{html.escape(source)}</pre>"


def render_markdown(source: str, attachments=None, path: str = "") -> str:
    """Markdown to HTML as nbconvert's HTMLExporter renders it (formulas kept as text for MathJax)."""
    from nbconvert.filters.markdown_mistune import IPythonRenderer, MarkdownWithMath

    renderer = IPythonRenderer(escape=False, attachments=attachments or {}, embed_images=False, path=path,
                               anchor_link_text="¶", exclude_anchor_links=False)
    return MarkdownWithMath(renderer=renderer).render(source)


@pass_context
def markdown2html(context, source) -> str:
    """The ``markdown2html`` filter: rendered, then cleaned; a cell (or a page) over its budget as text."""
    source = source if isinstance(source, str) else str(source)
    resources = context.get("resources")
    if len(source) > MAX_MARKDOWN_CHARS:
        return as_text(source[:MAX_MARKDOWN_CHARS], f"A markdown cell of {len(source):,} characters (more than "
                                                    f"{MAX_MARKDOWN_CHARS:,}), shown as text, cut:")
    cell = context.get("cell") or {}
    attachments = cell.get("attachments") if isinstance(cell, dict) else None
    path = resources.get("metadata", {}).get("path", "") if isinstance(resources, dict) else ""
    try:
        rendered = render_markdown(source, attachments if isinstance(attachments, dict) else None, path)
    except Exception as e:  # nbconvert raises on a missing attachment: the page is still made
        return as_text(source, f"This markdown could not be rendered ({type(e).__name__}: {str(e)[:200]}):")
    return inert_tex(clean_html(rendered))


class SafePage(Preprocessor):
    """The notebook a page is made from: inert outputs only (text and images, capped), no widget state, cell
    metadata the templates read only in a known form (tags, ids), attachments images only, and at most
    ``MAX_PAGE_*`` of markdown, code and outputs (nbconvert parses its whole page again with BeautifulSoup:
    the 32 MiB notebook a submission may be made a 157 MB page, 97 s and 1.5 GB in that parse). Runs on a
    copy nbconvert makes, so the notebook file is untouched."""

    max_output_chars = 20_000

    def preprocess(self, nb, resources):
        from bertgrader.preprocessors import _text_size, make_safe  # here: preprocessors imports nbgrader

        nb.metadata.pop("widgets", None)
        shown = {"markdown": 0, "code": 0, "outputs": 0}
        for index, cell in enumerate(nb.cells):
            meta = cell.get("metadata") if isinstance(cell.get("metadata"), dict) else {}
            tags = meta.get("tags")
            if tags is not None:
                meta["tags"] = [t for t in tags if isinstance(t, str) and re.fullmatch(r"[\w-]{1,64}", t)][:20] \
                    if isinstance(tags, list) else []
            if "id" in cell and not (isinstance(cell.id, str) and re.fullmatch(r"[A-Za-z0-9_-]{1,64}", cell.id)):
                cell.id = f"cell-{index}"
            attachments = cell.get("attachments")
            if attachments is not None:
                kept = {name: {m: v for m, v in bundle.items() if m in ("image/png", "image/jpeg")
                               and isinstance(v, str) and re.fullmatch(r"[A-Za-z0-9+/=\s]*", v)}
                        for name, bundle in attachments.items() if isinstance(bundle, dict)} \
                    if isinstance(attachments, dict) else {}
                cell.attachments = {name: bundle for name, bundle in kept.items() if bundle}
            kind, source = cell.get("cell_type"), cell.get("source", "")
            source = source if isinstance(source, str) else str(source)
            if kind in ("markdown", "raw"):
                size = min(len(source), MAX_MARKDOWN_CHARS)  # the filter shows at most this much of a cell
                if shown["markdown"] + size > MAX_PAGE_MARKDOWN_CHARS:
                    cell.source = (f"*(a cell of {len(source):,} characters, not shown: this page shows at most "
                                   f"{MAX_PAGE_MARKDOWN_CHARS:,} characters of a notebook's markdown)*")
                    cell.attachments = {}
                else:
                    shown["markdown"] += size
            if kind == "code":
                if len(source) > MAX_CODE_CHARS:
                    source = source[:MAX_CODE_CHARS] + f"\n# ... {len(source) - MAX_CODE_CHARS:,} more characters not shown"
                if shown["code"] + len(source) > MAX_PAGE_CODE_CHARS:
                    source = (f"# (a cell of {len(source):,} characters, not shown: this page shows at most "
                              f"{MAX_PAGE_CODE_CHARS:,} characters of a notebook's code)")
                shown["code"] += len(source)
                cell.source = source
                outputs = [_image_checked(make_safe(o, self.max_output_chars))
                           for o in cell.get("outputs", []) if isinstance(o, dict)][:50]
                size = sum(_text_size(o) + sum(len(v) for m, v in o.get("data", {}).items()
                                               if m.startswith("image/") and isinstance(v, str)) for o in outputs)
                if shown["outputs"] + size > MAX_PAGE_OUTPUT_CHARS:
                    outputs = [_note(f"(outputs of {size:,} characters not shown: this page shows at most "
                                     f"{MAX_PAGE_OUTPUT_CHARS:,} characters of a notebook's outputs)")]
                else:
                    shown["outputs"] += size
                cell.outputs = outputs
            elif kind == "raw":
                meta.pop("raw_mimetype", None)  # shown as text, never as HTML
                meta.pop("format", None)
        return nb, resources


def _note(text: str):
    import nbformat

    return nbformat.v4.new_output("stream", name="stdout", text=text + "\n")


def _image_checked(out):
    """An image output whose data is not base64 (it goes into an <img src="data:..."> as is) loses it."""
    data = out.get("data")
    if isinstance(data, dict):
        for mime in ("image/png", "image/jpeg"):
            if mime in data and not (isinstance(data[mime], str) and re.fullmatch(r"[A-Za-z0-9+/=\s]*", data[mime])):
                del data[mime]
    return out


def install(c) -> None:
    """Register the page's filters and ``SafePage`` in the configuration ``c`` (nbgrader_config.py)."""
    c.HTMLExporter.filters = {"markdown2html": "bertgrader.sanitize.markdown2html",
                              "clean_html": "bertgrader.sanitize.clean_html"}
    c.HTMLExporter.preprocessors = ["bertgrader.sanitize.SafePage"]
    c.HTMLExporter.sanitize_html = True
