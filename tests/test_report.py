"""What the class got wrong (issue 29 §3) and feedback that leads with the verdict (§9), without grading.

- bertgrader/mistakes.py: a failed part matches a named mistake's signature whatever numbers it saw, and
  only then; the student's quoted code does not count; a mistake explained by a larger one is dropped;
  only the grader's CheckFailed verdict on a graded test cell is read; the stored signatures are current
  for every assignment (their digests) and say what mistakes.py says each loses;
- the feedback page (bertgrader/feedback.py, templates/bert_feedback) made by nbgrader generate_feedback
  itself: each graded part opens with its verdict, whole, the named mistake and its why under it, the test
  folded in <details>, no `In [ ]:` on a graded cell, a student's text escaped, scores untouched;
- the class report (bertgrader/report.py): on a gradebook built here (no kernel), its numbers equal the
  gradebook's and nbgrader export's, the page is one file with inline SVG and no script, the terminal
  table holds every message whole, wrapped between words; Chromium opens it offline at 1280 and 390 px.
- what the instructor gives by hand (issue 29 §4), stored as Formgrader stores it (nbgrader's gradebook
  API, as its formgrader handlers do): a written answer's score and comment and a part's adjusted score
  with the comment on its answer reach the feedback page and the class report; a written answer no one has
  graded yet reads "awaiting grading", not as a lost part; Formgrader's page shows the grader the rubric,
  the feedback page never does.
tests/test_class_grading.py grades real classes for the rest (regrades, stale pages, manual scores).
"""
from __future__ import annotations

import concurrent.futures

import csv
import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

from bertgrader import mistakes as named
from bertgrader.assignment import Assignment, assignments, read_nb

REPO = Path(__file__).resolve().parents[1]
A = "08_masking"


# ----------------------------------------------------------------------------------------------- matching
def _mistake(name, **messages):
    return named.Mistake(A, name, f"why {name}", messages)


def test_a_mistake_matches_whatever_numbers_its_check_saw():
    m = _mistake("floor", test_select="a row with 84 eligible tokens got 12 selected; round(0.15 x n) = 13")
    assert named.matches(m, {"test_select": "a row with 120 eligible tokens got 17 selected; round(0.15 x n) = 18"})
    assert named.matches(m, {"test_select": "a row  with 84 eligible\ntokens got 12 selected; round(0.15 x n) = 13"})
    assert not named.matches(m, {"test_select": "a row with 84 eligible tokens got 12 chosen; round(0.15 x n) = 13"})
    assert not named.matches(m, {"test_replace": "a row with 84 eligible tokens got 12 selected; round(0.15 x n) = 13"})
    assert not named.matches(m, {}), "a part that passed shows no mistake"
    assert not named.matches(_mistake("empty"), {"test_select": "x"}), "a signature with no part matches nothing"


def test_the_students_quoted_code_is_not_part_of_the_signature():
    said = ("on the batch: your code raised RuntimeError: bertlib.mask_tokens is switched off while your notebook "
            "is graded: write it yourself (line {n} in select_for_prediction: {code})")
    m = _mistake("calls_bertlib", test_select=said.format(n=2, code="_, labels = bertlib.mask_tokens(ids, ...)"))
    assert named.matches(m, {"test_select": said.format(n=7, code="return bertlib.mask_tokens(x)[1] != -100")})


def test_a_mistake_explained_by_a_larger_one_is_dropped():
    both = _mistake("in_place", test_replace="changed input_ids in place", test_labels="labelled wrongly")
    labels = _mistake("labels_after", test_labels="labelled wrongly")
    twin = _mistake("same_message_other_way", test_labels="labelled wrongly")
    failed = {"test_replace": "changed input_ids in place", "test_labels": "labelled wrongly"}
    assert [m.name for m in named.identify([labels, both, twin], failed)] == ["in_place"]
    assert [m.name for m in named.identify([labels, both, twin], {"test_labels": "labelled wrongly"})] == [
        "labels_after", "same_message_other_way"], "two ways to one wrong answer are both named"


