"""The graded exercises, graded for real: nbgrader generate_assignment and autograde on a temporary course.

- exercises/ is exactly what nbgrader makes from solutions/, and leaks no solution or hidden test
  (tests/test_notebook_sources.py: each solutions/<a>/<a>.ipynb is what its source <a>.py builds);
- per assignment, ONE autograde command grades a class: the solution (full marks), the untouched student
  version (zero), and every named mistake of solutions/<a>/mistakes.py (loses exactly the points of its
  part); assignments are graded two at a time, in two copies of the course (NBGRADER_TEST_JOBS); every
  assignment in `make check`, the sample EXERCISES_GRADED names in `make test`;
- on one assignment, faults that must not cost other work: an infinite loop, a file that is not JSON, an
  edited locked test cell, warnings; a second run scores the same; and the instructor's workflow end to
  end (feedback, CSV export, the student's nbgrader validate).
"""
from __future__ import annotations

import csv
import os
import re

import pytest

from nbgrader_harness import (
    EXERCISES, REPO, SOLUTIONS, Course, assignments, autograded_points, filled, grade_classes, grade_id, is_graded,
    is_solution, is_written, load_mistakes, mistake_submission, notebook_json, read_nb, replace_cell, rubric,
    solution_answers, solution_submission, written_points,
)

ASSIGNMENTS = assignments()
# The assignments whose whole class is graded: all of them (make check), or the sample EXERCISES_GRADED names
# (make test: the fast tier grades two; every other test here still covers every assignment).
_SAMPLE = [a for a in os.environ.get("EXERCISES_GRADED", "").split(",") if a]
GRADED = [a for a in ASSIGNMENTS if a in _SAMPLE] if _SAMPLE else ASSIGNMENTS
MISTAKES = [(a, name) for a in GRADED for name in load_mistakes(a)]
FAULTS_ON = "01_positioning" if "01_positioning" in ASSIGNMENTS else (ASSIGNMENTS or [None])[0]

pytestmark = pytest.mark.slow


# ---------------------------------------------------------------------------------------------------- fixtures
@pytest.fixture(scope="session")
def released(tmp_path_factory):
    """A course with every assignment released by nbgrader generate_assignment (one command)."""
    course = Course(tmp_path_factory.mktemp("course"), ASSIGNMENTS)
    course.generate("*")
    return course


@pytest.fixture(scope="session")
def graded(released):
    """Every graded assignment's class autograded, one command per assignment: {a: (course, run)}.
    Students: the solution, the untouched student version, and one per named mistake; in FEEDBACK_ON's class
    also the feedback tests' two (``feedback``), graded by the same command."""
    classes = {}
    for a in GRADED:
        students = {"solution": solution_submission(released, a), "untouched": released.release(a)}
        for name, m in load_mistakes(a).items():
            students[name] = mistake_submission(released, a, m)
        if a == FEEDBACK_ON:  # the feedback tests' own students join this class (``feedback``)
            students |= _feedback_students(released)
        classes[a] = students
    return grade_classes(released, classes)


# ------------------------------------------------------------------------------------------- the release itself
def test_every_assignment_has_mistakes():
    assert ASSIGNMENTS, "no assignment in solutions/"
    for a in ASSIGNMENTS:
        assert len(load_mistakes(a)) >= 3, f"{a}: at least three named mistakes in solutions/{a}/mistakes.py"


