"""An LMS's submissions zip into nbgrader's ``submitted/<student>/<assignment>/``, with hand-in times.

Everything is decided before anything is written: a zip in which no file is named as the LMS names a
download stops the import with an error naming the layout it expected; every member that is refused
(safezip) and every student whose notebook cannot be told (two notebooks, none, one student id under two
names) is skipped and named. Each notebook is then unpacked (within the caps) into a folder beside the
submissions, and only then put in place, replacing that student's earlier submission of the assignment
whole (a resubmission). What the LMS says about each student (name, ids, Canvas's late marker, the
hand-in time) goes to ``submitted/.lms/<assignment>.json``, which the export reads; nbgrader does not
read folders whose names start with a dot.
"""
from __future__ import annotations

import json
import os
import re
import shutil
import stat
import tempfile
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

from bertgrader.lms import safezip
from bertgrader.lms.layout import EXPECTED, PARSE, Upload
from bertgrader.lms.times import nbgrader_timestamp

STUDENT_ID = re.compile(r"^[0-9A-Za-z][0-9A-Za-z._@-]{0,99}$")  # a folder name nbgrader reads as it is


class NotRecognised(ValueError):
    """The zip is not the LMS's submissions download; the message says what was expected and what is there."""


@dataclass
class Result:
    written: dict[str, dict] = field(default_factory=dict)  # student -> roster entry
    skipped: list[str] = field(default_factory=list)  # a line each: which member or student, and why


def roster_path(root: Path, assignment: str) -> Path:
    return Path(root) / "submitted" / ".lms" / f"{assignment}.json"


def read_roster(root: Path, assignment: str) -> dict:
    path = roster_path(root, assignment)
    return json.loads(path.read_text(encoding="utf-8")) if path.is_file() else {"lms": None, "students": {}}


def find_uploads(zf, lms: str, max_member: int = safezip.MAX_MEMBER_BYTES) -> tuple[list, list[str]]:
    """[(upload, member)] of every readable member the LMS's layout names, and the skipped lines.
    NotRecognised if no member is named so."""
    readable, skipped = safezip.members(zf, max_member)
    found, other = [], []
    for m in readable:
        up = PARSE[lms](m.name)
        (found.append((up, m)) if up else other.append(m.name))
    if not found:
        seen = ", ".join(ascii(n) for n in other[:3]) or "no readable file"
        raise NotRecognised(f"not a {lms.capitalize()} submissions download: no file in it is named "
                            f"{EXPECTED[lms]} (it holds {seen}{' ...' if len(other) > 3 else ''})")
    skipped += [f"{ascii(n)}: skipped, not named as {lms.capitalize()} names a submission" for n in other]
    return found, skipped


def _resubmission_rank(stem: str, assignment: str) -> int | None:
    """0 for '<a>', N for Canvas's renamed resubmission '<a>-N'; None for another name."""
    if stem == assignment:
        return 0
    m = re.fullmatch(re.escape(assignment) + r"-(\d+)", stem)
    return int(m[1]) if m else None


def choose(found: list[tuple[Upload, safezip.Member]], assignment: str) -> tuple[dict, list[str]]:
    """{student: (upload, member)}: each student's one notebook, and a line for each student skipped."""
    by_student: dict[str, list] = {}
    for up, m in found:
        by_student.setdefault(up.student, []).append((up, m))
    chosen, skipped = {}, []
    for student, items in sorted(by_student.items()):
        names = {up.person.get("name") for up, _ in items}
        if len(names) > 1:
            skipped.append(f"student {student}: skipped, the id appears under {len(names)} names "
                           f"({', '.join(sorted(map(str, names)))}): a duplicate in the download, fix it in the LMS")
            continue
        notebooks = [(up, m) for up, m in items if up.file.lower().endswith(".ipynb")]
        if len(notebooks) > 1:
            ranked = [(r, up, m) for up, m in notebooks
                      if (r := _resubmission_rank(up.file[:-len(".ipynb")], assignment)) is not None]
            notebooks = [max(ranked, key=lambda t: t[0])[1:]] if ranked else notebooks
        if len(notebooks) != 1:
            files = ", ".join(up.file for up, _ in items)
            why = "no notebook (.ipynb)" if not notebooks else f"{len(notebooks)} notebooks and none named {assignment}.ipynb"
            skipped.append(f"student {student}: skipped, {why} among {files}")
            continue
        if not STUDENT_ID.match(student):
            skipped.append(f"student {ascii(student)}: skipped, not a usable student id")
            continue
        chosen[student] = notebooks[0]
    return chosen, skipped