def test_mistakes_that_fail_one_part_alike_are_told_apart_by_their_numbers_or_named_together():
    """01's causal_mask_in_bert and padding_not_masked both lose test_bidirectional with one message but for
    its numbers: the one whose numbers are the submission's is named alone; where no stored message agrees to
    the number, every candidate is named, as one group (the feedback page and the report show them as one
    explanation, not as mistakes the student made each)."""
    causal = _mistake("causal", test_bidirectional="position 0 attends to 1 of 5 keys; expected 5")
    padding = _mistake("padding", test_bidirectional="position 0 attends to 4 of 5 keys; expected 5")
    other = _mistake("other", test_shape="wrong shape (2, 3)")
    said = "position 0 attends to 4 of 5 keys;\n expected 5"
    assert [m.name for m in named.identify([causal, padding, other], {"test_bidirectional": said})] == ["padding"]
    unsure = named.identify([causal, padding, other], {"test_bidirectional": "position 0 attends to 2 of 5 keys; "
                                                                               "expected 5"})
    assert [m.name for m in unsure] == ["causal", "padding"]
    both = named.identify([causal, padding, other], {"test_bidirectional": "position 0 attends to 2 of 5 keys; "
                                                                              "expected 5", "test_shape": "wrong shape (2, 3)"})
    assert [[m.name for m in g] for g in named.groups(both)] == [["causal", "padding"], ["other"]]

    from bertgrader.feedback import annotate

    nb = nbformat.v4.new_notebook(cells=[_test_cell("test_bidirectional", [_error(
        "CheckFailed", "position 0 attends to 2 of 5 keys; expected 5")])])
    annotate(nb, [causal, padding, other])
    shown = nb.cells[0].metadata["bertgrader"]["part"]["mistakes"]
    assert [[m["name"] for m in g] for g in shown] == [["causal", "padding"]], "one group of two candidates"


def _test_cell(gid, outputs, points=2):
    cell = nbformat.v4.new_code_cell(f"assert {gid}")
    cell.metadata["nbgrader"] = {"grade": True, "solution": False, "grade_id": gid, "points": points,
                                 "locked": True, "schema_version": 3}
    cell.outputs = outputs
    return cell


def _error(ename, evalue):
    return nbformat.v4.new_output("error", ename=ename, evalue=evalue, traceback=[f"{ename}: {evalue}"])


def test_only_the_graders_verdict_on_a_graded_test_cell_is_read():
    answer = nbformat.v4.new_code_cell("x = 1")
    answer.metadata["nbgrader"] = {"grade": False, "solution": True, "grade_id": "answer"}
    answer.outputs = [_error("CheckFailed", "a student's own exception of that name")]
    nb = nbformat.v4.new_notebook(cells=[
        answer, _test_cell("test_a", [_error("CheckFailed", "expected 3, got 4")]),
        _test_cell("test_b", [_error("NotGraded", "not graded: the kernel stopped")]),
        _test_cell("test_c", [nbformat.v4.new_output("stream", name="stdout", text="Passed\n")])])
    assert named.failures(nb) == {"test_a": "expected 3, got 4"}


def test_check_names_only_the_stale_among_the_assignments_it_is_given(tmp_path, capsys):
    """`python -m bertgrader.mistakes --check A B`: of A and B, those whose signatures are stale (it listed
    every name given, stale or not)."""
    a, b = assignments(REPO)[:2]
    for x in (a, b):
        shutil.copytree(REPO / "solutions" / x, tmp_path / "solutions" / x)
    stored = json.loads((REPO / named.SIGNATURES).read_text())
    (tmp_path / named.SIGNATURES).write_text(json.dumps({a: stored[a]}))  # b's missing: stale
    assert named.main(["--root", str(tmp_path), "--check", a]) == 0
    assert named.main(["--root", str(tmp_path), "--check", a, b]) == 1
    assert capsys.readouterr().out.split()[-1] == b


