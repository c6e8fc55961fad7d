"""docs/source-claims.md accounts for every line of the four sources: one well-formed row per claim (in the
sources' order, with its line numbers), one row per group of code lines compared with BERT, and the lines
that state nothing. Every place the document says the book shows something exists (a chapter file with that
section heading, or a glossary entry), every wrong claim or wrong line of code is answered in the book or
has a proposed sentence, and the sources' lines are all covered. Every line of code that differs from BERT or
is wrong names the chapter section that says so, quoting its words, and the section is checked to say them.

The line checks read the sources themselves from ../shared/seeds (the course's source material, outside
the repository); where that folder is absent they are skipped, and the document's own consistency is still
checked. The few numbers the document computes about the sources' code are recomputed here."""
from __future__ import annotations

import re
from pathlib import Path

import pytest
import torch
import torch.nn.functional as F

ROOT = Path(__file__).resolve().parents[1]
TABLE = ROOT / "docs" / "source-claims.md"
SEEDS_DIR = ROOT.parent / "shared" / "seeds"
SEEDS = ("000", "001", "002", "003")  # the four documents of ../shared/seeds, by their prefixes
VERDICTS = {"correct", "loose", "wrong", "unverifiable"}
CODE_VERDICTS = {"same", "differs", "wrong", "plumbing"}
HEADER = ["id", "source", "lines", "claim (paraphrased)", "verdict", "correct value, basis", "where the book shows it"]
CODE_HEADER = ["id", "lines", "the source's code", "BERT (google-research/bert, transformers, bertlib)", "verdict",
               "what it changes for the model", "where the book says it"]
NO_CLAIM_HEADER = ["source", "lines", "what is there"]
PROPOSED_HEADER = ["rows", "chapter § section", "proposed sentence"]
# a place in the book, optionally with words its section says: 'chapters/05_cls_sep.md § Heading ("the words")'
REF = re.compile(r'^(?P<file>chapters/\d\d_[\w]+\.md|glossary\.md) § (?P<heading>.+?)(?: \("(?P<quote>[^"]+)"\))?$')
LISTING = re.compile(r"^### (?P<id>00[0-3]-[A-Z]) · lines (?P<lines>[\d, -]+) · .+$")
# a line of a source that looks like Python: it must lie in a listing of the code part
CODE_LINE = re.compile(r"^\s*(import |from \w+ import |def |class |return\b|print\(|if |elif |else:|for |torch\.|"
                       r"optimizer\.|loss\.|[A-Za-z_][\w.]*(\[[^\]]*\])?(, *[A-Za-z_]\w*)* *[+\-*/]?= |# |\"\"\"|\)|"
                       r"super\(|self\.)")
NOT_CODE = {("000", 218): "the padding mask of a worked number, written as an assignment"}


# --- reading the document ----------------------------------------------------------------------------------

def section(title: str) -> str:
    text = TABLE.read_text(encoding="utf-8")
    parts = re.split(r"^## (.+)$", text, flags=re.M)
    found = dict(zip(parts[1::2], parts[2::2]))
    assert title in found, f"docs/source-claims.md has no section '## {title}'"
    return found[title]


def table(text: str, header: list[str]) -> list[list[str]]:
    lines = [line for line in text.splitlines() if line.startswith("|")]
    cells = [[c.strip() for c in line.strip().strip("|").split(" | ")] for line in lines]
    assert cells[0] == header, cells[0]
    assert set("".join(cells[1])) <= set("-| "), "the second line must be the header rule"
    return cells[2:]


def rows() -> list[list[str]]:
    return table(section("Claims"), HEADER)


def listings() -> dict[str, tuple[str, list[list[str]]]]:
    """Listing id ('002-B') -> (its declared lines, its rows)."""
    text = section("The code, line by line")
    parts = re.split(r"^(### .+)$", text, flags=re.M)
    found = {}
    for heading, body in zip(parts[1::2], parts[2::2]):
        m = LISTING.match(heading)
        assert m, f"a listing heading is '### 00N-X · lines a-b · title', not {heading!r}"
        found[m["id"]] = (m["lines"], table(body, CODE_HEADER))
    return found


def no_claim_rows() -> list[list[str]]:
    return table(section("Lines with no claim"), NO_CLAIM_HEADER)


def proposals() -> list[list[str]]:
    return table(section("Sentences proposed for other chapters"), PROPOSED_HEADER)


def line_numbers(spec: str) -> set[int]:
    """'41, 45-47' -> {41, 45, 46, 47}; a malformed or backwards range fails."""
    numbers: set[int] = set()
    for part in spec.split(","):
        m = re.fullmatch(r"\s*(\d+)(?:-(\d+))?\s*", part)
        assert m, f"{spec!r} is not line numbers like '41, 45-47'"
        a, b = int(m[1]), int(m[2] or m[1])
        assert 1 <= a <= b, f"{spec!r}: {part!r} runs backwards"
        numbers |= set(range(a, b + 1))
    return numbers


