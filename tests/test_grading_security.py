"""A class with honest students and one attacker per known attack, graded by the instructor's workflow.

One `nbgrader autograde` (then generate_feedback and export) on assignment 07 grades everyone, with the
sandbox and trusted grading of bertgrader on, as nbgrader_config.py sets them. Each attacker's cell
runs its attack, then (for most) answers correctly, so its fair score is known; the cheaters answer part 1
wrongly or not at all and try to score anyway. Asserted: honest students full marks; every attacker no
more than its real answers earn; nobody else's score, files or test cells changed; nothing written to
the course, bertlib or the virtualenv; no process left; no connection made; every student graded;
feedback without hidden-test source or live script.
"""
from __future__ import annotations

import csv
import os
import re
import socket
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from nbgrader_harness import REPO, Course, filled, read_nb, solution_answers, solution_submission

A = "08_masking"
pytestmark = [pytest.mark.slow, pytest.mark.full, pytest.mark.skipif(sys.platform != "linux", reason="the sandbox is Linux-only")]

WRONG_SELECT = '''
def select_for_prediction(input_ids, special_ids, mlm_probability=0.15, generator=None):
    return torch.zeros(input_ids.shape, dtype=torch.bool)  # wrong: selects nothing
'''

# Attacks that must not change anyone's grade; each is followed by the student's correct answer.
CONTAINED = {
    "reads_secrets": '''
import glob, os
for pattern in ["{root}/solutions/**/*", "{root}/gradebook.db", "{root}/submitted/*/*/*.ipynb", "/root/*",
                "{repo}/solutions/**/*", "/etc/shadow"]:
    for path in glob.glob(pattern, recursive=True):
        try:
            print("READ", path, open(path, errors="replace").read()[:2000])
        except Exception as e:
            print("cannot read", path, type(e).__name__)
print("ENV", sorted(os.environ))
''',
    "writes_gradebook": '''
import sqlite3
try:
    db = sqlite3.connect("{root}/gradebook.db")
    db.execute("update grade set auto_score = 99")
    db.commit()
    print("WROTE GRADEBOOK")
except Exception as e:
    print("no gradebook:", type(e).__name__, e)
''',
    "rewrites_course_files": '''
import glob
for path in (glob.glob("{root}/solutions/*/*") + glob.glob("{root}/exercises/*/*") + glob.glob("{root}/submitted/*/*/*")
             + glob.glob("{root}/autograded/*/*/*") + ["{repo}/bertlib/masking.py", "{site}/evil.pth",
             "{root}/nbgrader_config.py", "./08_masking.ipynb"]):
    try:
        with open(path, "a") as f:
            f.write("\\n# tampered\\n")
        print("TAMPERED", path)
    except Exception as e:
        print("cannot write", path, type(e).__name__)
''',
    "leaves_daemon": '''
import os
if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        os.execv("/bin/sleep", ["sleep", "31337"])
    os._exit(0)
''',
    "connects_to_host": '''
import socket
try:
    socket.create_connection(("127.0.0.1", {port}), timeout=2).sendall(b"LEAK")
    print("CONNECTED")
except OSError as e:
    print("no network:", e)
''',
    # its sockets swapped for links to a socket of the host: the grader (zmq) reconnects by path
    "relinks_its_sockets": '''
import glob, os
for path in glob.glob("/ipc/kernel-*") + glob.glob("/tmp/kernel-*"):
    try:
        os.unlink(path)
        os.symlink("{host_socket}", path)
        print("RELINKED", path)
    except OSError as e:
        print("cannot relink", path, e.errno)
''',
    "kills_its_parent": '''
import os, signal
for pid in (os.getppid(), 1, -1):  # -1: every process it may signal
    try:
        os.kill(pid, signal.SIGKILL)
    except OSError as e:
        print("cannot kill", pid, e)
''',
    "allocates_3gib": '''
try:
    big = torch.empty(3 * 2**30, dtype=torch.uint8).fill_(1)
    print("ALLOCATED 3 GiB")
except (MemoryError, RuntimeError) as e:
    print("no memory:", type(e).__name__)
big = None
''',
    "fills_the_disk": '''
import os
for path in ("./big.bin", "/tmp/big.bin", "{root}/big.bin"):
    try:
        with open(path, "wb") as f:
            for _ in range(512):
                f.write(b"x" * 2**20)
        print("WROTE 512 MiB to", path)
    except (OSError, Exception) as e:
        print("cannot fill", path, type(e).__name__)
    finally:
        try:
            os.remove(path)
        except OSError:
            pass
''',
    "prints_20mb": '''
print("x" * 20_000_000)
''',
    "injects_script": '''
from IPython.display import HTML, Javascript, display
display(HTML("<script>document.title = 'pwned-by-html'</script><b>bold</b>"))
display(Javascript("document.title = 'pwned-by-js'"))
''',
    # Routes around the per-cell cap (issue 18): each sends 8 MB that must not be stored.
    "answer_channel_in_a_cell": '''
from IPython.display import publish_display_data
for _ in range(2):
    publish_display_data({{"application/x-bert-grader": "z" * 4_000_000,
                           "text/html": "<script>document.title = 'pwned-by-channel'</script>"}})
''',
    "updates_a_display": '''
from IPython.display import HTML, display, update_display
handle = display("small", display_id=True)
handle.update(HTML("<script>document.title = 'pwned-by-update'</script>" + "u" * 4_000_000))
update_display({{"text/plain": "v" * 4_000_000}}, display_id=handle.display_id, raw=True)
''',
    "widget_output_capture": '''
import ipywidgets
from IPython.display import HTML, display
out = ipywidgets.Output()
display(out)
with out:
    print("w" * 4_000_000)
    display(HTML("<script>document.title = 'pwned-by-widget'</script>" + "h" * 4_000_000))
''',
}

