"""docs/source-claims.md: one well-formed row per claim of the four sources, and every place it says the
book shows a claim exists (a chapter file with that section heading, or a glossary entry)."""
from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TABLE = ROOT / "docs" / "source-claims.md"
SEEDS = ("000", "001", "002", "003")  # the four documents of /work/shared/seeds, by their prefixes
VERDICTS = {"correct", "loose", "wrong", "unverifiable"}
HEADER = ["id", "source", "claim (paraphrased)", "verdict", "correct value, basis", "where the book shows it"]
REF = re.compile(r"^(?P<file>chapters/\d\d_[\w]+\.md|glossary\.md) § (?P<heading>.+)$")


def rows() -> list[list[str]]:
    lines = [line for line in TABLE.read_text(encoding="utf-8").splitlines() if line.startswith("|")]
    cells = [[c.strip() for c in line.strip().strip("|").split(" | ")] for line in lines]
    assert cells[0] == HEADER, cells[0]
    assert set("".join(cells[1])) <= set("-| "), "the second line must be the header rule"
    return cells[2:]


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


def glossary_terms() -> set[str]:
    text = (ROOT / "glossary.md").read_text(encoding="utf-8")
    body = re.search(r"```\{glossary\}\n(.*?)\n```", text, flags=re.S).group(1)
    return {line.strip() for line in body.splitlines() if line and not line.startswith(" ")}


def test_rows_are_well_formed():
    table = rows()
    assert len(table) >= 100, f"only {len(table)} claims"
    ids = [r[0] for r in table]
    assert len(ids) == len(set(ids)), "duplicate ids"
    for r in table:
        assert len(r) == len(HEADER), r
        rid, source, claim, verdict, basis, where = r
        assert re.fullmatch(r"00[0-3]-\d\d", rid) and rid[:3] == source, r
        assert verdict in VERDICTS, r
        assert claim and basis and where, r
    for seed in SEEDS:  # numbered 01, 02, ... in each source's order, none skipped
        numbers = [int(r[0][4:]) for r in table if r[1] == seed]
        assert numbers == list(range(1, len(numbers) + 1)), (seed, numbers)


def test_a_wrong_or_loose_claim_is_answered_in_the_book():
    for rid, _, claim, verdict, _, where in rows():
        if verdict in ("wrong", "loose"):
            assert where != "not covered", f"{rid} ({verdict}): the book must say so ({claim})"


def test_every_reference_exists():
    terms = glossary_terms()
    for rid, *_, where in rows():
        if where == "not covered":
            continue
        for ref in where.split("; "):
            m = REF.match(ref)
            assert m, f"{rid}: {ref!r} is not 'chapters/NN_name.md § Heading' or 'glossary.md § Term'"
            if m["file"] == "glossary.md":
                assert m["heading"] in terms, f"{rid}: the glossary has no entry {m['heading']!r}"
                continue
            path = chapter_file(m["file"])
            assert path is not None, f"{rid}: no chapter {m['file']}"
            assert m["heading"] in headings(path), f"{rid}: {path.name} has no section {m['heading']!r}"


def test_the_checks_can_fail(tmp_path):
    """The reference resolver rejects a missing file and a missing heading."""
    assert chapter_file("chapters/99_no_such_chapter.md") is None
    assert "No such section" not in headings(ROOT / "chapters" / "01_positioning.md")
