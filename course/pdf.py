"""Each edition of the built book as one PDF: ``python -m course.pdf`` (``make pdf``, after ``make book``).

Every page of the table of contents is opened from disk in headless Chromium, offline (any request for another
host is refused), as a reader opens it: MathJax typesets the formulas, each demo draws its default state, the
page script lays the page out. It is then laid out again for paper (the book's print stylesheet,
``course/_static/print.css``: no chrome, code wrapped, figures and formulas kept whole, answers open) and printed
by Chromium itself (``page.pdf``), A4, with the chapter's title and the page number in each page's footer. The
numbers run on across the book (CSS's page counter, started where the last page ended), so a page printed alone
would number from 1; the contents, printed last and put first, take the page each chapter and each of its
sections starts on from Chromium's own outline of the printed page, and link to it. ``pypdf`` joins the pages
into one file with the outline as bookmarks; a link to another page of the book goes to that page in the PDF.

    python -m course.pdf                  # both editions: _build/pdf/bert-course-en.pdf, bert-course-zh_CN.pdf
    python -m course.pdf --edition en     # one of them

One progress line a page. A page that is missing or older than its source (a book not built, or built before
a change) stops it with the command that builds it.
"""
from __future__ import annotations

import argparse
import html
import io
import re
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import unquote, urlparse

from course import pdf_font
from course.build import toc_pages
from course.editions import HTML_LANG as LANG  # each edition's lang attribute

ROOT = Path(__file__).resolve().parents[1]
BUILD = ROOT / "_build"
OUT = BUILD / "pdf"
PRINT_CSS = Path(__file__).with_name("_static") / "print.css"
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync"]
EDITIONS = {"en": "", "zh_CN": "zh_CN"}  # edition: its folder under _build/html
CONTENTS = {"en": "Contents", "zh_CN": "目录"}

# A4 with 15 mm sides. Chromium lays the page out at the printed column's width divided by SCALE: 0.8 gives an
# 850-px column, about the desktop page's, so each figure is its wide version and a line holds what it holds on screen.
PAPER = "A4"
MARGIN = "14mm 15mm 16mm 15mm"  # top, right, bottom, left; the footer sits in the bottom margin
SCALE = 0.8
COLUMN_PX = round((210 - 30) / 25.4 * 96 / SCALE)  # 850 CSS px
SHEET_PX = round((297 - 30) / 25.4 * 96 / SCALE)  # a sheet's printed height, 1262 CSS px
LINK_HOST = "course-pdf.invalid"  # the contents' links, https://course-pdf.invalid/<page index>, made internal here
CJK_FAMILY = "Course CJK"  # Noto Sans CJK SC as TrueType, for the CJK characters (course/pdf_font.py)
MIN_ZOOM = 0.6  # a wide box (a printed table, a long formula) is scaled down to fit the column, not below this


class BookNotBuilt(RuntimeError):
    """The book, or what prints it, is not there: the message says what to run."""


@dataclass
class Heading:
    title: str
    page: int  # 0-based, within its own printed page
    children: list["Heading"] = field(default_factory=list)


@dataclass
class Printed:
    """One page of the book, printed: its PDF, its headings (Chromium's outline) and its section anchors."""
    title: str
    pdf: bytes
    pages: int
    headings: list[Heading]
    anchors: dict[str, str]  # an element id in the page -> the heading it is under
    split: int  # tables too wide for the column, set as slices of their columns
    squeezed: int  # boxes scaled down to fit the column
    overflowing: int  # boxes still wider than the column after that (0 in a good build)


def html_dir(edition: str) -> Path:
    return BUILD / "html" / EDITIONS[edition] if EDITIONS[edition] else BUILD / "html"


def source_of(page: str) -> Path:
    for ext in (".md", ".ipynb"):
        if (ROOT / f"{page}{ext}").exists():
            return ROOT / f"{page}{ext}"
    raise FileNotFoundError(f"{page} in _toc.yml has no .md or .ipynb source")


