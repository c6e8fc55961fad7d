"""Figures that say their point (issue 30, section 6): every figure a chapter draws has a caption that states
what it shows, a sentence with the numbers the cell computed, and alt text that starts with that sentence,
not with the axes and ticks a reader who cannot see the figure would have to read it from.

How a figure gets its words: the chapter's cell calls ``course.plots.describe(fig, caption)`` before showing it;
``describe_figure`` makes the alt text that sentence followed by what it reads from the figure (its kind, axes,
categories). A figure the chapter did not describe falls back on its chart titles joined by ";" (or, with none,
on the axes alone) as its caption: what ``caption_problems`` refuses. That typed numbers stay out of those
sentences is tests/test_prose_numbers.py's work (``code_prose``).
"""
from __future__ import annotations

import html
import os
import re
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import pytest

from course import plots

ROOT = Path(__file__).resolve().parents[1]
CHART_WORDS = ("Figure: a ", "Figure of ")  # how describe_figure's reading of the axes begins


def caption_problems(caption: str, alt: str) -> list[str]:
    """What is wrong with a figure's caption and alt text (empty: nothing). The caption must be a statement: a
    sentence (a full stop at its end) of several words, carrying a number; the alt text must start with it,
    not with the chart's kind and axes."""
    caption, alt = " ".join(caption.split()), " ".join(alt.split())
    problems = []
    if not caption.endswith("."):
        problems.append("the caption is not a sentence (chart titles, a legend?)")
    if len(caption.split()) < 6:
        problems.append("the caption is a few words, not a finding")
    if not re.search(r"\d", caption):
        problems.append("the caption carries no number")
    if alt.startswith(CHART_WORDS):
        problems.append("the alt text is only the chart's axes and ticks")
    if not alt.startswith(caption):
        problems.append("the alt text does not start with what the caption says the figure shows")
    return problems


def test_the_checker_refuses_titles_a_legend_and_axes():
    axes_only = "Figure: a line chart of 2 lines; horizontal axis: step (0, 500, 1000); vertical axis: loss."
    assert caption_problems("losses; held-out MLM; held-out NSP", "Figure of 3 panels. Panel 1: a line chart.")
    assert caption_problems("mean over 3 seeds, 300 steps each", "Figure: a bar chart of 4 bars.")
    assert caption_problems(axes_only, axes_only)  # no title at all: the axes are the caption
    assert caption_problems("The loss falls.", "The loss falls. " + axes_only)  # no number
    finding = "The loss falls from 10.31 to 4.02 in 1,800 steps."
    assert caption_problems(finding, axes_only)  # a finding, but the alt text does not say it
    assert caption_problems(finding, finding + " " + axes_only) == []


def test_a_described_figure_s_alt_text_says_its_finding_first():
    fig, ax = plt.subplots()
    ax.plot([0, 1, 2], [3.0, 2.0, 1.5], label="loss")
    ax.set(xlabel="step", ylabel="loss", title="losses")
    ax.legend()
    caption, alt = plots.describe_figure(fig)
    assert caption == "losses" and caption_problems(caption, alt)  # undescribed: its title, refused
    plots.describe(fig, "The loss halves in 2 steps, from 3.0 to 1.5.")
    caption, alt = plots.describe_figure(fig)
    plt.close(fig)
    assert caption == "The loss halves in 2 steps, from 3.0 to 1.5."
    assert alt.startswith(caption + " Figure: a line chart") and "step" in alt  # then how it is drawn
    assert caption_problems(caption, alt) == []


def _book_html() -> Path:
    given = os.environ.get("BOOK_BUILD_DIR")
    root = Path(given) if given else ROOT / "_build"
    html_dir = root / "html" if (root / "html").is_dir() else root
    if not (html_dir / "chapters").is_dir():
        pytest.fail(f"{html_dir} holds no built book: run `make book` first (`make check` does)")
    return html_dir


FIGURE = re.compile(r"<figure[^>]*>(?P<body>.*?)</figure>", re.S)


def chapter_figures(page: Path) -> list[tuple[str, str, str]]:
    """(image, caption, alt text) of every figure a chapter's cell drew on the built page (the concept drawings,
    inline SVG written by course/drawings.py, carry their own words and are not read here)."""
    out = []
    for m in FIGURE.finditer(page.read_text(encoding="utf-8")):
        img = re.search(r"<img\b[^>]*>", m.group("body"))
        if img is None:
            continue
        src = re.search(r'\bsrc="([^"]*)"', img.group(0))
        alt = re.search(r'\balt="([^"]*)"', img.group(0))
        cap = re.search(r"<figcaption[^>]*>(.*?)</figcaption>", m.group("body"), re.S)
        text = re.sub(r"<[^>]+>", " ", cap.group(1)) if cap else ""
        text = html.unescape(text).replace("\u00b6", "").replace("#", " ")  # the heading link's mark
        out.append((src.group(1) if src else "?", text.strip(), html.unescape(alt.group(1)) if alt else ""))
    return out