# Cheats: part 1 answered wrongly (or through bertlib), plus a trick meant to pass the checks anyway.
CHEATS = {
    "patches_torch": '''
torch.equal = lambda *a, **k: True
torch.allclose = lambda *a, **k: True
torch.Tensor.__eq__ = lambda self, other: torch.ones(self.shape, dtype=torch.bool)
''' + WRONG_SELECT,
    "strips_asserts": '''
import ast
class _Strip(ast.NodeTransformer):
    def visit_Assert(self, node):
        return ast.Pass()
get_ipython().ast_transformers.append(_Strip())
''' + WRONG_SELECT,
    "disables_the_guard": '''
import contextlib
bertlib_unavailable = lambda *a, **k: contextlib.nullcontext()
def select_for_prediction(input_ids, special_ids, mlm_probability=0.15, generator=None):
    _, labels = bertlib.masking.mask_tokens(input_ids, mask_token_id=MASK, vocab_size=VOCAB_SIZE,
                                            special_ids=special_ids, mlm_probability=mlm_probability,
                                            generator=generator)
    return labels != -100
''',
    "copies_code_object": '''
import types
_copy = types.FunctionType(bertlib.masking.mask_tokens.__code__, vars(bertlib.masking), "copy",
                           bertlib.masking.mask_tokens.__defaults__)
_copy.__kwdefaults__ = bertlib.masking.mask_tokens.__kwdefaults__
def select_for_prediction(input_ids, special_ids, mlm_probability=0.15, generator=None):
    _, labels = _copy(input_ids, mask_token_id=MASK, vocab_size=VOCAB_SIZE, special_ids=special_ids,
                      mlm_probability=mlm_probability, generator=generator)
    return labels != -100
''',
    "reexecutes_source": '''
import inspect, textwrap
_ns = dict(vars(bertlib.masking))
exec(textwrap.dedent(inspect.getsource(bertlib.masking.mask_tokens)), _ns)
def select_for_prediction(input_ids, special_ids, mlm_probability=0.15, generator=None):
    _, labels = _ns["mask_tokens"](input_ids, mask_token_id=MASK, vocab_size=VOCAB_SIZE, special_ids=special_ids,
                                   mlm_probability=mlm_probability, generator=generator)
    return labels != -100
''',
    "fakes_the_grader": '''
import sys
from IPython.display import publish_display_data
from bertgrader.kernel import wire
def _fake_serve(text):
    publish_display_data({"application/x-bert-grader": wire.to_text(wire.encode({"ok": True}))})
sys.modules["bertgrader.kernel.kernel_side"].serve = _fake_serve
''' + WRONG_SELECT,
}
KILLS_KERNEL = {"kills_its_kernel": "import os, signal\nos.kill(os.getpid(), signal.SIGKILL)\n"}
# One output message bigger than the grader accepts (bertgrader.kernel_manager.MAX_MESSAGE_BYTES): the grader
# drops it rather than hold it in memory; the kernel may then stop answering, which costs only its own cells.
FLOODS = {"sends_a_200mb_message": '''
from IPython.display import display
display({{"text/plain": "y" * 200_000_000}}, raw=True)
''',
           # many messages, each under every per-message limit, over the notebook's total (TOTAL_BYTES here)
           "sends_many_messages": '''
from IPython.display import display
for _ in range(40):
    display({{"text/plain": "m" * 2_000_000}}, raw=True)
'''}
# Submissions holding more than plain files (a git clone, an unpacked archive, cp -a): refused, never followed.
LINKED = ["notebook_links_to_the_solution", "links_to_the_hidden_tests", "links_to_dev_zero", "holds_a_fifo"]
# An added cell with nbgrader metadata nbgrader cannot read stopped the whole run before (issue 18).
NBGRADER_CELLS = {"adds_a_newer_schema_cell": {"schema_version": 4}, "adds_an_empty_nbgrader_cell": {},
                  "copies_a_graded_cell_id": {"grade": True, "grade_id": "test_select", "points": 100,
                                              "locked": False, "solution": False, "schema_version": 3}}
