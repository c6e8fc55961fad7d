"""No number typed by hand in the book's prose where a glue role could produce it (issue 13, section 5).

Every chapter, the glossary and the landing page are read as MyST Markdown. Code cells, fenced code, inline
code, glue roles, cross-reference targets, links' addresses, labels and directive options are set aside;
what is left is prose (dropdowns, tables and admonitions included) and math. In prose every numeral is
checked; in math, numerals of three or more digits and decimals (a formula's small coefficients, such as
the 2 of $x^2$ or the 4 of $4H^2$, are notation, not results).

A numeral passes when a rule of ``ALLOWED`` explains it (years, references to sections, tables and
chapters, the recipes' names, a source's words in quotation marks, and a few more, each with its reason),
when its sentence cites what it quotes (the paper, a table or appendix, a year, "a tutorial":
``CITATION``), or when it is listed in ``ALLOWED_AT`` for one file and one phrase, with the reason.
Anything else should be glued (``glue("key", value)`` in a cell, ``{glue:text}`key``` in the text).
Numbers written as words ("two layers", "seven times") are not checked.

Prose that a cell writes is read too (``code_prose``): the literal words of every string a chapter's code (or
a demo module of ``course/demos``) hands to ``describe`` (a figure's caption and alt text), ``Markdown`` (a
glued sentence), ``said`` (a verdict's sentences) or ``html_table`` (a table's header, cells written out, caption). An f-string's fields are computed, so each stands for
one glued value; only the words around them are checked, by the same rules.
"""
from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PAGES = sorted((ROOT / "chapters").glob("*.md")) + [ROOT / "glossary.md", ROOT / "intro.md"]
DEMOS = sorted((ROOT / "course" / "demos").glob("*.py"))

# --- what is not prose -------------------------------------------------------------------------------------
FRONT_MATTER = re.compile(r"\A---\n.*?\n---\n", re.S)
FENCE = re.compile(r"^(?P<f>`{3,}|~{3,})(?P<info>[^\n]*)\n(?P<body>.*?)^(?P=f)[ \t]*$", re.S | re.M)
# directives whose body is prose (MyST parses it as Markdown); every other fenced block is code or data
PROSE_DIRECTIVES = re.compile(r"\{(dropdown|glossary|note|tip|warning|admonition|important|seealso|figure)\}")
COLON_FENCE_LINE = re.compile(r"^:{3,}.*$", re.M)  # ":::{dropdown} title" opens, ":::" closes: the title stays
DIRECTIVE_OPTION = re.compile(r"^:[a-z_-]+:.*$", re.M)
TUTORIAL_LINK = re.compile(r"\{ref\}`([^`<]*?)\s*<the-tutorials>`")
ROLE = re.compile(r"\{(glue(:[a-z]+)?|doc|ref|numref|download|eq|term|cite)\}`[^`]*`")
INLINE_CODE = re.compile(r"`[^`\n]*`")
LINK_TARGET = re.compile(r"\]\([^)]*\)")
URL = re.compile(r"https?://\S+|arXiv:\S+|#\d+")
LABEL = re.compile(r"^\([\w-]+\)=\s*$", re.M)
HTML_COMMENT = re.compile(r"<!--.*?-->", re.S)
HEADING_NUMBER = re.compile(r"^(#{1,6} )\d+(\.\d+)*\.? ", re.M)  # "# 10. Pretraining", "### 2. 80/10/10 ..."
LIST_NUMBER = re.compile(r"^(\s*)\d+\. ", re.M)  # a numbered list's "1. "
DISPLAY_MATH = re.compile(r"\$\$(.*?)\$\$", re.S)
INLINE_MATH = re.compile(r"(?<![\\$])\$([^$\n]+?)\$")

# --- what a numeral is ------------------------------------------------------------------------------------
# 12, 30,522, 0.69, 1e-3, 2e-5, 15%, 110M, 30k, 1.5x; not the digits inside a name (GPT-1, L6, SST-2, v1.1)
NUMBER = re.compile(r"(?<![\w.\-/#])(?<!\\)((?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?(?:e-?\d+)?)(%|M\b|k\b|x\b|B\b)?"
                    r"(?![\w/]|\.\d|-\w)")

