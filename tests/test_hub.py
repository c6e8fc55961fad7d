"""The course server's whole term in one assignment (issue 29 §1): `python -m bertgrader.hub start` with real local
accounts (an instructor, four students: alice honest, bob who cheats, carol late, dora honest and in Chinese), the
students driven in headless
Chromium through JupyterLab's own Assignments pane (Fetch, Validate, Submit, Fetch Feedback) with every request
but localhost's blocked, the instructor in Chromium too, through Formgrader's own buttons (Release, Collect, each
submission's Autograde, written answers graded and a part's score adjusted by hand with comments, Generate and
Release Feedback, the student version made by Generate and the due date set in the Edit dialog; only the grades
exported by an nbgrader command run as the instructor, as Formgrader has no export), and then: every grade right, the late penalty applied, each student's feedback (with the
instructor's scores and comments) with that student only, nothing of another's readable.

The term needs root (it creates accounts) and Chromium, and takes minutes (docs/course-server.md has the
figures); the checks start makes before any work are tested first, anywhere.
"""
from __future__ import annotations

import csv
import datetime
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import nbformat
import pytest

from bertgrader.assignment import filled, read_nb, solution_answers
from bertgrader.hub.preflight import VENV, proxy_command, readable_by_all

REPO = Path(__file__).resolve().parents[1]
CHROMIUM = "/usr/bin/chromium"
A = "01_positioning"  # the cheapest assignment to grade
ALICE, BOB, CAROL, DORA, TEACHER = "t29alice", "t29bob", "t29carol", "t29dora", "t29teacher"
STUDENTS = (ALICE, BOB, CAROL, DORA)
CHINESE = (DORA,)  # start's --languages: she fetches every notebook in Chinese
# bob types in the visible test's answer (T = 4) instead of computing it: the visible test passes, the hidden
# tests (other T) do not
CHEAT = ("def causal_visibility(T):\n"
         "    return torch.tensor([[1, 0, 0, 0], [1, 1, 0, 0], [1, 1, 1, 0], [1, 1, 1, 1]], dtype=torch.bool)\n")
# what the instructor types into Formgrader's comment boxes (no quotes: the feedback page escapes them)
COMMENTS = {ALICE: "Right: generation sees only the past. Say also why the future is masked during training.",
            BOB: "The mask is named but not explained: which tokens does a generated token see, and why?",
            "adjusted": "Right, but built with a Python loop over T: torch.tril does it in one call. One point off."}
TIMINGS: dict[str, float] = {}  # step -> seconds, summed over the students; printed at the end


class timed:
    def __init__(self, what: str):
        self.what = what

    def __enter__(self):
        self.t0 = time.monotonic()

    def __exit__(self, *exc):
        TIMINGS[self.what] = TIMINGS.get(self.what, 0.0) + time.monotonic() - self.t0


def free_port() -> int:
    """A port with the two after it free too (the hub's API and the proxy's)."""
    for _ in range(50):
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        try:
            for p in (port, port + 1, port + 2):
                with socket.socket() as s:
                    s.bind(("127.0.0.1", p))
            return port
        except OSError:
            continue
    raise RuntimeError("no three free ports in a row")