@pytest.mark.parametrize("a", ASSIGNMENTS)
def test_source_notebook_is_well_formed(a):
    nb = read_nb(SOLUTIONS / a / f"{a}.ipynb")
    first = nb.cells[0] if nb.cells[0].cell_type == "code" else next(c for c in nb.cells if c.cell_type == "code")
    assert first.metadata.get("nbgrader", {}).get("locked"), f"{a}: the first code cell is the read-only setup"
    assert "from bertgrader.kernel.notebook import *" in first.source, f"{a}: the setup cell imports the helpers"
    graded = [c for c in nb.cells if is_graded(c) and not is_written(c)]
    assert 2 <= len(graded) <= 5, f"{a}: {len(graded)} autograded parts, expected 2 to 5"
    written = [c for c in nb.cells if is_written(c)]
    assert len(written) == 1, f"{a}: one written answer, graded by hand (issue 29 §4), found {len(written)}"
    assert "**Rubric" in rubric(written[0]) and "**A full answer" in rubric(written[0]), (
        f"{a}/{grade_id(written[0])}: its solution region holds the rubric and a full answer for the grader")
    for c in graded:
        assert "assert" in c.source, f"{a}/{grade_id(c)}: no visible assert"
        assert "BEGIN HIDDEN TESTS" not in c.source, f"{a}/{grade_id(c)}: hidden tests belong in hidden_tests.py"
    for c in nb.cells:
        if is_solution(c):
            assert "### BEGIN SOLUTION" in c.source and "### END SOLUTION" in c.source, f"{a}/{grade_id(c)}"


@pytest.mark.parametrize("a", ASSIGNMENTS)
def test_every_graded_cell_has_hidden_tests(a):
    """solutions/<a>/hidden_tests.py grades each graded cell (a function named by its grade id) and its
    SWITCHED_OFF names real bertlib objects (the stubbed copy is built from them)."""
    from bertgrader.checks import load
    from bertgrader.switch_off import STUB_MARKER, stubbed_bertlib

    module = load(SOLUTIONS / a)
    assert module is not None, f"{a}: no solutions/{a}/hidden_tests.py"
    graded = [grade_id(c) for c in read_nb(SOLUTIONS / a / f"{a}.ipynb").cells if is_graded(c) and not is_written(c)]
    missing = [g for g in graded if not callable(getattr(module, g, None))]
    assert not missing, f"{a}: hidden_tests.py has no test for {missing}"
    switched_off = getattr(module, "SWITCHED_OFF", [])
    assert switched_off, f"{a}: SWITCHED_OFF names the bertlib functions students write"
    stubbed = stubbed_bertlib(switched_off)
    assert STUB_MARKER in "".join(
        p.read_text() for p in stubbed.rglob("*.py"))


@pytest.mark.parametrize("a", ASSIGNMENTS)
def test_release_is_regenerated_exactly(released, a):
    committed = EXERCISES / a
    assert committed.is_dir(), f"exercises/{a} is missing: nbgrader generate_assignment {a}"
    made = released.root / "exercises" / a
    files = sorted(p.relative_to(made).as_posix() for p in made.rglob("*") if p.is_file())
    assert sorted(p.relative_to(committed).as_posix() for p in committed.rglob("*") if p.is_file()) == files
    shipped = ["inputs.py"] if (SOLUTIONS / a / "inputs.py").is_file() else []  # the tests' inputs, imported
    assert files == [f"{a}.ipynb", *shipped], f"only the notebook (and its inputs.py) is released, got {files}"
    for name in shipped:
        assert (committed / name).read_bytes() == (SOLUTIONS / a / name).read_bytes(), f"exercises/{a}/{name} is stale"
    assert notebook_json(committed / f"{a}.ipynb") == notebook_json(made / f"{a}.ipynb"), (
        f"exercises/{a} differs from what nbgrader generates now: regenerate it (docs/exercises.md)")


def _blocks(source: str, begin: str, end: str) -> list[str]:
    return re.findall(rf"{re.escape(begin)}\n(.*?)\n[ \t]*{re.escape(end)}", source, flags=re.S)