ALLOWED: list[tuple[re.Pattern, str]] = [
    (re.compile(r"\b(19|20)\d\d\b"), "a year (a citation's, or a model's release)"),
    (re.compile(r"\b([Cc]hapters?|ch\.|[Ss]ections?|§|[Tt]ables?|[Ff]igures?|[Aa]ppendix|[Ee]xperiments?|[Pp]art|Q|"
                r"[Ee]xercises?|[Aa]ssignments?|[Ss]ources?)\s+[A-C]?\d+(\.\d+)*((,| and| to| or|, and)+ \d+(\.\d+)*)*\b"),
     "a reference to a chapter, section, table, figure, appendix, experiment or source document by its number"),
    (re.compile(r"(?<![\d.])(80/10/10|100/0/0|80/20/0|0/100/0|0/0/100)(?![\d/])"), "the name of a masking recipe"),
    (re.compile(r"(?<![\d.])(15|80|10|50|100|85)%"),
     "15%, 80% and 10% name BERT's masking recipe (85% the unselected rest, 100% the all-[MASK] variant), 50% "
     "NSP's coin: the recipes' definitions, bertlib's defaults (checked by tests/test_masking.py, tests/test_nsp.py)"),
    (re.compile(r"(?<![\d.])(0\.15|0\.85|0\.8|0\.9|0\.1)(?![\d])"),
     "the masking recipe's probabilities in its definition (0.85 = 1 - 0.15, 0.9 = 0.8 + 0.1)"),
    (re.compile(r"(?<![\d.])-100\b"), "ignore_index, PyTorch's default (the glossary glues it from torch.nn.CrossEntropyLoss)"),
    (re.compile(r"(?<![\d.])(110M|340M)\b"),
     "the paper's published sizes, used as the models' names (chapter 3 computes the exact counts)"),
    (re.compile(r"(?<![\d.])(512|128)(?![\d.])"), "BERT's two pretraining sequence lengths (paper, appendix A.2); "
     "512 is also BERT's max_position_embeddings"),
    (re.compile(r"(?<![\w.])[01](?!\d|\.\d)"), "0 and 1 as values of a definition: a label, an id, a mask "
     "entry, an index, a probability's bounds"),
    (re.compile(r"\b(SQuAD|v)\s?\d\.\d\b"), "a dataset's version"),
    (re.compile(r"0\.044715"), "the constant of GELU's tanh approximation, part of its definition"),
    (re.compile(r"“[^”]*”|\"[^\"]*\""), "a claim quoted from a source, in quotation marks; the book computes it "
     "next to the quotation (docs/source-claims.md lists each)"),
]

