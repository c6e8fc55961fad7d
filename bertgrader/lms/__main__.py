"""``python -m bertgrader.lms import|export canvas|moodle ...``: submissions in from an LMS, grades and feedback out.

    python -m bertgrader.lms import canvas submissions.zip --assignment 08_masking --times submissions.json
    python -m bertgrader.lms import moodle download.zip --assignment 08_masking --worksheet worksheet.csv \\
        --timezone Europe/Berlin
    python -m bertgrader 08_masking && nbgrader generate_feedback 08_masking
    python -m bertgrader.lms export canvas --assignment 08_masking --gradebook canvas-gradebook.csv
    python -m bertgrader.lms export moodle --assignment 08_masking --worksheet worksheet.csv

Exit status: 0 done, 1 done but some students were skipped or not exported (each named), 2 nothing done
(the message says why: an export the command does not recognise, a times file it cannot read, ...).
"""
from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from bertgrader.lms import export, importer, safezip, times
from bertgrader.lms.layout import LMS

PROG = "python -m bertgrader.lms"
# nbgrader's gradebook shells out to `alembic`, which lives next to this interpreter (the virtualenv's bin/)
_BIN = str(Path(sys.executable).parent)
if _BIN not in os.environ.get("PATH", "").split(os.pathsep):
    os.environ["PATH"] = _BIN + os.pathsep + os.environ.get("PATH", "")


def positive_int(text: str) -> int:
    if not text.isdigit() or int(text) < 1:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number of at least 1")
    return int(text)


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog=PROG, description=__doc__.split("\n\n")[0])
    sub = p.add_subparsers(dest="command", required=True)
    imp = sub.add_parser("import", help="an LMS's submissions zip into submitted/<student>/<assignment>/")
    imp.add_argument("lms", choices=LMS)
    imp.add_argument("zip", type=Path, help="the submissions download (Canvas: Download Submissions; Moodle: "
                                            "Download all submissions)")
    exp = sub.add_parser("export", help="grades (CSV) and feedback pages (zip) in the LMS's import layout")
    exp.add_argument("lms", choices=LMS)
    exp.add_argument("--db", help="the gradebook's URL (default: the course root's gradebook.db)")
    exp.add_argument("--out", type=Path, help="folder for <lms>-<assignment>-grades.csv and -feedback.zip "
                                              "(default: the course root's lms-export/, git-ignored: student data)")
    exp.add_argument("--gradebook", type=Path, help="Canvas: the gradebook CSV Canvas exported (its identity "
                                                    "columns and Points Possible are kept)")
    exp.add_argument("--column", help="Canvas: the assignment's column, '<name> (<assignment id>)'")
    for q in (imp, exp):
        q.add_argument("--assignment", required=True, help="the course's assignment id, e.g. 08_masking")
        q.add_argument("--root", type=Path, default=Path("."), help="the course root (default: here)")
        q.add_argument("--worksheet", type=Path, help="Moodle: the grading worksheet CSV (import: hand-in times; "
                                                      "export: the file to fill in)")
    imp.add_argument("--times", type=Path, help="Canvas: hand-in times, the Submissions API's JSON or a CSV with "
                                                "user_id and submitted_at")
    imp.add_argument("--timezone", help="Moodle: the time zone of the worksheet's times (e.g. Europe/Berlin)")
    imp.add_argument("--max-notebook-mib", type=positive_int, default=safezip.MAX_MEMBER_BYTES // safezip.MiB,
                     help="refuse a notebook that unpacks to more (default: %(default)s)")
    return p


def check_root(root: Path, assignment: str) -> Path:
    from bertgrader.assignment import assignments

    root = root.expanduser().resolve()
    if not (root / "nbgrader_config.py").is_file():
        raise ValueError(f"{root} is not a course root: it has no nbgrader_config.py (run from the course root "
                         "or pass --root)")
    known = assignments(root)
    if assignment not in known:
        raise ValueError(f"unknown assignment {assignment!r}: this course's assignments are "
                         f"{', '.join(known) or 'none'}")
    return root