def seed_lines(prefix: str) -> list[str]:
    files = sorted(SEEDS_DIR.glob(f"{prefix}_*.txt"))
    assert len(files) == 1, f"one source file {prefix}_*.txt in {SEEDS_DIR}, found {files}"
    return files[0].read_text(encoding="utf-8").splitlines()


def covered(prefix: str) -> set[int]:
    """Every line of one source that a claim, a code row or a no-claim row names."""
    lines = set()
    for r in rows():
        if r[1] == prefix:
            lines |= line_numbers(r[2])
    for lid, (_, code_rows) in listings().items():
        if lid.startswith(prefix):
            for r in code_rows:
                lines |= line_numbers(r[1])
    for source, spec, _ in no_claim_rows():
        if source == prefix:
            lines |= line_numbers(spec)
    return lines


def uncovered(text_lines: list[str], lines: set[int]) -> list[int]:
    return [i for i, line in enumerate(text_lines, 1) if line.strip() and i not in lines]


needs_seeds = pytest.mark.skipif(not SEEDS_DIR.is_dir(), reason=f"the sources are not at {SEEDS_DIR}")


# --- references into the book ------------------------------------------------------------------------------

def chapter_file(rel: str) -> Path | None:
    """The chapter a reference names; found by its name alone if the chapters were renumbered."""
    path = ROOT / rel
    if path.exists():
        return path
    name = rel.split("/", 1)[1][3:]  # "03_sizes.md" -> "sizes.md"
    found = sorted((ROOT / "chapters").glob(f"[0-9][0-9]_{name}"))
    return found[0] if len(found) == 1 else None


def headings(path: Path) -> set[str]:
    text = re.sub(r"^```.*?^```", "", path.read_text(encoding="utf-8"), flags=re.S | re.M)  # not code comments
    return {m.group(1).strip() for m in re.finditer(r"^#{2,4} (.+)$", text, flags=re.M)}


CODE_FENCES = {"{code-cell}", "{literalinclude}", "python", "bash", ""}  # fenced blocks that are not prose
FENCE = re.compile(r"^(`{3,}|:{3,})\s*(\S*)")
ROLE = re.compile(r"\{(?!glue)[\w:-]+\}`([^`<]*?)\s*(?:<[^>`]*>)?`")  # {term}`x <y>` reads as x; glue stays


def section_prose(path: Path, heading: str) -> str:
    """The prose of one section: from its heading to the next heading of the same or a higher level, without
    code cells or included code (a dropdown's or an admonition's text stays)."""
    fences: list[tuple[str, bool]] = []  # the open fences, each with whether it holds code
    level, body = 0, []
    for line in path.read_text(encoding="utf-8").splitlines():
        m = FENCE.match(line)
        if m and fences and m[1] == fences[-1][0] and not m[2]:
            fences.pop()
            continue
        if any(code for _, code in fences):
            continue
        if m:
            fences.append((m[1], m[2] in CODE_FENCES))
            continue
        h = re.match(r"^(#{1,6}) (.+?)\s*$", line) if not fences else None
        if h and level and len(h[1]) <= level:
            break
        if h and not level and h[2] == heading:
            level = len(h[1])
        elif level:
            body.append(line)
    assert level, f"{path.name} has no section {heading!r}"
    return "\n".join(body)


def normalised(text: str) -> str:
    """Case and line breaks ignored; a MyST role such as {term}`pooler <Pooler>` read as its displayed text."""
    return " ".join(ROLE.sub(r"\1", text).split()).lower()


def glossary_terms() -> set[str]:
    text = (ROOT / "glossary.md").read_text(encoding="utf-8")
    body = re.search(r"```\{glossary\}\n(.*?)\n```", text, flags=re.S).group(1)
    return {line.strip() for line in body.splitlines() if line and not line.startswith(" ")}


def check_reference(rid: str, ref: str, terms: set[str]) -> None:
    ref = ref.removeprefix("proposed: ")
    m = REF.match(ref)
    assert m, f"{rid}: {ref!r} is not 'chapters/NN_name.md § Heading' or 'glossary.md § Term'"
    if m["file"] == "glossary.md":
        assert m["heading"] in terms, f"{rid}: the glossary has no entry {m['heading']!r}"
        return
    path = chapter_file(m["file"])
    assert path is not None, f"{rid}: no chapter {m['file']}"
    assert m["heading"] in headings(path), f"{rid}: {path.name} has no section {m['heading']!r}"
    if m["quote"]:
        assert normalised(m["quote"]) in normalised(section_prose(path, m["heading"])), (
            f"{rid}: {path.name} § {m['heading']} does not say {m['quote']!r}")


