"""Pages are cleaned as HTML after rendering (bertgrader.sanitize), with bounded work: the fast checks. The
attacked class of tests/test_grading_security.py opens the real feedback and formgrader pages in Chromium."""
from __future__ import annotations

import re

import nbformat
import pytest
from traitlets.config import Config

from bertgrader import sanitize
from bertgrader.preprocessors import MAX_MARKDOWN_SOURCE, _inert_markdown
from bertgrader.sanitize import as_text, clean_html, clean_page, inert_tex

# Each holds a route to script; none may survive cleaning.
ATTACKS = {
    "script": "<script>document.title='pwned'</script>",
    "handler": "<img src=x onerror=\"document.title='pwned'\">",
    "javascript_link": '<a href="javascript:document.title=\'pwned\'">x</a>',
    "entity_link": '<a href="java&#x73;cript:document.title=\'pwned\'">x</a>',
    "decimal_entity_link": '<a href="&#106;avascript:document.title=\'pwned\'">x</a>',
    "spaced_link": '<a href=" \tJaVaScRiPt:document.title=\'pwned\'">x</a>',
    "vbscript": '<a href="vbscript:msgbox(1)">x</a>',
    "data_link": '<a href="data:text/html,<script>document.title=\'pwned\'</script>">x</a>',
    "data_html_image": '<img src="data:text/html;base64,PHNjcmlwdD4=">',
    "svg_image": '<img src="data:image/svg+xml;base64,PHN2ZyBvbmxvYWQ9YWxlcnQoMSk+">',
    "svg": "<svg onload=\"document.title='pwned'\"><a href='javascript:x'><text>t</text></a></svg>",
    "iframe": "<iframe src=\"javascript:document.title='pwned'\"></iframe>",
    "object": '<object data="javascript:x"></object><embed src="javascript:x">',
    "form": '<form action="javascript:x"><input name=a><button formaction="javascript:x">b</button></form>',
    "style_tag": "<style>body{display:none}</style>",
    "style_attr": '<div style="position:fixed;top:0;left:0;width:100%;height:100%">cover</div>',
    "meta": '<meta http-equiv="refresh" content="0;url=javascript:x">',
    "base": '<base href="javascript:x/">',
    "math": "<math><mtext><a href='javascript:x'>m</a></mtext></math>",
    "bootstrap_data": '<a data-toggle="tooltip" data-html="true" title="&lt;img src=x onerror=alert(1)&gt;">t</a>',
    "page_class": '<div class="navbar-fixed-top full-credit">fake</div>',
    "template": "<template><script>document.title='pwned'</script></template>",
    "comment": "<!--><script>document.title='pwned'</script>-->",
}
LIVE_TAGS = {"script", "iframe", "frame", "object", "embed", "applet", "form", "input", "button", "textarea", "select",
             "svg", "math", "style", "link", "meta", "base", "template", "portal"}
_URL_ATTRS = {"href", "src", "action", "formaction", "data", "xlink:href", "background", "poster", "srcset"}


def live_routes(page: str, *, classes: bool = False, data_attributes: bool = True) -> list[str]:
    """What in ``page`` (HTML, parsed as a browser tokenises it, entities decoded) could run script or restyle
    the page: a tag from LIVE_TAGS, an event handler, a style or data-* attribute, a URL whose scheme is
    javascript:, vbscript: or data: (but an image's data:image/png|jpeg|gif), and with ``classes`` a class
    that is not code highlighting's (``data_attributes=False``: a template's own data-* attributes pass)."""
    from html.parser import HTMLParser

    found = []

    class Finder(HTMLParser):
        def handle_starttag(self, tag, attrs):
            if tag in LIVE_TAGS:
                found.append(f"<{tag}>")
            for name, value in attrs:
                value = value or ""
                flat = re.sub(r"[\x00-\x20\x7f]+", "", value).lower()
                if name.startswith("on") or name == "style" or data_attributes and name.startswith("data-"):
                    found.append(f"<{tag} {name}=...>")
                elif name in _URL_ATTRS and re.match(r"(javascript|vbscript|data):", flat) and not (
                        tag == "img" and name == "src" and re.match(r"data:image/(png|jpeg|gif);base64,", flat)):
                    found.append(f"<{tag} {name}={value[:60]!r}>")
                elif classes and name == "class" and set(value.split()) - sanitize._PYGMENTS - {"highlight", "anchor-link"}:
                    found.append(f"<{tag} class={value!r}>")

        handle_startendtag = handle_starttag

    Finder(convert_charrefs=True).feed(page)
    return found


