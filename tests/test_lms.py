"""bertgrader.lms: a Canvas or Moodle submissions zip in, grades and feedback pages out.

Each test builds the LMS's files itself, in the layout that LMS writes (bertgrader/lms/layout.py cites where
each is documented or coded): Canvas's flat "Download Submissions" zip, the Submissions API's JSON and its
gradebook CSV; Moodle's "Download all submissions" folders and its grading worksheet. The export reads a
gradebook built here with nbgrader's own API (no notebook is graded: that is tests/test_class_grading.py's).
"""
from __future__ import annotations

import csv
import io
import json
import stat
import sys
import warnings
import zipfile
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from bertgrader.lms import __main__ as cli
from bertgrader.lms import safezip
from bertgrader.lms.importer import import_zip, read_roster

A = "08_masking"
DUE = datetime(2026, 12, 1, 23, 59, tzinfo=timezone.utc)


def notebook(tag: str) -> bytes:
    """A small notebook whose one cell names its author, so a test can tell whose file landed where."""
    nb = {"cells": [{"cell_type": "code", "execution_count": None, "id": "c1", "metadata": {}, "outputs": [],
                     "source": f"# {tag}"}], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    return json.dumps(nb).encode()


@pytest.fixture
def course(tmp_path) -> Path:
    """A course root as the command checks it: nbgrader_config.py and solutions/<a>/<a>.ipynb."""
    root = tmp_path / "course"
    (root / "solutions" / A).mkdir(parents=True)
    (root / "solutions" / A / f"{A}.ipynb").write_bytes(notebook("solution"))
    (root / "nbgrader_config.py").write_text("c = get_config()\n")
    return root


def make_zip(path: Path, members: list) -> Path:
    """members: (name, bytes) or a ZipInfo with its bytes; written as an LMS writes them (deflated)."""
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as zf:
        for name, data in members:
            zf.writestr(name, data)
    return path


def submitted(root: Path, student: str) -> Path:
    return root / "submitted" / student / A


# ----------------------------------------------------------------------------------------------- Canvas
CANVAS = [
    ("smithbob_340934_208490284_08_masking.ipynb", notebook("bob")),
    ("doejane_LATE_340935_208490290_08_masking.ipynb", notebook("jane late")),
    # a resubmission Canvas renamed (-1): the later one is taken, the earlier dropped
    ("leeann_340936_208490300_08_masking.ipynb", notebook("ann first")),
    ("leeann_340936_208490301_08_masking-1.ipynb", notebook("ann second")),
    ("leeann_340936_208490302_notes.txt", b"my notes"),
    ("kimtom_340937_208490310_essay.pdf", b"%PDF-1.4"),  # no notebook: skipped, named
]


def canvas_times(path: Path) -> Path:
    """The Submissions API's answer (GET .../assignments/:id/submissions), as saved by curl."""
    subs = [{"id": 1, "user_id": 340934, "submitted_at": "2026-12-01T20:00:00Z", "late": False},
            {"id": 2, "user_id": 340935, "submitted_at": "2026-12-02T03:59:00Z", "late": True},
            {"id": 3, "user_id": 340936, "submitted_at": "2026-12-01T23:00:00-02:00", "late": True},
            {"id": 4, "user_id": 340938, "submitted_at": None, "late": False}]
    path.write_text(json.dumps(subs))
    return path


def test_canvas_import_places_each_notebook_with_its_hand_in_time(course, tmp_path, capsys):
    from nbgrader.coursedir import CourseDirectory

    z = make_zip(tmp_path / "submissions.zip", CANVAS)
    rc = cli.main(["import", "canvas", str(z), "--assignment", A, "--root", str(course),
                   "--times", str(canvas_times(tmp_path / "subs.json"))])
    out, err = capsys.readouterr()
    assert rc == 1, (out, err)  # one student skipped
    assert "kimtom" not in out and "student 340937: skipped, no notebook (.ipynb) among essay.pdf" in err
    assert sorted(p.name for p in (course / "submitted").iterdir()) == [".lms", "340934", "340935", "340936"]
    for student, tag in (("340934", "bob"), ("340935", "jane late"), ("340936", "ann second")):
        assert sorted(p.name for p in submitted(course, student).iterdir()) == [f"{A}.ipynb", "timestamp.txt"]
        assert f"# {tag}" in (submitted(course, student) / f"{A}.ipynb").read_text()
    # nbgrader reads the times back as the UTC instants the API gave (its parse_utc: naive UTC datetimes)
    cd = CourseDirectory(root=str(course))
    read = {s: cd.get_existing_timestamp(str(submitted(course, s))) for s in ("340934", "340935", "340936")}
    assert read == {"340934": datetime(2026, 12, 1, 20, 0), "340935": datetime(2026, 12, 2, 3, 59),
                    "340936": datetime(2026, 12, 2, 1, 0)}
    roster = read_roster(course, A)
    assert roster["lms"] == "canvas"
    assert roster["students"]["340935"]["canvas_late"] is True
    assert roster["students"]["340936"]["attachment_id"] == "208490301"


def test_canvas_import_without_times_says_what_that_means(course, tmp_path, capsys):
    z = make_zip(tmp_path / "submissions.zip", CANVAS[:2])
    assert cli.main(["import", "canvas", str(z), "--assignment", A, "--root", str(course)]) == 0
    out = capsys.readouterr().out
    assert "no timestamp.txt written, so nbgrader counts every submission on time" in out
    assert "WARNING: Canvas marked 1 of them late (340935)" in out
    assert not (submitted(course, "340935") / "timestamp.txt").exists()


def test_a_reimport_replaces_the_earlier_submission_whole(course, tmp_path):
    import_zip(course, make_zip(tmp_path / "one.zip", CANVAS[:1]), "canvas", A,
               {"340934": DUE - timedelta(hours=1)})
    assert (submitted(course, "340934") / "timestamp.txt").exists()
    (submitted(course, "340934") / "stale.txt").write_text("from before")
    again = [("smithbob_340934_208490999_08_masking.ipynb", notebook("bob again"))]
    import_zip(course, make_zip(tmp_path / "two.zip", again), "canvas", A, None)
    assert sorted(p.name for p in submitted(course, "340934").iterdir()) == [f"{A}.ipynb"]
    assert "bob again" in (submitted(course, "340934") / f"{A}.ipynb").read_text()
    assert read_roster(course, A)["students"]["340934"]["attachment_id"] == "208490999"


@pytest.mark.parametrize("lms, members, expected", [
    ("canvas", [("Bob Smith_123_assignsubmission_file_/08_masking.ipynb", b"{}")],
     "not a Canvas submissions download: no file in it is named <name>[_LATE]_<user id>_<attachment id>_<file>"),
    ("moodle", CANVAS[:2], "not a Moodle submissions download"),
    ("canvas", [("08_masking.ipynb", b"{}"), ("../../etc/cron.d/x", b"")], "it holds '08_masking.ipynb'"),
])
def test_an_export_it_does_not_recognise_stops_before_anything_is_written(course, tmp_path, capsys, lms, members,
                                                                           expected):
    z = make_zip(tmp_path / "download.zip", members)
    assert cli.main(["import", lms, str(z), "--assignment", A, "--root", str(course)]) == 2
    err = capsys.readouterr().err
    assert expected in err, err
    assert not (course / "submitted").exists()


def test_not_a_zip_and_an_unknown_assignment_are_named(course, tmp_path, capsys):
    bad = tmp_path / "grades.csv"
    bad.write_text("a,b\n")
    assert cli.main(["import", "canvas", str(bad), "--assignment", A, "--root", str(course)]) == 2
    assert "grades.csv is not a zip archive" in capsys.readouterr().err
    assert cli.main(["import", "canvas", str(bad), "--assignment", "99_nothing", "--root", str(course)]) == 2
    assert "unknown assignment '99_nothing': this course's assignments are 08_masking" in capsys.readouterr().err


LATIN1_NAME = b"m\xfcller_340946_9_08_masking.ipynb"


def hostile_zip(path: Path) -> Path:
    """A Canvas-named download with every member an attacker can put in a zip, beside one honest student."""
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("smithbob_340934_1_08_masking.ipynb", notebook("bob"))
        zf.writestr("../evil_340940_2_08_masking.ipynb", notebook("slip"))  # zip slip
        zf.writestr("/tmp/abs_340941_3_08_masking.ipynb", notebook("absolute"))
        link = zipfile.ZipInfo("linky_340942_4_08_masking.ipynb")
        link.external_attr = (stat.S_IFLNK | 0o777) << 16  # a symbolic link to the hidden tests
        zf.writestr(link, "../../solutions/08_masking/hidden_tests.py")
        zf.writestr("bomb_340944_6_08_masking.ipynb", b"{" + b" " * (3 * safezip.MiB) + b"}")  # 3 MiB of spaces
        # the same Canvas user under two names: neither file is trusted
        zf.writestr("twin_340945_7_08_masking.ipynb", notebook("twin a"))
        zf.writestr("other_340945_8_08_masking.ipynb", notebook("twin b"))
        zf.writestr(LATIN1_NAME.decode("latin-1").replace("\xfc", "u"), notebook("latin-1"))
    # a name neither flagged UTF-8 nor UTF-8 (Latin-1 bytes, as an old Windows zip tool writes), patched into
    # the archive's bytes (the same length: the zip's offsets stay right)
    data = path.read_bytes()
    path.write_bytes(data.replace(LATIN1_NAME.replace(b"\xfc", b"u"), LATIN1_NAME))
    return path


def test_a_hostile_zip_writes_only_the_honest_student_and_names_each_member_refused(course, tmp_path, capsys):
    z = hostile_zip(tmp_path / "hostile.zip")
    rc = cli.main(["import", "canvas", str(z), "--assignment", A, "--root", str(course), "--max-notebook-mib", "1"])
    out, err = capsys.readouterr()
    assert rc == 1
    assert "'../evil_340940_2_08_masking.ipynb': skipped, its name has a '..' part" in err
    assert "'/tmp/abs_340941_3_08_masking.ipynb': skipped, its name is absolute" in err
    assert "'linky_340942_4_08_masking.ipynb': skipped, it is a symbolic link or a special file" in err
    assert "bomb_340944_6_08_masking.ipynb': skipped, it unpacks to 3,145,730 bytes, more than the 1,048,576" in err
    assert "student 340945: skipped, the id appears under 2 names (other, twin)" in err
    assert "'m\\u207fller_340946_9_08_masking.ipynb': skipped, its name is not UTF-8" in err
    every = sorted(str(p.relative_to(tmp_path)) for p in tmp_path.rglob("*") if p.is_file() or p.is_symlink())
    assert every == ["course/nbgrader_config.py", f"course/solutions/{A}/{A}.ipynb", f"course/submitted/.lms/{A}.json",
                     f"course/submitted/340934/{A}/{A}.ipynb", "hostile.zip"]  # nothing else, anywhere
    assert "# bob" in (submitted(course, "340934") / f"{A}.ipynb").read_text()


def test_nothing_is_written_through_a_link_in_submitted(course, tmp_path, capsys):
    """A student's folder, or the roster's, that is a link elsewhere is not written through."""
    outside = tmp_path / "outside"
    outside.mkdir()
    (course / "submitted").mkdir()
    (course / "submitted" / "340934").symlink_to(outside)
    rc = cli.main(["import", "canvas", str(make_zip(tmp_path / "s.zip", CANVAS[:2])), "--assignment", A,
                   "--root", str(course)])
    assert rc == 1 and "student 340934: skipped" in capsys.readouterr().err
    assert list(outside.iterdir()) == [] and (submitted(course, "340935") / f"{A}.ipynb").is_file()
    (course / "submitted" / ".lms" / f"{A}.json").unlink()
    (course / "submitted" / ".lms").rmdir()
    (course / "submitted" / ".lms").symlink_to(outside)
    again = [("doejane_LATE_340935_208490290_08_masking.ipynb", notebook("jane v2"))]
    rc = cli.main(["import", "canvas", str(make_zip(tmp_path / "s2.zip", again)), "--assignment", A,
                   "--root", str(course)])
    assert rc == 2 and ".lms is not a plain folder (a link?): refusing to write through it" in capsys.readouterr().err
    assert list(outside.iterdir()) == []
    assert (submitted(course, "340935") / f"{A}.ipynb").read_text() == notebook("jane late").decode()  # as before


def test_reading_stops_at_the_cap_whatever_the_zip_declares(tmp_path):
    z = make_zip(tmp_path / "z.zip", [("a", b"\0" * (2 * safezip.MiB))])
    with safezip.open_zip(z) as zf:
        [m], _ = safezip.members(zf)
        with pytest.raises(safezip.TooLarge, match="unpacks to more than 1,048,576 bytes"):
            safezip.read(zf, m, safezip.Budget(), max_bytes=safezip.MiB)  # as if its header lied about its size
        budget = safezip.Budget(3 * safezip.MiB)
        safezip.read(zf, m, budget)
        with pytest.raises(safezip.TooLarge, match="more than the import's cap in all"):
            safezip.read(zf, m, budget)


# ----------------------------------------------------------------------------------------------- Moodle
MOODLE = [
    ("Bob Smith_123456_assignsubmission_file_/08_masking.ipynb", notebook("bob")),
    ("Jane Doe_123457_assignsubmission_file/08_masking.ipynb", notebook("jane")),  # Moodle 4.1+: no last _
    ("Jane Doe_123457_assignsubmission_onlinetext_/onlinetext.html", b"<p>hi</p>"),
    ("José Núñez_123458_assignsubmission_file_/mywork.ipynb", notebook("jose")),  # one notebook, any name
    ("Ann Lee_123459_assignsubmission_file_08_masking.ipynb", notebook("ann")),  # flat (not in folders)
]


def moodle_worksheet(path: Path, rows: list[tuple[str, str, str, str]]) -> Path:
    """The grading worksheet as Moodle writes it (UTF-8 with a byte-order mark, every field quoted)."""
    out = io.StringIO()
    w = csv.writer(out, quoting=csv.QUOTE_ALL, lineterminator="\n")
    w.writerow(["Identifier", "Full name", "Email address", "Status", "Grade", "Maximum grade",
                "Grade can be changed", "Last modified (submission)", "Last modified (grade)", "Feedback comments"])
    for pid, name, email, when in rows:
        w.writerow([f"Participant {pid}", name, email, "Submitted for grading", "", "100.00", "Yes", when, "-", ""])
    path.write_text("\ufeff" + out.getvalue(), encoding="utf-8")
    return path


WORKSHEET = [("123456", "Bob Smith", "bob@example.edu", "Tuesday, 1 December 2026, 11:00 PM"),
             ("123457", "Jane Doe", "jane@example.edu", "Wednesday, 2 December 2026, 9:30 AM"),
             ("123458", "José Núñez", "jose@example.edu", "Tuesday, 1 December 2026, 6:00 PM"),
             ("123459", "Ann Lee", "ann@example.edu", "-"),
             ("123460", "Tom Kim", "tom@example.edu", "-")]


def test_moodle_import_reads_folders_and_the_worksheet_times_in_their_zone(course, tmp_path, capsys):
    from nbgrader.coursedir import CourseDirectory

    z = make_zip(tmp_path / "download.zip", MOODLE)
    ws = moodle_worksheet(tmp_path / "worksheet.csv", WORKSHEET)
    rc = cli.main(["import", "moodle", str(z), "--assignment", A, "--root", str(course), "--worksheet", str(ws),
                   "--timezone", "Europe/Berlin"])
    out, err = capsys.readouterr()
    assert rc == 1, (out, err)  # onlinetext.html is no submission file: named
    assert "onlinetext.html': skipped, not named as Moodle names a submission" in err
    for pid, tag in (("123456", "bob"), ("123457", "jane"), ("123458", "jose"), ("123459", "ann")):
        assert f"# {tag}" in (submitted(course, pid) / f"{A}.ipynb").read_text()
    cd = CourseDirectory(root=str(course))
    assert cd.get_existing_timestamp(str(submitted(course, "123456"))) == datetime(2026, 12, 1, 22, 0)  # CET = UTC+1
    assert cd.get_existing_timestamp(str(submitted(course, "123457"))) == datetime(2026, 12, 2, 8, 30)
    assert not (submitted(course, "123459") / "timestamp.txt").exists()  # "-": no submission time in Moodle
    assert "no hand-in time for 123459 (not in the times file): counted on time" in out
    assert read_roster(course, A)["students"]["123458"]["name"] == "José Núñez"


def test_moodle_worksheet_times_need_a_zone(course, tmp_path, capsys):
    z = make_zip(tmp_path / "download.zip", MOODLE)
    ws = moodle_worksheet(tmp_path / "worksheet.csv", WORKSHEET)
    assert cli.main(["import", "moodle", str(z), "--assignment", A, "--root", str(course),
                     "--worksheet", str(ws)]) == 2
    assert "the worksheet's times carry no time zone: pass --timezone" in capsys.readouterr().err
    assert not (course / "submitted").exists()


# ----------------------------------------------------------------------------------------------- export
WRITTEN = "explain_80_10_10"


def gradebook(course: Path, scores: dict[str, tuple[float, datetime | None]], manual: set[str] = frozenset(),
              by_hand: dict | None = None):
    """nbgrader's gradebook for the course: 08_masking with three graded cells (3 + 3 + 2 points), each
    student's submission at its time, auto scores adding up to its score, and the late penalty nbgrader's
    LateSubmissionPlugin ('zero': a late submission scores 0) assigns from the time the import recorded.
    With ``by_hand`` ({student: {cell: (manual score, comment, the answer cell commented)}}), 08's written
    answer too (2 points, graded by hand; left blank, so scored 0 by nbgrader, by the others) and what
    Formgrader stores when the instructor grades it or adjusts a part: the manual score, needs_manual_grade
    cleared, the comment (nbgrader's formgrader GradeHandler.put and CommentHandler.put)."""
    from nbgrader.api import Gradebook
    from nbgrader.coursedir import CourseDirectory
    from nbgrader.plugins import LateSubmissionPlugin
    from sqlalchemy.exc import SAWarning

    url = f"sqlite:///{course / 'gradebook.db'}"
    cd = CourseDirectory(root=str(course))
    plugin = LateSubmissionPlugin(penalty_method="zero")
    with Gradebook(url) as gb, warnings.catch_warnings():
        warnings.simplefilter("ignore", SAWarning)  # nbgrader's add_submission autoflushes (its own SAWarnings)
        gb.add_assignment(A, duedate=DUE.replace(tzinfo=None))
        gb.add_notebook(A, A)
        for cell, points in (("test_select", 3), ("test_replace", 3), ("test_labels", 2)):
            gb.add_grade_cell(cell, A, A, max_score=points, cell_type="code")
        if by_hand is not None:
            gb.add_grade_cell(WRITTEN, A, A, max_score=2, cell_type="markdown")
            for answer in (WRITTEN, "select", "replace"):
                gb.add_solution_cell(answer, A, A)
        for student, score in scores.items():
            gb.add_student(student)
            when = cd.get_existing_timestamp(str(submitted(course, student)))  # what nbgrader autograde reads
            sub = gb.add_submission(A, student, timestamp=when)
            left = score
            for cell, points in (("test_select", 3), ("test_replace", 3), ("test_labels", 2)):
                g = gb.find_grade(cell, A, A, student)
                g.auto_score, left = min(points, left), left - min(points, left)
                g.needs_manual_grade = student in manual
            if by_hand is not None:
                written = gb.find_grade(WRITTEN, A, A, student)
                written.auto_score, written.needs_manual_grade = 0.0, False  # blank unless graded below
                for cell, (score_given, said, answer) in by_hand.get(student, {}).items():
                    g = gb.find_grade(cell, A, A, student)
                    g.manual_score, g.needs_manual_grade = score_given, False
                    if cell == WRITTEN:
                        g.auto_score = None  # answered: nbgrader leaves it to a person
                    gb.find_comment(answer, A, A, student).manual_comment = said
            gb.db.commit()
            nb = sub.notebooks[0]
            if sub.total_seconds_late > 0:
                nb.late_submission_penalty = plugin.late_submission_penalty(student, nb.score, sub.total_seconds_late)
            gb.db.commit()
    return url


def feedback_page(course: Path, student: str, text: str) -> None:
    page = course / "feedback" / student / A / f"{A}.html"
    page.parent.mkdir(parents=True)
    page.write_text(f"<html><body>{text}</body></html>")


def canvas_gradebook(path: Path) -> Path:
    """The gradebook CSV Canvas exports (Grades > Export): identity columns, assignment columns headed
    '<name> (<id>)', a 'Points Possible' row, Canvas's test student, and totals columns."""
    out = io.StringIO()
    w = csv.writer(out, lineterminator="\n")
    w.writerow(["Student", "ID", "SIS User ID", "SIS Login ID", "Section", "Attention masks (4411)",
                "08_masking: 15% and 80/10/10 (4412)", "Current Score", "Final Score"])
    w.writerow(["    Points Possible", "", "", "", "", "10.00", "16.00", "(read only)", "(read only)"])
    w.writerow(["Smith, Bob", "340934", "S001", "bsmith", "BERT 2026", "9", "", "90", "90"])
    w.writerow(["Doe, Jane", "340935", "S002", "jdoe", "BERT 2026", "7", "", "70", "70"])
    w.writerow(["Lee, Ann", "340936", "S003", "alee", "BERT 2026", "10", "5", "100", "100"])
    w.writerow(["Student, Test", "340999", "", "", "BERT 2026", "", "", "", ""])
    path.write_text(out.getvalue(), encoding="utf-8")
    return path


def test_canvas_export_fills_the_assignment_column_and_names_the_feedback_pages_as_canvas_reads_them(
        course, tmp_path, capsys):
    times = {"340934": DUE - timedelta(hours=4), "340935": DUE + timedelta(hours=4), "340936": DUE - timedelta(hours=1)}
    import_zip(course, make_zip(tmp_path / "s.zip", CANVAS[:4]), "canvas", A, times)
    gradebook(course, {"340934": 8, "340935": 6, "340936": 5}, manual={"340936"})
    feedback_page(course, "340934", "bob's page")
    feedback_page(course, "340935", "jane's page")
    out_dir = tmp_path / "out"
    rc = cli.main(["export", "canvas", "--assignment", A, "--root", str(course), "--out", str(out_dir),
                   "--gradebook", str(canvas_gradebook(tmp_path / "canvas.csv"))])
    out, err = capsys.readouterr()
    assert rc == 1, (out, err)
    assert "not exported: 340936: needs manual grading in Formgrader first" in err
    rows = list(csv.reader(io.StringIO((out_dir / f"canvas-{A}-grades.csv").read_text())))
    column = "08_masking: 15% and 80/10/10 (4412)"
    assert rows[0] == ["Student", "ID", "SIS User ID", "SIS Login ID", "Section", column]
    assert rows[1] == ["    Points Possible", "", "", "", "", "16.00"]
    by_id = {r[1]: r for r in rows[2:]}
    assert by_id["340934"] == ["Smith, Bob", "340934", "S001", "bsmith", "BERT 2026", "16.00"]  # 8/8 -> 16/16
    assert by_id["340935"][5] == "0.00"  # late: nbgrader's 'zero' penalty took all 6 points
    assert by_id["340936"][5] == "5"  # needs manual grading: Canvas's own value, unchanged
    assert by_id["340999"][5] == ""
    with zipfile.ZipFile(out_dir / f"canvas-{A}-feedback.zip") as zf:
        names = sorted(zf.namelist())
        assert names == ["doejane_340935_208490290_08_masking_feedback.html",
                         "smithbob_340934_208490284_08_masking_feedback.html"]
        assert zf.read(names[1]) == b"<html><body>bob's page</body></html>"
    for name in names:  # Canvas's Re-Upload reads the first two all-digit pieces as user and attachment id
        digits = [p for p in name.split("_") if p.isdigit()][:2]
        assert digits in (["340935", "208490290"], ["340934", "208490284"])


def test_canvas_export_needs_a_column_it_can_name(course, tmp_path, capsys):
    import_zip(course, make_zip(tmp_path / "s.zip", CANVAS[:2]), "canvas", A, None)
    gradebook(course, {"340934": 8, "340935": 5}, manual={"340935"})  # 340935: no row, not a blank grade
    rc = cli.main(["export", "canvas", "--assignment", A, "--root", str(course), "--out", str(tmp_path / "o")])
    assert rc == 2 and "name the Canvas column: --column" in capsys.readouterr().err
    rc = cli.main(["export", "canvas", "--assignment", A, "--root", str(course), "--column", "Masking (4412)"])
    err = capsys.readouterr().err
    assert rc == 1 and "no feedback page for 340934: run nbgrader generate_feedback" in err
    assert "not exported: 340935: needs manual grading in Formgrader first" in err
    # by default into the course's lms-export/, which git ignores (student data)
    rows = list(csv.reader(io.StringIO((course / "lms-export" / f"canvas-{A}-grades.csv").read_text())))
    assert rows == [["Student", "ID", "SIS User ID", "SIS Login ID", "Section", "Masking (4412)"],
                    ["smithbob", "340934", "", "", "", "8.00"]]


def test_canvas_export_of_a_file_that_is_no_canvas_gradebook_says_so(course, tmp_path, capsys):
    """A gradebook CSV without Canvas's 'Title (id)' assignment columns: the error says what Canvas's export
    looks like and where to get it (it said "pass --column with one of none")."""
    import_zip(course, make_zip(tmp_path / "s.zip", CANVAS[:1]), "canvas", A, None)
    gradebook(course, {"340934": 8})
    plain = tmp_path / "grades.csv"
    plain.write_text("Student,ID,SIS User ID,SIS Login ID,Section,08_masking\nSmith Bob,340934,S001,bsmith,BERT,\n")
    rc = cli.main(["export", "canvas", "--assignment", A, "--root", str(course), "--out", str(tmp_path / "o"),
                   "--gradebook", str(plain)])
    err = capsys.readouterr().err
    assert rc == 2 and "no column is an assignment's as Canvas writes them, 'Title (12345)'" in err, err
    assert "one of none" not in err


def test_moodle_export_fills_in_the_worksheet_and_zips_feedback_as_moodle_uploads_it(course, tmp_path, capsys):
    z = make_zip(tmp_path / "download.zip", MOODLE)
    ws = moodle_worksheet(tmp_path / "worksheet.csv", WORKSHEET)
    assert cli.main(["import", "moodle", str(z), "--assignment", A, "--root", str(course), "--worksheet", str(ws),
                     "--timezone", "Europe/Berlin"]) == 1
    gradebook(course, {"123456": 8, "123457": 7, "123458": 4, "123459": 3}, by_hand={
        "123456": {WRITTEN: (2.0, "Both reasons, in your own words.", WRITTEN)},
        "123458": {"test_labels": (1.0, "Half the points: your labels are right, but only where [MASK] went.",
                                   "replace")}})
    feedback_page(course, "123456", "bob")
    feedback_page(course, "123458", "jose")
    capsys.readouterr()
    rc = cli.main(["export", "moodle", "--assignment", A, "--root", str(course), "--out", str(tmp_path / "o"),
                   "--worksheet", str(ws)])
    out, err = capsys.readouterr()
    assert rc == 1 and "no feedback page for 123457, 123459" in err, (out, err)
    text = (tmp_path / "o" / f"moodle-{A}-grades.csv").read_text(encoding="utf-8")
    rows = list(csv.DictReader(io.StringIO(text)))
    assert list(rows[0]) == ["Identifier", "Full name", "Email address", "Status", "Grade", "Maximum grade",
                             "Grade can be changed", "Last modified (submission)", "Last modified (grade)",
                             "Feedback comments"]
    got = {r["Identifier"]: (r["Grade"], r["Feedback comments"]) for r in rows}
    assert got == {  # of 10: the written answer's 2 points too, graded by hand (issue 29 §4)
        "Participant 123456": ("100.00", f"10 of 10 points. {WRITTEN}: 2 of 2 given by hand. Comment on {WRITTEN}: "
                                         "Both reasons, in your own words. The feedback page is attached."),
        "Participant 123457": ("0.00", "0 of 10 points (after a late penalty of 7)."),  # 9:30 in Berlin on the 2nd
        "Participant 123458": ("50.00", "5 of 10 points. test_labels: 1 of 2 given by hand (the grader gave 0). "
                                        "Comment on replace: Half the points: your labels are right, but only where "
                                        "[MASK] went. The feedback page is attached."),  # the part adjusted: 4 -> 5
        "Participant 123459": ("30.00", "3 of 10 points."),  # no time in Moodle: on time
        "Participant 123460": ("", ""),  # never submitted: untouched
    }
    assert rows[1]["Last modified (submission)"] == "Wednesday, 2 December 2026, 9:30 AM"  # the rest as Moodle wrote it
    with zipfile.ZipFile(tmp_path / "o" / f"moodle-{A}-feedback.zip") as zf:
        names = sorted(zf.namelist())
    assert names == ["Bob Smith_123456_assignsubmission_file_08_masking_feedback.html",
                     "José Núñez_123458_assignsubmission_file_08_masking_feedback.html"]
    for name in names:  # as mod/assign/feedback/file/importziplib.php splits it
        who, pid, ptype, pname, rest = name.split("_", 4)
        assert (ptype, pname, rest) == ("assignsubmission", "file", f"{A}_feedback.html") and pid.isdigit()


def test_export_without_an_import_or_a_graded_assignment_says_so(course, tmp_path, capsys):
    rc = cli.main(["export", "moodle", "--assignment", A, "--root", str(course), "--worksheet", "w.csv"])
    assert rc == 2 and "no Moodle import of 08_masking in this course" in capsys.readouterr().err
    import_zip(course, make_zip(tmp_path / "s.zip", CANVAS[:1]), "canvas", A, None)
    rc = cli.main(["export", "canvas", "--assignment", A, "--root", str(course), "--column", "M (1)",
                   "--out", str(tmp_path / "o")])
    assert rc == 2 and "has no assignment 08_masking: grade it first" in capsys.readouterr().err


# ----------------------------------------------------------------------------------------------- a real term
@pytest.mark.slow
@pytest.mark.full
@pytest.mark.skipif(sys.platform != "linux", reason="the sandbox is Linux-only")
def test_a_canvas_class_graded_for_real_gets_its_late_penalty_and_its_pages_back(tmp_path, capsys):
    """The whole loop on a real course: a Canvas zip of two correct notebooks (one handed in late) imported,
    graded by the class runner in the sandbox with the due date and nbgrader's 'zero' penalty set, feedback
    written by nbgrader, and exported: the on-time student has every point, the late one none, and both
    feedback pages go back named for Canvas."""
    from nbgrader_harness import Course, solution_submission

    a = "04_embeddings"
    course = Course(tmp_path / "course", [a])
    course.generate(a)
    with open(course.root / "nbgrader_config.py", "a") as fh:
        fh.write('\nc.LateSubmissionPlugin.penalty_method = "zero"\n')
    course.nbgrader("db", "assignment", "add", a, "--duedate=2026-12-01 23:59:00 UTC")
    done = nbformat_bytes(solution_submission(course, a))
    z = make_zip(tmp_path / "submissions.zip", [(f"smithbob_340934_208490284_{a}.ipynb", done),
                                                 (f"doejane_LATE_340935_208490290_{a}.ipynb", done)])
    times = tmp_path / "times.csv"
    times.write_text("user_id,submitted_at\n340934,2026-12-01T22:00:00Z\n340935,2026-12-02T09:00:00Z\n")
    assert cli.main(["import", "canvas", str(z), "--assignment", a, "--root", str(course.root),
                     "--times", str(times)]) == 0
    run = course.grade_class(a, "--workers", "1")
    assert run.returncode == 0, run.log[-3000:]
    course.generate_feedback(a)
    full = sum(course.scores(a, "340934").values())
    assert full > 0 and course.scores(a, "340935") == course.scores(a, "340934")  # both answers right
    # each written answer waits for the instructor: no grade reaches Canvas before it is graded
    [written] = course.written(a, "340934")
    export = ["export", "canvas", "--assignment", a, "--root", str(course.root), "--out", str(tmp_path / "o"),
              "--column", "Embeddings (4404)"]
    capsys.readouterr()
    assert cli.main(export) == 1
    assert f"not exported: 340934: needs manual grading in Formgrader first ({written})" in capsys.readouterr().err
    with course._gradebook() as gb:  # graded by hand, as Formgrader stores it (its GradeHandler, CommentHandler)
        for s in ("340934", "340935"):
            g = gb.find_grade(written, a, a, s)
            g.manual_score, g.needs_manual_grade = 1.5, False
            gb.find_comment(written, a, a, s).manual_comment = f"Graded by hand for {s}: the width is kept."
        gb.db.commit()
    course.generate_feedback(a)
    full += 1.5
    rc = cli.main(export)
    assert rc == 0, capsys.readouterr()
    rows = list(csv.reader(io.StringIO((tmp_path / "o" / f"canvas-{a}-grades.csv").read_text())))
    assert {r[1]: r[5] for r in rows[1:]} == {"340934": f"{full:.2f}", "340935": "0.00"}
    with zipfile.ZipFile(tmp_path / "o" / f"canvas-{a}-feedback.zip") as zf:
        assert sorted(zf.namelist()) == [f"doejane_340935_208490290_{a}_feedback.html",
                                         f"smithbob_340934_208490284_{a}_feedback.html"]
        page = zf.read(f"smithbob_340934_208490284_{a}_feedback.html").decode()
    assert "Graded by hand for 340934: the width is kept." in page and "Score: 1.5 / 2.0" in page, page[-3000:]


def nbformat_bytes(nb) -> bytes:
    import nbformat

    return nbformat.writes(nb).encode()