# Issue 28: markdown that reached the instructor's Jupyter origin. Each route calls pwned(...), a binding the
# Chromium tests expose (or sets the title); the formula beside them must still render.
MARKDOWN_ATTACK = r"""## Notes on $W^O$

[a link](javascript:pwned('md-link')) and [an entity-encoded one](java&#x73;cript:pwned('md-entity'))
<a href="JaVaScRiPt:pwned('html-link')">an HTML link</a>
<a href="data:text/html,<script>parent.pwned('data-link')</script>">a data: link</a>
<img src="x" onerror="pwned('onerror')"> <svg onload="pwned('svg')"></svg>
<iframe src="javascript:parent.pwned('iframe')"></iframe>
<details open ontoggle="pwned('ontoggle')"><summary>open</summary>inside</details>
<div style="position:fixed;top:0;left:0;width:100%;height:100%;background:white">covers the page</div>
<a data-toggle="tooltip" data-html="true" title="<img src=x onerror=pwned('tooltip')>">a tooltip</a>

$\href{javascript:pwned('tex-href')}{\text{a formula link}}$ and $$\class{navbar-fixed-top}{x} + \style{color:red}{y}$$
"""
# Files nbgrader must never read as a notebook: refused as bytes, that student alone, naming the file.
REFUSED_FILES = {
    # 1 KB; nbformat's upgrade to v4 would write "#" * level (10**8 here: 100 MB, enough to see, not to hurt)
    "nbformat3_heading_bomb": __import__("json").dumps(
        {"nbformat": 3, "nbformat_minor": 0, "metadata": {},
         "worksheets": [{"cells": [{"cell_type": "heading", "level": 10**8, "source": "x", "metadata": {}}]}]}),
    "nested_json": ('{"nbformat": 4, "nbformat_minor": 5, "metadata": {}, "cells": [], "x": '
                    + "[" * 5000 + "]" * 5000 + "}"),
}
BAD_FOLDERS = [b"mal\xffory", b"eve\x1b[2J"]  # not UTF-8; a terminal escape
SECRET = "INSTRUCTOR_SECRET_TOKEN"  # in the grader's environment while the class is graded; never in a kernel's
SET_BY_IPYKERNEL = {"TERM", "PAGER", "GIT_PAGER", "CLICOLOR", "CLICOLOR_FORCE", "FORCE_COLOR", "PWD"}
TOTAL_BYTES = 48 * 2**20  # --TrustedExecute.max_submission_bytes for this class (an honest 08_masking sends < 1 MB)


def _tree_digest(*roots: Path, skip=()) -> dict[str, str]:
    """{path: size and mtime} of every file under ``roots``."""
    out = {}
    for root in roots:
        for path in sorted(Path(root).rglob("*")):
            rel = str(path)
            if path.is_file() and not any(part in skip for part in path.parts) and "__pycache__" not in rel:
                st = path.stat()  # size and modification time: a write changes one (hashing torch is slow)
                out[rel] = f"{st.st_size}:{st.st_mtime_ns}"
    return out


def _sleepers() -> list[str]:
    ps = subprocess.run(["ps", "-eo", "pid,args"], capture_output=True, text=True).stdout
    return [line for line in ps.splitlines() if "sleep 31337" in line]


