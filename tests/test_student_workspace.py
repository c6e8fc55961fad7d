"""A student on a laptop works in a copy of the exercises, never in the course's tracked exercises/, and does not
see the instructor's tools (issue 29 §10): ``python -m bertgrader.student start`` and ``... lab``, as the README's
student steps run them (install.py runs ``start`` at its end)."""
from __future__ import annotations

import json
import os
import re
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent
ASSIGNMENTS = sorted(d.name for d in (ROOT / "exercises").iterdir() if (d / f"{d.name}.ipynb").is_file())


def student(*args, cwd=ROOT, timeout=120):
    return subprocess.run([sys.executable, "-m", "bertgrader.student", *args], cwd=cwd, capture_output=True,
                          text=True, timeout=timeout)


def test_start_copies_every_assignment_and_never_overwrites_a_students_work(tmp_path):
    work = tmp_path / "bert-course-work"
    first = student("start", str(work))
    assert first.returncode == 0, first.stderr
    assert f"copied: {', '.join(ASSIGNMENTS)}" in first.stdout, first.stdout
    for a in ASSIGNMENTS:
        copy = work / a / f"{a}.ipynb"
        assert copy.read_bytes() == (ROOT / "exercises" / a / f"{a}.ipynb").read_bytes(), a
        assert os.access(copy, os.W_OK), f"{copy} is not writable"
    mine = work / ASSIGNMENTS[0] / f"{ASSIGNMENTS[0]}.ipynb"
    mine.write_text(mine.read_text().replace("raise NotImplementedError()", "return 42  # my answer"))
    edited = mine.read_bytes()
    (work / ASSIGNMENTS[-1] / f"{ASSIGNMENTS[-1]}.ipynb").unlink()
    (work / ASSIGNMENTS[-1]).rmdir()  # as if the course had published a new assignment since
    again = student("start", str(work))
    assert again.returncode == 0, again.stderr
    assert f"copied: {ASSIGNMENTS[-1]}\n" in again.stdout and "already there, left as it is: " in again.stdout
    assert mine.read_bytes() == edited, "start overwrote the student's notebook"
    refreshed = student("start", str(work), "--refresh", ASSIGNMENTS[0])
    assert refreshed.returncode == 0 and f"fresh copy (yours kept beside it): {ASSIGNMENTS[0]}" in refreshed.stdout
    [kept] = work.glob(f"{ASSIGNMENTS[0]}.before-*")
    assert (kept / f"{ASSIGNMENTS[0]}.ipynb").read_bytes() == edited
    assert mine.read_bytes() == (ROOT / "exercises" / ASSIGNMENTS[0] / f"{ASSIGNMENTS[0]}.ipynb").read_bytes()
    wrong = student("start", str(work), "--refresh", "no_such_assignment")
    assert wrong.returncode != 0 and "no assignment named no_such_assignment" in wrong.stderr


def test_validate_in_the_workspace_checks_as_the_course_does(tmp_path):
    work = tmp_path / "work"
    assert student("start", str(work)).returncode == 0
    env = dict(os.environ, PATH=f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}")
    proc = subprocess.run([str(BIN / "nbgrader"), "validate", "01_positioning/01_positioning.ipynb"], cwd=work,
                          env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=300)
    assert proc.returncode == 1, proc.stdout[-1500:]
    lines = [line for line in proc.stdout.splitlines() if line.strip() and not line.startswith("[ValidateApp")]
    assert lines[0].startswith("VALIDATION FAILED ON "), proc.stdout[:1500]
    assert lines[1].startswith("1. Part 1: ") and "NotImplementedError: not answered yet" in lines[1], proc.stdout[:1500]
    assert "without encryption" not in proc.stdout and "Warning" not in proc.stdout, proc.stdout[:1500]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _get(url):
    try:
        with urllib.request.urlopen(url, timeout=10) as r:
            return r.status, r.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, ""


def test_lab_in_the_workspace_has_no_instructor_tools(tmp_path):
    """JupyterLab started as the README says: nbgrader's Formgrader, Create Assignment and Course List plugins
    are disabled in the page it serves (so their menus and panels are not built) and Formgrader's pages are not
    served; the students' Assignment List and Validate stay."""
    work = tmp_path / "work"
    assert student("start", str(work)).returncode == 0
    port = _free_port()
    extra = ["--allow-root"] if hasattr(os, "geteuid") and os.geteuid() == 0 else []
    env = dict(os.environ, HOME=str(tmp_path), PATH=f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}")
    lab = subprocess.Popen([sys.executable, "-m", "bertgrader.student", "lab", str(work), "--", "--no-browser",
                            f"--port={port}", "--IdentityProvider.token=", *extra],
                           env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                           start_new_session=True)
    try:
        deadline = time.monotonic() + 120
        status, page = 0, ""
        while time.monotonic() < deadline and lab.poll() is None:
            try:
                status, page = _get(f"http://127.0.0.1:{port}/lab")
                break
            except OSError:
                time.sleep(0.5)
        assert status == 200, f"JupyterLab did not answer (exit {lab.poll()})"
        config = json.loads(re.search(r'<script id="jupyter-config-data" type="application/json">(.*?)</script>',
                                      page, re.S).group(1))
        disabled = set(config.get("disabledExtensions", []))
        for plugin in ("@jupyter/nbgrader:formgrader", "@jupyter/nbgrader:create-assignment",
                       "@jupyter/nbgrader:course-list"):
            assert plugin in disabled, f"{plugin} is on: {sorted(disabled)}"
        assert not {"@jupyter/nbgrader:assignment-list", "@jupyter/nbgrader:validate-assignment"} & disabled
        assert _get(f"http://127.0.0.1:{port}/formgrader")[0] == 404
        assert _get(f"http://127.0.0.1:{port}/assignments")[0] != 404  # the Assignment List's (400: no course asked)
    finally:
        os.killpg(lab.pid, 15)  # the server this test started, and its kernels
        out = lab.communicate(timeout=30)[0]
    assert "Traceback" not in out, out[-3000:]
