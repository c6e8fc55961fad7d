"""Every chapter is a complete lesson in one template (issue 13, section 3), and its quiz spreads the right
answers over the letters.

The template: these ``##`` sections, in this order, each with content (a heading matches when it starts
with the name, so "## A worked number: padding steals attention" is "A worked number"). A chapter's own
sections may sit only between "A worked number" and "Demo". "The formula" holds a display formula and a
term table with a BERT-Base column; "What to remember" has 5 to 8 bullets; "References" cites the BERT
paper by section.

A missing piece may be listed in EXCEPTIONS, with a reason that names it and its issue; the test prints
the list, and fails on an exception that is no longer needed, so the list stays true.

The quizzes: every chapter's ``quiz(...)`` passes ``key=``, so ``course.quiz.placement`` places its right
answers. The criterion: within a quiz no letter is right more often than ceil(questions / options)
times; over the book, the counts of A, B, C and D differ by at most 1.
"""
from __future__ import annotations

import ast
import collections
import math
import re
from pathlib import Path

import pytest

from course.build import toc_pages
from course.quiz import placement

ROOT = Path(__file__).resolve().parents[1]

TEMPLATE = ["Intuition", "The formula", "Shapes", "A worked number", "Demo", "The code in bertlib",
            "The same with transformers", "Misconceptions", "Interview questions", "Self-check",
            "What to remember", "References", "Exercise"]
FREE_AFTER, FREE_BEFORE = "A worked number", "Demo"  # chapter-specific sections go between these two

# (chapter file, template section) -> why it is missing and which issue brings it
EXCEPTIONS: dict[tuple[str, str], str] = {}

# the headings' one form (review G-5 (1), (2); intro.md says it): these name their topic after a colon,
# "## Shapes: one head, then all of them"; the others are the bare name, "## Misconceptions"
SUBTITLED = ["Intuition", "The formula", "Shapes", "A worked number", "Demo"]
INTERVIEW_QUESTIONS = QUIZ_ITEMS = range(4, 7)  # review G-5 (6): 4 to 6 in every chapter


def chapters() -> list[str]:
    return [page for page in toc_pages() if page.startswith("chapters/")]


def _without_code_cells(text: str) -> str:
    return re.sub(r"^```\{code-cell\}.*?^```\s*$", "", text, flags=re.S | re.M)


def sections(page: str) -> list[tuple[str, str]]:
    """(heading text, body) for every level-2 heading of the chapter, outside code cells."""
    text = (ROOT / f"{page}.md").read_text(encoding="utf-8")
    parts = re.split(r"^## (.+)$", text, flags=re.M)
    found = []
    for heading, body in zip(parts[1::2], parts[2::2]):
        found.append((heading.strip(), body))
    # a "## " inside a code cell is a comment, not a heading: keep only those outside code cells
    outside = set(re.findall(r"^## (.+)$", _without_code_cells(text), flags=re.M))
    return [(h, b) for h, b in found if h in outside]


def template_name(heading: str) -> str | None:
    for name in TEMPLATE:
        if heading == name or heading.startswith(name + ":") or heading.startswith(name + ",") \
                or heading.startswith(name + " "):
            return name
    return None


def _has_content(body: str) -> bool:
    return bool(re.sub(r"\s+", "", body))


def _problems(page: str) -> dict[str, str]:
    """Template section -> what is wrong with it in this chapter (absent, empty, out of order ...)."""
    found = sections(page)
    names = [template_name(h) for h, _ in found]
    problems: dict[str, str] = {}
    for name in TEMPLATE:
        if name not in names:
            problems[name] = "absent"
        elif names.count(name) > 1:
            problems[name] = "appears more than once"
    present = [n for n in names if n is not None]
    expected = [n for n in TEMPLATE if n in present]
    if present != expected:
        problems["order"] = f"sections in the order {present}, the template's is {expected}"
    last = None  # the template section the current heading follows
    for (heading, body), name in zip(found, names):
        if name is not None:
            last = name
            if not _has_content(body):
                problems[name] = f"'## {heading}' has no content"
        elif last != FREE_AFTER:
            problems.setdefault("extra", f"'## {heading}' is not a template section and is not "
                                         f"between '{FREE_AFTER}' and '{FREE_BEFORE}'")
    body = dict(zip(names, (b for _, b in found)))
    if "The formula" in body:
        formula = body["The formula"]
        if "$$" not in formula:
            problems["The formula"] = "no display formula ($$ ... $$)"
        elif not re.search(r"^\|[^\n]*BERT-Base[^\n]*\|\s*$", formula, flags=re.M):
            problems["The formula"] = "no term table with a BERT-Base column"
    if "What to remember" in body:
        n = len(re.findall(r"^[-*] ", body["What to remember"], flags=re.M))
        if not 5 <= n <= 8:
            problems["What to remember"] = f"{n} bullets, not 5 to 8"
    if "References" in body:
        refs = body["References"]
        if not (re.search(r"Devlin", refs) and re.search(r"1810\.04805", refs)
                and re.search(r"[Ss]ection \d|§\s?\d|[Aa]ppendix [A-C]", refs)):
            problems["References"] = "does not cite the BERT paper (Devlin et al., arXiv:1810.04805) by section"
    return problems