def test_the_stored_signatures_are_current_and_agree_with_mistakes_py():
    stale = named.stale(REPO)
    assert not stale, (f"solutions/mistake_signatures.json is stale for {stale}: their source, hidden tests or "
                       f"mistakes changed; run `python -m bertgrader.mistakes` (it grades the named mistakes again)")
    stored = json.loads((REPO / named.SIGNATURES).read_text())
    for a in assignments(REPO):
        mistakes = Assignment.at(REPO, a).mistakes()
        assert set(stored[a]["mistakes"]) == set(mistakes), f"{a}: every named mistake has a signature"
        for name, m in mistakes.items():
            messages = stored[a]["mistakes"][name]["messages"]
            assert set(messages) == set(m["loses"]), f"{a}/{name}: its grading failed {sorted(messages)}"
            assert all(named.normalise(s) for s in messages.values()), f"{a}/{name}: an empty message"


def test_the_signatures_are_not_released():
    """solutions/mistake_signatures.json is beside the assignments, not in one: generate_assignment copies
    nothing of it, and the release tests (tests/test_exercises.py) list each release's files."""
    assert named.SIGNATURES.parent == Path("solutions") and len(named.SIGNATURES.parts) == 2


# ----------------------------------------------------------------------------------------------- a course
WRITTEN = "explain_80_10_10"  # 08's written answer, graded by hand
ALICE_SAYS = "Right on both counts: the mismatch and *why* the model must check visible words."
BOB_PART_SAYS = "Half the points by hand: you select 15%, but of every token, [CLS] and [SEP] included."


def _formgrader_grade(gb, cell: str, student: str, manual=None, extra=None, comment=None, answer=None):
    """What Formgrader's score box and comment box store (nbgrader's formgrader GradeHandler.put and
    CommentHandler.put): the manual score and extra credit, needs_manual_grade cleared unless nothing is
    scored; the comment on the answer cell (``answer``, the cell itself by default)."""
    if manual is not None or extra is not None:
        g = gb.find_grade(cell, A, A, student)
        g.manual_score, g.extra_credit = manual, extra
        g.needs_manual_grade = g.manual_score is None and g.auto_score is None
    if comment is not None:
        gb.find_comment(answer or cell, A, A, student).manual_comment = comment
    gb.db.commit()


def _course(tmp_path: Path) -> Path:
    """A course root with 08's source and a signature file of its own (two named mistakes of 08, with
    messages made up here: the matching is what is tested, not 08's checks)."""
    root = tmp_path / "course"
    (root / "solutions").mkdir(parents=True)
    shutil.copy(REPO / "nbgrader_config.py", root)
    shutil.copytree(REPO / "solutions" / A, root / "solutions" / A, ignore=shutil.ignore_patterns("__pycache__"))
    return root


def _pick_mistakes(root: Path) -> tuple[str, str, list[str], str]:
    """Two named mistakes of 08 that each lose one part, the same part, and 08's graded parts."""
    source = read_nb(root / "solutions" / A / f"{A}.ipynb")
    parts = [c.metadata["nbgrader"]["grade_id"] for c in source.cells
             if c.metadata.get("nbgrader", {}).get("grade") and not c.metadata["nbgrader"].get("solution")]
    by_part: dict[str, list[str]] = {}
    for name, m in Assignment.at(root, A).mistakes().items():
        if len(m["loses"]) == 1:
            by_part.setdefault(m["loses"][0], []).append(name)
    part, names = next((p, n) for p, n in by_part.items() if len(n) >= 2)
    return names[0], names[1], parts, part


SAID_1 = "with <b>vocab_size=10</b>: expected ids in [0, 10), got 12 ids at 30522"
SAID_2 = "on the visible test's inputs: 3666 positions that were NOT selected were changed"


