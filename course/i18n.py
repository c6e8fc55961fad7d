"""The Chinese edition: the same pages, translated through gettext catalogues (issue 31).

The English pages are the source. ``make locale`` (``python -m course.i18n locale``) extracts every message of
every page (Sphinx's gettext builder) and merges them into ``locale/zh_CN/LC_MESSAGES/<page>.po`` with
sphinx-intl: a paragraph whose English changed keeps its old translation only as a *fuzzy* entry, which Sphinx
does not use, so the Chinese page shows that paragraph in English until someone translates it again.

``make book`` then builds the Chinese edition (``python -m course.i18n build``) after the English one: the same
Jupyter Book configuration, ``language = zh_CN``, the catalogues compiled to ``.mo``. The notebooks are not
executed again: the Chinese build reads Jupyter Book's cache (``_build/.jupyter_cache``), where course/build.py
stored each chapter's execution; the translation is applied to the parsed pages, so the code and its outputs,
every glued number included, are the English edition's. The pages land in ``_build/html/zh_CN/``, inside the
English site, and every page of either edition links to the same page of the other with a relative link
(course/sphinx_ext.py, ``_language_switch``), so both read from disk.
"""
from __future__ import annotations

import argparse
import functools
import json
import re
import shutil
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BUILD = ROOT / "_build"
LOCALE = ROOT / "locale"
LANGUAGE = "zh_CN"  # the one translation; its pages live in _build/html/<LANGUAGE>/
GETTEXT = BUILD / "gettext" / "pot"  # the .pot templates `make locale` extracts (myst-nb writes beside: _build/gettext)
EDITION = BUILD / LANGUAGE  # the Chinese build's own folder: its doctrees, jupyter_execute and html
HTML = BUILD / "html"


def catalogue(page: str) -> Path:
    """The .po file of a page (``chapters/01_positioning`` -> locale/zh_CN/LC_MESSAGES/chapters/01_positioning.po)."""
    return LOCALE / LANGUAGE / "LC_MESSAGES" / f"{page}.po"


TITLES = {LANGUAGE: "从零构建 BERT"}  # the book's title in the sidebar and the window, per translation
# myst-nb's toggle of a hidden cell ("Show code cell source"): its config, not a message of the page. The chapters hide
# only inputs (hide-input), so the code is what it shows.
CODE_PROMPTS = {LANGUAGE: {"nb_code_prompt_show": "显示代码", "nb_code_prompt_hide": "隐藏代码"}}
PROGRESS = EDITION / "translation_progress.json"  # per page: messages that need a translation, and translated


# ------------------------------------------------------------------------------------ what a message holds
# A MyST role (`{term}`text <Target>``, `{glue:text}`key``, `{doc}`...``), inline code, inline math, a URL: what a
# translation keeps (the roles' targets, the code, the formulas) and what is not words to translate.
ROLE = re.compile(r"\{(?P<name>[\w:.+-]+)\}`(?P<body>[^`]*)`")
CODE = re.compile(r"(?<![}`])(`+)(?P<code>[^`]+?)\1(?!`)")
INLINE_MATH = re.compile(r"(?<![\\$])\$(?P<tex>[^$\n]+?)\$(?!\$)")
URL = re.compile(r"\]\((?P<url>[^)\s]+)\)|<(?P<auto>https?://[^>]+)>")
SUBSTITUTION = re.compile(r"\{\{\s*(?P<name>[\w.-]+)\s*\}\}")  # MyST's {{ name }}
PRINTF = re.compile(r"%(?:\([\w]+\))?[sdifr]|\{[\w]*\}(?!`)")  # %s, %(name)s, {} / {name} (a format field)
_TEX_WORDS = re.compile(r"\\text\w*\{[^{}]*\}")  # \text{if query}: words inside a formula, translatable


def role_target(name: str, body: str) -> str:
    """What a role points at, whatever its shown text: `{term}`预训练 <Pretraining>`` and `{term}`Pretraining``
    both point at ``Pretraining``; a glue role at its key, and a translation's `{glue:md}`key__zh_CN`` (the same
    cell's value in this edition's language, course/editions.py) at ``key``."""
    m = re.search(r"<([^<>]+)>\s*$", body)
    target = (m.group(1) if m else body).strip()
    return target.removesuffix(f"__{LANGUAGE}") if name.startswith("glue") else target


def is_display_math(msgid: str) -> bool:
    """A message that is a whole formula (a math block: Sphinx extracts its TeX with a leading newline)."""
    return msgid.startswith("\n") or (msgid.lstrip().startswith("\\") and "$" not in msgid)