@pytest.fixture(scope="module")
def hub():
    """The server as the instructor starts it; stopped with Ctrl-C (SIGINT) and removed at the end, even on failure."""
    base = Path(tempfile.mkdtemp(prefix="bert-hub-"))
    base.chmod(0o755)  # the exchange and the environment's view live here: every account must reach them
    state, port = base / "state", free_port()
    cmd = [sys.executable, "-m", "bertgrader.hub", "start", "--students", ",".join(STUDENTS),
           "--languages", ",".join(f"{s}=zh_CN" for s in CHINESE), "--instructor", TEACHER, "--port", str(port), "--assignments", A, "--state", str(state),
           "--exchange", str(base / "exchange"), "--env", str(base / "env")]
    t0 = time.monotonic()
    proc = subprocess.Popen(cmd, cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            start_new_session=True)
    watchdog = threading.Timer(300, proc.kill)  # a hub that never comes up must not hang the run
    watchdog.start()
    out = []
    try:
        for line in proc.stdout:
            out.append(line)
            if line.startswith("The course server is up"):
                break
        watchdog.cancel()
        assert proc.poll() is None, "start exited:\n" + "".join(out)
        TIMINGS["start (accounts, course, exchange, hub up)"] = time.monotonic() - t0
        settings = json.loads((state / "settings.json").read_text())
        passwords = dict(line.split(":", 1) for line in (state / "passwords.txt").read_text().split())
        yield {"url": f"http://127.0.0.1:{port}", "settings": settings, "passwords": passwords, "base": base,
               "log": out}
        t1 = time.monotonic()
        proc.send_signal(signal.SIGINT)  # what Ctrl-C sends
        rest = proc.communicate(timeout=120)[0]
        TIMINGS["Ctrl-C to stopped"] = time.monotonic() - t1
        assert proc.returncode == 0 and "stopped" in rest, rest
    finally:
        watchdog.cancel()
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
        subprocess.run([sys.executable, "-m", "bertgrader.hub", "remove", "--state", str(state)], cwd=REPO,
                       capture_output=True)
        shutil.rmtree(base, ignore_errors=True)
        print("\ncourse server timings (s): " + ", ".join(f"{k} {v:.1f}" for k, v in TIMINGS.items()))


def as_user(hub, name: str, command: str, check: bool = True) -> subprocess.CompletedProcess:
    """``command`` in bash as ``name``, with the environment a terminal in their JupyterLab has."""
    env = {"HOME": f"/home/{name}", "USER": name, "LANG": "C.UTF-8", "HF_HUB_OFFLINE": "1",
           "PATH": f"{hub['settings']['venv']}/bin:/usr/bin:/bin"}
    proc = subprocess.run(["runuser", "-u", name, "--", "env", "-i", *(f"{k}={v}" for k, v in env.items()),
                           "bash", "-c", command], capture_output=True, text=True, timeout=600)
    if check:
        assert proc.returncode == 0, f"{name}: {command}\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}"
    return proc


def instructor(hub, command: str) -> str:
    with timed(command.split()[1] if command.startswith("nbgrader") else command):
        return as_user(hub, TEACHER, f"cd {hub['settings']['course_root']} && {command}").stderr


def log_in(browser, hub, name: str):
    """A page of ``name``'s JupyterLab, logged in through the hub's form, the Assignments pane open."""
    ctx = browser.new_context(viewport={"width": 1400, "height": 900})
    ctx.route("**/*", lambda r: r.continue_() if r.request.url.startswith(("http://127.0.0.1", "data:", "blob:"))
              else r.abort())
    page = ctx.new_page()
    page.set_default_timeout(180_000)  # a loaded machine starts a JupyterLab slowly
    page.goto(f"{hub['url']}/hub/login")
    page.fill("#username_input", name)
    page.fill("#password_input", hub["passwords"][name])
    page.click("#login_submit")
    page.wait_for_selector("#jp-main-dock-panel")
    page.get_by_text("Nbgrader", exact=True).click()
    menu = [e.inner_text().strip() for e in page.query_selector_all(".lm-Menu-itemLabel")]
    page.get_by_text("Assignment List", exact=True).click()
    page.wait_for_selector("#nbgrader-assignment-list")
    page.menu = [label for label in menu if label]  # what the Nbgrader menu offers this person
    return page


def answers(cheat: bool) -> dict[str, str]:
    found = solution_answers(read_nb(REPO / "solutions" / A / f"{A}.ipynb"))
    return found | ({"causal": CHEAT} if cheat else {})


def work(name: str, cheat: bool) -> None:
    """The student's work: the fetched notebook, each answer typed in (written as the student's own file)."""
    path = Path(f"/home/{name}/{A}/{A}.ipynb")
    nbformat.write(filled(read_nb(path), answers(cheat)), str(path))
    shutil.chown(path, name, name)