# --- the claims --------------------------------------------------------------------------------------------

def test_rows_are_well_formed():
    claims = rows()
    assert len(claims) >= 100, f"only {len(claims)} claims"
    ids = [r[0] for r in claims]
    assert len(ids) == len(set(ids)), "duplicate ids"
    for r in claims:
        assert len(r) == len(HEADER), r
        rid, source, lines, claim, verdict, basis, where = r
        assert re.fullmatch(r"00[0-3]-\d\d", rid) and rid[:3] == source, r
        assert verdict in VERDICTS, r
        assert claim and basis and where, r
        line_numbers(lines)
    for seed in SEEDS:  # numbered 01, 02, ... in each source's order (by first line), none skipped
        mine = [r for r in claims if r[1] == seed]
        assert [int(r[0][4:]) for r in mine] == list(range(1, len(mine) + 1)), seed
        firsts = [min(line_numbers(r[2])) for r in mine]
        assert firsts == sorted(firsts), f"{seed}: claims not in the source's order: {firsts}"


def test_a_wrong_or_loose_claim_is_answered_in_the_book():
    for rid, _, _, claim, verdict, _, where in rows():
        if verdict in ("wrong", "loose"):
            assert where != "not covered", f"{rid} ({verdict}): the book must say so ({claim})"


def test_every_reference_exists():
    terms = glossary_terms()
    refs = [(r[0], r[-1]) for r in rows()]
    refs += [(r[0], r[-1]) for _, code_rows in listings().values() for r in code_rows]
    refs += [(r[0], r[1]) for r in proposals()]
    for rid, where in refs:
        if where == "not covered":
            continue
        for ref in where.split("; "):
            check_reference(rid, ref, terms)


def test_every_proposal_has_its_sentence():
    """A 'proposed:' place names a section the book has; the sentence for it is in the last table."""
    proposed = {(r[0], r[-1].removeprefix("proposed: ")) for r in rows() if r[-1].startswith("proposed: ")}
    proposed |= {(r[0], r[-1].removeprefix("proposed: ")) for _, code_rows in listings().values()
                 for r in code_rows if r[-1].startswith("proposed: ")}
    offered = {(rid.strip(), where) for ids, where, sentence in proposals() for rid in ids.split(",") if sentence}
    assert proposed <= offered, f"proposed with no sentence: {sorted(proposed - offered)}"
    assert offered <= proposed, f"a sentence no row proposes: {sorted(offered - proposed)}"
    for rid, where in sorted(proposed):
        print(f"\n{rid}: to be said in {where}")


# --- the code ----------------------------------------------------------------------------------------------

def test_code_rows_are_well_formed():
    found = listings()
    assert {lid[:3] for lid in found} == set(SEEDS), "every source has at least one listing"
    for lid, (declared, code_rows) in found.items():
        span = line_numbers(declared)
        assert code_rows, f"{lid}: no rows"
        ids = [r[0] for r in code_rows]
        assert ids == [f"{lid}{i}" for i in range(1, len(ids) + 1)], f"{lid}: ids {ids}"
        for r in code_rows:
            assert len(r) == len(CODE_HEADER), r
            rid, lines, what, bert, verdict, change, where = r
            assert verdict in CODE_VERDICTS, r
            assert what and change and where, r
            assert bert or verdict == "plumbing", f"{rid}: say what BERT does"
            assert line_numbers(lines) <= span, f"{rid}: lines {lines} outside the listing's {declared}"
            if verdict == "wrong":
                assert where != "not covered", f"{rid}: a wrong line of code must be answered in the book"


def test_a_difference_is_said_on_the_page_of_its_idea():
    """Issue 30 §3: every line of a source's code that is not what BERT does names the chapter section that
    says so, with words of that section (checked by check_reference), not only this document."""
    differences = [r for _, code_rows in listings().values() for r in code_rows if r[4] in ("differs", "wrong")]
    assert len(differences) >= 28, f"only {len(differences)} rows differ or are wrong"
    terms = glossary_terms()
    for rid, *_, where in differences:
        assert where != "not covered", f"{rid}: name the chapter section that says this difference"
        for ref in where.split("; "):
            m = REF.match(ref)
            assert m and m["file"].startswith("chapters/"), f"{rid}: {ref!r} is not a chapter section"
            assert m["quote"], f"{rid}: quote what {m['heading']!r} says about it: {ref} (\"...\")"
            check_reference(rid, ref, terms)


@needs_seeds
def test_each_listing_is_covered_line_by_line():
    for lid, (declared, code_rows) in listings().items():
        text = seed_lines(lid[:3])
        span = sorted(line_numbers(declared))
        named = set().union(*(line_numbers(r[1]) for r in code_rows))
        missing = [i for i in span if text[i - 1].strip() and i not in named]
        assert not missing, f"{lid}: lines {missing} of the listing have no row"


