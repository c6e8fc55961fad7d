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