def fetch_work_validate_submit(browser, hub, name: str, cheat: bool = False):
    """Returns the student's page, still logged in, for the feedback later."""
    with timed("student: log in, JupyterLab up, Assignments pane open"):
        page = log_in(browser, hub, name)
    assert page.menu == ["Assignment List"], page.menu  # no Formgrader, Courses or Create Assignment
    with timed("student: Fetch"):
        page.locator("#released_assignments_list button", has_text="Fetch").click()
        page.wait_for_selector("#fetched_assignments_list .assignment-notebooks-link")
    fetched = read_nb(Path(f"/home/{name}/{A}/{A}.ipynb"))  # one notebook, in the student's language
    assert sorted(p.name for p in Path(f"/home/{name}/{A}").iterdir()) == [f"{A}.ipynb"], name
    assert fetched.metadata.get("bertgrader", {}).get("language", "en") == ("zh_CN" if name in CHINESE else "en")
    setup = next(c.source for c in fetched.cells if c.cell_type == "code")
    assert ("设置（只读）" in setup) == (name in CHINESE), setup
    work(name, cheat)
    with timed("student: Validate"):
        page.locator("#fetched_assignments_list .assignment-notebooks-link").click()
        page.locator("#fetched_assignments_list button", has_text="Validate").click()
        dialog = page.wait_for_selector(".jp-Dialog")
        verdict = dialog.inner_text()
        page.locator(".jp-Dialog button").last.click()
    # bob's too: he fools the visible test. English for dora too: nbgrader's JupyterLab extension writes this line
    # itself (its compiled script); `nbgrader validate` in her Terminal says it in Chinese (bertgrader.validate)
    assert "Success! Your notebook passes all the tests." in verdict, verdict
    with timed("student: Submit"):
        page.locator("#fetched_assignments_list button", has_text="Submit").click()
        page.wait_for_selector("#submitted_assignments_list .list_item")
    return page


def fetch_feedback(page) -> None:
    with timed("student: Fetch Feedback"):
        page.click("#refresh_assignments_list")  # the list as it is now: feedback released
        page.locator("#submitted_assignments_list button", has_text="Fetch Feedback").click()
        page.wait_for_selector("#submitted_assignments_list a:has-text('view feedback')")


def formgrader(page, hub, where: str = "") -> None:
    """Formgrader's page ``where`` in the instructor's own tab (JupyterHub forbids it in JupyterLab's frame)."""
    page.goto(f"{hub['url']}/user/{TEACHER}/formgrader{where}")


def formgrader_button(page, hub, where: str, row: str, column: str, says: str) -> None:
    """On Formgrader's page ``where``, the button in ``column`` of the table's row that names ``row``, clicked;
    Formgrader's dialog (shown once the server has done it) must say ``says``, and its OK closes it."""
    formgrader(page, hub, where)
    page.locator("tbody tr", has_text=row).locator(f"td.{column} a").click()
    dialog = page.wait_for_selector(".modal-dialog:visible")
    said = dialog.inner_text()
    assert says in said, said
    page.locator(".modal-footer button", has_text="OK").click()
    page.wait_for_selector(".modal-dialog", state="detached")


BUTTONS = {"assign": "Generate", "release": "Release", "collect": "Collect",  # Manage Assignments: column -> header
           "generate-feedback": "Generate Feedback", "release-feedback": "Release Feedback"}


def assignment_button(page, hub, column: str, says: str) -> None:
    """Manage Assignments: the assignment's Generate, Release, Collect, Generate Feedback or Release Feedback button."""
    with timed(f"instructor: Formgrader, {BUTTONS[column]}"):
        formgrader_button(page, hub, "/manage_assignments", A, column, says)