@needs_seeds
def test_every_line_of_every_source_is_accounted_for():
    for seed in SEEDS:
        text = seed_lines(seed)
        lines = covered(seed)
        assert max(lines) <= len(text), f"{seed}: names line {max(lines)}, the source has {len(text)}"
        missing = uncovered(text, lines)
        assert not missing, f"{seed}: lines {missing} are in no claim, code row or no-claim row"


@needs_seeds
def test_every_line_that_looks_like_code_is_in_a_listing():
    spans = {seed: set() for seed in SEEDS}
    for lid, (declared, _) in listings().items():
        spans[lid[:3]] |= line_numbers(declared)
    for seed in SEEDS:
        code_like = [i for i, line in enumerate(seed_lines(seed), 1)
                     if CODE_LINE.match(line) and (seed, i) not in NOT_CODE]
        outside = [i for i in code_like if i not in spans[seed]]
        assert not outside, f"{seed}: lines {outside} look like code and lie in no listing"


def test_the_computations_the_code_rows_cite():
    text = TABLE.read_text(encoding="utf-8")
    gen = torch.Generator().manual_seed(0)
    # 000-D3: a bias on the span logits adds one number to every position: the softmax over positions ignores it
    h, w = torch.randn(2, 7, 8, generator=gen), torch.randn(8, generator=gen)
    assert torch.allclose(torch.softmax(h @ w, -1), torch.softmax(h @ w + 0.7, -1), atol=1e-6)
    # 001-A2: cross-entropy on (batch, seq_len, vocab) logits against (batch, seq_len) ids does not run
    with pytest.raises((RuntimeError, ValueError)):
        F.cross_entropy(torch.randn(2, 5, 11, generator=gen), torch.randint(11, (2, 5), generator=gen))
    # 003-A3: independent draws select nothing in 6 positions with probability 0.85^6
    assert f"{0.85 ** 6:.1%}" in text
    # 003-B2: with no position embeddings the encoder sees a set: [CLS]'s output ignores the word order
    torch.manual_seed(0)
    layer = torch.nn.TransformerEncoderLayer(d_model=16, nhead=2, dim_feedforward=64, dropout=0.0, batch_first=True)
    encoder = torch.nn.TransformerEncoder(layer, num_layers=2, enable_nested_tensor=False).eval()
    embed = torch.nn.Embedding(50, 16)
    ids = torch.tensor([[1, 7, 9, 12, 30, 2]])
    shuffled = torch.tensor([[1, 30, 12, 7, 9, 2]])  # the words after [CLS] in another order
    with torch.no_grad():
        a, b = encoder(embed(ids))[0, 0], encoder(embed(shuffled))[0, 0]
    assert torch.allclose(a, b, atol=1e-5)
    # 002-B6: nn.TransformerEncoder copies one layer, so its layers start equal
    assert torch.equal(encoder.layers[0].linear1.weight, encoder.layers[1].linear1.weight)


def test_the_checks_can_fail(tmp_path):
    """The reference resolver rejects a missing file and a missing heading; the line checks see a gap."""
    assert chapter_file("chapters/99_no_such_chapter.md") is None
    assert "No such section" not in headings(ROOT / "chapters" / "01_positioning.md")
    assert line_numbers("41, 45-47") == {41, 45, 46, 47}
    with pytest.raises(AssertionError):
        line_numbers("47-45")
    assert uncovered(["a", "", "b", "c"], {1, 3}) == [4]  # the blank line 2 needs no row


def test_a_quote_must_be_in_its_section(tmp_path):
    """A quote is looked for in its own section's prose only: not in a code cell, not in the next section,
    and a role counts as its displayed text."""
    page = tmp_path / "chapters" / "05_demo.md"
    page.parent.mkdir()
    page.write_text("## The head\n\nThree tutorials leave the {term}`pooler <Pooler>`\nout.\n\n"
                    "```{code-cell} ipython3\n# skips the pooler\n```\n\n### Below\n\nstill here\n\n"
                    "## Next\n\nthe pooler is skipped\n", encoding="utf-8")
    prose = normalised(section_prose(page, "The head"))
    assert "leave the pooler out" in prose and "still here" in prose
    assert "skips the pooler" not in prose and "is skipped" not in prose
    with pytest.raises(AssertionError):
        section_prose(page, "No such heading")
    ref = 'chapters/05_cls_sep.md § The classification head on [CLS] ("{}")'
    check_reference("x", ref.format("leave the pooler out"), set())
    with pytest.raises(AssertionError):
        check_reference("x", ref.format("words this section does not say"), set())