@pytest.fixture(scope="module")
def attacked(tmp_path_factory):
    course = Course(tmp_path_factory.mktemp("attacked"), [A])
    course.generate(A)
    release, source = course.release(A), course.source(A)
    answers = solution_answers(source)
    site = Path(__import__("torch").__file__).parents[1]
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(8)
    server.settimeout(0.5)
    connections, stop = [], threading.Event()
    host_socket = socket.socket(socket.AF_UNIX)  # a socket of the host's, which no kernel may reach
    host_socket.bind(str(course.root / "host.sock"))
    host_socket.listen(8)
    host_socket.settimeout(0.5)

    def accept():
        while not stop.is_set():
            for listener in (server, host_socket):
                try:
                    connections.append(listener.accept())
                except OSError:
                    pass

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    fill = dict(root=course.root, repo=REPO, site=site, port=server.getsockname()[1],
                host_socket=course.root / "host.sock")
    course.submit("honest1", A, solution_submission(course, A))  # among the attackers; zz_honest_last after them
    for name, attack in {**CONTAINED, **KILLS_KERNEL, **FLOODS}.items():
        course.submit(name, A, filled(release, {**answers, "select": attack.format(**fill) + "\n" + answers["select"]}))
    for name, cheat in CHEATS.items():
        course.submit(name, A, filled(release, {**answers, "select": cheat}))
    # submissions that are not plain files: refused, that student only, nothing of them followed
    for name in LINKED:
        folder = course.submit(name, A, solution_submission(course, A)).parent
        if name == "notebook_links_to_the_solution":
            (folder / f"{A}.ipynb").unlink()
            (folder / f"{A}.ipynb").symlink_to(course.root / "solutions" / A / f"{A}.ipynb")
        elif name == "links_to_the_hidden_tests":
            (folder / "notes.py").symlink_to(course.root / "solutions" / A / "hidden_tests.py")
        elif name == "links_to_dev_zero":
            (folder / "data.bin").symlink_to("/dev/zero")
        elif name == "holds_a_fifo":
            os.mkfifo(folder / "pipe")
    # cells the student added with nbgrader metadata of their own: graded as the release's cells
    for name, meta in NBGRADER_CELLS.items():
        nb = solution_submission(course, A)
        extra = __import__("nbformat").v4.new_code_cell("extra = 1")
        extra.metadata["nbgrader"] = meta
        nb.cells.insert(2, extra)
        course.submit(name, A, nb)
    # a markdown cell with a script, added by a student
    nb = solution_submission(course, A)
    nb.cells.insert(1, __import__("nbformat").v4.new_markdown_cell("<script>document.title='pwned-by-md'</script>hi"))
    course.submit("script_in_markdown", A, nb)
    # markdown that tried to reach the instructor's page, and markdown that took the sanitiser quadratic time
    for name, markdown in (("links_to_javascript", MARKDOWN_ATTACK), ("quadratic_markdown", "<b>x" * 32768)):
        nb = solution_submission(course, A)
        nb.cells.insert(1, __import__("nbformat").v4.new_markdown_cell(markdown))
        course.submit(name, A, nb)
    for name, text in REFUSED_FILES.items():
        course.submit(name, A, text)
    solved = __import__("nbformat").writes(solution_submission(course, A)).encode()
    for name in BAD_FOLDERS:
        folder = os.fsencode(course.root / "submitted") + b"/" + name + b"/" + A.encode()
        os.makedirs(folder)
        with open(folder + b"/" + A.encode() + b".ipynb", "wb") as f:
            f.write(solved)

    course.submit("zz_honest_last", A, solution_submission(course, A))  # graded after every attacker

    watched = [REPO / "bertlib", REPO / "bertgrader", site]
    before_repo = _tree_digest(*watched)
    before_course = _tree_digest(course.root / "solutions", course.root / "exercises", course.root / "submitted")
    sleepers_before = _sleepers()
    os.environ[SECRET] = "s3cret"
    try:
        run = course.nbgrader("autograde", A, "--force", f"--TrustedExecute.max_submission_bytes={TOTAL_BYTES}",
                              check=False)
    finally:
        del os.environ[SECRET]
    course.generate_feedback(A)
    grades = course.export_csv()
    stop.set()
    thread.join(timeout=2)
    server.close()
    host_socket.close()
    return dict(course=course, run=run, grades=grades, connections=connections, before_repo=before_repo,
                after_repo=_tree_digest(*watched), before_course=before_course,
                after_course=_tree_digest(course.root / "solutions", course.root / "exercises",
                                          course.root / "submitted"),
                sleepers=[s for s in _sleepers() if s not in sleepers_before],
                full=sum(float(c.metadata["nbgrader"]["points"]) for c in source.cells  # autograded: not the
                         if c.metadata.get("nbgrader", {}).get("grade") and c.cell_type == "code"),  # written answer
                part1=float(next(c.metadata["nbgrader"]["points"] for c in source.cells
                                 if c.metadata.get("nbgrader", {}).get("grade_id") == "test_select")))


