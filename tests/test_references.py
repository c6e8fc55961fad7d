"""The book's references say where they lead (issue 19, item 1).

- Every chapter number a page shows with a link (``{doc}`chapter 6 <06_attention_masks>```, the glossary's
  ``{doc}`ch. 7 <chapters/08_masking>```, ``chapters {doc}`4 <04_embeddings>```, a ``{ref}`` to a chapter's
  label) is the number of the chapter the link opens, counted in the reading order of ``_toc.yml``
  (``course.build.toc_pages``); and every chapter's title carries its own number.
- A chapter number in the prose of the intro, the glossary or the exercises page is a link (the chapters'
  own prose is checked by tests/test_chapter_template.py).
- The texts the book checks are named once, in the intro (the section labelled ``the-tutorials``). No page
  calls them by an internal number ("Source 002") or leans on "our sources" the reader was never introduced
  to; a page that speaks of "a tutorial" links to the intro's description at least once.
- The exercises page lists an assignment for every chapter, and the intro does not say otherwise.

Each check is a function of a page's text, so the last test runs them on broken text to show they fail.
"""
from __future__ import annotations

import re
from pathlib import Path

import pytest

from course.build import toc_pages

ROOT = Path(__file__).resolve().parents[1]
DEFINITION = "the-tutorials"  # the intro's label for the texts the book checks

# pages -> why they may still say what the checks below forbid; printed, never silently kept
EXCEPTIONS: dict[tuple[str, str], str] = {}


def pages() -> list[str]:
    return toc_pages()


def chapter_numbers(toc: list[str] | None = None) -> dict[str, int]:
    """Chapter page -> its number: its place among the chapters in the reading order."""
    chapters = [p for p in (toc or pages()) if p.startswith("chapters/")]
    return {page: n for n, page in enumerate(chapters, start=1)}


def chapter_labels(texts: dict[str, str]) -> dict[str, str]:
    """A chapter's ``(label)=`` lines -> the chapter page."""
    found = {}
    for page, text in texts.items():
        if page.startswith("chapters/"):
            for label in re.findall(r"^\(([\w-]+)\)=\s*$", text, flags=re.M):
                found[label] = page
    return found


def _resolve(page: str, target: str) -> str:
    """A {doc} target as a page path from the book's root (targets are relative to the page's folder)."""
    target = target.strip().removesuffix(".md")
    if target.startswith("/"):
        return target.lstrip("/")
    parts = list(Path(page).parent.parts) + list(Path(target).parts)
    out: list[str] = []
    for part in parts:
        if part == "..":
            out.pop()
        elif part != ".":
            out.append(part)
    return "/".join(out)


SHOWN_NUMBER = re.compile(r"^(?:(?:ch\.|[Cc]hapters?)\s*)?(\d+)$")
DOC_ROLE = re.compile(r"\{doc\}`([^`<]*?)\s*<([^>`]+)>`")
REF_ROLE = re.compile(r"\{ref\}`([^`<]*?)\s*<([^>`]+)>`")


def wrong_chapter_numbers(page: str, text: str, numbers: dict[str, int], labels: dict[str, str]) -> list[str]:
    """Each link of ``text`` whose shown chapter number is not the number of the chapter it opens."""
    wrong = []
    links = [(shown, _resolve(page, target)) for shown, target in DOC_ROLE.findall(text)]
    links += [(shown, labels[target]) for shown, target in REF_ROLE.findall(text) if target in labels]
    for shown, target in links:
        m = SHOWN_NUMBER.match(shown.strip())
        if m and target in numbers and int(m.group(1)) != numbers[target]:
            wrong.append(f"{page}: '{shown}' opens {target}, chapter {numbers[target]}")
    return wrong


def wrong_titles(page: str, text: str, numbers: dict[str, int]) -> list[str]:
    title = re.search(r"^# (\d+)\. ", text, flags=re.M)
    if page not in numbers:
        return []
    if not title:
        return [f"{page}: the title does not start with its chapter number, {numbers[page]}"]
    if int(title.group(1)) != numbers[page]:
        return [f"{page}: the title says {title.group(1)}, the reading order makes it chapter {numbers[page]}"]
    return []


