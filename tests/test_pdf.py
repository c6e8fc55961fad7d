"""The PDF of each edition (`make pdf`: course/pdf.py), read back with pypdf as a reader's viewer reads it.

For each edition, on the PDFs `make pdf` printed from the last `make book` (``BOOK_BUILD_DIR``'s pdf/ folder, or
the repository's _build/pdf; nothing is printed here, and a PDF older than a page of its edition fails):
- it has pages, all of one paper size (A4), and no line of text starts past the right margin (nothing printed
  wider than the paper: a wide box cut at the sheet's edge would leave its text out there);
- its outline (bookmarks) holds the contents, then every page of _toc.yml in order under its built title, each
  at a page after the one before; the contents pages list each title with the page number its bookmark goes to;
- every page after the contents has its number in the footer, counting on from 1, and the chapter's title;
- every font is embedded, and the Chinese edition's text is set in a CJK font (Noto CJK);
- the formulas are typeset: MathJax's fonts are in it and no TeX source shows as text;
- README's line for it has its page count and size.
"""
from __future__ import annotations

import html
import os
import re
from functools import lru_cache
from pathlib import Path

import pytest

from course import pdf as course_pdf
from course.build import toc_pages

pypdf = pytest.importorskip("pypdf")

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
EDITIONS = list(course_pdf.EDITIONS)
MM = 72 / 25.4  # PDF points in a millimetre
A4 = (210 * MM, 297 * MM)
RIGHT_MARGIN = 15 * MM
FOOTER = 16 * MM  # the bottom margin the footer is printed in
# TeX that would show if a formula were not typeset (MathJax leaves its source in the page until it runs)
RAW_TEX = re.compile(r"\\(frac|sum|mathrm|mathbf|text|operatorname|begin|end|left|right|cdot|sqrt|hat|tilde|"
                     r"underbrace|times|log|exp|in)\b|\$\$|\\\(|\\\[")

# DejaVu draws "fi" as one glyph, which reads back as U+FB01 ("ﬁve experiments")
LIGATURES = str.maketrans({"\ufb00": "ff", "\ufb01": "fi", "\ufb02": "fl", "\ufb03": "ffi", "\ufb04": "ffl"})

pytestmark = pytest.mark.book


def build_root() -> Path:
    given = os.environ.get("BOOK_BUILD_DIR")
    root = Path(given) if given else ROOT / "_build"
    return root.parent if root.name == "html" else root


def html_pages(edition: str) -> list[Path]:
    folder = build_root() / "html" / course_pdf.EDITIONS[edition] if course_pdf.EDITIONS[edition] else build_root() / "html"
    return [folder / f"{page}.html" for page in toc_pages()]


@lru_cache(maxsize=None)
def book(edition: str):
    """The edition's PDF, read once per test process; fails on a missing or stale one."""
    path = build_root() / "pdf" / course_pdf.pdf_path(edition).name
    if not path.exists():
        pytest.fail(f"{path} is missing: run `make pdf` after `make book` (`make check` does both)")
    newest = max(p.stat().st_mtime for p in html_pages(edition))
    if path.stat().st_mtime < newest:
        pytest.fail(f"{path} is older than the {edition} pages it prints: run `make pdf` again")
    return path, pypdf.PdfReader(path)


@lru_cache(maxsize=None)
def lines(edition: str) -> list[list[tuple[float, float, str]]]:
    """Each page's text pieces as (x, y, text), in points from the sheet's lower left corner."""
    _, reader = book(edition)
    out = []
    for page in reader.pages:
        got: list[tuple[float, float, str]] = []

        def visit(text, cm, tm, _font, _size, got=got):
            text = text.translate(LIGATURES)
            if text.strip():
                x = tm[4] * cm[0] + tm[5] * cm[2] + cm[4]
                y = tm[4] * cm[1] + tm[5] * cm[3] + cm[5]
                got.append((x, y, text))
        page.extract_text(visitor_text=visit)
        out.append(got)
    return out


def built_title(path: Path) -> str:
    m = re.search(r"<title>(.*?)</title>", path.read_text(encoding="utf-8"), flags=re.S)
    return html.unescape(m.group(1)).split(" \u2014 ")[0].strip()