def set_due_date(page, hub, due: datetime.datetime) -> None:
    """Manage Assignments: the assignment's Edit button (a pencil); in its dialog the due date typed into the date
    field and the time zone (a UTC offset) into its box, Save (Formgrader's PUT answered, the dialog closed); the
    row's Due Date then shows it, as the gradebook holds it."""
    with timed("instructor: Formgrader, Edit: the due date"):
        formgrader(page, hub, "/manage_assignments")
        page.locator("tbody tr", has_text=A).locator("td.edit a").click()
        page.wait_for_selector("#edit-assignment-modal .modal-dialog:visible")
        # a datetime-local field holds seconds only when they are not zero (the value the browser keeps)
        page.fill("#edit-assignment-modal input.modal-duedate",
                  due.strftime("%Y-%m-%dT%H:%M:%S" if due.second else "%Y-%m-%dT%H:%M"))
        page.fill("#edit-assignment-modal input.modal-timezone", due.strftime("%z"))  # +0000
        with page.expect_response(lambda r: r.url.endswith(f"/formgrader/api/assignment/{A}")
                                  and r.request.method == "PUT") as saved:
            page.locator("#edit-assignment-modal button.save").click()
        assert saved.value.ok, (saved.value.status, saved.value.text()[:500])
        page.wait_for_selector("#edit-assignment-modal", state="detached")
    shown = page.locator("tbody tr", has_text=A).locator("td.duedate").inner_text().strip()
    assert shown == due.strftime("%Y-%m-%d %H:%M:%S UTC"), shown


def grade_by_hand(page, hub, student: str, scores: dict[str, str], comments: dict[str, str]) -> None:
    """In Formgrader as docs/course-server.md says: Manual Grading, the assignment, its notebook, the student's
    submission (marked "Needs manual grade?"); each score typed into its box and each comment into the box under
    its answer, each saved when the box is left (Formgrader's PUT answered)."""
    formgrader(page, hub)
    page.get_by_role("link", name="Manual Grading", exact=True).click()  # in its menu
    page.get_by_role("link", name=A, exact=True).click()  # the assignment
    page.wait_for_url(f"**/formgrader/gradebook/{A}")
    page.get_by_role("link", name=A, exact=True).click()  # its notebook: the submissions
    page.wait_for_url(f"**/formgrader/gradebook/{A}/{A}")
    page.wait_for_function("document.querySelectorAll('td.name a.name-shown').length >= 3")  # filled by its script
    page.click("#toggle_names")  # "Show All Names"
    row = page.locator("tr", has=page.locator("td.name a.name-shown", has_text=student))
    assert row.locator("td.needs-manual-grade .glyphicon-ok").count() == 1, student  # the written answer waits
    row.locator("td.name a.name-shown").click()
    page.wait_for_selector(".grader-rubric")  # the rubric shown to the grader, above the written answer
    # the boxes answer once Formgrader's script has fetched this submission's scores and comments
    page.wait_for_function("window.formgrader && formgrader.grades && formgrader.grades.loaded && "
                           "formgrader.comments && formgrader.comments.loaded")
    for box, typed in [*((f"#{g}", v) for g, v in scores.items()),
                       *((f"#{g}-comment", v) for g, v in comments.items())]:
        api = "/formgrader/api/" + ("comment/" if box.endswith("-comment") else "grade/")
        with page.expect_response(lambda r: api in r.url and r.request.method == "PUT") as saved:
            page.fill(box, typed)
            page.press(box, "Tab")  # leaving the box saves it
        assert saved.value.ok, (student, box, saved.value.status, saved.value.text()[:500])


@pytest.mark.parametrize("argv, says", [
    (["--students", "Alice,bob", "--instructor", "teacher"], "not usable as an account name and nbgrader id: ['Alice']"),
    (["--students", "bob,bob", "--instructor", "teacher"], "named twice: ['bob']"),
    (["--students", "bob", "--instructor", "a+b"], "not usable as an account name and nbgrader id: ['a+b']"),
])
def test_start_refuses_bad_names_before_any_work(argv, says, tmp_path, capsys):
    from bertgrader.hub.__main__ import main

    assert main(["start", *argv, "--state", str(tmp_path / "state")]) == 2
    assert says in capsys.readouterr().err
    assert not (tmp_path / "state").exists()


def test_the_machine_checks_name_what_is_missing(monkeypatch):
    from bertgrader import sandbox
    from bertgrader.hub import preflight

    monkeypatch.setattr(preflight.os, "geteuid", lambda: 1000)
    with pytest.raises(preflight.NotReady, match="not root: .*sudo"):
        preflight.check_machine()
    monkeypatch.setattr(preflight.os, "geteuid", lambda: 0)
    monkeypatch.setattr(preflight, "proxy_command", lambda venv=None: None)
    with pytest.raises(preflight.NotReady, match="JupyterHub's proxy is missing: npm install .*configurable-http-proxy"):
        preflight.check_machine()
    monkeypatch.setattr(preflight, "proxy_command", lambda venv=None: "/bin/true")

    def no_sandbox():
        raise sandbox.SandboxUnavailable("the grading sandbox needs bubblewrap (`bwrap`), which is not installed")

    monkeypatch.setattr(sandbox, "check_available", no_sandbox)
    with pytest.raises(preflight.NotReady, match="student work could not be graded here: .*bwrap"):
        preflight.check_machine()