# --- what a reader reads: prose without code, roles, links and math -------------------------------------------
_NOT_PROSE = re.compile(
    r"\A---\n.*?\n---\n|^```\{code-cell\}.*?^```[ \t]*$|^```\{literalinclude\}.*?^```[ \t]*$"
    r"|\$\$.*?\$\$|\$[^$\n]+\$|\{[a-z:]+\}`[^`]*`|`[^`\n]+`|\[[^\]\n]*\]\([^)\n]*\)|<[^>\n]+>",
    re.S | re.M)
_REFERENCES = re.compile(r"^## References.*?(?=^## |\Z)", re.S | re.M)  # "chapter 11" there is d2l's


def prose(text: str) -> str:
    return _NOT_PROSE.sub(lambda m: " " * len(m.group(0)), text)


def unlinked_chapter_numbers(page: str, text: str) -> list[str]:
    words = prose(_REFERENCES.sub("", text))
    return [f"{page}: '{m.group(0)}' is not a link" for m in re.finditer(r"\b(?:[Cc]hapters?|ch\.) \d+\b", words)]


# "Source 002", "source 000's": an identifier the reader cannot look up
SOURCE_ID = re.compile(r"\b[Ss]ources? \d{3}\b")
# the texts the book checks, called by a name the reader was never given ("our sources", "one source says",
# "the source's example"); "the source text" of a translation and code's "source files" are other things
UNDEFINED_SOURCES = re.compile(
    r"\b(?:[Oo]ur|[Tt]hese|[Tt]he|[Tt]his book's|[Oo]ne|[Aa]nother|[Aa]|[Tt]hat|[Ss]ame|[Tt]wo of our|[Oo]ne of our)"
    r"\s+sources?(?:'s?)?(?![\w-])(?!\s+(?:text|texts|code|files?|sequence|of truth))")
TUTORIAL = re.compile(r"\btutorials?\b", re.I)


def unnamed_sources(page: str, text: str) -> list[str]:
    """Each place where the page leans on texts it has not introduced. Code cells count: the reader sees
    their comments."""
    found = [f"{page}: '{m.group(0)}'" for m in SOURCE_ID.finditer(text)]
    found += [f"{page}: '{m.group(0)}'" for m in UNDEFINED_SOURCES.finditer(text)]
    words = prose(text)
    if page != "intro" and TUTORIAL.search(words) and f"<{DEFINITION}>`" not in text:
        found.append(f"{page}: speaks of tutorials without linking the intro's description "
                     f"({{ref}}`a tutorial <{DEFINITION}>`)")
    return found


def _texts() -> dict[str, str]:
    return {page: (ROOT / f"{page}.md").read_text(encoding="utf-8") for page in pages()}


def _excused(problems: list[str], page: str) -> list[str]:
    kept = []
    for problem in problems:
        why = next((w for (p, phrase), w in EXCEPTIONS.items() if p == page and phrase in problem), None)
        if why:
            print(f"\nexcused: {problem}: {why}")
        else:
            kept.append(problem)
    return kept


# --- the tests ------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("page", pages())
def test_chapter_links_name_the_chapter_they_open(page):
    texts = _texts()
    numbers, labels = chapter_numbers(), chapter_labels(texts)
    problems = wrong_chapter_numbers(page, texts[page], numbers, labels) + wrong_titles(page, texts[page], numbers)
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("page", [p for p in pages() if not p.startswith("chapters/")])
def test_chapter_numbers_outside_the_chapters_are_links(page):
    problems = unlinked_chapter_numbers(page, _texts()[page])
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("page", pages())
def test_no_page_leans_on_sources_it_has_not_introduced(page):
    problems = _excused(unnamed_sources(page, _texts()[page]), page)
    assert not problems, "say 'a tutorial' and link the intro's description, or 'a common claim':\n" + "\n".join(problems)


def test_the_intro_describes_the_tutorials():
    intro = _texts()["intro"]
    assert f"({DEFINITION})=" in intro, f"the intro has no section labelled ({DEFINITION})="
    section = intro[intro.index(f"({DEFINITION})="):]
    section = section[:section.find("\n## ", section.find("\n## ") + 1)]
    assert re.search(r"\bfour\b", section) and "docs/source-claims.md" in section, \
        "the intro says what the four texts are and where every claim of theirs is checked"