def _autograded(root: Path, student: str, fails: dict[str, str]) -> Path:
    """The source notebook as an autograded one: each graded part passed or failed with the message given."""
    nb = read_nb(root / "solutions" / A / f"{A}.ipynb")
    for cell in nb.cells:
        meta = cell.metadata.get("nbgrader", {})
        if cell.cell_type == "markdown" and meta.get("grade"):  # the written answer: the student's own words
            cell.source = f"{student}'s answer: [MASK] is never seen at fine-tuning, so the model must check every word."
        if cell.cell_type != "code":
            continue
        cell.outputs = []
        if meta.get("grade") and not meta.get("solution"):
            gid = meta["grade_id"]
            cell.outputs = ([_error("CheckFailed", fails[gid])] if gid in fails else
                            [nbformat.v4.new_output("stream", name="stdout", text="Passed: the grader's checks.\n")])
        elif meta.get("solution"):  # what a page is laid out by is the grader's, not the notebook's
            cell.metadata["bertgrader"] = {"part": {"passed": True, "verdict": "FORGED VERDICT", "mistakes": []}}
    path = root / "autograded" / student / A / f"{A}.ipynb"
    path.parent.mkdir(parents=True, exist_ok=True)
    nbformat.write(nb, str(path))
    sub = root / "submitted" / student / A / f"{A}.ipynb"
    sub.parent.mkdir(parents=True, exist_ok=True)
    sub.write_text(f"the submission of {student}")  # hashed for the ledger; never read as a notebook here
    return path


@pytest.fixture(scope="module")
def course(tmp_path_factory):
    """A graded class of four built straight into a gradebook (nbgrader's API, no kernel): alice full
    marks, bob a named mistake (other numbers than its signature), carol the same part failed in other
    words, and dave, who could not be graded. By hand, as in Formgrader: alice's written answer 2 of 2 with a
    comment, bob's 2 of 2 and his failed part adjusted to 1 with a comment on its answer cell; carol's
    written answer not graded yet."""
    from nbgrader.api import Gradebook

    from bertgrader.classes.db import Ledger, submission_digest
    from bertgrader.trial import _venv_bin_on_path

    _venv_bin_on_path()  # nbgrader's gradebook calls alembic, beside this Python
    root = _course(tmp_path_factory.mktemp("report"))
    first, second, parts, part = _pick_mistakes(root)
    signatures = {A: {"digest": named.source_digest(root, A), "mistakes": {
        first: {"messages": {part: SAID_1.replace("12 ids", "7 ids")}}, second: {"messages": {part: SAID_2}}}}}
    (root / named.SIGNATURES).write_text(json.dumps(signatures))
    source = read_nb(root / "solutions" / A / f"{A}.ipynb")
    url = f"sqlite:///{root / 'gradebook.db'}"
    fails = {"alice": {}, "bob": {part: SAID_1}, "carol": {part: "it went wrong, " + "word " * 80 + "end"}}
    with Gradebook(url, "bert-course") as gb:
        gb.add_assignment(A)
        gb.add_notebook(A, A)
        for c in source.cells:
            meta = c.metadata.get("nbgrader", {})
            if meta.get("grade"):
                gb.update_or_create_grade_cell(meta["grade_id"], A, A, max_score=float(meta["points"]),
                                               cell_type=c.cell_type)
            if meta.get("solution"):
                gb.update_or_create_solution_cell(meta["grade_id"], A, A)
        for s in [*fails, "dave"]:
            gb.add_student(s)
        for s, failed in fails.items():
            gb.add_submission(A, s)
            for g in gb.find_submission_notebook(A, A, s).grades:
                g.auto_score = 0.0 if g.name in failed else g.max_score
                if g.name == WRITTEN:  # answered: nbgrader leaves it to a person
                    g.auto_score, g.needs_manual_grade = None, True
            gb.db.commit()
        answer = _answer_of(source, part)
        _formgrader_grade(gb, WRITTEN, "alice", manual=2.0, comment=ALICE_SAYS)
        _formgrader_grade(gb, WRITTEN, "bob", manual=2.0)
        _formgrader_grade(gb, part, "bob", manual=1.0, comment=BOB_PART_SAYS, answer=answer)
    ledger = Ledger(url, "bert-course")
    ledger.create()
    for i, (s, failed) in enumerate(fails.items()):
        _autograded(root, s, failed)
        ledger.record(A, s, submission_digest(root / "submitted" / s / A), 3.0 + i, "test")
    dave = root / "submitted" / "dave" / A / f"{A}.ipynb"
    dave.parent.mkdir(parents=True)
    dave.write_text("not a notebook")
    ledger.failed(A, "dave", "not a notebook (not JSON)")
    ledger.close()
    return dict(root=root, url=url, first=first, second=second, part=part, parts=parts, fails=fails, answer=answer)