def test_a_busy_port_and_a_taken_account_are_refused():
    from bertgrader.hub import preflight

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen()
        port = s.getsockname()[1]
        with pytest.raises(preflight.NotReady, match=f"port {port} \\(the hub\\) on 127.0.0.1 is busy"):
            preflight.check_port(port)
        with pytest.raises(preflight.NotReady, match=f"port {port} \\(the hub's API, --port \\+ 1\\)"):
            preflight.check_port(port - 1)
    with pytest.raises(preflight.NotReady, match=r"accounts exist already .*\['root'\]"):
        preflight.check_new_accounts(["root"], set())


def test_ctrl_c_stops_start_even_where_sigint_comes_ignored():
    """A script's background command (``cmd &`` without job control, as in CI) inherits SIGINT ignored; start takes
    it back before any work, so Ctrl-C still stops it (and everything it starts: a Python handler is reset to the
    default in a child). Without it, make check's term waited out its 120 s teardown."""
    code = ("import signal, sys, time; from bertgrader.hub import server; "
            "signal.signal(signal.SIGINT, signal.SIG_IGN); "  # as inherited from `cmd &`
            "server.answer_ctrl_c() if sys.argv[1] == 'start' else None; print('ready', flush=True); time.sleep(120)")
    # the control (SIGINT left ignored) must outlive a few seconds; the fixed one stops (given a minute under load)
    for how, stopped, wait in (("start", True, 60), ("as-inherited", False, 3)):
        proc = subprocess.Popen([sys.executable, "-c", code, how], cwd=REPO, stdout=subprocess.PIPE,
                                stderr=subprocess.DEVNULL, text=True)  # its KeyboardInterrupt traceback
        try:
            assert proc.stdout.readline() == "ready\n"
            proc.send_signal(signal.SIGINT)
            try:
                proc.wait(timeout=wait)
            except subprocess.TimeoutExpired:
                pass
            assert (proc.returncode is not None) == stopped, (how, proc.returncode)
        finally:
            proc.kill()
            proc.wait()


def _exchange_step(cls, root: Path, exchange: Path, **settings):
    """One of bertgrader.hub.exchange's steps for assignment A, as nbgrader's apps run it, ``settings`` on its class."""
    from nbgrader.auth import Authenticator
    from nbgrader.coursedir import CourseDirectory
    from traitlets.config import Config

    c = Config()
    c.Exchange.root, c.CourseDirectory.course_id = str(exchange), "bert-course"
    c.CourseDirectory.root, c.CourseDirectory.release_directory = str(root), "exercises"
    for key, value in settings.items():
        setattr(c.Exchange if key == "assignment_dir" else c[cls.__name__], key, value)
    coursedir = CourseDirectory(config=c)
    coursedir.assignment_id = A
    step = cls(coursedir=coursedir, authenticator=Authenticator(config=c), config=c)
    step.start()
    return step