def book_pages(edition: str, stale_ok: bool = False) -> list[Path]:
    """The built pages of an edition in the reading order; a missing one raises BookNotBuilt, and so does one
    older than its source unless stale_ok."""
    folder, missing, stale = html_dir(edition), [], []
    paths = []
    for page in toc_pages():
        path = folder / f"{page}.html"
        if not path.exists():
            missing.append(str(path.relative_to(ROOT)))
        elif not stale_ok and path.stat().st_mtime < source_of(page).stat().st_mtime:
            stale.append(str(path.relative_to(ROOT)))
        paths.append(path)
    if missing or stale:
        what = (f"{len(missing)} page(s) not built ({', '.join(missing[:3])}{', ...' if len(missing) > 3 else ''})"
                if missing else f"{len(stale)} page(s) older than their source ({', '.join(stale[:3])})")
        raise BookNotBuilt(f"the {edition} edition of the book is not built: {what}. Run `make book` first "
                           f"(then `make pdf`), or pass --stale-ok to print the pages as they were built.")
    return paths


def pdf_path(edition: str) -> Path:
    return OUT / f"bert-course-{edition}.pdf"


# --- one page in Chromium ----------------------------------------------------------------------------------

_READY = ("document.documentElement.dataset.courseLayout === 'done' && "
          "!!document.documentElement.dataset.courseMath")

# Run in the page once it is drawn: the print stylesheet applied (the page's own, or the source's for a book
# built before it), the dropdowns and answers opened, the layout redone for paper, a grid too wide for the column
# set in slices, every other box still wider scaled down to fit it, short listings and tables kept on one sheet.
# Returns what it did, what still sticks out, and which section each anchor of the page is in.
_FOR_PAPER = """async ([css, minZoom, sheetPx]) => {
    if (!document.querySelector('link[href*="print.css"]')) {
        const s = document.createElement('style'); s.textContent = css.replace(/@media print/g, '@media all');
        document.head.appendChild(s);
    }
    document.querySelectorAll('details.sd-dropdown, .bert-quiz details').forEach(d => { d.open = true; });
    await document.fonts.ready;
    if (window.courseDemosDrawn) await window.courseDemosDrawn();
    if (window.courseLayout) window.courseLayout();
    await new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)));
    const article = document.querySelector('.bd-article') || document.body;
    const column = article.getBoundingClientRect().width;
    let squeezed = 0, overflowing = 0, split = 0;
    // a grid wider than the column (a row per thing, a column per position) is cut into slices of columns, each
    // led by the row names, one under the other, as a printed book sets it; a table with merged cells is not
    for (const t of [...article.querySelectorAll('table')]) {
        const room = column - Math.max(0, t.getBoundingClientRect().left - article.getBoundingClientRect().left);
        const rows = [...t.rows];
        if (t.scrollWidth <= room + 1 || !rows.length || t.closest('.static-demo')) continue;
        if (rows.some(r => [...r.cells].some(c => c.colSpan > 1 || c.rowSpan > 1))) continue;
        const widths = [...rows[0].cells].map(c => c.getBoundingClientRect().width);
        const slices = [];
        let cur = [], used = widths[0];
        for (let i = 1; i < widths.length; i++) {
            if (cur.length && used + widths[i] > room - 8) { slices.push(cur); cur = []; used = widths[0]; }
            cur.push(i); used += widths[i];
        }
        if (cur.length) slices.push(cur);
        if (slices.length < 2) continue;
        let after = t;
        slices.forEach((cols, k) => {
            const c = t.cloneNode(true);
            for (const r of c.rows) [...r.cells].forEach((cell, i) => { if (i > 0 && !cols.includes(i)) cell.remove(); });
            if (k > 0 && c.caption) c.caption.remove();
            c.style.marginBottom = '0.8em';
            after.after(c); after = c;
        });
        t.remove();
        split += 1;
    }
    await new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)));
    // the outermost wide boxes first: scaling one fits what it holds
    const boxes = [...article.querySelectorAll('pre, table, div.math, mjx-container[display="true"], .static-demo, ' +
                                               'figure, img, svg, .cell_output .output, .pst-scrollable-table-container')];
    for (const e of boxes) {
        if (e.closest('[data-course-zoomed]') && e.closest('[data-course-zoomed]') !== e) continue;
        const r = e.getBoundingClientRect(), wide = Math.max(e.scrollWidth, r.width);
        const left = r.left - article.getBoundingClientRect().left;
        const room = column - Math.max(0, left);
        if (wide > room + 1 && r.width > 0) {
            e.style.zoom = Math.max(minZoom, Math.floor(room / wide * 100) / 100);
            e.dataset.courseZoomed = '1';
            squeezed += 1;
        }
    }
    await new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)));
    // what still sticks out: each outermost element past the column's right edge, counted once
    const edge = article.getBoundingClientRect().right + 2;
    const past = e => e.getBoundingClientRect().width > 0 && e.getBoundingClientRect().right > edge;
    for (const e of article.querySelectorAll('*')) {
        if (past(e) && !e.closest('mjx-assistive-mml') && !(e.parentElement && past(e.parentElement))) overflowing += 1;
    }
    // a short listing or table (under a third of a sheet) stays whole, with its frame
    for (const e of article.querySelectorAll('div.cell_input, div.highlight, table, .pst-scrollable-table-container')) {
        if (e.getBoundingClientRect().height < sheetPx / 3) e.style.setProperty('break-inside', 'avoid', 'important');
    }
    const anchors = {};
    for (const s of article.querySelectorAll('[id]')) {
        const sec = s.closest('section');
        const h = sec && sec.querySelector(':scope > h1, :scope > h2, :scope > h3');
        if (h) anchors[s.id] = h.textContent.replace(/#$/, '').trim();
    }
    return {squeezed, overflowing, split, anchors};
}"""