def run_import(args) -> int:
    root = check_root(args.root, args.assignment)
    if args.lms == "canvas":
        if args.worksheet or args.timezone:
            raise ValueError("--worksheet and --timezone are Moodle's; Canvas's hand-in times come with --times")
        when = times.canvas_times(args.times) if args.times else None
    else:
        if args.times:
            raise ValueError("--times is Canvas's; Moodle's hand-in times come from --worksheet (with --timezone)")
        when = times.moodle_times(args.worksheet, args.timezone) if args.worksheet else None
    result = importer.import_zip(root, args.zip, args.lms, args.assignment, when,
                                 max_member=args.max_notebook_mib * safezip.MiB)
    dest = root / "submitted"
    for s, entry in sorted(result.written.items()):
        at = entry.get("submitted_at", "no hand-in time")
        late = " (Canvas marked it late)" if entry.get("canvas_late") else ""
        print(f"{s}: {dest / s / args.assignment / (args.assignment + '.ipynb')} from {entry['file']!r}, {at}{late}")
    if when is None:
        source = "--times" if args.lms == "canvas" else "--worksheet and --timezone"
        print(f"no hand-in times ({source} not given): no timestamp.txt written, so nbgrader counts every "
              "submission on time and applies no late penalty")
        late = [s for s, e in result.written.items() if e.get("canvas_late")]
        if late:
            print(f"WARNING: Canvas marked {len(late)} of them late ({', '.join(sorted(late))}), graded as on time "
                  "here: pass --times to apply the late penalty")
    elif missing := sorted(set(result.written) - set(when)):
        print(f"no hand-in time for {', '.join(missing)} (not in the times file): counted on time")
    for line in result.skipped:
        print(line, file=sys.stderr)
    print(f"imported {len(result.written)} submission(s) of {args.assignment} into {dest}; "
          f"{len(result.skipped)} skipped")
    return 1 if result.skipped else 0


def run_export(args) -> int:
    root = check_root(args.root, args.assignment)
    roster = importer.read_roster(root, args.assignment)
    if roster["lms"] != args.lms or not roster["students"]:
        raise ValueError(f"no {args.lms.capitalize()} import of {args.assignment} in this course "
                         f"({importer.roster_path(root, args.assignment)}): the export needs the ids the import "
                         f"recorded; run {PROG} import {args.lms} ... first")
    if args.lms == "moodle" and not args.worksheet:
        raise ValueError("Moodle: pass --worksheet with the grading worksheet Moodle gave (Download grading "
                         "worksheet): the export fills it in")
    from bertgrader.classes.db import SetupError, normalise_url  # SQLAlchemy: only the export needs it

    try:
        db = normalise_url(args.db or f"sqlite:///{root / 'gradebook.db'}")
    except SetupError as e:
        raise ValueError(str(e)) from None
    students = sorted(roster["students"])
    grades = export.read_grades(db, args.assignment, students)
    args.out = args.out or root / "lms-export"
    args.out.mkdir(parents=True, exist_ok=True)
    base = args.out / f"{args.lms}-{args.assignment}"
    pages, without = export.feedback_zip(root, args.assignment, args.lms, Path(f"{base}-feedback.zip"),
                                         sorted(grades.grades))
    grades.pages = set(grades.grades) - set(without)
    text = (export.canvas_csv(grades, roster, args.gradebook, args.column) if args.lms == "canvas"
            else export.moodle_csv(grades, args.worksheet))
    Path(f"{base}-grades.csv").write_text(text, encoding="utf-8")
    print(f"{base}-grades.csv: {len(grades.grades)} grade(s); {base}-feedback.zip: {pages} feedback page(s)")
    if without:
        print(f"no feedback page for {', '.join(without)}: run nbgrader generate_feedback {args.assignment} "
              "(--force after a regrade)", file=sys.stderr)
    for line in grades.not_exported:
        print(f"not exported: {line}", file=sys.stderr)
    return 1 if grades.not_exported or without else 0


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    try:
        return run_import(args) if args.command == "import" else run_export(args)
    except (ValueError, OSError) as e:  # NotRecognised, BadTimes, ExportError, NotAZip: each says why
        print(f"{PROG}: error: {e}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