def _answer_of(source, part: str) -> str:
    """The answer cell a graded part tests: the last code answer cell before it."""
    answer = None
    for c in source.cells:
        meta = c.metadata.get("nbgrader", {})
        if meta.get("grade_id") == part:
            return answer
        if c.cell_type == "code" and meta.get("solution"):
            answer = meta["grade_id"]
    raise KeyError(part)


def _env():
    import os

    return dict(os.environ, MPLBACKEND="Agg", HF_HUB_OFFLINE="1")


def test_report_numbers_equal_the_gradebooks(course):
    from bertgrader.report import collect

    root = course["root"]
    report = collect(root, [A])
    export = root / "grades.csv"
    subprocess.run([sys.executable, "-m", "nbgrader", "export", "--to", str(export)], cwd=root, env=_env(),
                   check=True, capture_output=True, timeout=300)
    rows = {r["student_id"]: r for r in csv.DictReader(export.open())}
    graded = {r.student: r for r in report.graded}
    assert set(graded) == {"alice", "bob", "carol"}
    for s, r in graded.items():
        assert r.score == float(rows[s]["score"]) and r.max_score == float(rows[s]["max_score"]), (s, rows[s])
        assert r.lost == sorted(course["fails"][s]), s
        assert r.awaiting == ([WRITTEN] if s == "carol" else []), "a written answer not graded yet is not lost"
    assert [(r.student, r.why) for r in report.failed] == [("dave", "not a notebook (not JSON)")]
    for p in report.parts:
        if p.name == WRITTEN:  # graded by hand for alice and bob; carol's waits
            assert (p.written, p.passed, p.graded, p.awaiting) == (True, 2, 2, 1), p
            continue
        assert (p.passed, p.graded) == (sum(p.name not in f for f in course["fails"].values()), 3), p
    assert {k: v["students"] for k, v in report.mistakes.items()} == {(A, course["first"]): ["bob"]}
    assert graded["bob"].mistakes == [course["first"]] and graded["carol"].mistakes == []
    assert report.unexplained == {(A, course["part"]): 1}, "carol's failure: no named mistake"
    assert [r.seconds for r in report.graded] == [3.0, 4.0, 5.0]


def test_report_page_and_terminal_table(course, tmp_path):
    root = course["root"]
    out = tmp_path / "report.html"
    proc = subprocess.run([sys.executable, "-m", "bertgrader", "report", A, "--out", str(out), "--width", "80"],
                          cwd=root, env=_env(), capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    page = out.read_text()
    assert "<script" not in page.lower() and "@import" not in page
    assert not re.search(r"""(src|href)\s*=\s*["']?(https?:)?//|url\(\s*["']?(https?:)?//""", page, re.I), \
        "nothing loaded from elsewhere (an SVG's xmlns names a namespace, it loads nothing)"
    assert page.count("<svg") == 4, "pass rates, mistakes, scores, times"
    assert "&lt;b&gt;vocab_size=10&lt;/b&gt;" in page and "<b>vocab_size" not in page, "messages escaped"
    assert course["first"].replace("_", " ") in page and Assignment.at(root, A).mistakes()[course["first"]]["why"] in page
    lines = proc.stdout.splitlines()
    assert all(len(ln) <= 80 or " " not in ln.strip() for ln in lines), "wrapped at 80 columns"
    said = " ".join(ln.strip() for ln in lines)
    assert "it went wrong, " + "word " * 79 + "word end" in said, "a long message whole, wrapped between words"
    assert re.search(r"^bob\s+08_masking\s+(\S+)\s+(\S+)", proc.stdout, re.M)
    assert "dave" in proc.stdout and "not a notebook (not JSON)" in proc.stdout


def test_report_refuses_an_unknown_assignment(course):
    proc = subprocess.run([sys.executable, "-m", "bertgrader", "report", "99_nothing"], cwd=course["root"],
                          env=_env(), capture_output=True, text=True, timeout=300)
    assert proc.returncode == 2 and "unknown assignment '99_nothing'" in proc.stderr


def _shoot(page: Path, width: int, png: Path) -> dict:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path="/usr/bin/chromium", args=["--no-sandbox"])
        try:
            ctx = browser.new_context(viewport={"width": width, "height": 900}, offline=True)
            tab = ctx.new_page()
            asked = []
            tab.on("request", lambda r: asked.append(r.url))
            tab.goto(page.as_uri())
            tab.screenshot(path=str(png), full_page=True)
            return {"scroll": tab.evaluate("document.documentElement.scrollWidth"), "asked": asked,
                    "figures": tab.evaluate("[...document.querySelectorAll('figure svg')].map(s => "
                                            "s.getBoundingClientRect().width)")}
        finally:
            browser.close()