@pytest.mark.parametrize("page", chapters())
def test_chapter_follows_the_template(page):
    problems = _problems(page)
    excused = {name: why for (p, name), why in EXCEPTIONS.items() if p == page}
    for name, why in excused.items():
        print(f"\n{page}: '{name}' excused: {why}")
    stale = [name for name in excused if name not in problems]
    assert not stale, f"{page}: exception no longer needed for {stale}; remove it from EXCEPTIONS"
    left = {k: v for k, v in problems.items() if k not in excused}
    assert not left, f"{page} does not follow the template: {left}"


@pytest.mark.parametrize("page", chapters())
def test_chapter_headings_have_one_form(page):
    """Review G-5 (1)-(3): the template's headings in one form, and no section set apart for checking
    claims: a chapter checks a common claim where it teaches the topic (intro.md, "The claims it checks")."""
    wrong = []
    for heading, _ in sections(page):
        name = template_name(heading)
        if name in SUBTITLED and not re.fullmatch(re.escape(name) + r": \S.*", heading):
            wrong.append(f"'## {heading}' is not '## {name}: <its topic>'")
        elif name is not None and name not in SUBTITLED and heading != name:
            wrong.append(f"'## {heading}' is not the bare '## {name}'")
        elif name is None and re.match(r"(?i)checking\b", heading):
            wrong.append(f"'## {heading}': check a claim in the section that teaches its topic")
    assert not wrong, f"{page}: {wrong}"


def test_intro_describes_the_template():
    """intro.md ("Each chapter follows the same pattern") names every template heading, in its order."""
    text = (ROOT / "intro.md").read_text(encoding="utf-8")
    named = [m.group(1) for m in re.finditer(r"\*([A-Z][\w -]+?)\*", text) if m.group(1) in TEMPLATE]
    assert [n for n in dict.fromkeys(named)] == TEMPLATE, f"intro.md names {named}, the template is {TEMPLATE}"


def test_chapter_has_a_label_named_by_its_topic():
    """Review G-5 (8): every chapter has a (ch-<topic>)= label on its title, named after its file's topic
    (07_mlm -> ch-mlm), never its number, so that {ref} survives the next inserted chapter."""
    for page in chapters():
        text = (ROOT / f"{page}.md").read_text(encoding="utf-8")
        topic = Path(page).name.split("_", 1)[1].replace("_", "-")
        m = re.search(r"^\(([^)]+)\)=\n# \d+\. ", text, flags=re.M)
        assert m, f"{page}: put a (ch-{topic})= label on the line above the chapter's title"
        assert m.group(1) == f"ch-{topic}", f"{page}: its label is ({m.group(1)})=, not (ch-{topic})="


@pytest.mark.parametrize("page", chapters())
def test_misconceptions_have_one_style(page):
    """Review G-5 (4): each misconception is a paragraph that opens with the claim, quoted and in bold,
    then corrects it (a computation and its note may follow); no bullets, no italics."""
    body = dict((template_name(h), b) for h, b in sections(page))["Misconceptions"]
    prose_only = _without_code_cells(body)
    paragraphs = [p.strip() for p in re.split(r"\n\s*\n", prose_only) if p.strip()]
    claims = [p for p in paragraphs if p.startswith("**")]
    assert len(claims) >= 3, f"{page}: {len(claims)} misconceptions"
    assert paragraphs[0].startswith("**"), f"{page}: Misconceptions opens with a misconception"
    for p in claims:
        assert re.match(r'\*\*"[^\n]+?"\*\* \S', p), f"{page}: write the claim as **\"...\"** then its correction: {p[:80]}"
    bullets = re.findall(r"^\s*[-*] .*", prose_only, flags=re.M)
    assert not bullets, f"{page}: misconceptions are bold paragraphs, not bullets: {bullets[:2]}"