def formula_key(tex: str) -> str:
    """A formula as a translation must keep it: the same TeX but for the words inside \\text{...}, spaces aside."""
    return re.sub(r"\s+", "", _TEX_WORDS.sub(r"\\text{}", tex))


def emphasis(text: str) -> list[str]:
    """The message's bold and italic spans as CommonMark reads them ("strong", "em" in order). A delimiter next
    to CJK text and punctuation is not one (``即**{term}`x`**`` stays literal asterisks), so a translation that
    keeps its asterisks can still lose its bold."""
    from markdown_it import MarkdownIt

    tokens = MarkdownIt("commonmark").parseInline(ROLE.sub("`r`", text))
    return [t.type[:-5] for tok in tokens for t in tok.children or [] if t.type in ("strong_open", "em_open")]


def kept(msgid: str) -> dict[str, list]:
    """Everything of a message that its translation must keep, each kind as a sorted list: the roles (name and
    target; glue references among them), the formulas, the inline code, the link targets, the placeholders."""
    if is_display_math(msgid):
        return {"formulas": [formula_key(msgid)]}
    without_roles = ROLE.sub(" ", msgid)
    return {
        "roles": sorted(f"{m['name']}:{role_target(m['name'], m['body'])}" for m in ROLE.finditer(msgid)),
        "formulas": sorted(formula_key(m["tex"]) for m in INLINE_MATH.finditer(without_roles)),
        "code": sorted(m["code"] for m in CODE.finditer(without_roles)),
        "links": sorted(m["url"] or m["auto"] for m in URL.finditer(msgid)),
        "placeholders": sorted([m.group(0) for m in SUBSTITUTION.finditer(msgid)]
                               + [m.group(0) for m in PRINTF.finditer(CODE.sub(" ", without_roles))]),
    }


def words(msgid: str) -> str:
    """The message's prose: roles, code, formulas and link targets taken out."""
    if is_display_math(msgid):
        return " ".join(re.findall(r"\\text\w*\{([^{}]*)\}", msgid))
    text = INLINE_MATH.sub(" ", CODE.sub(" ", _shown(msgid)))
    return URL.sub(" ", text)


def needs_translation(msgid: str) -> bool:
    """Whether a message holds words a Chinese reader would need translated (a formula, a number or a name in
    code alone does not): at least two letters of prose."""
    return re.search(r"[A-Za-z]{2,}", words(msgid)) is not None


@functools.lru_cache(maxsize=64)
def _entries(path: str, mtime: float) -> dict[str, str]:
    import polib

    return {e.msgid: e.msgstr for e in polib.pofile(path) if e.msgstr and not e.fuzzy and not e.obsolete}


def translations(page: str) -> dict[str, str]:
    """The page's current translations (msgid -> msgstr; fuzzy entries are not translations)."""
    path = catalogue(page)
    return _entries(str(path), path.stat().st_mtime) if path.is_file() else {}


# ------------------------------------------------------------------------------------------ the terminology
TERMS = LOCALE / LANGUAGE / "terms.csv"  # english (alternatives split by |), chinese, chapters (where the English is)


def terms() -> list[dict[str, str]]:
    import csv

    with TERMS.open(encoding="utf-8", newline="") as f:
        return list(csv.DictReader(f))


def term_pattern(english: str) -> re.Pattern:
    """The English term and its listed forms as whole words: a hyphen joins words (`encoder` is not found in
    `encoder-only`, nor `token` in `token_type_ids`)."""
    forms = sorted(english.split("|"), key=len, reverse=True)
    return re.compile(r"(?<![\w-])(?:" + "|".join(re.escape(f) for f in forms) + r")(?![\w-])", re.I)


_FENCE = re.compile(r"^(`{3,}|~{3,})[^\n]*\n.*?^\1[ \t]*$", re.S | re.M)


def prose(markdown: str) -> str:
    """A page's prose: its front matter, code cells and inline code taken out, each role as the text it shows."""
    markdown = re.sub(r"\A---\n.*?\n---\n", "", markdown, flags=re.S)
    return CODE.sub(" ", _shown(_FENCE.sub(" ", markdown)))


def _shown(text: str) -> str:
    """Each role as the words it shows: a term's or a link's text; nothing for a glue value, a bare page name or a
    download (a file's name)."""
    return ROLE.sub(lambda m: " " if m["name"].startswith("glue") or m["name"] == "download"
                    or m["name"] == "doc" and "<" not in m["body"] else re.sub(r"<[^<>]*>\s*$", "", m["body"]), text)


def term_chapters(english: str) -> str:
    """The chapters whose prose uses the term, as the table's third column writes them ("1 5 7")."""
    pattern = term_pattern(english)
    return " ".join(str(int(path.name[:2])) for path in sorted((ROOT / "chapters").glob("[0-9][0-9]_*.md"))
                    if pattern.search(prose(path.read_text(encoding="utf-8"))))


