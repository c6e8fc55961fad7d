"""Grades and feedback pages out of nbgrader, in the files each LMS imports.

Scores come from nbgrader's gradebook as ``nbgrader export`` computes them (the submission's score less its
late penalty, at least 0). A submission that still needs manual grading in Formgrader (a written answer no
one has graded yet, a manual score to review after a regrade), or was never graded, gets no grade (and is
named, with the cells that wait), so an unfinished score never reaches the LMS. What the instructor gave by
hand reaches the student both ways: in the feedback page (the written answer's score and comment, a part's
adjusted score and the comment on its answer) and, for Moodle, in the "Feedback comments" cell (Canvas's
gradebook import takes no comments: there the feedback page carries them). The LMS's own maximum is kept:
a score is scaled to the column's points (Canvas's "Points Possible", Moodle's "Maximum grade").

- Canvas: a gradebook CSV for Grades > Import: "Student", "ID", "SIS User ID", "SIS Login ID", "Section",
  then the assignment's column "<name> (<assignment id>)"; a second row "Points Possible". Given the
  gradebook CSV Canvas exported (``--gradebook``), its identity columns and its "Points Possible" row are
  kept and every other assignment's column is left out (Canvas changes only the columns in the file).
- Moodle: the grading worksheet Moodle gave, with "Grade" and "Feedback comments" filled in for the
  students graded here and every other row and column as it was ("Upload grading worksheet").
- Feedback pages: nbgrader's ``feedback/<student>/<assignment>/<assignment>.html`` in a zip named as each
  LMS's feedback upload reads (bertgrader.lms.layout).
"""
from __future__ import annotations

import csv
import io
import re
import zipfile
from dataclasses import dataclass, field
from pathlib import Path

from bertgrader.lms.importer import read_roster
from bertgrader.lms.layout import canvas_feedback_name, moodle_feedback_name
from bertgrader.lms.times import BadTimes, moodle_worksheet, participant, read_csv

CANVAS_IDENTITY = ["Student", "ID", "SIS User ID", "SIS Login ID", "Section"]
# Some Canvas instances export these identity columns too; they are kept, in Canvas's order
CANVAS_MORE_IDENTITY = {"Integration ID", "Root Account"}
CANVAS_COLUMN = re.compile(r"^(?P<title>.*) \((?P<id>\d+)\)$")


class ExportError(ValueError):
    """The export cannot be made as asked; the message says why."""


@dataclass
class Grade:
    score: float  # after the late penalty
    max_score: float
    penalty: float
    notes: list[str] = field(default_factory=list)  # scores given by hand and the instructor's comments


@dataclass
class Grades:
    assignment: str
    grades: dict[str, Grade] = field(default_factory=dict)
    pages: set[str] = field(default_factory=set)  # students whose feedback page goes with the grades
    not_exported: list[str] = field(default_factory=list)  # a line each: student and why


def read_grades(db_url: str, assignment: str, students: list[str]) -> Grades:
    """Each student's grade from nbgrader's gradebook; the ungraded are named in ``not_exported``."""
    from nbgrader.api import Gradebook, MissingEntry

    out = Grades(assignment)
    with Gradebook(db_url) as gb:
        try:
            gb.find_assignment(assignment)
        except MissingEntry:
            raise ExportError(f"the gradebook ({db_url}) has no assignment {assignment}: grade it first "
                              f"(python -m bertgrader {assignment})") from None
        for s in students:
            try:
                sub = gb.find_submission(assignment, s)
            except MissingEntry:
                out.not_exported.append(f"{s}: not in the gradebook (not graded yet)")
                continue
            every = [g for nb in sub.notebooks for g in nb.grades]
            if sub.needs_manual_grade:
                waiting = sorted(g.name for g in every if g.needs_manual_grade)
                out.not_exported.append(f"{s}: needs manual grading in Formgrader first"
                                        + (f" ({', '.join(waiting)})" if waiting else ""))
                continue
            penalty = sub.late_submission_penalty or 0.0
            out.grades[s] = Grade(max(0.0, sub.score - penalty), sub.max_score, penalty, by_hand(sub))
    return out


def by_hand(sub) -> list[str]:
    """What the instructor gave by hand in Formgrader, one sentence each: a score (a written answer's, or an
    autograded part's adjusted, with any extra credit), then each comment, named by its cell."""
    notes = []
    for nb in sub.notebooks:
        for g in sorted(nb.grades, key=lambda g: g.name):
            if g.manual_score is None and not g.extra_credit:
                continue
            text = f"{g.name}: {g.score:g} of {g.max_score:g} given by hand"
            if g.auto_score is not None and g.cell.cell_type == "code" and g.manual_score is not None:
                text += f" (the grader gave {g.auto_score:g})"
            if g.extra_credit:
                text += f", {g.extra_credit:g} of it extra credit"
            notes.append(text + ".")
        notes += [f"Comment on {c.name}: {' '.join(c.comment.split())}" for c in sorted(nb.comments, key=lambda c: c.name)
                  if (c.comment or "").strip()]
    return notes


def scaled(grade: Grade, points: float | None) -> str:
    value = grade.score if points is None or not grade.max_score else grade.score / grade.max_score * points
    return f"{value:.2f}"


def comment(grade: Grade, has_page: bool) -> str:
    text = f"{grade.score:g} of {grade.max_score:g} points"
    if grade.penalty:
        text += f" (after a late penalty of {grade.penalty:g})"
    text += "."
    if grade.notes:
        text += " " + " ".join(grade.notes)
    return text + (" The feedback page is attached." if has_page else "")