@pytest.mark.skipif(not Path("/usr/bin/chromium").exists(), reason="needs Chromium")
@pytest.mark.parametrize("width", [1280, 390])
def test_report_opens_offline_in_chromium(course, tmp_path, width):
    from bertgrader.report import collect, render

    page = tmp_path / "report.html"
    page.write_text(render(collect(course["root"], [A])))
    # Playwright's sync API on a thread of its own: in a make check worker another test's asyncio loop may be
    # running in this thread already, where the sync API refuses to start
    with concurrent.futures.ThreadPoolExecutor(max_workers=1) as pool:
        seen = pool.submit(_shoot, page, width, tmp_path / f"report-{width}.png").result()
    assert seen["asked"] == [page.as_uri()], f"the page asked for more than itself: {seen['asked']}"
    assert seen["scroll"] <= width, "nothing wider than the screen"
    assert seen["figures"] and all(0 < w <= width for w in seen["figures"])


# ----------------------------------------------------------------------------------------------- feedback
def test_feedback_leads_with_the_verdict(course):
    """nbgrader generate_feedback itself, on the class above: bob's page."""
    root = course["root"]
    before = read_nb(root / "autograded" / "bob" / A / f"{A}.ipynb")
    proc = subprocess.run([sys.executable, "-m", "nbgrader", "generate_feedback", A, "--student", "bob", "--force"],
                          cwd=root, env=_env(), capture_output=True, text=True, timeout=600)
    page = (root / "feedback" / "bob" / A / f"{A}.html").read_text()
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    parts = re.findall(r'<div class="cell border-box-sizing code_cell rendered graded-part">(.*?)</details>', page, re.S)
    assert len(parts) == len(course["parts"]), "every graded part in the verdict-first layout"
    for gid, part in zip(course["parts"], parts):
        head = part[:part.index("<details")]
        assert f"<code>{gid}</code>" in head
        if gid == course["part"]:
            assert "failed" in head and "&lt;b&gt;vocab_size=10&lt;/b&gt;: expected ids in [0, 10), got 12 ids" in head
            why = Assignment.at(root, A).mistakes()[course["first"]]["why"]
            assert "known mistake" in head and (why.replace("'", "&#39;") in head or why in head)
        else:
            assert "passed" in head and "Passed: the grader's checks." in head and "known mistake" not in head
    plain = [c for c in before.cells if c.cell_type == "code" and not (
        c.metadata.get("nbgrader", {}).get("grade") or c.metadata.get("nbgrader", {}).get("solution"))]
    assert page.count("In&nbsp;[") == len(plain), "a prompt on the ungraded code cells only: no graded cell reads as never run"
    assert "<b>vocab_size" not in page and "FORGED VERDICT" not in page
    assert "cdnjs" not in page and "cdn.jsdelivr" not in page
    assert read_nb(root / "autograded" / "bob" / A / f"{A}.ipynb") == before, "the notebook is not changed"