@pytest.mark.parametrize("language", ["en", "zh_CN"])
@pytest.mark.parametrize("a", ASSIGNMENTS)
def test_release_leaks_no_solution_or_hidden_test(a, language):
    # the Chinese student version (issue 31 §3) against the Chinese source: the same code, other words
    source = read_nb(SOLUTIONS / a / f"{a}.ipynb" if language == "en" else SOLUTIONS / a / language / f"{a}.ipynb")
    released_folder = EXERCISES / a if language == "en" else EXERCISES / language / a
    secret, public = set(), set()
    for cell in source.cells:
        text = cell.source
        blocks = (_blocks(text, "### BEGIN SOLUTION", "### END SOLUTION")
                  + _blocks(text, "### BEGIN HIDDEN TESTS", "### END HIDDEN TESTS"))
        for block in blocks:
            secret |= {line.strip() for line in block.splitlines()}
            text = text.replace(block, "")
        public |= {line.strip() for line in text.splitlines()}
    # A line that also appears outside the secret blocks (a visible test, the prose) may be in the release.
    secret = {line for line in secret - public if len(line) >= 8 and not line.startswith("#")}
    assert secret, f"{a}: found no solution text to look for"
    for path in released_folder.rglob("*"):
        if not path.is_file():
            continue
        released = path.read_text(encoding="utf-8")
        # "# %% " and "# why: " begin the cells of the source <a>.py and of mistakes.py.
        for marker in ("BEGIN SOLUTION", "END SOLUTION", "BEGIN HIDDEN TESTS", "END HIDDEN TESTS", "# %% ", "# why: "):
            assert marker not in released, f"{path.relative_to(REPO)} contains {marker!r}"
        if path.suffix == ".ipynb":
            lines = {line.strip() for cell in read_nb(path).cells for line in cell.source.splitlines()}
            leaked = sorted(secret & lines)
            assert not leaked, f"{path.relative_to(REPO)} leaks solution / hidden-test lines: {leaked[:5]}"


# -------------------------------------------------------------------------------------------------- grading
@pytest.mark.parametrize("a", GRADED)
def test_solution_gets_full_marks(graded, a):
    """Full marks for every autograded part; its written answer (the full answer of the rubric) waits for the
    instructor: no score yet, marked as needing a manual grade."""
    course, run = graded[a]
    expected = autograded_points(course.source(a))
    got = course.scores(a, "solution")
    assert got == expected, f"{a}: the solution scored {got}, expected {expected}\n{run.log[-3000:]}"
    written = course.written(a, "solution")
    assert set(written) == set(written_points(course.source(a))), written
    assert all(w["auto_score"] is None and w["manual_score"] is None and w["needs_manual_grade"]
               for w in written.values()), f"{a}: a written answer is graded by hand: {written}"


@pytest.mark.parametrize("a", GRADED)
def test_full_marks_feedback_has_no_error(graded, a):
    """The solution's autograded notebook (what its feedback page shows) holds no error output: an ungraded
    demo cell that calls a bertlib function switched off while grading says so instead of raising (issue 18
    §8: 02's and 07's 10/10 feedback ended in a RuntimeError traceback)."""
    course, _ = graded[a]
    errors = [(grade_id(c) or f"cell {i}", o.get("ename"), o.get("evalue", "")[:200])
              for i, c in enumerate(course.autograded("solution", a).cells) if c.cell_type == "code"
              for o in c.get("outputs", []) if o.get("output_type") == "error"]
    assert not errors, f"{a}: the solution's autograded notebook shows errors: {errors}"


@pytest.mark.parametrize("a", GRADED)
def test_untouched_student_version_scores_zero(graded, a):
    course, _ = graded[a]
    got = course.scores(a, "untouched")
    assert got is not None and sum(got.values()) == 0, f"{a}: the untouched student version scored {got}"
    written = course.written(a, "untouched")  # nbgrader scores an unchanged answer box 0, nothing to grade
    assert written and all(w["score"] == 0 and not w["needs_manual_grade"] for w in written.values()), written


@pytest.mark.parametrize("a, mistake", MISTAKES, ids=[f"{a}-{m}" for a, m in MISTAKES])
def test_mistake_loses_its_part_only(graded, a, mistake):
    course, _ = graded[a]
    m = load_mistakes(a)[mistake]
    full = autograded_points(course.source(a))
    assert set(m["loses"]) <= set(full), f"{a}/{mistake}: loses unknown cells {m['loses']}"
    expected = {gid: 0.0 if gid in m["loses"] else p for gid, p in full.items()}
    got = course.scores(a, mistake)
    assert got == expected, f"{a}: mistake {mistake!r} ({m.get('why', '')}) scored {got}, expected {expected}"