def front_pages(reader) -> int:
    """The contents' pages: the first bookmark after the contents' own is page 1."""
    return reader.get_destination_page_number(reader.outline[1])


# --- the tests ---------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("edition", EDITIONS)
def test_pages_are_a4_and_nothing_passes_the_right_margin(edition):
    _, reader = book(edition)
    assert len(reader.pages) > len(toc_pages()), f"{edition}: {len(reader.pages)} pages for {len(toc_pages())} pages of the book"
    sizes = {(round(float(p.mediabox.width)), round(float(p.mediabox.height))) for p in reader.pages}
    assert sizes == {(round(A4[0]), round(A4[1]))}, f"{edition}: page sizes {sizes}, expected A4 only"
    beyond = [(i + 1, round(x / MM), text[:40]) for i, page in enumerate(lines(edition))
              for x, _y, text in page if x > A4[0] - RIGHT_MARGIN + 1]
    assert not beyond, f"{edition}: text starting past the right margin (page, mm from the left, text): {beyond[:8]}"


@pytest.mark.parametrize("edition", EDITIONS)
def test_outline_holds_every_page_in_order(edition):
    _, reader = book(edition)
    top = [item for item in reader.outline if not isinstance(item, list)]
    titles = [" ".join(str(item.title).split()) for item in top]
    expected = [course_pdf.CONTENTS[edition]] + [built_title(p) for p in html_pages(edition)]
    assert titles == expected, f"{edition}: the bookmarks are {titles}, the book's pages {expected}"
    starts = [reader.get_destination_page_number(item) for item in top]
    assert starts[0] == 0 and all(a < b for a, b in zip(starts, starts[1:])), f"{edition}: bookmark pages {starts}"
    assert any(isinstance(item, list) and item for item in reader.outline), f"{edition}: no section under any chapter"


@pytest.mark.parametrize("edition", EDITIONS)
def test_contents_list_each_page_at_its_number(edition):
    _, reader = book(edition)
    front = front_pages(reader)
    assert front >= 1, f"{edition}: no contents page before page 1"
    text = " ".join(" ".join(t for _x, _y, t in page) for page in lines(edition)[:front])
    flat = " ".join(text.split())
    for item in [i for i in reader.outline if not isinstance(i, list)][1:]:
        number = reader.get_destination_page_number(item) - front + 1
        title = " ".join(str(item.title).split())
        assert re.search(re.escape(title) + r"\s*" + str(number) + r"\b", flat), \
            f"{edition}: the contents do not list {title!r} at page {number}"


@pytest.mark.parametrize("edition", EDITIONS)
def test_every_page_has_its_number_and_chapter_in_the_footer(edition):
    _, reader = book(edition)
    front = front_pages(reader)
    top = [i for i in reader.outline if not isinstance(i, list)][1:]
    chapter_at = {}
    for item, nxt in zip(top, top[1:] + [None]):
        end = reader.get_destination_page_number(nxt) if nxt is not None else len(reader.pages)
        for k in range(reader.get_destination_page_number(item), end):
            chapter_at[k] = " ".join(str(item.title).split())
    book_title = course_pdf.book_title(html_pages(edition)[0])  # the landing page's footer
    wrong = []
    for k, page in enumerate(lines(edition)):
        if k < front:
            continue
        footer = " ".join(t.strip() for _x, y, t in sorted(page, key=lambda p: p[0]) if y < FOOTER)
        number = str(k - front + 1)
        if not footer.endswith(number):
            wrong.append((k + 1, footer[-60:], number))
        elif chapter_at[k] not in footer and book_title not in footer:
            wrong.append((k + 1, footer[-60:], chapter_at[k]))
    assert not wrong, f"{edition}: footers that lack their page number or chapter (page, footer, expected): {wrong[:6]}"