def test_formgrader_page_is_offline_and_verdict_first(course):
    """Formgrader renders a submission with a plain HTMLExporter whose template is nbgrader's formgrade,
    configured before the course's configuration is read; with offline_formgrader(c) in that configuration
    its page inlines MathJax (no CDN) and shows each graded part verdict first, score boxes intact."""
    from nbconvert.exporters import HTMLExporter
    from traitlets.config import Config

    from bertgrader.feedback import offline_formgrader

    c = Config()
    c.HTMLExporter.template_name = "formgrade"  # what FormgradeExtension.build_extra_config sets first
    offline_formgrader(c)
    resources = {"assignment_id": A, "notebook_id": A, "submission_id": "x", "index": 0, "total": 1,
                 "base_url": "", "student": "bob", "last_name": None, "first_name": None, "notebook_path": "p"}
    path = course["root"] / "autograded" / "bob" / A / f"{A}.ipynb"
    page, _ = HTMLExporter(config=c).from_filename(str(path), resources=resources)
    assert "cdnjs" not in page and "window.MathJax" in page
    assert not re.search(r"""<script[^>]*\bsrc\s*=\s*["']?(https?:)?//""", page, re.I)
    parts = re.findall(r'<div class="panel-body">\s*<div class="verdict (passed|failed)">(.*?)</div>\s*'
                       r'<details class="test-source">', page, re.S)
    assert len(parts) == len(course["parts"]), "each graded part: its verdict, then its test folded"
    failed = [said for kind, said in parts if kind == "failed"]
    assert failed == ["with &lt;b&gt;vocab_size=10&lt;/b&gt;: expected ids in [0, 10), got 12 ids at 30522"]
    for gid in course["parts"]:
        assert f'<input class="score tabbable" id="{gid}"' in page, "Formgrader's score box for each part"
    assert "FORGED VERDICT" not in page