def _feedback(course, student) -> str:
    return (course.root / "feedback" / student / A / f"{A}.html").read_text(encoding="utf-8")


def test_every_student_is_graded_and_honest_ones_get_full_marks(attacked):
    course = attacked["course"]
    students = ["honest1", "script_in_markdown", "links_to_javascript", "quadratic_markdown", *CONTAINED, *CHEATS,
                *KILLS_KERNEL, *FLOODS, *NBGRADER_CELLS, "zz_honest_last"]
    for s in students:
        assert course.total(A, s) is not None, f"{s} was not graded:\n{attacked['run'].log[-3000:]}"
    for s in ["honest1", "script_in_markdown", "links_to_javascript", "quadratic_markdown", *CONTAINED,
              *NBGRADER_CELLS, "zz_honest_last"]:
        assert course.total(A, s) == attacked["full"], f"{s}: {course.scores(A, s)}"
    rows = list(csv.DictReader(open(attacked["grades"])))
    assert {r["student_id"] for r in rows} >= set(students)


def test_a_submission_that_is_not_plain_files_is_refused_and_nothing_of_it_followed(attacked):
    course, log = attacked["course"], attacked["run"].log
    for s in LINKED:
        assert course.total(A, s) is None, f"{s} was graded: {course.scores(A, s)}"
        assert not (course.root / "autograded" / s).exists() or not any(
            p.name != "inputs.py" for p in (course.root / "autograded" / s).rglob("*.py"))  # inputs.py: released
        assert f"submitted/{s}/{A}/" in log and "a submission is plain files in plain folders" in log
    marker = next(line for line in (REPO / "solutions" / A / "hidden_tests.py").read_text().splitlines()
                  if "def _tolerance" in line)
    copied = [p for p in (course.root / "autograded").rglob("*") if p.is_file() and marker in p.read_text(errors="replace")]
    assert not copied, f"the hidden tests were copied where a kernel sees them: {copied}"


def test_attackers_earn_no_more_than_their_answers(attacked):
    course = attacked["course"]
    for s in CHEATS:
        scores = course.scores(A, s)
        assert scores["test_select"] == 0, f"{s} scored part 1 with a wrong answer: {scores}"
        assert course.total(A, s) == attacked["full"] - attacked["part1"], f"{s}: {scores}"
    for s in KILLS_KERNEL:
        assert course.total(A, s) == 0, course.scores(A, s)
    for s in FLOODS:
        assert course.total(A, s) <= attacked["full"], course.scores(A, s)


def test_nothing_outside_the_grading_output_changed(attacked):
    assert attacked["after_repo"] == attacked["before_repo"], "bertlib/, bertgrader/ or the virtualenv changed"
    assert attacked["after_course"] == attacked["before_course"], "solutions/, exercises/ or submitted/ changed"
    big = [p for p in attacked["course"].root.rglob("*") if p.is_file() and p.stat().st_size > 5 * 2**20]
    assert not big, f"files over 5 MiB in the course folder: {big}"


def test_no_process_left_and_no_connection_made(attacked):
    assert not attacked["sleepers"], f"processes left after grading: {attacked['sleepers']}"
    assert not attacked["connections"], "a student kernel connected to a service on the host's loopback"


def _outputs(course, student) -> str:
    """Everything the student's cells printed or displayed while graded (not their source)."""
    nb = read_nb(course.root / "autograded" / student / A / f"{A}.ipynb")
    parts = []
    for cell in nb.cells:
        for out in cell.get("outputs", []):
            parts += [out.get("text", ""), out.get("evalue", ""), *map(str, out.get("data", {}).values())]
    return "\n".join(parts)