@pytest.mark.parametrize("page", chapters())
def test_every_chapter_asks_as_many_questions(page):
    """Review G-5 (6): 4 to 6 interview questions (dropdowns) and 4 to 6 quiz items in every chapter."""
    body = dict((template_name(h), b) for h, b in sections(page))["Interview questions"]
    asked = len(re.findall(r"^(?:```|:::)\{dropdown\}", body, flags=re.M))
    assert asked in INTERVIEW_QUESTIONS, f"{page}: {asked} interview questions"
    items = sum(len(n_options) for n_options, _ in quizzes(page))
    assert items in QUIZ_ITEMS, f"{page}: {items} quiz items"


def test_exceptions_name_their_issue():
    for (page, name), why in EXCEPTIONS.items():
        assert page in chapters() and name in TEMPLATE, (page, name)
        assert re.search(r"issue \d+", why) and len(why) > 30, f"{page} {name}: say what is missing and its issue"


# --- quizzes --------------------------------------------------------------------------------------------------

def quizzes(page: str) -> list[tuple[list[int], str | None]]:
    """(options per question, key) of every quiz(...) call in the chapter's code cells."""
    text = (ROOT / f"{page}.md").read_text(encoding="utf-8")
    found = []
    for cell in re.findall(r"^```\{code-cell\}[^\n]*\n(.*?)^```", text, flags=re.S | re.M):
        source = "\n".join(line for line in cell.splitlines() if not line.startswith(":"))
        for node in ast.walk(ast.parse(source)):
            if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "quiz":
                questions = node.args[0]
                assert isinstance(questions, ast.List), f"{page}: quiz() takes a literal list"
                n_options = [len(q.elts[1].elts) for q in questions.elts]
                key = next((ast.literal_eval(k.value) for k in node.keywords if k.arg == "key"), None)
                found.append((n_options, key))
    return found


def test_every_quiz_places_its_answers():
    keys = []
    for page in chapters():
        found = quizzes(page)
        assert found, f"{page} has no quiz"
        for n_options, key in found:
            assert key is not None, f"{page}: pass key= to quiz() so the right answers are placed evenly"
            keys.append(key)
            letters = collections.Counter(placement(n_options, key))
            assert max(letters.values()) <= math.ceil(len(n_options) / max(n_options)), (page, letters)
    assert len(keys) == len(set(keys)), f"two quizzes share a key: {keys}"


def test_right_answers_spread_evenly_over_the_book():
    counts = collections.Counter({letter: 0 for letter in "ABCD"})
    for page in chapters():
        for n_options, key in quizzes(page):
            counts.update("ABCDEFGH"[i] for i in placement(n_options, key))
    print("\nright answers over the book:", dict(sorted(counts.items())))
    abcd = [counts[letter] for letter in "ABCD"]
    assert max(abcd) - min(abcd) <= 1, f"uneven spread {dict(counts)}: choose another key for one quiz"


def test_placed_quiz_marks_the_right_option_and_keeps_its_explanation():
    from course.quiz import quiz_html

    questions = [(f"question {n}?", [f"right {n}", f"wrong {n}a", f"wrong {n}b", f"wrong {n}c"], 0, f"why {n}")
                 for n in range(6)]
    page = quiz_html(questions, key="a test")
    assert page == quiz_html(questions, key="a test")  # the same on every build
    targets = placement([4] * 6, "a test")
    assert sorted(targets[:4]) == [0, 1, 2, 3]  # the first round uses every letter once
    for n, (item, target) in enumerate(zip(page.split('<li class="q">')[1:], targets)):
        labels = re.findall(r"<label>.*?</label>", item, flags=re.S)
        right = [i for i, label in enumerate(labels) if "fb ok" in label]
        assert right == [target] and f"right {n}" in labels[target]
        assert f"<strong>{'ABCD'[target]}</strong>. why {n}" in item
        # the other options keep their cyclic order
        order = [re.search(r"(right|wrong) \d\w?", label).group(0) for label in labels]
        k = order.index(f"right {n}")
        assert order[k:] + order[:k] == [f"right {n}", f"wrong {n}a", f"wrong {n}b", f"wrong {n}c"]