# --------------------------------------------------------------------------------------------- Canvas
def canvas_csv(grades: Grades, roster: dict, gradebook: Path | None, column: str | None) -> str:
    """The CSV text for Canvas's Grades > Import."""
    if gradebook is None:
        if column is None:
            raise ExportError("name the Canvas column: --column '<assignment name> (<assignment id>)' as Canvas's "
                              "gradebook export heads it (the id is in the assignment's URL), or pass --gradebook "
                              "with the CSV Canvas exported")
        header = CANVAS_IDENTITY + [column]
        # only the students graded here: a blank cell must not reach Canvas as a grade
        rows = [{"Student": p.get("name", ""), "ID": s} for s, p in sorted(roster["students"].items())
                if s in grades.grades]
        points = None
    else:
        rows = read_csv(gradebook)
        cols = list(rows[0].keys()) if rows else []
        if not set(CANVAS_IDENTITY) <= set(cols):
            raise ExportError(f"{gradebook}: not a Canvas gradebook export: its columns are "
                              f"{', '.join(cols[:6]) or 'none'}{' ...' if len(cols) > 6 else ''}, expected "
                              f"{', '.join(CANVAS_IDENTITY)} and then the assignments'")
        column = column or _canvas_column(cols, grades.assignment, gradebook)
        if column not in cols:
            raise ExportError(f"{gradebook} has no column {column!r}")
        header = [c for c in cols if c in CANVAS_IDENTITY or c in CANVAS_MORE_IDENTITY] + [column]
        points = None
        for row in rows:  # Canvas puts it second (after a "Manual Posting" row in some exports)
            if (row["Student"] or "").strip() == "Points Possible":
                try:
                    points = float(row[column])
                except (TypeError, ValueError):
                    pass
    out = io.StringIO()
    w = csv.DictWriter(out, fieldnames=header, extrasaction="ignore", lineterminator="\n")
    w.writeheader()
    seen = set()
    for row in rows:
        row = {k: row.get(k) or "" for k in header}
        if row["Student"].strip() == "Points Possible":
            w.writerow(row)
            continue
        sid = row["ID"].strip()
        if sid in grades.grades:
            row[column] = scaled(grades.grades[sid], points)
            seen.add(sid)
        w.writerow(row)
    if gradebook is None:
        return out.getvalue()
    missing = sorted(set(grades.grades) - seen)
    if missing:
        grades.not_exported += [f"{s}: not a row of {gradebook} (not in the Canvas course?)" for s in missing]
    return out.getvalue()


def _canvas_column(cols: list[str], assignment: str, gradebook: Path) -> str:
    """The one assignment column whose title holds the assignment's id (08_masking), or an error listing them."""
    candidates = [c for c in cols if CANVAS_COLUMN.match(c)]
    named = [c for c in candidates if assignment.lower() in CANVAS_COLUMN.match(c)["title"].lower()]
    if len(named) == 1:
        return named[0]
    if not candidates:  # not Canvas's gradebook export, or its assignment columns renamed
        raise ExportError(f"{gradebook}: no column is an assignment's as Canvas writes them, 'Title (12345)' (the "
                          "assignment's id in parentheses): export the gradebook from Canvas's Grades page "
                          "(Export, Export Current Gradebook View) and pass that file")
    raise ExportError(f"{gradebook}: {'no' if not named else 'more than one'} assignment column's title holds "
                      f"{assignment!r}: pass --column with one of {', '.join(map(repr, candidates))}")


# --------------------------------------------------------------------------------------------- Moodle
def moodle_csv(grades: Grades, worksheet: Path) -> str:
    """The grading worksheet with Grade and Feedback comments filled in for the students graded here."""
    try:
        rows = moodle_worksheet(worksheet)
    except BadTimes as e:
        raise ExportError(str(e)) from None
    header = list(rows[0].keys())
    if "Feedback comments" not in header:
        header.append("Feedback comments")  # only when feedback comments are on for the assignment
    out = io.StringIO()
    w = csv.DictWriter(out, fieldnames=header, lineterminator="\n")
    w.writeheader()
    seen = set()
    for row in rows:
        pid = participant(row["Identifier"])
        if pid in grades.grades:
            g = grades.grades[pid]
            try:
                points = float(row["Maximum grade"])
            except ValueError:
                points = None
            row["Grade"] = scaled(g, points)
            row["Feedback comments"] = comment(g, pid in grades.pages)
            seen.add(pid)
        w.writerow({k: row.get(k) or "" for k in header})
    grades.not_exported += [f"{s}: no row 'Participant {s}' in {worksheet}" for s in sorted(set(grades.grades) - seen)]
    return out.getvalue()


# --------------------------------------------------------------------------------------------- feedback
def feedback_zip(root: Path, assignment: str, lms: str, out: Path, students: list[str]) -> tuple[int, list[str]]:
    """Write the feedback pages of ``students`` into ``out``; (pages written, students without a page)."""
    roster = read_roster(root, assignment)["students"]
    name = canvas_feedback_name if lms == "canvas" else moodle_feedback_name
    written, without = 0, []
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as zf:
        for s in students:
            page = Path(root) / "feedback" / s / assignment / f"{assignment}.html"
            if not page.is_file() or page.is_symlink():
                without.append(s)
                continue
            zf.write(page, name(roster[s], assignment))
            written += 1
    return written, without