# ------------------------------------------------------------------------------ faults and the whole workflow
@pytest.fixture(scope="module")
def faults(tmp_path_factory):
    """One class with troublesome submissions, graded with one command, as the instructor would (make check:
    the tests that read it are marked full). No plain solution among them: ``graded`` scores that; here the
    student who only adds warnings is the full-marks one (graded after the broken notebook), and the
    student's own `nbgrader validate` checks a solved notebook outside submitted/."""
    a = FAULTS_ON
    course = Course(tmp_path_factory.mktemp("faults"), [a])
    course.generate(a)
    source = course.source(a)
    answers = solution_answers(source)
    graded_ids = list(autograded_points(source))
    solution_ids = [g for g in answers if g not in written_points(source)]  # code answers, not the written one
    first, second = solution_ids[0], solution_ids[1]
    # Which graded cell tests which solution cell: the next graded cell after it.
    order = [grade_id(c) for c in source.cells if is_graded(c) or is_solution(c)]
    test_of = {s: next(g for g in order[order.index(s):] if g in graded_ids) for s in solution_ids}

    students = {
        # The first function never returns: its test cell times out, everything else is graded.
        "infinite_loop": filled(course.release(a), answers | {first: _wrap(answers[first], "while True:\n    pass")}),
        # Rewrites the (locked) test of the second part into `assert True` and answers it wrongly.
        "edited_test": replace_cell(filled(course.release(a), answers | {second: _wrap(answers[second], "return None")}),
                                    test_of[second], "assert True"),
        # The same in the Chinese notebook (issue 31 §3): the test comes back in Chinese, the score is the same.
        "edited_test_zh": replace_cell(filled(course.release(a, "zh_CN"), answers | {
            second: _wrap(answers[second], "return None")}), test_of[second], "assert True  # 我改了这个测试"),
        # Correct code that warns: warnings.warn, a torch UserWarning, and bytes written to file descriptor 2.
        "warns": filled(course.release(a), answers | {
            first: _wrap(answers[first], "import warnings\nwarnings.warn('this student likes warnings')"),
            second: _wrap(answers[second], "import torch\ntorch.tensor(torch.arange(3))  # torch: UserWarning"),
            solution_ids[-1]: _wrap(answers[solution_ids[-1]],
                                    "import os\nos.write(2, b'UserWarning: straight to stderr\\n')"),
        }),
    }
    for student, nb in students.items():
        course.submit(student, a, nb)
    course.submit("not_json", a, '{"cells": [ this is not a notebook')
    run = course.autograde(a)
    solved = course.root.parent / "validate" / f"{a}.ipynb"  # for `nbgrader validate`, never autograded
    solved.parent.mkdir()
    solved.write_text(__import__("nbformat").writes(solution_submission(course, a)), encoding="utf-8")
    solved_zh = course.root.parent / "validate_zh" / f"{a}.ipynb"  # the Chinese notebook, solved
    solved_zh.parent.mkdir()
    solved_zh.write_text(__import__("nbformat").writes(solution_submission(course, a, "zh_CN")), encoding="utf-8")
    return dict(course=course, a=a, run=run, full=autograded_points(source), test_of=test_of, first=first, second=second,
                solved=solved, solved_zh=solved_zh)


def _function_name(src: str) -> str:
    return re.search(r"^def (\w+)\(", src, flags=re.M).group(1)


def _wrap(src: str, extra: str) -> str:
    """The answer, with ``extra`` run inside the function each time it is called."""
    name = _function_name(src)
    body = "\n".join("    " + line for line in extra.splitlines())
    return (src + f"\n\n_answer_{name} = {name}\n\ndef {name}(*args, **kwargs):\n{body}\n"
            f"    return _answer_{name}(*args, **kwargs)\n")


@pytest.mark.full
def test_infinite_loop_times_out_in_its_cell_and_the_rest_is_graded(faults):
    course, a, full = faults["course"], faults["a"], faults["full"]
    looping = faults["test_of"][faults["first"]]
    assert course.scores(a, "infinite_loop") == {g: 0.0 if g == looping else p for g, p in full.items()}
    [cell] = [c for c in course.autograded("infinite_loop", a).cells if grade_id(c) == looping]
    errors = [o for o in cell.outputs if o.output_type == "error"]
    assert any("time limit" in o.evalue for o in errors), f"expected a time-limit message in {looping}, got {errors}"