# one file, one phrase: each a value the book quotes (from the paper, a source or a program's defaults) or
# a formula's notation, with where it comes from
ALLOWED_AT: dict[tuple[str, str], str] = {
    ("chapters/01_positioning.md", "[0.20, 0.40, 0.40]"): "a tutorial's rounded figures, checked by the cell above",
    ("chapters/01_positioning.md", "[0.60, 0.80]"): "a tutorial's rounded figures, checked by the cell above",
    ("chapters/02_encoder_layer.md", "[0.20, 0.40, 0.40]"): "a tutorial's rounded figures, checked by a cell",
    ("chapters/02_encoder_layer.md", "[0.60, 0.80]"): "a tutorial's rounded figures, checked by a cell",
    ("chapters/03_sizes.md", "| 12 layers |"): "the row label of a tutorial's table, redone exactly beside it",
    ("chapters/03_sizes.md", "4 \\times 768 \\times 768"): "a tutorial's rule, quoted; the table below redoes it",
    ("chapters/03_sizes.md", "2 \\times 768 \\times 3072"): "a tutorial's rule, quoted; the table below redoes it",
    ("chapters/03_sizes.md", "30{,}000 \\times H"): "the paper's 30,000-token vocabulary in a mental estimate",
    ("chapters/03_sizes.md", "with 1 head or 12 has the same count"): "BERT-Base's 12 heads (paper §3); the cell "
     "below computes both counts",
    ("chapters/04_embeddings.md", "of width 4 and run"): "the width of a tutorial's four-dimensional example",
    ("chapters/04_embeddings.md", "| position 5 |"): "a tutorial's example, checked in the cell",
    ("chapters/04_embeddings.md", "not at position 5 in sentence B"): "a tutorial's example, checked in the cell",
    ("chapters/07_mlm.md", "-\\ln 0.62 \\approx 0.478"): "the tutorials' worked number, computed beside it",
    ("chapters/07_mlm.md", "-\\ln 0.01 \\approx 4.6"): "the tutorials' worked number, computed beside it",
    ("chapters/07_mlm.md", "-\\ln 0.62 ="): "the tutorials' worked number, computed by the glue that follows",
    ("chapters/07_mlm.md", "(say 50)"): "a hypothetical value, for illustration",
    ("chapters/08_masking.md", "(10 copies with different masks by default"): "create_pretraining_data.py's "
     "--dupe_factor default",
    ("chapters/08_masking.md", "2,000 draws at a time"): "the live (ipywidgets) demo's draw count, in "
     "course/demos/masking.py, not run on the static page",
    ("chapters/08_masking.md", "later work found higher rates (40%)"): "Wettig et al. (2023), cited in the "
     "chapter's references",
    ("chapters/09_nsp.md", "a linear layer to 2 logits"): "NSP's two classes, by definition",
    ("chapters/09_nsp.md", "packs full sentences up to"): "RoBERTa's input format (Liu et al., 2019, §4.2)",
    ("chapters/10_finetuning.md", "For GLUE it used batches of 32 and 3 epochs"): "the paper's §4.1",
    ("chapters/10_finetuning.md", "(1e-4 against 2e-5 to 5e-5)"): "the paper's appendix A.2 and A.3; the cell "
     "above computes the ratios",
    ("chapters/10_finetuning.md", "Batch 16 or 32; Adam learning rate 5e-5, 3e-5 or 2e-5; 2, 3 or 4 epochs"):
        "the paper's fine-tuning grid (appendix A.3), asserted against demo.PAPER_GRID in the chapter",
    ("chapters/10_finetuning.md", "\\mathcal{N}(0, 0.02)"): "BERT's initializer_range (BertConfig.base())",
    ("chapters/11_pretraining.md", "| 128 for 90% of the steps, then 512 |"): "the paper's column (appendix A.2)",
    ("chapters/11_pretraining.md", "| 256 sequences |"): "the paper's column (appendix A.2)",
    ("chapters/11_pretraining.md", "| 1e-4, 10,000 steps |"): "the paper's column (appendix A.2)",
    ("chapters/11_pretraining.md", "| N(0, 0.02), truncated at two standard deviations |"): "the original's column "
     "(BertConfig.base().initializer_range; modeling.py's truncated_normal_initializer)",
    ("chapters/11_pretraining.md", "| global norm 1.0 |"): "the original's column (optimization.py, "
     "clip_by_global_norm(grads, clip_norm=1.0))",
    ("chapters/11_pretraining.md", "0.02 suits BERT-Base's width 768"): "BERT-Base's published width and "
     "initialisation (paper §3, appendix A.2)",
    ("chapters/11_pretraining.md", "| dropout | 0.1 |"): "the paper's column (appendix A.2)",
}

CITATION = re.compile(r"\b(the paper|paper's|Devlin|et al\.|Table \d|appendix [A-C]|(19|20)\d\d)\b"
                      r"|(?i:\b(our|the|one of our) sources?'?s?\b)"
                      r"|(?i:\b(a|the|one|another|two|that|same) tutorials?'?s?\b)")  # intro.md, "The claims it checks"


def prose_and_math(text: str) -> tuple[str, str]:
    """(prose, math) of one MyST page, everything else blanked out (newlines kept for line numbers)."""
    text = FRONT_MATTER.sub(lambda m: "\n" * m.group(0).count("\n"), text)

    def fence(m: re.Match) -> str:
        if PROSE_DIRECTIVES.search(m.group("info")):
            return "\n" + m.group("body") + "\n"
        return "\n" * m.group(0).count("\n")

    text = FENCE.sub(fence, text)
    text = TUTORIAL_LINK.sub(lambda m: m.group(1), text)  # "one {ref}`tutorial <the-tutorials>`" reads "one tutorial"
    for pattern in (HTML_COMMENT, LABEL, DIRECTIVE_OPTION, ROLE, INLINE_CODE, LINK_TARGET, URL):
        text = pattern.sub(lambda m: "\n" * m.group(0).count("\n"), text)
    text = COLON_FENCE_LINE.sub(lambda m: re.sub(r"^:{3,}(\{\w+\})?", "", m.group(0)), text)
    text = HEADING_NUMBER.sub(r"\1", text)
    text = LIST_NUMBER.sub(r"\1", text)
    math_parts: list[str] = []

    def take_math(m: re.Match) -> str:
        math_parts.append(m.group(1))
        return " " + "\n" * m.group(0).count("\n")

    text = DISPLAY_MATH.sub(take_math, text)
    text = INLINE_MATH.sub(take_math, text)
    return text, "\n".join(math_parts)