def test_one_release_each_student_fetches_one_notebook_in_their_language(tmp_path, caplog):
    """The instructor releases once; a student set to zh_CN fetches the Chinese notebook under the English one's
    name, a student in English the English one, neither the other language's (one notebook to hand in). A
    translation whose graded cells are not the release's (the assignment changed since) is not released, saying
    why, and its students fetch English."""
    from bertgrader.hub.exchange import TRANSLATIONS, FetchInOwnLanguage, ReleaseWithTranslations
    from bertgrader.i18n import language_of

    root, exchange = tmp_path / "course", tmp_path / "exchange"
    for rel in (f"exercises/{A}", f"exercises/zh_CN/{A}"):
        shutil.copytree(REPO / rel, root / rel)
    exchange.mkdir(mode=0o777)
    _exchange_step(ReleaseWithTranslations, root, exchange)
    outbound = exchange / "bert-course" / "outbound" / A
    assert sorted(p.name for p in outbound.glob("*.ipynb")) == [f"{A}.ipynb"]  # nbgrader lists the English one
    for language, home in (("zh_CN", "dora"), ("en", "alice")):
        _exchange_step(FetchInOwnLanguage, root, exchange, language=language, assignment_dir=str(tmp_path / home))
        fetched = tmp_path / home / A
        assert sorted(p.name for p in fetched.iterdir()) == [f"{A}.ipynb"], (language, list(fetched.iterdir()))
        nb = read_nb(fetched / f"{A}.ipynb")
        assert language_of(nb) == language
        setup = next(c.source for c in nb.cells if c.cell_type == "code")
        assert ("设置（只读）" in setup) == (language == "zh_CN"), setup

    # the Chinese notebook of an older version of the assignment: one graded cell renamed
    stale = read_nb(root / "exercises" / "zh_CN" / A / f"{A}.ipynb")
    graded = next(c for c in stale.cells if c.metadata.get("nbgrader", {}).get("grade"))
    old_id, graded.metadata.nbgrader.grade_id = graded.metadata.nbgrader.grade_id, "renamed"
    nbformat.write(stale, str(root / "exercises" / "zh_CN" / A / f"{A}.ipynb"))
    caplog.set_level("WARNING")
    _exchange_step(ReleaseWithTranslations, root, exchange, force=True)
    assert not (outbound / TRANSLATIONS).exists()
    said = caplog.text
    assert "Not released in zh_CN" in said and old_id in said and "renamed" in said, said
    _exchange_step(FetchInOwnLanguage, root, exchange, language="zh_CN", assignment_dir=str(tmp_path / "eve"))
    assert language_of(read_nb(tmp_path / "eve" / A / f"{A}.ipynb")) == "en"
    assert "is not released in zh_CN: fetched in English" in caplog.text

    # a Chinese notebook with the right cells but a solution left in one (made by hand, say): not released either
    leaky = read_nb(REPO / "exercises" / "zh_CN" / A / f"{A}.ipynb")
    answer = next(c for c in leaky.cells if c.cell_type == "code" and c.metadata.get("nbgrader", {}).get("solution"))
    answer.source = answer.source.replace("raise NotImplementedError()", "return 42")
    nbformat.write(leaky, str(root / "exercises" / "zh_CN" / A / f"{A}.ipynb"))
    caplog.clear()
    _exchange_step(ReleaseWithTranslations, root, exchange, force=True)
    assert not (outbound / TRANSLATIONS).exists()
    assert "is other code than the release's" in caplog.text, caplog.text


def test_start_refuses_a_language_for_someone_not_a_student(tmp_path, capsys):
    from bertgrader.hub.__main__ import main

    assert main(["start", "--students", "bob", "--instructor", "teacher", "--languages", "teacher=zh_CN",
                 "--state", str(tmp_path / "state")]) == 2
    assert "--languages names people who are not students: ['teacher']" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["start", "--students", "bob", "--instructor", "teacher", "--languages", "bob=fr"])
    assert "'bob=fr': expected student=language, the language one of en, zh_CN" in capsys.readouterr().err


@pytest.mark.full  # minutes: make check runs it, make test does not
@pytest.mark.skipif(os.geteuid() != 0, reason="the course server creates local accounts: root only (CI runs as root)")
@pytest.mark.skipif(not Path(CHROMIUM).exists(), reason=f"no Chromium at {CHROMIUM} (Debian: apt-get install chromium)")
@pytest.mark.skipif(proxy_command() is None, reason="JupyterHub's proxy is not installed: make hub-proxy (.ci/run does)")
@pytest.mark.skipif(not readable_by_all(VENV), reason=f"{VENV} is inside a folder other users cannot enter: "
                    "no student could run the course's environment (start refuses, saying so)")
