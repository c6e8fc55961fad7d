"""docs/review-2026-12-01-closed.md answers every finding of the review of 2026-12-01 (issue 19): each id
once, with a status (closed, answered, open) and what changed or why not; every commit it cites exists.

The review itself lives outside the repository (../shared/reviews/); where it is absent, the ids are
checked against the closing note's own count of 49 instead."""
from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
REVIEW = ROOT.parent / "shared" / "reviews" / "book-review-2026-12-01.md"
CLOSED = ROOT / "docs" / "review-2026-12-01-closed.md"
LINE = re.compile(r"^- \*\*(?P<id>G-\d+|\d+-\d+)\*\* \((?P<status>closed|answered|open)(?:, High)?\): (?P<what>.+)$")
COMMIT = re.compile(r"\b[0-9a-f]{7}\b")


def closing_lines() -> dict[str, re.Match]:
    lines: dict[str, re.Match] = {}
    for line in CLOSED.read_text(encoding="utf-8").splitlines():
        if line.startswith("- **"):
            m = LINE.match(line)
            assert m, f"a finding's line is '- **id** (status): what changed or why not', not {line[:80]!r}"
            assert m["id"] not in lines, f"{m['id']} is listed twice"
            lines[m["id"]] = m
    return lines


def review_ids() -> list[str]:
    text = REVIEW.read_text(encoding="utf-8")
    return re.findall(r"^\| (G-\d+|\d+-\d+) \|", text, flags=re.M)


@pytest.mark.skipif(not REVIEW.is_file(), reason=f"the review is not at {REVIEW}")
def test_every_finding_of_the_review_is_answered_once():
    ids = review_ids()
    total = int(re.search(r"\| \*\*total\*\* \| \*\*(\d+)\*\* \|", REVIEW.read_text(encoding="utf-8")).group(1))
    assert len(ids) == len(set(ids)) == total  # the parse found every finding the review counts
    listed = closing_lines()
    assert not set(ids) - set(listed), f"findings with no line: {sorted(set(ids) - set(listed))}"
    assert not set(listed) - set(ids), f"lines for findings the review does not have: {sorted(set(listed) - set(ids))}"


def test_the_closing_note_lists_49_findings_each_with_its_reason():
    listed = closing_lines()
    assert len(listed) == 49, len(listed)
    for fid, m in listed.items():
        what = m["what"]
        if m["status"] == "closed":  # what changed and where: a commit or a file
            assert COMMIT.search(what) or re.search(r"[\w/]+\.(?:md|py)\b", what), f"{fid}: say where it changed"
        else:
            assert len(what) > 40, f"{fid}: say why, with the source"


def test_every_cited_commit_exists():
    cited = sorted(set(COMMIT.findall(CLOSED.read_text(encoding="utf-8"))))
    assert cited
    missing = [c for c in cited
               if subprocess.run(["git", "cat-file", "-e", f"{c}^{{commit}}"], cwd=ROOT,
                                 capture_output=True).returncode != 0]
    assert not missing, f"docs/review-2026-12-01-closed.md cites commits that do not exist: {missing}"