def test_attacks_saw_nothing(attacked):
    course = attacked["course"]
    marker = next(line for line in (REPO / "solutions" / A / "hidden_tests.py").read_text().splitlines()
                  if "def _tolerance" in line)
    for s in [*CONTAINED, *CHEATS]:
        assert marker not in _feedback(course, s), f"{s}'s feedback holds hidden-test source"
        printed = _outputs(course, s)
        for leak in ("READ /", "WROTE GRADEBOOK", "TAMPERED", "CONNECTED", "ALLOCATED 3 GiB", "WROTE 512 MiB",
                     "RELINKED"):
            assert leak not in printed, f"{s} printed {leak!r}: the attack worked"
    printed = _outputs(course, "reads_secrets")
    assert "ENV" in printed and "HF_HUB_OFFLINE" in printed, printed[:2000]  # it ran, in the sandbox's environment
    seen_env = set(re.findall(r"'([^']+)'", printed.split("ENV", 1)[1].splitlines()[0]))
    assert SECRET not in seen_env, "the instructor's environment reached the kernel"
    sandbox_env = set(__import__("bertgrader.sandbox", fromlist=["Sandbox"]).Sandbox(workdir=Path(".")).env())
    leaked = (seen_env & set(os.environ)) - sandbox_env - SET_BY_IPYKERNEL
    assert not leaked, f"the instructor's variables reached the kernel: {sorted(leaked)}"
    assert "no gradebook" in _outputs(course, "writes_gradebook")
    assert _outputs(course, "relinks_its_sockets").count("cannot relink /ipc/kernel-") >= 4  # it tried, sealed
    killed = _outputs(course, "kills_its_parent")
    assert killed.count("cannot kill") == 3, f"a kill went through (or never ran): {killed[:1000]}"


def test_feedback_is_small_and_holds_no_live_script(attacked):
    course = attacked["course"]
    for s in ["prints_20mb", *FLOODS, "injects_script", "script_in_markdown"]:
        page = _feedback(course, s)
        assert len(page) < 2 * 2**20, f"{s}: feedback page of {len(page)} bytes"
        assert not re.search(r"<script[^>]*>[^<]*pwned", page), f"{s}: a live script in the feedback page"
    autograded = course.root / "autograded" / "prints_20mb" / A / f"{A}.ipynb"
    assert autograded.stat().st_size < 2 * 2**20


def test_autograded_notebooks_are_small_and_hold_nothing_active(attacked):
    """Every route a kernel has to the stored notebook (outputs, the answer channel's mime type, display
    updates, widgets and their state, markdown) ends small and inert."""
    course = attacked["course"]
    for path in sorted((course.root / "autograded").glob(f"*/{A}/{A}.ipynb")):
        student = path.parts[-3]
        assert path.stat().st_size < 2 * 2**20, f"{student}: autograded notebook of {path.stat().st_size} bytes"
        nb = read_nb(path)
        assert "widgets" not in nb.metadata, f"{student}: widget state stored"
        for cell in nb.cells:
            if cell.cell_type == "markdown":
                assert not re.search(r"<script|javascript:", cell.source, re.I), f"{student}: {cell.source[:200]}"
            for out in cell.get("outputs", []):
                kinds = set(out.get("data", {}))  # text and images only: nothing a page would run
                assert kinds <= {"text/plain", "image/png", "image/jpeg"}, f"{student}: stored outputs of type {kinds}"
    for s in ("answer_channel_in_a_cell", "updates_a_display", "widget_output_capture"):
        assert course.total(A, s) == attacked["full"], f"{s}: {course.scores(A, s)}"


def test_a_flood_of_small_messages_is_stopped_at_the_notebook_budget(attacked):
    course = attacked["course"]
    printed = _outputs(course, "sends_many_messages")
    assert f"more than {TOTAL_BYTES // 2**20} MiB of output" in printed, printed[-2000:]
    assert printed.count("m" * 1000) * 1000 < 2 * 2**20


def test_feedback_never_shows_hidden_tests_of_any_cell(attacked):
    page = _feedback(attacked["course"], "honest1")
    assert "hidden_tests" not in page.replace("hidden tests", "")
    assert "BEGIN HIDDEN TESTS" not in page


# ------------------------------------------------------------------------------------------ issue 28 §3, §4
def test_a_file_that_is_not_a_bounded_nbformat_4_notebook_is_refused_and_the_rest_graded(attacked):
    course, log = attacked["course"], attacked["run"].log
    for s in REFUSED_FILES:
        assert course.total(A, s) is None, f"{s} was graded: {course.scores(A, s)}"
        assert f"submitted/{s}/{A}/{A}.ipynb' is" in log, log[-3000:]
    assert "is nbformat 3: only nbformat 4 notebooks are graded" in log
    assert "is JSON nested more than 32 deep" in log
    assert "its name is not UTF-8" in log and "mal\\udcffory" in log
    assert "control or invisible character" in log and "eve\\x1b[2J" in log
    assert course.total(A, "zz_honest_last") == attacked["full"]