@pytest.mark.full
def test_broken_notebook_is_reported_and_the_others_are_graded(faults):
    course, a, run = faults["course"], faults["a"], faults["run"]
    assert run.returncode != 0, "nbgrader should report the failure"
    assert re.search(r"ERROR.*not_json", run.log), run.log[-3000:]
    # The broken notebook earns nothing (nbgrader records no grade, or zeros); everyone else is graded, the
    # student graded after it ("warns" sorts after "not_json") with full marks.
    broken = course.scores(a, "not_json")
    assert broken is None or sum(broken.values()) == 0, broken
    assert course.scores(a, "warns") == faults["full"]


@pytest.mark.full
def test_edited_locked_test_cell_is_caught_by_checksum(faults):
    """nbgrader compares each locked cell's checksum with the instructor's and, on a mismatch, puts the
    instructor's source back; the grader's hidden tests then fail the wrong answer (they never depended on
    the cell's text anyway)."""
    from nbgrader.utils import compute_checksum

    course, a, run, full = faults["course"], faults["a"], faults["run"], faults["full"]
    edited = faults["test_of"][faults["second"]]

    def cell(nb):
        return next(c for c in nb.cells if grade_id(c) == edited)

    submitted = read_nb(course.root / "submitted" / "edited_test" / a / f"{a}.ipynb")
    assert compute_checksum(cell(submitted)) != compute_checksum(cell(course.release(a)))
    assert re.search(rf"Attribute 'checksum' for cell {edited} has changed", run.log), run.log[-3000:]
    assert cell(course.autograded("edited_test", a)).source == cell(course.source(a)).source
    # The instructor's test is back, so the wrong answer fails it; every other part keeps its points.
    assert course.scores(a, "edited_test") == {g: 0.0 if g == edited else p for g, p in full.items()}
    # A Chinese notebook: nbgrader puts the English test back (its gradebook's), bertgrader's
    # RestoreTranslatedCells then the instructor's Chinese copy, never the student's text; the same score.
    assert cell(course.autograded("edited_test_zh", a)).source == cell(course.source(a, "zh_CN")).source
    assert "我改了这个测试" not in cell(course.autograded("edited_test_zh", a)).source
    assert course.scores(a, "edited_test_zh") == course.scores(a, "edited_test")
    [failed] = [o.evalue for o in cell(course.autograded("edited_test_zh", a)).outputs if o.output_type == "error"]
    assert re.search(r"[\u4e00-\u9fff]", failed), f"the Chinese notebook's verdict is in Chinese: {failed}"


@pytest.mark.full
def test_warnings_do_not_cost_points(faults):
    course, a = faults["course"], faults["a"]
    assert course.scores(a, "warns") == faults["full"]
    graded_cells = [c for c in course.autograded("warns", a).cells if is_graded(c) and not is_written(c)]
    assert not [o for c in graded_cells for o in c.outputs if o.get("name") == "stderr"], (
        "a graded cell's output is the grader's verdict, never what the student's code wrote to stderr")