# Every element with CJK text of its own draws it in CJK_FAMILY, ahead of its own fonts (whose Latin it keeps:
# the font covers only the CJK blocks); then the fonts load.
_CJK = """async (family) => {
    const cjk = /[\\u2e80-\\u30ff\\u3400-\\u4dbf\\u4e00-\\u9fff\\uf900-\\ufaff\\ufe30-\\ufe4f\\uff00-\\uffef]/;
    const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
    const owners = new Set();
    for (let n = walker.nextNode(); n; n = walker.nextNode()) {
        if (!cjk.test(n.textContent)) continue;
        owners.add(n.parentElement);
        const select = n.parentElement.closest('select');  // a picker draws its chosen option in its own font
        if (select) owners.add(select);
    }
    for (const e of owners) e.style.fontFamily = '"' + family + '", ' + getComputedStyle(e).fontFamily;
    await Promise.all([400, 700].map(w => document.fonts.load(w + ' 16px "' + family + '"', '中')));
    await document.fonts.ready;
    return owners.size;
}"""


# The headings a printed page shows, in order: what Chromium's outline lists, with their text as the page has it.
_HEADINGS = """() => [...document.querySelectorAll('h1, h2, h3, h4, h5, h6, [role="heading"]')]
    .filter(h => h.getClientRects().length > 0 && getComputedStyle(h).visibility !== 'hidden')
    .map(h => (h.cloneNode(true)))
    .map(c => { c.querySelectorAll('.headerlink').forEach(x => x.remove()); return c; })
    .map(c => c.textContent.replace(/\\s+/g, ' ').trim())"""