def test_a_term_on_the_course_server(hub, browser):
    settings, exchange = hub["settings"], Path(hub["settings"]["exchange_course"])
    course = Path(settings["course_root"])
    with timed("instructor: log in, JupyterLab up"):
        teacher = log_in(browser, hub, TEACHER)
    assert "Formgrader" in teacher.menu, teacher.menu
    # the student version made from source (solutions/, in the instructor's course) into the gradebook; the copy
    # start made in exercises/ is rebuilt (Formgrader's Generate forces it), so its file is a new one
    release_nb = course / "exercises" / A / f"{A}.ipynb"
    before = release_nb.stat().st_mtime_ns
    assignment_button(teacher, hub, "assign", f"Successfully created the student version of '{A}'")
    assert release_nb.stat().st_mtime_ns != before
    assignment_button(teacher, hub, "release", f"Successfully released '{A}'")
    # released once, with the Chinese notebook beside the English one (bertgrader.hub.exchange)
    assert (exchange / "outbound" / A / ".translations" / "zh_CN" / f"{A}.ipynb").is_file()

    pages = {ALICE: fetch_work_validate_submit(browser, hub, ALICE),
             BOB: fetch_work_validate_submit(browser, hub, BOB, cheat=True),
             DORA: fetch_work_validate_submit(browser, hub, DORA)}
    # nbgrader validate in dora's Terminal: the course's validate (her ~/.jupyter/nbgrader_config.py), in Chinese
    said = as_user(hub, DORA, f"cd ~ && nbgrader validate {A}/{A}.ipynb").stdout
    assert "成功！你的笔记本通过了所有测试。" in said, said[-2000:]
    # the due date is now (in whole seconds, so a second after bob's hand-in): carol hands in after it
    time.sleep(1.5)
    set_due_date(teacher, hub, datetime.datetime.now(datetime.timezone.utc).replace(microsecond=0))
    pages[CAROL] = fetch_work_validate_submit(browser, hub, CAROL)

    assignment_button(teacher, hub, "collect", f"Successfully collected submissions of '{A}'")
    for s in STUDENTS:  # the hand-in time travels with each submission
        assert (course / "submitted" / s / A / "timestamp.txt").is_file(), s
    for s in STUDENTS:  # each in the sandbox, as the instructor
        with timed("instructor: Formgrader, autograde (each)"):
            formgrader_button(teacher, hub, f"/manage_submissions/{A}", s, "autograde",
                              f"Successfully autograded '{A}' for student '{s}'")

    # the instructor, in Formgrader: alice's written answer 1.5 of 2 and her test_causal adjusted from 2 to 1, each
    # with a comment; bob's written answer 0.5; carol's left waiting
    with timed("instructor: Formgrader, written answers and an adjusted part graded by hand (two submissions)"):
        grade_by_hand(teacher, hub, ALICE, {"explain_generation": "1.5", "test_causal": "1"},
                      {"explain_generation": COMMENTS[ALICE], "causal": COMMENTS["adjusted"]})
        grade_by_hand(teacher, hub, BOB, {"explain_generation": "0.5"}, {"explain_generation": COMMENTS[BOB]})
    assignment_button(teacher, hub, "generate-feedback", f"Successfully generated feedback of '{A}'")
    assignment_button(teacher, hub, "release-feedback", f"Successfully released feedback of '{A}'")
    instructor(hub, "nbgrader export --to grades.csv")
    grades = {r["student_id"]: r for r in csv.DictReader((course / "grades.csv").open())}
    got = {s: (float(r["raw_score"]), float(r["late_submission_penalty"]), float(r["score"]))
           for s, r in grades.items()}
    assert got == {ALICE: (6.5, 0.0, 6.5),   # every part right: 6, less 1 by hand on test_causal, 1.5 written
                   BOB: (4.5, 0.0, 4.5),     # the hard-coded part fails the hidden tests: 4, 0.5 written
                   CAROL: (6.0, 6.0, 0.0),   # right, but late: nbgrader's "zero" policy
                   DORA: (6.0, 0.0, 6.0)}, got  # right, in Chinese: the same hidden tests, the one gradebook
    # dora's hand-in graded as she wrote it: Chinese, read-only cells restored in Chinese, the same cell ids
    graded = read_nb(course / "autograded" / DORA / A / f"{A}.ipynb")
    assert graded.metadata["bertgrader"]["language"] == "zh_CN"
    assert "设置（只读）" in next(c.source for c in graded.cells if c.cell_type == "code")
    assert [c.get("id") for c in graded.cells] == [c.get("id") for c in read_nb(course / "exercises" / A / f"{A}.ipynb").cells]

    for s in STUDENTS:
        fetch_feedback(pages[s])
    for s in STUDENTS:
        found = sorted(Path(f"/home/{s}/{A}/feedback").glob(f"*/{A}.html"))
        assert len(found) == 1, (s, found)
        text = found[0].read_text()
        # of 8: the 6 autograded points and the written answer's 2 (issue 29 §4); dora's page in Chinese
        score = "得分：" if s in CHINESE else "Score:"
        assert f"{score} {got[s][0]:.1f} / 8.0" in text or f"{score} {got[s][2]:.1f} / 8.0" in text, (s, text[:2000])
        assert ("得分：" in text) == (s in CHINESE), s
        if s == DORA:  # not graded by hand yet, said in Chinese
            assert "得分： 等待评分 / 2.0" in text and "2.0 分等待人工评分" in text, text[:3000]
        elif s == CAROL:  # not graded by hand yet
            assert "Score: awaiting grading / 2.0" in text and "2.0 points await grading by hand" in text, s
        else:  # the written answer's score and the instructor's comment, as typed in Formgrader
            written = {ALICE: "1.5", BOB: "0.5"}[s]
            assert f"Score: {written} / 2.0" in text and "await grading by hand" not in text, s
            assert "Your instructor&#39;s comment:" in text or "Your instructor's comment:" in text, s
            assert COMMENTS[s] in text, s
        adjusted = re.search(r"Score adjusted by your instructor:</b>\s*1.0 / 2.0 counts, where the grader gave 2.0",
                             text)
        assert bool(adjusted) == (s == ALICE) and (COMMENTS["adjusted"] in text) == (s == ALICE), s
        assert all(COMMENTS[other] not in text for other in (ALICE, BOB) if other != s), s
        assert os.stat(found[0]).st_uid == os.stat(f"/home/{s}").st_uid  # in the student's own home
        assert all(other not in text for other in STUDENTS if other != s)

    # nothing of another student's readable, by bob: homes, hand-ins (even by their exact name), feedback, the
    # instructor's course (solutions, gradebook), the checkout's hidden tests and history
    [alice_in] = [p for p in (exchange / "inbound").iterdir() if p.name.startswith(f"{ALICE}+")]
    attempts = {
        "another home": f"ls /home/{ALICE}",
        "another's notebook": f"cat /home/{ALICE}/{A}/{A}.ipynb",
        "the inbound list": f"ls {exchange / 'inbound'}",
        "another's hand-in": f"cat '{alice_in / f'{A}.ipynb'}'",
        "writing into another's hand-in": f"touch '{alice_in / 'x'}'",
        "the feedback list": f"ls {exchange / 'feedback'}",
        "the instructor's course": f"ls {course}",
        "the hidden tests": f"cat {REPO / 'solutions' / A / 'hidden_tests.py'}",
        "the checkout's history": f"ls {REPO / '.git'}",
    }
    for what, command in attempts.items():
        proc = as_user(hub, BOB, command, check=False)
        assert proc.returncode != 0 and "Permission denied" in proc.stderr, (what, proc.stdout[:500], proc.stderr)
    # and the instructor's tools are not a student's: Formgrader answers the instructor only
    response = pages[BOB].goto(f"{hub['url']}/user/{BOB}/formgrader/manage_submissions/{A}")
    assert response.status == 404, response.status
    page = teacher
    response = page.goto(f"{hub['url']}/user/{TEACHER}/formgrader/manage_submissions/{A}")
    assert response.status == 200, response.status
    page.wait_for_function("document.querySelectorAll('.student-id').length >= 3")  # its table, filled by its script
    shown = {e.inner_text().strip() for e in page.query_selector_all(".student-id")}
    assert set(STUDENTS) <= shown, shown
    for p in [page, *pages.values()]:
        p.context.close()