@pytest.mark.full
def test_instructor_workflow_end_to_end(faults, tmp_path):
    """generate (fixture) -> collect into submitted/ (fixture) -> autograde (fixture) -> feedback -> CSV;
    and the student's `nbgrader validate` on a solved and an untouched notebook."""
    course, a = faults["course"], faults["a"]
    course.generate_feedback(a)
    for student in ("warns", "edited_test", "infinite_loop"):
        html = course.root / "feedback" / student / a / f"{a}.html"
        assert html.is_file(), f"no feedback for {student}"
    assert "Score:" in (course.root / "feedback" / "warns" / a / f"{a}.html").read_text(encoding="utf-8")
    zh = (course.root / "feedback" / "edited_test_zh" / a / f"{a}.html").read_text(encoding="utf-8")
    assert "得分：" in zh and "未通过" in zh and "测试的可见部分" in zh, (
        "the Chinese notebook's feedback page has bertgrader's labels in Chinese")

    rows = list(csv.DictReader(course.export_csv(tmp_path / "grades.csv").open(encoding="utf-8")))
    by_student = {r["student_id"]: r for r in rows if r["assignment"] == a}
    total = sum(faults["full"].values())
    assert float(by_student["warns"]["score"]) == total  # its written answer waits for a grade: counts 0 so far
    assert float(by_student["warns"]["max_score"]) == total + sum(written_points(course.source(a)).values())
    assert float(by_student["edited_test"]["score"]) < total

    ok = course.nbgrader("validate", str(faults["solved"]))
    assert "Success! Your notebook passes all the tests." in ok.log, ok.log[-2000:]
    ok = course.nbgrader("validate", str(faults["solved_zh"]))  # its read-only cells' checksums are its own
    assert "成功！你的笔记本通过了所有测试。" in ok.log, ok.log[-2000:]  # nbgrader's success line, in Chinese
    untouched = course.nbgrader("validate", str(course.release_path(a)), check=False)
    assert "VALIDATION FAILED" in untouched.log, untouched.log[-2000:]


@pytest.mark.full
def test_regrading_gives_the_same_scores(faults):
    course, a = faults["course"], faults["a"]
    before = {s: course.scores(a, s) for s in ("edited_test", "warns")}
    stamps = {p.parts[-3]: p.stat().st_mtime_ns for p in (course.root / "autograded").glob(f"*/{a}/{a}.ipynb")}
    # A second run of the two compared, alone: the pattern matches edited_test and warns (names ending in t or s),
    # not edited_test_zh, not_json or the infinite loop (its 20 s timeout would add nothing).
    course.nbgrader("autograde", a, "--force", "--student", "*[ts]", check=False)
    regraded = sorted(p.parts[-3] for p in (course.root / "autograded").glob(f"*/{a}/{a}.ipynb")
                      if p.stat().st_mtime_ns != stamps.get(p.parts[-3]))
    assert regraded == sorted(before), f"the second run graded {regraded}, not {sorted(before)}"
    assert {s: course.scores(a, s) for s in before} == before


# ------------------------------------------------------------------------------------- the student's feedback
FEEDBACK_ON = "02_encoder_layer"  # its markdown holds a formula ($W^O$)
SPY = '''
def attention(q, k, v, mask=None):
    print("SPY" + "-OUT", q.flatten()[:4].tolist(), None if mask is None else mask.flatten()[:4].tolist())
    return _answer(q, k, v, mask)
'''


FEEDBACK_PAGES = ("spy", "mask_as_filter", "href_in_math")  # the students whose feedback pages are read


def _feedback_students(course) -> dict:
    """A student whose attention() prints what it is given (full marks), and the solution with a markdown cell
    of its own whose formula tries to make a javascript: link (full marks)."""
    a = FEEDBACK_ON
    answers = solution_answers(course.source(a))
    spy = answers["attention"].replace("def attention(", "def _answer(", 1) + "\n" + SPY
    nb = solution_submission(course, a)
    nb.cells.insert(1, __import__("nbformat").v4.new_markdown_cell(r"A link? $\href{javascript:alert(1)}{x^2}$"))
    return {"spy": filled(course.release(a), answers | {"attention": spy}), "href_in_math": nb}


