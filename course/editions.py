"""What a cell shows in each edition: one execution, both languages' text, each page keeping its own (issue 31 §2).

The chapters execute once (course/build.py) and both editions render those outputs. Prose is translated by the
pages' catalogues; what *code* writes (a quiz's questions, a demo's captions and controls, a printed sentence)
is translated here, at execution time, for both editions at once:

* ``tr(text, language)`` looks a string up in the code catalogues, ``locale/zh_CN/LC_MESSAGES/outputs/*.po``
  (one per module or chapter; msgid the English exactly as the code writes it, ``{name}`` fields for what the
  code fills in, e.g. ``tr("{n} tokens selected").format(n=n)``). A string with no translation comes back in
  English, and is remembered: ``untranslated()`` lists them (the build and the tests read it).
* ``both(render)`` calls ``render(language)`` for every edition and wraps each result in markers,
  ``<!--edition:zh_CN-->…<!--/edition:zh_CN-->``; a cell displays that HTML.
* ``keep(html, language)`` removes the other editions' blocks and every marker: course/sphinx_ext.py applies it
  to each page's body, so a page holds its own edition's text only (no hidden duplicate for a screen reader, a
  search index or the page's size).

Figures (PNGs) carry their Chinese version inside the PNG instead (course/plots.py).
"""
from __future__ import annotations

import functools
import re
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
ENGLISH = "en"
LANGUAGES = (ENGLISH, "zh_CN")  # the source first
HTML_LANG = {"en": "en", "zh_CN": "zh-CN"}  # the attribute value of each edition
OUTPUTS = ROOT / "locale" / "zh_CN" / "LC_MESSAGES" / "outputs"  # the code catalogues, <name>.po

_BLOCK = re.compile(r"<!--edition:(?P<lang>[\w-]+)-->(?P<body>.*?)<!--/edition:(?P=lang)-->", re.S)
_missing: dict[str, set[str]] = {}  # language -> English strings asked for and not translated


def outputs(language: str) -> Path:
    """The folder of ``language``'s code catalogues."""
    return OUTPUTS.parents[2] / language / "LC_MESSAGES" / "outputs"


def translated(po: Path) -> dict[str, str]:
    """msgid -> msgstr of every translated, non-fuzzy entry of one catalogue."""
    import polib

    return {e.msgid: e.msgstr for e in polib.pofile(str(po)) if e.msgstr and not e.fuzzy and not e.obsolete}


@functools.cache
def translations(language: str) -> dict[str, str]:
    """msgid -> msgstr of every translated, non-fuzzy entry of the code catalogues of ``language``."""
    table: dict[str, str] = {}
    for po in sorted(outputs(language).glob("*.po")):
        table.update(translated(po))
    return table


def tr(text: str, language: str = "zh_CN") -> str:
    """``text`` in ``language``: its translation from the code catalogues, or ``text`` itself (English is the
    source; a string without a translation is recorded for ``untranslated``)."""
    if language == ENGLISH or not text.strip():
        return text
    found = translations(language).get(text)
    if found is None:
        _missing.setdefault(language, set()).add(text)
        return text
    return found


def untranslated(language: str = "zh_CN") -> list[str]:
    """The strings ``tr`` was asked for in ``language`` and returned in English, in this process."""
    return sorted(_missing.get(language, ()))


def both(render: Callable[[str], str]) -> str:
    """Every edition's HTML from one ``render(language)``, each in its markers, the source first."""
    return "".join(f"<!--edition:{lang}-->{render(lang)}<!--/edition:{lang}-->" for lang in LANGUAGES)


def keep(html: str, language: str | None) -> str:
    """``html`` as ``language``'s page shows it: the other editions' blocks removed, the markers dropped."""
    language = language or ENGLISH
    if "<!--edition:" not in html:
        return html
    return _BLOCK.sub(lambda m: m.group("body") if m.group("lang") == language else "", html)