# --- links ----------------------------------------------------------------------------------------------------

# what prose is: not code, math, headings, labels, directive lines, roles, links, HTML; not the references,
# where "chapter 11" is another book's chapter
_NOT_PROSE = re.compile(
    r"^## References.*?(?=^## |\Z)|\A---\n.*?\n---\n|^```\{code-cell\}.*?^```[ \t]*$|^```\{literalinclude\}.*?^```[ \t]*$"
    r"|^```\{[a-z]+\}[^\n]*$|^:::[^\n]*$|^```[ \t]*$|^#+ [^\n]*$|^\([^\n)]*\)=[ \t]*$"
    r"|\$\$.*?\$\$|\$[^$\n]+\$|\{[a-z:]+\}`[^`]*`|`[^`\n]+`|\[[^\]\n]*\]\([^)\n]*\)|<[^>\n]+>",
    re.S | re.M)

# a glossary term -> how the prose mentions it
GLOSSARY_MENTIONS = {
    "Attention mask": r"attention masks?", "Bidirectional attention": r"bidirectional(?:ly)?",
    "Causal mask": r"causal masks?", "[CLS]": r"\[CLS\]", "Cross-entropy": r"cross-entropy",
    "Decoder-only": r"decoder-only", "Encoder-decoder": r"encoder-decoder", "Encoder-only": r"encoder-only",
    "Fine-tuning": r"fine-tun(?:ing|ed|e)", "GELU": r"GELU", "LayerNorm": r"LayerNorm", "[MASK]": r"\[MASK\]",
    "Mean pooling": r"mean pooling", "MLM": r"MLM", "NSP": r"NSP", "[PAD]": r"\[PAD\]", "Pooler": r"pooler",
    "Pretraining": r"pre-?training", "Segment embedding": r"segment embeddings?", "[SEP]": r"\[SEP\]",
    "Sinusoidal position encoding": r"sinusoid(?:s|al)?", "[UNK]": r"\[UNK\]", "WordPiece": r"WordPiece",
    # the encoder layer's terms (review G-4)
    "Multi-head attention": r"multi-head attention", "Position-wise feed-forward network": r"position-wise feed-forward",
    "Residual connection": r"residual connections?", "Post-LN": r"post-LN", "Pre-LN": r"pre-LN", "SOP": r"SOP",
}


def prose(page: str) -> str:
    text = (ROOT / f"{page}.md").read_text(encoding="utf-8")
    return _NOT_PROSE.sub(lambda m: " " * len(m.group(0)), text)


def test_glossary_lists_every_linked_term():
    text = (ROOT / "glossary.md").read_text(encoding="utf-8")
    block = text[text.index("```{glossary}"):]
    defined = {line.strip().lower() for line in block.splitlines() if line and not line.startswith((" ", ":", "`"))}
    for term in GLOSSARY_MENTIONS:
        assert term.lower() in defined, f"{term} is not in the glossary"


@pytest.mark.parametrize("page", chapters())
def test_chapter_mentions_are_links(page):
    plain = re.findall(r"\b[Cc]hapters? \d+\b", prose(page))
    assert not plain, f"{page}: link these to their chapters with {{doc}}: {plain}"


@pytest.mark.parametrize("page", chapters())
def test_glossary_terms_are_linked_where_the_chapter_uses_them(page):
    text, words = (ROOT / f"{page}.md").read_text(encoding="utf-8"), prose(page)
    # a special token written as inline code in the prose is a mention too
    blocks = re.sub(r"^## References.*?(?=^## |\Z)|^```\{code-cell\}.*?^```[ \t]*$|^#+ [^\n]*$", "", text,
                    flags=re.S | re.M)
    words_and_tokens = words + " ".join(re.findall(r"`(\[(?:CLS|SEP|MASK|PAD|UNK)\])`", blocks))
    unlinked = []
    for term, pattern in GLOSSARY_MENTIONS.items():
        if re.search(r"(?<![\w\-/])(?:" + pattern + r")(?![\w\-])", words_and_tokens, flags=re.I if term[0] != "[" and not term.isupper() else 0):
            if not re.search(r"\{term\}`(?:[^`<]*<)?" + re.escape(term) + r">?`", text, flags=re.I):
                unlinked.append(term)
    assert not unlinked, f"{page} uses these glossary terms without linking one mention: {unlinked}"