@pytest.fixture(scope="module")
def feedback(request, tmp_path_factory):
    """02's class graded, then nbgrader generate_feedback: the two of ``_feedback_students`` and a part-1
    mistake (mask_as_filter). Where ``graded`` grades 02's class (make check), they are students of that class,
    graded once by its command (python -m bertgrader, as the README's workflow), and only their three feedback
    pages are made here: nothing is graded twice; else (make test's sample) a class of these three is graded
    here by nbgrader autograde. The plain solution is not among them: its page is href_in_math's without that
    cell, and ``graded`` scores it."""
    a = FEEDBACK_ON
    if a in GRADED:
        course, run = request.getfixturevalue("graded")[a]
        for pattern in ("[hs][pr][ey]*", "mask_as_filter"):  # spy, href_in_math (see the assertion); the mistake
            course.nbgrader("generate_feedback", a, "--force", "--student", pattern)
        made = sorted(p.name for p in (course.root / "feedback").iterdir() if (p / a).is_dir())
        assert made == sorted(FEEDBACK_PAGES), f"feedback made for {made}, not just {FEEDBACK_PAGES}"
        return course, run
    course = Course(tmp_path_factory.mktemp("feedback"), [a])
    course.generate(a)
    for student, nb in _feedback_students(course).items():
        course.submit(student, a, nb)
    course.submit("mask_as_filter", a, mistake_submission(course, a, load_mistakes(a)["mask_as_filter"]))
    run = course.autograde(a)
    course.generate_feedback(a)
    return course, run


def _page(course, student):
    return course.root / "feedback" / student / FEEDBACK_ON / f"{FEEDBACK_ON}.html"


def test_feedback_is_self_contained_offline(feedback, browser):
    """No feedback page loads anything from another host (nbgrader's template loaded MathJax from a CDN, so
    offline a student saw raw TeX); a formula is typeset by the MathJax inside the page, and TeX cannot make
    a link (issue 18 §8)."""
    course, run = feedback
    for student in ("spy", "mask_as_filter", "href_in_math"):
        html = _page(course, student).read_text(encoding="utf-8")
        assert not re.search(r"<(script|link)[^>]+(src|href)=[\"']?(https?:)?//", html, re.I), (
            f"{student}'s feedback loads something from another host")
        page = browser.new_page()
        remote, errors = [], []
        page.route("**/*", lambda r: (remote.append(r.request.url), r.abort()) if not r.request.url.startswith(
            "file:") else r.continue_())
        page.on("pageerror", lambda e: errors.append(str(e)))
        try:
            page.goto(_page(course, student).as_uri())
            page.wait_for_function("document.querySelectorAll('mjx-container').length > 0", timeout=20_000)
            links = page.evaluate("[...document.querySelectorAll('a')].map(a => a.getAttribute('href') || "
                                  "a.getAttribute('xlink:href') || '').filter(h => /javascript:/i.test(h))")
        finally:
            page.close()
        assert not remote, f"{student}'s feedback requested {remote}"
        assert not errors, f"{student}'s feedback: script errors {errors}"
        assert not links, f"{student}'s feedback has a javascript: link made by a formula: {links}"


def test_feedback_names_the_input_and_prints_no_hidden_input(feedback):
    """What the student's code prints while the grader calls it is never stored (issue 18 §8: every hidden
    call's inputs were printed on the feedback page); a failed part names the input it failed on."""
    course, _ = feedback
    a = FEEDBACK_ON
    assert course.scores(a, "spy") == autograded_points(course.source(a))
    for cell in course.autograded("spy", a).cells:
        if is_graded(cell) and not is_written(cell):
            text = "".join(o.get("text", "") + o.get("evalue", "") for o in cell.outputs)
            assert "SPY-OUT" not in text and text.startswith("Passed"), f"{grade_id(cell)}: {text[:500]}"
    html = _page(course, "spy").read_text(encoding="utf-8")
    assert html.count("SPY-OUT") == 1, "the student's print shows in the ungraded demo cell (their own call) only"
    failed = [o for c in course.autograded("mask_as_filter", a).cells if is_graded(c) and not is_written(c)
              for o in c.outputs if o.get("output_type") == "error"]
    assert len(failed) == 1 and "an additive mask of values between -3 and 0" in failed[0]["evalue"], failed
    assert "tensor(" not in failed[0]["evalue"] and len(failed[0]["evalue"]) < 500, failed[0]["evalue"]
    for student in ("spy", "href_in_math"):
        errors = [o for c in course.autograded(student, a).cells for o in c.get("outputs", [])
                  if o.get("output_type") == "error"]
        assert not errors, f"{student}'s full-marks feedback shows errors: {errors}"