def write_term_chapters() -> None:
    """The table's chapters column, computed again from the chapters as they are."""
    import csv

    rows = terms()
    with TERMS.open("w", encoding="utf-8", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=["english", "chinese", "chapters"], lineterminator="\n")
        writer.writeheader()
        for row in rows:
            writer.writerow({**row, "chapters": term_chapters(row["english"])})


def progress() -> dict[str, dict[str, int]]:
    """Per page of the last Chinese build: {"messages": with words to translate, "translated": of them}."""
    return json.loads(PROGRESS.read_text(encoding="utf-8"))


def percent(p: dict[str, int]) -> float:
    return 100.0 * p["translated"] / p["messages"] if p["messages"] else 100.0


def _overrides(**more) -> dict:
    return {
        "external_toc_path": (ROOT / "_toc.yml").as_posix(),
        "latex_individualpages": False,
        "nitpicky": True,
        "locale_dirs": [str(LOCALE)],
        "gettext_compact": False,  # one catalogue per page, named as the page
        "gettext_uuid": False,
        "gettext_location": False,  # no line numbers in the catalogues: a moved paragraph is not a changed one
        # The English build's execution cache: the Chinese build reads it and never executes a notebook. Jupyter
        # Book would otherwise look beside the output folder.
        "nb_execution_cache_path": str(BUILD / ".jupyter_cache"),
        **more,
    }


def _sphinx(builder: str, outdir: Path, overrides: dict, warningiserror: bool = True) -> int:
    from jupyter_book.sphinx import build_sphinx

    result = build_sphinx(ROOT, outdir, use_external_toc=True, noconfig=True, path_config=str(ROOT / "_config.yml"),
                          confoverrides=overrides, builder=builder, warningiserror=warningiserror,
                          keep_going=True, doctreedir=outdir.parent / ".doctrees")  # not the English build's
    if isinstance(result, Exception):
        raise result
    return int(result or 0)


def extract() -> int:
    """Every page's messages into _build/gettext/pot/<page>.pot. The messages are the pages' Markdown, not their
    cells' outputs, so no notebook is executed or read from the cache (a glue reference stays a reference)."""
    return _sphinx("gettext", GETTEXT, _overrides(nb_execution_mode="off"), warningiserror=False)


def update() -> None:
    """The catalogues merged with the templates just extracted (sphinx-intl: new messages added, changed ones
    fuzzy, gone ones dropped)."""
    from sphinx_intl import basic

    basic.update(str(LOCALE), str(GETTEXT), [LANGUAGE], line_width=-1, ignore_obsolete=True)


def build() -> int:
    """The Chinese edition into _build/zh_CN/html, then copied into _build/html/zh_CN (the English site's folder,
    which its own build does not clean). Every notebook must be in the cache already (course/build.py, run first
    by make book): this build never executes one."""
    from course import build as executing

    stale = [page for page in executing.toc_pages() if executing.read_notebook(page) is not None
             and not executing.notebook_is_cached(page)]
    if stale:
        raise SystemExit(f"course.i18n: not executed as they are now: {', '.join(stale)}; run python -m course.build "
                         "first (make book does), so that both editions read the same stored outputs")
    status = _sphinx("html", EDITION / "html", _overrides(language=LANGUAGE, html_title=TITLES[LANGUAGE], **CODE_PROMPTS[LANGUAGE]))
    target = HTML / LANGUAGE
    if target.exists():
        shutil.rmtree(target)
    shutil.copytree(EDITION / "html", target, ignore=shutil.ignore_patterns(".buildinfo", ".doctrees"))
    return status


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(prog="python -m course.i18n", description=__doc__.split("\n\n")[0])
    parser.add_argument("command", choices=["locale", "build", "terms", "progress"],
                        help="locale: refresh the catalogues from the English pages; build: the Chinese edition; "
                             "terms: the term table's chapters column again; progress: %% translated per page")
    args = parser.parse_args(argv)
    start = time.perf_counter()
    status = 0
    if args.command == "locale":
        status = extract()
        update()
        write_term_chapters()
    elif args.command == "terms":
        write_term_chapters()
    elif args.command == "progress":
        for page, p in progress().items():
            print(f"{page:32} {p['translated']:4}/{p['messages']:<4} {percent(p):5.1f}%")
    else:
        status = build()
    print(f"course.i18n {args.command}: {time.perf_counter() - start:.1f} s", file=sys.stderr)
    sys.exit(status)


if __name__ == "__main__":
    main()
