"""The closing lists answer every finding of the book's reviews: docs/review-2026-12-01-closed.md (issue 19) and
docs/review-2026-12-06-closed.md (issue 30, its new findings). Each id once, with a status (closed, answered,
open) and what changed or why not; every commit a list cites exists.

The reviews themselves live outside the repository (../shared/reviews/); where one is absent, its ids are
checked against the count its closing note gives instead."""
from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
REVIEWS = ROOT.parent / "shared" / "reviews"
LINE = re.compile(r"^- \*\*(?P<id>G-\d+|\d+-\d+|N(?:\d\d|X)-\d+)\*\* \((?P<status>closed|answered|open)(?:, High)?\): "
                  r"(?P<what>.+)$")
COMMIT = re.compile(r"\b[0-9a-f]{7}\b")
# each review: its closing list, how many findings it closes, and the ids of the review it answers
LISTS = {
    "2026-12-01": (49, r"^\| (G-\d+|\d+-\d+) \|"),
    "2026-12-06": (20, r"^\| (N(?:\d\d|X)-\d+) \|"),  # its new findings; the old ids it verifies are the other list's
}


def closed_file(day: str) -> Path:
    return ROOT / "docs" / f"review-{day}-closed.md"


def closing_lines(day: str) -> dict[str, re.Match]:
    lines: dict[str, re.Match] = {}
    for line in closed_file(day).read_text(encoding="utf-8").splitlines():
        if line.startswith("- **"):
            m = LINE.match(line)
            assert m, f"a finding's line is '- **id** (status): what changed or why not', not {line[:80]!r}"
            assert m["id"] not in lines, f"{m['id']} is listed twice"
            lines[m["id"]] = m
    return lines


@pytest.mark.parametrize("day", sorted(LISTS))
def test_every_finding_of_the_review_is_answered_once(day):
    review = REVIEWS / f"book-review-{day}.md"
    if not review.is_file():
        pytest.skip(f"the review is not at {review}")
    text = review.read_text(encoding="utf-8")
    ids = re.findall(LISTS[day][1], text, flags=re.M)
    assert len(ids) == len(set(ids)) == LISTS[day][0]  # the parse found every finding the review counts
    listed = closing_lines(day)
    assert not set(ids) - set(listed), f"findings with no line: {sorted(set(ids) - set(listed))}"
    assert not set(listed) - set(ids), f"lines for findings the review does not have: {sorted(set(listed) - set(ids))}"


@pytest.mark.parametrize("day", sorted(LISTS))
def test_the_closing_list_gives_each_finding_its_reason(day):
    listed = closing_lines(day)
    assert len(listed) == LISTS[day][0], len(listed)
    for fid, m in listed.items():
        what = m["what"]
        if m["status"] == "closed":  # what changed and where: a commit or a file
            assert COMMIT.search(what) or re.search(r"[\w/]+\.(?:md|py)\b", what), f"{fid}: say where it changed"
        else:
            assert len(what) > 40, f"{fid}: say why, with the source"


@pytest.mark.parametrize("day", sorted(LISTS))
def test_every_cited_commit_exists(day):
    cited = sorted(set(COMMIT.findall(closed_file(day).read_text(encoding="utf-8"))))
    assert cited
    missing = [c for c in cited
               if subprocess.run(["git", "cat-file", "-e", f"{c}^{{commit}}"], cwd=ROOT,
                                 capture_output=True).returncode != 0]
    assert not missing, f"{closed_file(day).name} cites commits that do not exist: {missing}"