@pytest.mark.book
def test_every_chapter_figure_says_what_it_shows():
    pages = sorted((_book_html() / "chapters").glob("*.html"))
    assert pages
    figures, bad = 0, []
    for page in pages:
        for src, caption, alt in chapter_figures(page):
            figures += 1
            problems = caption_problems(caption, alt)
            if problems:
                bad.append(f"{page.name} {src}: {'; '.join(problems)}\n    caption: {caption[:160]}\n    alt: {alt[:160]}")
    assert figures >= 20, f"only {figures} figures found: is this the built book?"
    assert not bad, "figures whose caption or alt text does not say what they show:\n" + "\n".join(bad)


# --- the Chinese edition's figures (issue 31 §2) ---------------------------------------------------------------
CJK = re.compile(r"[\u4e00-\u9fff]")


def chinese_caption_problems(caption: str, alt: str) -> list[str]:
    """``caption_problems`` for a Chinese figure: a sentence (a full stop, 。), in Chinese, with a number, and
    the alt text starting with it."""
    problems = []
    if not caption.endswith("。"):
        problems.append("the caption is not a Chinese sentence")
    if not CJK.search(caption) or not CJK.search(alt):
        problems.append("the caption or the alt text is not in Chinese")
    if not re.search(r"\d", caption):
        problems.append("the caption carries no number")
    if not alt.startswith(caption):
        problems.append("the alt text does not start with what the caption says the figure shows")
    return problems


def test_the_catalogue_keeps_every_field_and_has_every_entry_translated():
    import polib

    entries = polib.pofile(str(plots.CATALOGUE))
    assert len(entries) > 50
    for e in entries:
        assert e.msgstr and not e.fuzzy, f"{plots.CATALOGUE.name}: {e.msgid!r} untranslated"
        assert sorted(plots._FIELD.findall(e.msgid)) == sorted(plots._FIELD.findall(e.msgstr)), e.msgid
        if e.msgid.endswith(".") and " " in e.msgid and CJK.search(e.msgstr):
            assert e.msgstr.endswith(("。", ".")), e.msgid  # a sentence stays a sentence


def _page_figures(page: Path) -> list[tuple[dict, str, str]]:
    out = []
    for src, caption, alt in chapter_figures(page):
        png = (page.parent / src).resolve()
        out.append((plots.png_text(png.read_bytes()) if png.is_file() else {}, caption, alt))
    return out


@pytest.mark.book
def test_every_figure_of_the_chinese_pages_is_drawn_in_chinese():
    """Each figure of a Chinese chapter page is the Chinese edition's (its PNG says so), every string with words
    it shows translated (``Untranslated`` absent), no glyph missing from the font, its caption and alt text
    Chinese; the English page's figure is the English one; and every entry of figures.po is used by a figure.
    Every figure, those a demo draws into a PNG of its own (chapter 2's model diagram) included."""
    import json

    import polib

    english_pages = sorted((_book_html() / "chapters").glob("*.html"))
    chinese_dir = _book_html() / "zh_CN" / "chapters"
    assert chinese_dir.is_dir(), f"{chinese_dir}: no Chinese edition built (make book builds both)"
    used, bad, figures, english_only = set(), [], 0, []
    for english in english_pages:
        chinese = chinese_dir / english.name
        en, zh = _page_figures(english), _page_figures(chinese)
        assert len(en) == len(zh), f"{english.name}: {len(en)} figures in English, {len(zh)} in Chinese"
        for (text, caption, alt), (en_text, en_caption, en_alt) in zip(zh, en):
            figures += 1
            where = f"{english.name} figure {figures}"
            assert not CJK.search(en_caption + en_alt) and en_text.get("Language") is None, f"{where}: English page"
            if text.get("Language") != "zh_CN":
                english_only.append(english.name)
                continue
            used |= set(json.loads(text.get("Catalogue", "[]")))
            if "Untranslated" in text:
                bad.append(f"{where}: left in English: {json.loads(text['Untranslated'])}")
            if "Missing glyphs" in text:
                bad.append(f"{where}: {text['Missing glyphs']}")
            bad += [f"{where}: {p}\n    {caption[:120]}" for p in chinese_caption_problems(caption, alt)]
    assert figures >= 20, f"only {figures} figures found: is this the built book?"
    assert not bad, "Chinese figures that are not wholly Chinese:\n" + "\n".join(bad)
    assert not english_only, f"figures with no Chinese edition on the Chinese pages: {english_only}"
    dead = [e.msgid for e in polib.pofile(str(plots.CATALOGUE))
            if e.msgid not in used and e.msgid not in plots.STRUCTURE]  # (the alt text's own words: in the code)
    assert not dead, f"entries of {plots.CATALOGUE.name} no figure of the book uses: {dead}"