@pytest.mark.parametrize("name", sorted(ATTACKS))
def test_clean_html_keeps_no_route_to_script(name):
    cleaned = clean_html(ATTACKS[name])
    assert not live_routes(cleaned, classes=True), f"{name}: {cleaned}"


def test_clean_html_keeps_what_markdown_renders():
    text = ('<h2 id="Part-1">Part 1</h2><p><b>b</b> <em>e</em> <code>x&lt;y</code> <a href="https://x.org/a?b=1">l</a> '
            '<a href="#Part-1">up</a></p><ul><li>i</li></ul><table><tr><td colspan="2">c</td></tr></table>'
            '<img src="data:image/png;base64,iVBORw0KGgo=" alt="p"><div class="highlight"><pre>'
            '<span class="kn">import</span></pre></div>')
    cleaned = clean_html(text)
    for kept in ('<h2 id="student-Part-1">', "<b>b</b>", "<em>e</em>", "<code>x&lt;y</code>", 'href="https://x.org/a?b=1"',
                 'href="#student-Part-1"', "<li>i</li>", 'colspan="2"', 'src="data:image/png;base64,iVBORw0KGgo="',
                 '<div class="highlight">', '<span class="kn">import</span>'):
        assert kept in cleaned, f"{kept!r} lost: {cleaned}"