def test_library_methods_are_shown_without_their_class_indent():
    """A method shown with literalinclude's :pyobject: Class.method keeps its class's indent unless :dedent:."""
    for page in [*chapters(), "intro", "glossary", "exercises"]:
        text = (ROOT / f"{page}.md").read_text(encoding="utf-8")
        for block in re.findall(r"^```\{literalinclude\}.*?^```", text, flags=re.S | re.M):
            if re.search(r"^:pyobject: \w+\.\w+", block, flags=re.M):
                assert re.search(r"^:dedent:", block, flags=re.M), f"{page}: add :dedent: to\n{block}"


def test_no_glue_key_is_glued_twice():
    """A key glued twice on one page is a build warning (and -W fails the build): course.terms' BERT-Base values
    are glued once per page, and each literal key once."""
    for page in [*chapters(), "glossary", "intro"]:
        text = (ROOT / f"{page}.md").read_text(encoding="utf-8")
        calls = re.findall(r"^[^#\n]*\bglue_bert_base\(\)", text, flags=re.M)
        assert len(calls) <= 1, f"{page} glues the BERT-Base values {len(calls)} times"
        keys = collections.Counter(re.findall(r"""\bglue\(\s*["']([\w-]+)["']""", text))
        twice = sorted(k for k, n in keys.items() if n > 1)
        assert not twice, f"{page} glues these keys more than once: {twice}"


def test_chapter_links_say_the_number_of_the_chapter_they_open():
    """{doc}`chapter 6 <06_attention_masks>` must open the chapter whose title is "6. ...", also after the
    chapters are renumbered."""
    number = {}
    for page in chapters():
        title = re.search(r"^# (\d+)\.", (ROOT / f"{page}.md").read_text(encoding="utf-8"), flags=re.M)
        if title:
            number[Path(page).name] = int(title.group(1))
    for page in [*chapters(), "glossary", "intro", "exercises"]:
        text = (ROOT / f"{page}.md").read_text(encoding="utf-8")
        for shown, target in re.findall(r"\{doc\}`(?:[Cc]hapters? )?(\d+) <([^>]+)>`", text):
            name = Path(target).name
            if name in number:
                assert int(shown) == number[name], f"{page}: 'chapter {shown}' links to {target}, chapter {number[name]}"


def test_numeric_options_stay_in_order_and_the_quiz_keeps_its_letters():
    """Options that are all numbers are shown smallest first or largest first, not rotated ("5, 0, 1, 4",
    review G-7); the quiz still uses the letters placement dealt it, so the spreads above still hold."""
    from course.quiz import quiz_html

    questions = [(f"question {n}?", [f"right {n}", f"wrong {n}a", f"wrong {n}b", f"wrong {n}c"], 0, f"why {n}")
                 for n in range(3)]
    questions.append(("position?", ["0", "1", "4", "5"], "C", "counted across the pair"))
    questions.append(("loss?", ["0.968", "0.478", "about 0.620", "0.208"], 1, "-ln 0.62"))
    for key in ("sizes", "a", "b", "c", "d", "e"):
        page = quiz_html(questions, key=key)
        items = page.split('<li class="q">')[1:]
        shown = [re.findall(r"<span>[A-D]\. (.*?)</span>", item) for item in items]
        right = [next(i for i, label in enumerate(re.findall(r"<label>.*?</label>", item, flags=re.S))
                      if "fb ok" in label) for item in items]
        for options in shown[3:]:
            values = [float(o.removeprefix("about ")) for o in options]
            assert values in (sorted(values), sorted(values, reverse=True)), (key, options)
        assert shown[3][right[3]] == "4" and shown[4][right[4]] == "0.478", (key, shown)
        assert collections.Counter(right) == collections.Counter(placement([4] * 5, key)), key