def test_markdown_is_bounded_in_the_autograded_notebook_and_the_page(attacked):
    """128 KB of <b>x took the bleach-based sanitiser 18 s; now the autograded notebook keeps at most
    MAX_MARKDOWN_SOURCE characters of a cell, cleaned by nh3 (linear), and the page shows a cell over
    sanitize.MAX_MARKDOWN_CHARS as text instead of rendering it: work bounded by size, not measured here."""
    from bertgrader.preprocessors import MAX_MARKDOWN_SOURCE
    from bertgrader.sanitize import MAX_MARKDOWN_CHARS

    course = attacked["course"]
    assert course.total(A, "quadratic_markdown") == attacked["full"], course.scores(A, "quadratic_markdown")
    [cell] = [c for c in course.autograded("quadratic_markdown", A).cells if c.source.startswith("<b>x")]
    assert cell.source.count("x") <= min(32768, MAX_MARKDOWN_SOURCE // 4)
    page = _feedback(course, "quadratic_markdown")
    assert f"(more than {MAX_MARKDOWN_CHARS:,}), shown as text" in page


def test_pages_hold_no_route_to_script_as_served(attacked):
    """The feedback pages as files and an autograded notebook through `jupyter nbconvert --config
    nbgrader_config.py`: parsed as a browser would, no script, handler, style, form or script URL in the
    student's part of the page (the <head> is the template's: MathJax)."""
    from test_sanitize import live_routes

    course = attacked["course"]
    for s in ("links_to_javascript", "script_in_markdown", "injects_script"):
        page = _feedback(course, s)
        assert not live_routes(page[page.index("<body"):]), (s, live_routes(page[page.index("<body"):]))
    notebook = course.root / "autograded" / "links_to_javascript" / A / f"{A}.ipynb"
    out = course.root / "nbconvert-out"
    subprocess.run([sys.executable, "-m", "jupyter", "nbconvert", "--to", "html", "--config", "nbgrader_config.py",
                    "--output-dir", str(out), str(notebook)], cwd=course.root, check=True, capture_output=True,
                   timeout=300)
    page = (out / f"{A}.html").read_text(encoding="utf-8")
    assert "an HTML link" in page and "$W^O$" in page
    body = page[page.index("<body"):]  # nbconvert's lab template writes data-* attributes of its own
    assert not live_routes(body, data_attributes=False), live_routes(body, data_attributes=False)


_LIVE_IN_DOM = """(scope) => {
  const found = [];
  for (const e of document.querySelectorAll(scope + ' *')) {
    for (const a of e.attributes) {
      const v = a.value.replace(/[\\x00-\\x20]+/g, '').toLowerCase();
      if (a.name.startsWith('on')) found.push(e.tagName + ' ' + a.name);
      if (/^(href|src|action|formaction|xlink:href)$/.test(a.name) && /^(javascript|vbscript):/.test(v))
        found.push(e.tagName + ' ' + a.name + '=' + v.slice(0, 40));
    }
  }
  return found;
}"""


def _click_every_link(browser, url: str, allow: str | None = None, headers: dict | None = None,
                      scope: str = "body") -> tuple[list, list, object]:
    """Open ``url`` with every request but ``allow``'s blocked, then click each link, each on a fresh load.
    Returns (what the student's script reported through the pwned binding or the title, handlers or script URLs
    in the live DOM under ``scope``, (the context, the first load's page, the number of links)). The first load,
    where the links are counted, is never clicked: it stays open for the caller's checks of the page as loaded
    (no load of its own for them)."""
    fired, live = [], []
    ctx = browser.new_context(extra_http_headers=headers)
    ctx.set_default_timeout(20_000)  # a step that hangs fails this link's round, not the session
    ctx.route(re.compile(r"^(https?|wss?|ftp)://"),
              lambda r: r.continue_() if allow and r.request.url.startswith(allow) else r.abort())
    ctx.expose_binding("pwned", lambda source, what=None: fired.append(what))
    first = ctx.new_page()
    first.goto(url)
    count = first.locator("a").count()
    for i in range(count):
        page = ctx.new_page()  # a fresh tab: a link that navigated away leaves nothing pending
        page.goto(url)
        live += page.evaluate(_LIVE_IN_DOM, scope)
        try:
            page.locator("a").nth(i).click(timeout=2000, force=True, no_wait_after=True)
            page.wait_for_timeout(200)  # a javascript: URL runs as a task after the click
            if "pwned" in page.title():
                fired.append(page.title())
        except Exception:  # a link that cannot be clicked (hidden, detached) or that navigated away
            pass
        try:
            page.goto("about:blank")  # the tab's document let go (not closed: a close cannot time out)
        except Exception:  # a tab that hangs is left to ctx.close()
            pass
    return fired, sorted(set(live)), (ctx, first, count)


@pytest.mark.skipif(not Path("/usr/bin/chromium").exists(), reason="no Chromium at /usr/bin/chromium")
def test_the_feedback_page_runs_no_script_of_the_students_and_renders_formulas(attacked, browser):
    course = attacked["course"]
    for s in ("links_to_javascript", "script_in_markdown", "injects_script"):
        path = course.root / "feedback" / s / A / f"{A}.html"
        fired, live, (ctx, page, count) = _click_every_link(browser, path.as_uri())
        try:
            assert count >= 3, f"{s}: only {count} links on the page"
            assert not fired, f"{s}: the student's script ran in the feedback page: {fired}"
            assert not live, f"{s}: handlers or script URLs in the page: {live}"
            if s == "links_to_javascript":  # MathJax (inside the page) typeset the formulas
                page.wait_for_selector("mjx-container", timeout=60_000)
                assert page.locator("mjx-container").count() >= 3
                assert page.locator("mjx-container a").count() == 0, "a TeX link survived"
        finally:
            ctx.close()


@pytest.fixture(scope="module")
def formgrader(attacked):
    """The instructor's formgrader: `jupyter server` in the course root, as JupyterLab serves it."""
    import time
    import urllib.request

    course = attacked["course"]
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    log = open(course.root / "formgrader.log", "wb")
    proc = subprocess.Popen([sys.executable, "-m", "jupyter", "server", "--ServerApp.ip=127.0.0.1",
                             f"--ServerApp.port={port}", "--ServerApp.token=t28", "--ServerApp.open_browser=False",
                             f"--ServerApp.root_dir={course.root}", "--allow-root"],
                            cwd=course.root, stdout=log, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    try:
        for _ in range(240):
            try:
                urllib.request.urlopen(f"{url}/api/status?token=t28", timeout=2)
                break
            except OSError:
                if proc.poll() is not None:
                    break
                time.sleep(0.5)
        else:
            pytest.fail("jupyter server did not answer")
        assert proc.poll() is None, (course.root / "formgrader.log").read_text()[-3000:]
        yield dict(url=url, course=course)
    finally:
        proc.terminate()
        proc.wait(timeout=30)
        log.close()


@pytest.mark.skipif(not Path("/usr/bin/chromium").exists(), reason="no Chromium at /usr/bin/chromium")
def test_the_formgrader_page_runs_no_script_of_the_students(formgrader, browser):
    """nbgrader's formgrader renders the autograded notebook with HTMLExporter(config=...) from the course's
    nbgrader_config.py: its markdown is cleaned after rendering (bertgrader.sanitize), so no link of the
    student's runs script in the instructor's Jupyter origin, whose API starts terminals."""
    from nbgrader.api import Gradebook

    course = formgrader["course"]
    with Gradebook(f"sqlite:///{course.root / 'gradebook.db'}", course_id="bert-course") as gb:
        ids = {s: gb.find_submission_notebook(A, A, s).id for s in ("links_to_javascript", "script_in_markdown")}
    for s, sid in ids.items():
        url = f"{formgrader['url']}/formgrader/submissions/{sid}/"
        fired, live, (ctx, page, count) = _click_every_link(browser, url, allow=formgrader["url"],
                                                            headers={"Authorization": "token t28"},
                                                            scope="#notebook-container")  # the page's own: onclick
        try:
            assert page.locator("#notebook-container").count() >= 1, page.content()[:2000]
            assert count >= 3 and page.locator(".score").count() >= 1, f"{s}: not the formgrade page"
            assert not fired, f"{s}: the student's script ran in the formgrader: {fired}"
            assert not live, f"{s}: handlers or script URLs in the formgrader page: {live}"
            if s == "links_to_javascript":
                html = page.content()
                # formulas reach MathJax (typeset where the page has it inside, as text where it loads it from a
                # CDN, blocked here), without \href
                assert "$W^O$" in html or page.locator("mjx-container").count() >= 1
                assert r"\href{" not in html and page.locator("mjx-container a").count() == 0
        finally:
            ctx.close()