# ----------------------------------------------------------------------------------------------- by hand
def test_report_says_awaiting_grading_and_what_was_given_by_hand(course, tmp_path):
    """The class table and page: carol's written answer awaits grading (her status is not "lost" for it),
    bob's adjusted part is listed with the grader's score and the comment, alice's written answer with hers."""
    root = course["root"]
    out = tmp_path / "report.html"
    proc = subprocess.run([sys.executable, "-m", "bertgrader", "report", A, "--out", str(out), "--width", "200"],
                          cwd=root, env=_env(), capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    rows = {ln.split()[0]: ln for ln in proc.stdout.splitlines() if re.match(r"^(alice|bob|carol) ", ln)}
    assert rows["alice"].endswith("full marks") and rows["carol"].endswith("lost 1 part"), rows
    assert rows["bob"].endswith("lost 1 part"), "the written answer is not a lost part"
    said = " ".join(proc.stdout.split())
    assert f"awaiting grading by hand: {WRITTEN} (written)" in said
    assert f"by hand: {course['part']}: 1 of {_points(root)[course['part']]:g} given by hand (the grader gave 0)" in said
    assert f"comment: {BOB_PART_SAYS}" not in said, "bob's comment is on his answer cell, listed under its name"
    assert f"by hand: {WRITTEN}: 2 of 2 given by hand; comment: {ALICE_SAYS}" in said
    page = out.read_text()
    assert f"awaiting grading by hand: {WRITTEN}" in page and f"{WRITTEN} (written, graded by hand)" in page
    assert "2 of 2 (1 awaiting grading)" in page


def _points(root: Path) -> dict:
    from bertgrader.assignment import points

    return points(read_nb(root / "solutions" / A / f"{A}.ipynb"))


def _feedback(root: Path, student: str) -> str:
    proc = subprocess.run([sys.executable, "-m", "nbgrader", "generate_feedback", A, "--student", student, "--force"],
                          cwd=root, env=_env(), capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    return (root / "feedback" / student / A / f"{A}.html").read_text()


def _written_panel(page: str) -> str:
    """The written answer's panel of a feedback page: from its cell to the next cell (or the page's end)."""
    start = page.index('<div class="cell border-box-sizing text_cell rendered graded-part written-part">')
    end = page.find('<div class="cell border-box-sizing', start + 10)
    return page[start:end if end > 0 else len(page)]


def test_feedback_pages_carry_what_was_given_by_hand(course):
    """nbgrader generate_feedback itself: carol's written answer reads "awaiting grading" (the heading says
    the points wait; no 0 / 2 for it), alice's shows her score and the instructor's comment, bob's adjusted
    part says what counts and what the grader gave, with the comment on his answer; no page holds the rubric."""
    root = course["root"]
    rubric_line = "**Rubric (2 points; the grader's, never released).**"
    pages = {s: _feedback(root, s) for s in ("alice", "bob", "carol")}
    carol = _written_panel(pages["carol"])
    assert "awaiting grading" in carol and "Score: awaiting grading / 2.0" in carol and "panel-info" in carol
    assert "2.0 points await grading by hand (your written answer explain_80_10_10)" in pages["carol"]
    assert f'<a href="#{WRITTEN}">Written response</a> (awaiting grading, 2.0 points)' in pages["carol"]
    assert "Written response</a> (Score: 0.0 / 2.0)" not in pages["carol"]
    alice = _written_panel(pages["alice"])
    assert "graded by your instructor" in alice and "Score: 2.0 / 2.0" in alice
    assert "Your instructor&#39;s comment:" in alice or "Your instructor's comment:" in alice
    assert "Right on both counts: the mismatch and <em>why</em> the model must check visible words." in alice
    assert "await grading by hand" not in pages["alice"]
    part = pages["bob"][pages["bob"].index(f"<code>{course['part']}</code>"):]
    part = part[:part.index("<details")]
    most = _points(root)[course["part"]]
    assert f"Score: 1.0 / {most:.1f}" in part, "nbgrader's score: the manual one"
    assert re.search(rf"Score adjusted by your instructor:</b>\s*1.0 / {most:.1f} counts, where the grader gave 0.0",
                     part), part
    assert BOB_PART_SAYS in part and "failed" in part, "the comment on his answer, beside the grader's verdict"
    assert pages["bob"].count(BOB_PART_SAYS) == 1, "the comment is shown once (not again under his answer)"
    for s, page in pages.items():
        assert rubric_line.replace("*", "") not in page and "A full answer." not in page, f"{s}'s page shows the rubric"


def test_formgrader_shows_the_grader_the_rubric(course):
    """Formgrader's page of a submission (its exporter, configured as configure(c) does: the page's
    sanitiser, then offline_formgrader): the written answer has its rubric above it, from the course's source
    notebook, and its score and comment boxes; a feedback page's exporter adds no rubric (resources name no
    submission)."""
    from nbconvert.exporters import HTMLExporter
    from traitlets.config import Config

    from bertgrader.feedback import GraderRubric, offline_formgrader
    from bertgrader.sanitize import install

    root = course["root"]
    c = Config()
    c.HTMLExporter.template_name = "formgrade"
    c.CourseDirectory.root, c.CourseDirectory.source_directory = str(root), "solutions"
    install(c)
    offline_formgrader(c)
    assert list(c.HTMLExporter.preprocessors) == ["bertgrader.sanitize.SafePage", "bertgrader.feedback.GraderRubric"]
    resources = {"assignment_id": A, "notebook_id": A, "submission_id": "x", "index": 0, "total": 1,
                 "base_url": "", "student": "carol", "last_name": None, "first_name": None, "notebook_path": "p"}
    path = root / "autograded" / "carol" / A / f"{A}.ipynb"
    page, _ = HTMLExporter(config=c).from_filename(str(path), resources=resources)
    box = page[page.index("grader-rubric"):page.index(f'<input class="score tabbable" id="{WRITTEN}"')]
    assert f"Rubric for <code>{WRITTEN}</code> (2.0 points): for the grader" in box
    assert "<strong>Rubric (2 points; the grader's, never released).</strong>" in box.replace("&#39;", "'")
    assert "A full answer." in box
    assert f'id="{WRITTEN}-comment"' in page, "Formgrader's comment box for the written answer"
    nb = read_nb(path)
    nb.cells[-1].metadata["bertgrader"] = {"rubric": "FORGED RUBRIC"}  # a notebook's own says nothing
    for res in ({"nbgrader": {"assignment": A}}, {}):
        out, _ = GraderRubric(config=c).preprocess(nb, dict(res))
        assert all("rubric" not in (cell.metadata.get("bertgrader") or {}) for cell in out.cells), res