def fonts(reader) -> list[tuple[str, str, bool]]:
    """Every font of every page as (subtype, family or name, embedded). Chromium names a Type 3 font (glyphs drawn
    as pictures, inside the file) only in its descriptor's /FontFamily."""
    out = []
    for page in reader.pages:
        for ref in page.get("/Resources", {}).get("/Font", {}).values():
            font = ref.get_object()
            described = font["/DescendantFonts"][0].get_object() if "/DescendantFonts" in font else font
            desc = described.get("/FontDescriptor")
            desc = desc.get_object() if desc is not None else {}
            subtype = str(font.get("/Subtype"))
            if subtype == "/Type3":
                out.append((subtype, str(desc.get("/FontFamily", "")), True))
            else:
                out.append((subtype, str(font.get("/BaseFont")).split("+")[-1],
                            any(k in desc for k in ("/FontFile", "/FontFile2", "/FontFile3"))))
    return out


@pytest.mark.parametrize("edition", EDITIONS)
def test_fonts_embedded_and_chinese_in_a_cjk_font(edition):
    """Every font is in the file; text is set in real fonts (Type 3 pictures only for MathJax's formula glyphs,
    which are drawn that way by Chromium); the Chinese in Noto Sans CJK SC (course/pdf_font.py)."""
    _, reader = book(edition)
    found = fonts(reader)
    loose = sorted({name for _sub, name, embedded in found if not embedded})
    assert not loose, f"{edition}: fonts not embedded: {loose}"
    pictures = sorted({name for sub, name, _e in found if sub == "/Type3" and not name.startswith("MathJax")})
    assert not pictures, f"{edition}: text drawn as Type 3 glyph pictures (no real font) in {pictures}"
    if edition == "zh_CN":
        assert any(name.startswith("NotoSansCJKsc") for _s, name, _e in found), \
            f"zh_CN: no Noto Sans CJK SC among {sorted({n for _s, n, _e in found})}"
        text = "".join(t for page in lines(edition) for _x, _y, t in page)
        assert len(re.findall(r"[\u4e00-\u9fff]", text)) > 10_000, "zh_CN: hardly any Chinese text"
        assert "注意力" in text, "zh_CN: the text does not read back as written (注意力, attention)"


@pytest.mark.parametrize("edition", EDITIONS)
def test_formulas_typeset(edition):
    """MathJax drew the formulas (its fonts are in the file) and no TeX source shows as text."""
    _, reader = book(edition)
    families = {name for sub, name, _e in fonts(reader) if sub == "/Type3"}
    assert {"MathJax_Main", "MathJax_Math"} <= families, f"{edition}: MathJax's fonts are missing: {sorted(families)}"
    raw = [(i + 1, t[:60]) for i, page in enumerate(lines(edition)) for _x, _y, t in page if RAW_TEX.search(t)]
    assert not raw, f"{edition}: TeX shown as text (page, text): {raw[:6]}"


README_LINE = re.compile(r"`bert-course-(?P<edition>[\w]+)\.pdf`\D{0,12}(?P<pages>[\d,]+) pages, (?P<mb>[\d.]+) MB")


@pytest.mark.parametrize("edition", EDITIONS)
def test_readme_gives_pages_and_size(edition):
    path, reader = book(edition)
    found = {m["edition"]: m for m in README_LINE.finditer(README.read_text(encoding="utf-8"))}
    said = f"`{path.name}`: {len(reader.pages)} pages, {path.stat().st_size / 1e6:.1f} MB"
    assert edition in found, f"README.md gives no size for {path.name}; it should say {said}"
    m = found[edition]
    # the pages to 1% (at least 2): another machine's build may print a number a digit longer, and a line moves
    pages = int(m["pages"].replace(",", ""))
    assert abs(pages - len(reader.pages)) <= max(2, 0.01 * len(reader.pages)), f"README.md: {m.group(0)!r}, the PDF: {said}"
    # the size to 5% (a PDF of the same pages differs by its dates and a build's wall-clock numbers)
    assert abs(float(m["mb"]) * 1e6 - path.stat().st_size) <= 0.05 * path.stat().st_size, \
        f"README.md: {m.group(0)!r}, the PDF: {said}"


def test_readme_line_pattern_reads_what_the_readme_writes():
    m = README_LINE.search("- English, `bert-course-en.pdf`: 1,196 pages, 6.2 MB")
    assert m and m["edition"] == "en" and m["pages"] == "1,196" and m["mb"] == "6.2"
    assert not README_LINE.search("`bert-course-en.pdf` (pages to come)")