def sentences(text: str) -> list[str]:
    """Sentences, table rows and list items of the prose, whitespace collapsed."""
    out = []
    for block in re.split(r"\n\s*\n", text):
        lines = block.split("\n")
        if all(line.lstrip().startswith("|") for line in lines if line.strip()):
            out += [" ".join(line.split()) for line in lines if line.strip()]
            continue
        flat = " ".join(block.split())
        out += [s for s in re.split(r"(?<=[.!?])\s+(?=[A-Z*\"(])", flat) if s]
    return out


def unnumbered(rel: str) -> str:
    """A chapter's path without its number, so that ALLOWED_AT survives a renumbering."""
    return re.sub(r"^chapters/\d\d_", "chapters/", rel)


def allowed_at(rel: str, text: str) -> bool:
    return any(unnumbered(rel) == unnumbered(f) and phrase in text for f, phrase in ALLOWED_AT)


def allowed_spans(sentence: str) -> list[tuple[int, int]]:
    return [m.span() for pattern, _ in ALLOWED for m in pattern.finditer(sentence)]


def typed_numbers(path: Path) -> list[str]:
    """Each numeral of the page that no rule explains, with its sentence."""
    prose, math = prose_and_math(path.read_text(encoding="utf-8"))
    rel = path.relative_to(ROOT).as_posix()
    found = []
    for sentence in sentences(prose):
        if CITATION.search(sentence):
            continue  # a value quoted from the paper or a source, with its citation in the same sentence
        spans = allowed_spans(sentence)
        for m in NUMBER.finditer(sentence):
            if any(a <= m.start() and m.end() <= b for a, b in spans):
                continue
            if allowed_at(rel, sentence):
                continue
            found.append(f"{rel}: {m.group(0)!r} in: {sentence[:160]}")
    for formula in math.split("\n"):
        for m in NUMBER.finditer(formula):
            value = m.group(1).replace(",", "")
            if "." in value or "e" in value or len(value) >= 3:
                if allowed_at(rel, formula):
                    continue
                if any(a <= m.start() and m.end() <= b for a, b in allowed_spans(formula)):
                    continue
                found.append(f"{rel}: {m.group(0)!r} in math: {formula.strip()[:160]}")
    return found


# --- prose written by code -----------------------------------------------------------------------------------
CODE_CELL = re.compile(r"^```\{code-cell\}[^\n]*\n(?P<body>.*?)^```", re.S | re.M)
# a figure's caption and alt text; a glued sentence; a verdict's sentences; a table's header, cells and caption
PROSE_CALLS = {"describe", "Markdown", "said", "html_table"}
FIELD = "\u2026"  # what an f-string's computed field reads as: no numeral


def _words_of(node: ast.AST) -> list[str]:
    """The texts a string expression can produce, each computed field replaced by ``FIELD``: a literal, an
    f-string, a concatenation with ``+``, either branch of ``a if c else b``; anything else is computed."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return [node.value]
    if isinstance(node, ast.JoinedStr):
        return ["".join(v.value if isinstance(v, ast.Constant) else FIELD for v in node.values)]
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        return [a + b for a in _words_of(node.left) or [FIELD] for b in _words_of(node.right) or [FIELD]]
    if isinstance(node, ast.IfExp):
        return _words_of(node.body) + _words_of(node.orelse)
    if isinstance(node, (ast.List, ast.Tuple)):  # a table's header or a row written out
        return [words for element in node.elts for words in _words_of(element)]
    return []


def code_prose(source: str) -> list[str]:
    """The words a piece of Python writes into the page by hand: the literal parts of each string it passes to
    ``describe``, ``Markdown`` or ``said``."""
    source = "\n".join(line for line in source.split("\n") if not line.lstrip().startswith(("%", "!", ":")))
    out = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Call):
            name = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")
            if name in PROSE_CALLS:
                for arg in [*node.args, *(k.value for k in node.keywords)]:
                    out += _words_of(arg)
    return out


def typed_numbers_in_code(path: Path) -> list[str]:
    """Each numeral typed in the words a chapter's cells (or a demo module) write, that no rule explains."""
    text = path.read_text(encoding="utf-8")
    rel = path.relative_to(ROOT).as_posix()
    cells = [m.group("body") for m in CODE_CELL.finditer(text)] if path.suffix == ".md" else [text]
    found = []
    for cell in cells:
        for words in code_prose(cell):
            for sentence in sentences(" ".join(words.split())):
                if CITATION.search(sentence):
                    continue
                spans = allowed_spans(sentence)
                for m in NUMBER.finditer(sentence):
                    if any(a <= m.start() and m.end() <= b for a, b in spans) or allowed_at(rel, sentence):
                        continue
                    found.append(f"{rel}: {m.group(0)!r} in code's words: {sentence[:160]}")
    return found