def test_clean_html_bounds_what_it_cleans():
    cleaned = clean_html("<b>x" * (sanitize.MAX_HTML_CHARS // 2))  # twice the cap
    assert f"cut at {sanitize.MAX_HTML_CHARS} characters" in cleaned
    assert cleaned.count("x") <= sanitize.MAX_HTML_CHARS // 4


def test_tex_that_makes_links_or_loads_code_is_written_out():
    text = inert_tex(r"$\href{javascript:x}{a}$ $$\class{navbar}{b}\style{color:red}{c}\require{x}\unicode{x}$$ "
                     r"$\hrefs$ $W^O$")
    assert not re.search(r"\\(href|class|style|require|unicode)\{", text), text
    assert r"\hrefs" in text and "$W^O$" in text


def _page(cells, template="classic"):
    """A notebook rendered by an HTMLExporter configured as nbgrader_config.py configures every one."""
    from nbconvert.exporters import HTMLExporter

    c = Config()
    sanitize.install(c)
    nb = nbformat.v4.new_notebook(cells=cells)
    return HTMLExporter(config=c, template_name=template).from_notebook_node(nb)[0]


def _student_part(page: str) -> str:
    """The page less its template's <head> (its own scripts: MathJax, require.js)."""
    return page[page.index("<body"):]


def test_rendered_markdown_is_cleaned_in_a_page():
    cells = [nbformat.v4.new_markdown_cell(src) for src in ATTACKS.values()]
    cells += [nbformat.v4.new_markdown_cell("[click](java&#x73;cript:document.title='pwned')\n\n"
                                            "[data](data:text/html,x) $\\href{javascript:x}{y}$\n\n$W^O = x$")]
    body = _student_part(_page(cells))
    assert not live_routes(body), live_routes(body)
    assert "$W^O = x$" in body  # formulas reach MathJax as text


def test_outputs_attachments_and_metadata_reach_a_page_inert():
    code = nbformat.v4.new_code_cell("x", outputs=[
        nbformat.v4.new_output("display_data", data={"text/html": "<script>document.title='pwned'</script>",
                                                     "application/javascript": "document.title='pwned'",
                                                     "image/svg+xml": "<svg onload=alert(1)/>",
                                                     "text/markdown": "[x](javascript:alert(1))",
                                                     "text/plain": "<b>plain</b>"}),
        nbformat.v4.new_output("display_data", data={"image/png": '" onerror="document.title=\'pwned\''}),
    ])
    code.metadata["tags"] = ['"><script>document.title=\'pwned\'</script>']
    md = nbformat.v4.new_markdown_cell("![a](attachment:a.png)")
    md.attachments = {"a.png": {"text/html": "<script>x</script>", "image/png": "\" onerror=alert(1)"}}
    raw = nbformat.v4.new_raw_cell("<script>document.title='pwned'</script>")
    raw.metadata["raw_mimetype"] = "text/html"
    body = _student_part(_page([code, md, raw]))
    assert not live_routes(body), live_routes(body)
    assert "onerror" not in body.replace("onerror=alert(1)", "")  # only as the text of the raw cell
    assert "&lt;b&gt;plain&lt;/b&gt;" in body  # text shown as text


def test_markdown_rendering_is_bounded_per_cell_and_per_page():
    big = "*a" * sanitize.MAX_MARKDOWN_CHARS  # twice one cell's budget: not rendered
    body = _student_part(_page([nbformat.v4.new_markdown_cell(big)]))
    assert f"more than {sanitize.MAX_MARKDOWN_CHARS:,}" in body and "<em>" not in body.split("shown as text")[1]
    one = "*a* " * (sanitize.MAX_MARKDOWN_CHARS // 5)  # each cell within its own budget
    cells = [nbformat.v4.new_markdown_cell(one) for _ in range(sanitize.MAX_PAGE_MARKDOWN_CHARS // len(one) + 2)]
    body = _student_part(_page(cells))
    rendered = body.count("<em>a</em>")
    assert 0 < rendered <= sanitize.MAX_PAGE_MARKDOWN_CHARS // 4, rendered
    assert f"this page shows at most {sanitize.MAX_PAGE_MARKDOWN_CHARS:,} characters of a notebook's markdown" in body


def test_a_page_is_bounded_whatever_the_notebook():
    """The largest notebook a submission may be (32 MiB, 1,000 cells) gives a page of a few MB: code, outputs
    and markdown each shown up to a page budget (nbconvert parses the whole page again with BeautifulSoup)."""
    from bertgrader.submission import MAX_CELLS, MAX_NOTEBOOK_BYTES

    per = MAX_NOTEBOOK_BYTES // MAX_CELLS // 2
    text = nbformat.v4.new_output("stream", name="stdout", text="o" * 20_000)
    cells = [nbformat.v4.new_code_cell("x = 1\n" * (per // 6), outputs=[text] * 50) for _ in range(MAX_CELLS // 2)]
    cells += [nbformat.v4.new_markdown_cell("<b>x" * (per // 4)) for _ in range(MAX_CELLS // 2)]
    page = _page(cells)
    budget = sanitize.MAX_PAGE_MARKDOWN_CHARS + sanitize.MAX_PAGE_CODE_CHARS + sanitize.MAX_PAGE_OUTPUT_CHARS
    assert len(page) < 4 * budget + 2 * 2**20, len(page)  # escaping and markup at most quadruple a character
    assert "characters of a notebook's code" in page and "characters of a notebook's outputs" in page


def test_as_text_escapes():
    assert "<script>" not in as_text("<script>x</script>", "why <b>")


def test_clean_page_keeps_the_templates_head_and_cleans_its_body():
    page = ("<!DOCTYPE html><html><head><script>window.MathJax = {};</script><style>b{}</style></head>"
            '<body><div class="panel" id="toc"><a name="top"></a>' + "".join(ATTACKS.values()) + "</div></body></html>")
    cleaned = clean_page(page)
    head, body = cleaned.split("<body>", 1)
    assert "<script>window.MathJax = {};</script>" in head and "<style>b{}</style>" in head
    assert '<div class="panel" id="toc">' in body and '<a name="top"></a>' in body
    assert not live_routes(body), live_routes(body)
    with pytest.raises(ValueError, match="no <body>"):
        clean_page("<html><head></head></html>")


def test_markdown_source_in_the_autograded_notebook_is_cut_and_cleaned():
    cell = _inert_markdown(nbformat.v4.new_markdown_cell("<b>x" * (MAX_MARKDOWN_SOURCE // 2)))  # twice the cap
    assert cell.source.count("x") <= MAX_MARKDOWN_SOURCE // 4 and "cut by the grader" in cell.source
    cell = _inert_markdown(nbformat.v4.new_markdown_cell("[x](java&#x73;cript:alert(1)) <script>y</script>"))
    assert not re.search(r"<script|javascript:", cell.source, re.I), cell.source
    plain = "Plain text with $x < y$ and `code`."
    assert _inert_markdown(nbformat.v4.new_markdown_cell(plain)).source == plain


def test_html_is_cleaned_in_bounded_pieces_and_an_attack_across_a_cut_stays_dead():
    """clean_html works piece by piece (html5ever's time grows with the square of the nesting depth inside
    one piece): the pieces are the text, none longer than PIECE_CHARS; an attack cut in two by a piece's end,
    at any offset, is still cleaned."""
    text = "<b>x" * 20_000
    parts = list(sanitize.pieces(text))
    assert "".join(parts) == text and max(map(len, parts)) <= sanitize.PIECE_CHARS and len(parts) >= 9
    for name, attack in ATTACKS.items():
        text = "<p>before" + attack + "<p>after</p>"
        for cut in range(len(text) + 1):  # a piece may end anywhere (no line end or tag near its end)
            cleaned = sanitize._CLEANER.clean(text[:cut]) + sanitize._CLEANER.clean(text[cut:])
            assert not live_routes(cleaned, classes=True), f"{name} cut at {cut}: {cleaned}"
    assert len(list(sanitize.pieces("a" * 3 * sanitize.PIECE_CHARS))) == 3  # no place to cut: cut at the size