def _plain_folder_or_absent(path: Path) -> bool:
    try:
        return stat.S_ISDIR(os.lstat(path).st_mode)
    except FileNotFoundError:
        return True


def import_zip(root: Path, zip_path: Path, lms: str, assignment: str, times: dict[str, datetime] | None = None,
               max_member: int = safezip.MAX_MEMBER_BYTES, max_total: int = safezip.MAX_TOTAL_BYTES) -> Result:
    """Import one assignment's submissions; ``times``: {student: hand-in time}, or None (no timestamp.txt)."""
    root, times = Path(root), times or {}
    submitted = root / "submitted"
    with safezip.open_zip(zip_path) as zf:
        found, skipped = find_uploads(zf, lms, max_member)
        chosen, more = choose(found, assignment)
        result = Result(skipped=skipped + more)
        for folder in (submitted, roster_path(root, assignment).parent):
            if not _plain_folder_or_absent(folder):
                raise NotRecognised(f"{folder} is not a plain folder (a link?): refusing to write through it")
        submitted.mkdir(exist_ok=True)
        staging = Path(tempfile.mkdtemp(prefix=".lms-import-", dir=submitted))
        try:
            budget = safezip.Budget(max_total)
            ready = {}
            for student, (up, member) in chosen.items():
                try:
                    data = safezip.read(zf, member, budget, max_member)
                except (safezip.TooLarge, safezip.zipfile.BadZipFile, OSError) as e:
                    result.skipped.append(f"student {student}: skipped, {e}")
                    continue
                folder = staging / student / assignment
                folder.mkdir(parents=True)
                (folder / f"{assignment}.ipynb").write_bytes(data)
                entry = dict(up.person, file=up.file, member=up.member)
                if student in times:
                    (folder / "timestamp.txt").write_text(nbgrader_timestamp(times[student]) + "\n")
                    entry["submitted_at"] = times[student].isoformat()
                ready[student] = entry
            for student, entry in ready.items():
                home, dest = submitted / student, submitted / student / assignment
                if not (_plain_folder_or_absent(home) and _plain_folder_or_absent(dest)):
                    result.skipped.append(f"student {student}: skipped, {dest} or its parent is a link, not a folder")
                    continue
                home.mkdir(exist_ok=True)
                previous = staging / student / "previous"
                if dest.exists():
                    dest.rename(previous)
                try:
                    (staging / student / assignment).rename(dest)
                except OSError as e:
                    if previous.exists():
                        previous.rename(dest)  # the earlier submission stays as it was
                    result.skipped.append(f"student {student}: skipped, could not write {dest} ({e})")
                    continue
                result.written[student] = entry
        finally:
            shutil.rmtree(staging, ignore_errors=True)
    _update_roster(root, assignment, lms, result.written)
    return result


def _update_roster(root: Path, assignment: str, lms: str, written: dict[str, dict]) -> None:
    path = roster_path(root, assignment)
    if not _plain_folder_or_absent(path.parent) or path.is_symlink():
        raise NotRecognised(f"{path.parent} is not a plain folder (a link?): refusing to write the roster through it")
    roster = read_roster(root, assignment)
    if roster.get("lms") not in (None, lms):
        roster = {"lms": lms, "students": {}}  # the assignment now comes from another LMS: start again
    roster["lms"] = lms
    roster["students"].update(written)
    path.parent.mkdir(exist_ok=True)
    tmp = path.with_suffix(".json.tmp")
    tmp.write_text(json.dumps(roster, indent=1, sort_keys=True), encoding="utf-8")
    tmp.replace(path)