# chapter -> (the chapter whose assignment it points to, why it has none of its own); printed, never silently kept
SHARED_ASSIGNMENTS: dict[str, tuple[str, str]] = {
    "chapters/12_experiments": ("chapters/11_pretraining", "issue 20 split chapter 11's five experiments into a "
                                "chapter of their own; they are run, not written, so its Exercise points to chapter "
                                "11's assignment (the loss and the schedule every experiment trains with)"),
}


def test_every_chapter_has_an_assignment_and_the_intro_says_so():
    """Each chapter's own assignment is listed, in order; a chapter of SHARED_ASSIGNMENTS lists the other chapter's,
    and the exercises page's row and the intro say it has none of its own."""
    texts = _texts()
    # the row's first download is its notebook (an inputs.py its tests import may follow it)
    listed = re.findall(r"^\| \{doc\}`(chapters/[\w]+)` \|(.*?)\{download\}`[^<`]*<(exercises/[^>]+)>`", texts["exercises"],
                        flags=re.M)
    chapters = [p for p in pages() if p.startswith("chapters/")]
    assert [page for page, _, _ in listed] == chapters, "exercises.md lists one assignment per chapter, in order"
    for page, row, notebook in listed:
        assert (ROOT / notebook).exists(), f"{page}: {notebook} does not exist"
        owner, why = SHARED_ASSIGNMENTS.get(page, (page, None))
        name = Path(owner).name
        assert notebook == f"exercises/{name}/{name}.ipynb", f"{page} lists {notebook}, not {owner}'s assignment"
        if why:
            print(f"\n{page} shares {owner}'s assignment: {why}")
            assert "none of its own" in row, f"exercises.md: say that {page} has no assignment of its own"
            assert f"<{page}>`" in texts["intro"], f"the intro does not say that {page} has no assignment of its own"
    assert not re.search(r"[Ee]ach chapter but|[Ee]xcept the last|all but the last", prose(texts["intro"])), \
        "the intro says a chapter has no assignment without naming it"


def test_the_checks_fail_on_broken_text():
    """Each check above, on text that breaks it."""
    toc = ["intro", "chapters/01_a", "chapters/02_b", "chapters/03_c", "glossary"]
    numbers = chapter_numbers(toc)
    labels = {"ch-b": "chapters/02_b"}
    glossary = ("GELU\n  The activation ({doc}`ch. 2 <chapters/03_c>`); see also {doc}`chapter 3 <chapters/03_c>` "
                "and chapters {doc}`1 <chapters/01_a>`, {doc}`4 <chapters/02_b>`.\n")
    assert wrong_chapter_numbers("glossary", glossary, numbers, labels) == [
        "glossary: 'ch. 2' opens chapters/03_c, chapter 3", "glossary: '4' opens chapters/02_b, chapter 2"]
    chapter = "# 1. B\n\nAs {doc}`chapter 1 <01_a>` and {ref}`chapter 3 <ch-b>` show, {doc}`01_a` too.\n"
    assert wrong_chapter_numbers("chapters/02_b", chapter, numbers, labels) == [
        "chapters/02_b: 'chapter 3' opens chapters/02_b, chapter 2"]
    assert wrong_titles("chapters/02_b", chapter, numbers) == [
        "chapters/02_b: the title says 1, the reading order makes it chapter 2"]
    assert unlinked_chapter_numbers("intro", "Each chapter but chapter 11 has one; `chapter 3` is code.\n") == [
        "intro: 'chapter 11' is not a link"]
    assert unlinked_chapter_numbers("intro", "## References\n\n- d2l, chapter 11.\n") == []
    bad = ("Source 002 works it by hand. One of our sources says so, another source disagrees.\n\n"
           "```{code-cell} ipython3\nx = 1  # the source's rounded figures\n```\n\n"
           "The encoder reads the source text; the sources of truth are in bertlib.\n")
    assert [p.split(": ", 1)[1] for p in unnamed_sources("chapters/02_b", bad)] == [
        "'Source 002'", "'One of our sources'", "'another source'", "'the source's'"]
    assert unnamed_sources("chapters/02_b", "A tutorial says 21%.\n") == [
        "chapters/02_b: speaks of tutorials without linking the intro's description "
        f"({{ref}}`a tutorial <{DEFINITION}>`)"]
    assert unnamed_sources("chapters/02_b", f"{{ref}}`A tutorial <{DEFINITION}>` says 21%.\n") == []