def css_string(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", " ") + '"'


def page_css(running_title: str, first_number: int, font_faces: str) -> str:
    """The sheet's size and margins, its footer (the chapter's title left, the page number right) and where the
    page counter starts: CSS's `page` counter, which Chromium counts on from `counter-reset` on the root."""
    return f"""{font_faces}
    @page {{ size: {PAPER}; margin: {MARGIN};
      @bottom-left {{ content: {css_string(running_title)}; font: 9pt "{CJK_FAMILY}", "DejaVu Sans", sans-serif; color: #555; }}
      @bottom-right {{ content: counter(page); font: 9pt "DejaVu Sans", sans-serif; color: #555; }} }}
    html {{ counter-reset: page {first_number - 1}; }}
    /* the theme's printed list of the page's sections: the book's contents list them */
    #jb-print-toc {{ display: none !important; }}
    """


def outline_of(reader) -> list[Heading]:
    """Chromium's outline of a printed page (its headings, nested) with the page each one is on."""
    def walk(items) -> list[Heading]:
        out: list[Heading] = []
        for item in items:
            if isinstance(item, list):
                if out:
                    out[-1].children.extend(walk(item))
                else:
                    out.extend(walk(item))
                continue
            out.append(Heading(" ".join(str(item.title).split()), reader.get_destination_page_number(item)))
        return out
    return walk(reader.outline)


def print_page(browser, path: Path, running_title: str, first_number: int, font_faces: str) -> Printed:
    from pypdf import PdfReader

    context = browser.new_context(viewport={"width": COLUMN_PX, "height": 1100}, color_scheme="light")
    try:
        page = context.new_page()
        refused: list[str] = []
        page.route(re.compile(r"^(https?|wss?|ftp)://"), lambda r: (refused.append(r.request.url), r.abort()))
        page.goto(path.as_uri(), wait_until="load")
        page.wait_for_function(_READY, timeout=60_000)
        for fig in page.locator("[data-demo-figure]").all():
            fig.locator("svg.main-svg").first.wait_for(timeout=30_000)
        page.emulate_media(media="print")
        page.add_style_tag(content=page_css(running_title, first_number, font_faces))
        page.evaluate(_CJK, CJK_FAMILY)
        got = page.evaluate(_FOR_PAPER, [PRINT_CSS.read_text(encoding="utf-8"), MIN_ZOOM, SHEET_PX])
        title = page.evaluate("() => (document.querySelector('.bd-article h1') || {textContent: document.title})"
                              ".textContent.replace(/#$/, '').trim()")
        shown = page.evaluate(_HEADINGS)
        page.evaluate(_CJK, CJK_FAMILY)  # again: a chart redrawn for paper has new text elements
        pdf = page.pdf(prefer_css_page_size=True, print_background=True, scale=SCALE, outline=True, tagged=True)
    finally:
        context.close()
    if refused:
        print(f"  note: {path.name} asked for {len(refused)} address(es) on the network, refused: {refused[:2]}")
    reader = PdfReader(io.BytesIO(pdf))
    headings = outline_of(reader)
    flat = _flatten(headings)
    if len(flat) == len(shown):  # Chromium's outline titles run a heading's text nodes together; the page's own
        for h, text in zip(flat, shown):
            h.title = text
    else:
        print(f"  note: {path.name}: Chromium's outline has {len(flat)} headings, the page shows {len(shown)}")
    return Printed(" ".join(title.split()), pdf, len(reader.pages), headings, got["anchors"],
                   got["split"], got["squeezed"], got["overflowing"])


def _flatten(headings: list[Heading]) -> list[Heading]:
    return [x for h in headings for x in [h, *_flatten(h.children)]]


# --- the contents --------------------------------------------------------------------------------------------

def contents_html(edition: str, book_title: str, entries: list[tuple[int, str, int]], font_faces: str) -> str:
    """The title and the contents: (level, title, page number) each, the number a link to that page."""
    rows = []
    for level, title, number in entries:
        rows.append(f'<li class="l{level}"><a href="https://{LINK_HOST}/{number}"><span class="t">'
                    f'{html.escape(title)}</span><span class="n">{number}</span></a></li>')
    return f"""<!doctype html><html lang="{LANG[edition]}"><head><meta charset="utf-8"><style>{font_faces}
    @page {{ size: {PAPER}; margin: {MARGIN};
      @bottom-right {{ content: counter(page, lower-roman); font: 9pt "DejaVu Sans", sans-serif; color: #555; }} }}
    body {{ font-family: "{CJK_FAMILY}", "DejaVu Sans", sans-serif; font-size: 10.5pt; color: #222; }}
    h1 {{ font-size: 26pt; margin: 30mm 0 4mm; }}
    h2 {{ font-size: 15pt; margin: 12mm 0 4mm; }}
    ul {{ list-style: none; padding: 0; margin: 0; }}
    li a {{ display: flex; gap: 1em; color: inherit; text-decoration: none; break-inside: avoid; }}
    li .t {{ flex: 1; display: flex; }}
    li .t::after {{ content: ""; flex: 1; border-bottom: 1px dotted #999; margin: 0 0 0.3em 0.5em; }}
    li.l1 {{ font-weight: bold; margin-top: 0.7em; }}
    li.l2 {{ padding-left: 1.6em; margin-top: 0.15em; }}
    </style></head><body><h1>{html.escape(book_title)}</h1><h2>{CONTENTS[edition]}</h2>
    <ul>{''.join(rows)}</ul></body></html>"""


# --- one book --------------------------------------------------------------------------------------------------

def book_title(path: Path) -> str:
    """The book's title as the page's <title> ends: "8. 15% and 80/10/10 — BERT, built from scratch"."""
    m = re.search(r"<title>(.*?)</title>", path.read_text(encoding="utf-8"), flags=re.S)
    return html.unescape(m.group(1)).split(" \u2014 ")[-1].strip() if m else "BERT"


def print_edition(browser, edition: str, stale_ok: bool = False) -> Path:
    from pypdf import PdfReader, PdfWriter

    paths = book_pages(edition, stale_ok)
    title = book_title(paths[0])
    font_faces = pdf_font.font_face_css(pdf_font.fonts_for(paths, OUT / "fonts"), CJK_FAMILY)
    printed: list[Printed] = []
    firsts: list[int] = []  # the page number each page starts on
    number = 1
    start = time.time()
    for i, path in enumerate(paths, 1):
        t = time.time()
        running = book_title(path) if i == 1 else _page_title(path)
        p = print_page(browser, path, running, number, font_faces)
        printed.append(p)
        firsts.append(number)
        warn = f", {p.overflowing} box(es) still wider than the column" if p.overflowing else ""
        print(f"{edition} {i:2d}/{len(paths)} {path.relative_to(html_dir(edition)).as_posix():32s} "
              f"{p.pages:3d} pages (p. {number}-{number + p.pages - 1}), {p.split} table(s) split, "
              f"{p.squeezed} box(es) scaled{warn}, "
              f"{time.time() - t:.1f} s", flush=True)
        number += p.pages

    # the contents: each page's title and its sections, at the page number each starts on
    entries = []
    for p, first in zip(printed, firsts):
        top = p.headings[0] if p.headings else Heading(p.title, 0)
        entries.append((1, p.title, first))
        entries += [(2, h.title, first + h.page) for h in top.children]
    with browser.new_context() as context:
        page = context.new_page()
        page.route(re.compile(r"^(https?|wss?|ftp)://"), lambda r: r.abort())
        contents = OUT / f"contents-{edition}.html"  # a file, so that it may load the font files beside it
        OUT.mkdir(parents=True, exist_ok=True)
        contents.write_text(contents_html(edition, title, entries, font_faces), encoding="utf-8")
        page.goto(contents.as_uri(), wait_until="load")
        page.evaluate("document.fonts.ready.then(() => true)")
        front = page.pdf(prefer_css_page_size=True, print_background=True, outline=False, tagged=True)

    writer = PdfWriter()
    writer.append(PdfReader(io.BytesIO(front)), import_outline=False)
    offset = len(writer.pages)  # the contents' pages come before page 1
    for p in printed:
        writer.append(PdfReader(io.BytesIO(p.pdf)), import_outline=False)
    writer.add_outline_item(title=CONTENTS[edition], page_number=0)
    for p, first in zip(printed, firsts):
        top = p.headings[0] if p.headings else Heading(p.title, 0)
        parent = writer.add_outline_item(title=p.title, page_number=offset + first - 1)
        for h in top.children:
            child = writer.add_outline_item(title=h.title, page_number=offset + first - 1 + h.page, parent=parent)
            for g in h.children:
                writer.add_outline_item(title=g.title, page_number=offset + first - 1 + g.page, parent=child)
    _internal_links(writer, paths, printed, firsts, offset)
    writer.add_metadata({"/Title": title, "/Creator": "course.pdf (Chromium, pypdf)"})
    writer._root_object[_name("/Lang")] = _text(LANG[edition])
    writer.page_mode = "/UseOutlines"
    writer.compress_identical_objects(remove_duplicates=True, remove_unreferenced=True)
    OUT.mkdir(parents=True, exist_ok=True)
    out = pdf_path(edition)
    tmp = out.with_suffix(".pdf.part")
    with open(tmp, "wb") as f:
        writer.write(f)
    tmp.replace(out)
    total = len(writer.pages)
    print(f"{edition}: {out.relative_to(ROOT)}, {total} pages ({offset} of contents), "
          f"{out.stat().st_size / 1e6:.1f} MB, {time.time() - start:.0f} s")
    return out


def _page_title(path: Path) -> str:
    m = re.search(r"<title>(.*?)</title>", path.read_text(encoding="utf-8"), flags=re.S)
    return html.unescape(m.group(1)).split(" \u2014 ")[0].strip() if m else path.stem


def _name(s: str):
    from pypdf.generic import NameObject
    return NameObject(s)


def _text(s: str):
    from pypdf.generic import TextStringObject
    return TextStringObject(s)


def _internal_links(writer, paths: list[Path], printed: list[Printed], firsts: list[int], offset: int) -> None:
    """Links that Chromium wrote as addresses made into jumps inside the PDF: the contents' to their page, a
    page's link to another page of the book (file://.../chapters/07_mlm.html#anchor) to that page, at the
    section its anchor names. A link to any other local file (a notebook download, an image) is dropped: on
    paper it would point into the disk of the machine that printed it."""
    from pypdf.generic import ArrayObject, NameObject, NullObject

    files = {}  # a built page's file -> (its first page number, {heading: page number}, {anchor: heading})
    for path, p, first in zip(paths, printed, firsts):
        sections: dict[str, int] = {}
        for h in _flatten(p.headings):
            sections.setdefault(h.title, first + h.page)
        files[path.resolve()] = (first, sections, p.anchors)

    def target(uri: str) -> int | None:
        """The page number a link goes to; None for a web address (kept), 0 for another local file (dropped)."""
        u = urlparse(uri)
        if u.scheme == "https" and u.netloc == LINK_HOST:
            return int(u.path.strip("/"))
        if u.scheme != "file":
            return None
        found = files.get(Path(unquote(u.path)).resolve())
        if found is None:
            return 0
        first, sections, anchors = found
        heading = anchors.get(unquote(u.fragment)) if u.fragment else None
        return sections.get(heading, first) if heading else first

    for page in writer.pages:
        if "/Annots" not in page:
            continue
        keep = ArrayObject()
        for ref in page["/Annots"]:
            a = ref.get_object()
            action = a.get("/A")
            uri = action.get_object().get("/URI") if action is not None else None
            number = None if uri is None else target(str(uri))
            if number is None:
                keep.append(ref)
            elif number >= 1:
                del a["/A"]
                a[NameObject("/Dest")] = ArrayObject([writer.pages[offset + number - 1].indirect_reference,
                                                      NameObject("/XYZ"), NullObject(), NullObject(), NullObject()])
                keep.append(ref)
        page[NameObject("/Annots")] = keep


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m course.pdf", description=__doc__.split("\n\n")[0])
    parser.add_argument("--edition", choices=sorted(EDITIONS), action="append",
                        help="print only this edition (default: both)")
    parser.add_argument("--stale-ok", action="store_true",
                        help="print pages older than their source as they were built (default: stop, say make book)")
    args = parser.parse_args(argv)
    editions = args.edition or list(EDITIONS)
    try:
        for edition in editions:
            book_pages(edition, args.stale_ok)
        if not Path(CHROMIUM).exists():
            raise BookNotBuilt(f"{CHROMIUM} is missing: install Debian's chromium (apt-get install chromium)")
        from playwright.sync_api import sync_playwright

        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
            try:
                for edition in editions:
                    print_edition(browser, edition, args.stale_ok)
            finally:
                browser.close()
    except (BookNotBuilt, pdf_font.FontMissing) as e:
        print(f"course.pdf: {e}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