@pytest.mark.parametrize("path", PAGES + DEMOS, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_no_typed_numbers_in_what_code_writes(path):
    found = typed_numbers_in_code(path)
    assert not found, ("numbers typed in a caption or glued sentence (compute them in the f-string, or allow-list "
                       "them with a reason):\n" + "\n".join(found))


def test_the_checker_reads_what_code_writes(tmp_path):
    """Captions, glued sentences and tables: a typed number is caught in a literal, an f-string's words, either
    branch of a conditional, a concatenation and a table's header; an f-string's computed fields, rows computed
    elsewhere and strings passed to anything else are not."""
    page = tmp_path / "page.md"
    page.write_text(
        "# A page\n\n```{code-cell} ipython3\n:tags: [remove-cell]\n\n"
        "describe(fig, f\"The loss falls from {a:.2f} to 0.31 in {n} steps.\")\n"
        "glue(\"k\", Markdown(\"It took 12 seconds\" if fast else \"It took \" + str(t) + \" or 7 minutes\"))\n"
        "glue(\"s\", Markdown(said(c, \"larger by 4 points\", \"smaller\", f\"{x:.3f} apart\")))\n"
        "print(\"not prose: 99\")\nhtml_table([\"seed\", \"top 5\"], rows)\n```\n", encoding="utf-8")
    global ROOT
    saved, ROOT = ROOT, tmp_path
    try:
        found = typed_numbers_in_code(page)
    finally:
        ROOT = saved
    assert sorted(f.split("'")[1] for f in found) == sorted(["0.31", "12", "7", "4", "5"]), found


@pytest.mark.parametrize("path", PAGES, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_no_typed_numbers_in_prose(path):
    found = typed_numbers(path)
    assert not found, "numbers typed in prose (glue them, or allow-list them with a reason):\n" + "\n".join(found)


def test_the_checker_finds_typed_numbers(tmp_path):
    """The scanner itself: a typed result is caught in prose, a table, a dropdown and math; glue, code and
    the allowed kinds are not."""
    page = tmp_path / "page.md"
    page.write_text(
        "---\njupytext: {}\n---\n# 3. A page\n\nThe run took 211 seconds and reached 0.289.\n\n"
        "| model | score |\n|---|---|\n| tiny | 0.561 |\n\n"
        "```{dropdown} Why?\nAbout 7 times the work.\n```\n\n"
        "At initialisation the loss is $\\ln V \\approx 10.3$.\n\n"
        "```{code-cell} ipython3\nx = 12345\n```\n\n"
        "Glued: {glue:text}`ch_x:.3f`, code `x = 768`, in 2019 (section 4.2, Table 5), chapter 9, 81/10/10 "
        "at 15%, label -100, GPT-1 and SST-2.\n",
        encoding="utf-8")
    global ROOT
    saved, ROOT = ROOT, tmp_path
    try:
        found = typed_numbers(page)
    finally:
        ROOT = saved
    numbers = sorted(f.split("'")[1] for f in found)
    assert numbers == sorted(["211", "0.289", "0.561", "7", "10.3"]), found


def test_every_allow_list_entry_is_still_needed():
    """An ALLOWED_AT entry whose phrase no longer occurs in its file is stale."""
    for (rel, phrase), reason in ALLOWED_AT.items():
        assert reason, (rel, phrase)
        matches = [p for p in PAGES if unnumbered(p.relative_to(ROOT).as_posix()) == unnumbered(rel)]
        assert len(matches) == 1, f"{rel}: no page (or several) of that name"
        text = " ".join(matches[0].read_text(encoding="utf-8").split())
        assert phrase in text, f"{rel}: the allowed phrase {phrase!r} is gone; remove its entry"
