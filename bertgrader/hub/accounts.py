"""The class's local accounts: created with useradd, a password each (JupyterHub checks it through PAM), a home only
its owner can open, and each person's Jupyter settings (students do not get the instructor's tools)."""
from __future__ import annotations

import os
import pwd
import secrets
import subprocess
from pathlib import Path

from bertgrader.student import page_config, server_config  # what a student does not get


def new_password() -> str:
    return secrets.token_urlsafe(12)  # 16 characters, 96 random bits


def create(name: str, password: str) -> Path:
    """A new local account with its own group and a home of mode 0700; returns the home."""
    subprocess.run(["useradd", "--create-home", "--user-group", "--shell", "/bin/bash", name], check=True,
                   capture_output=True, text=True)
    subprocess.run(["chpasswd"], input=f"{name}:{password}\n", check=True, capture_output=True, text=True)
    home = Path(pwd.getpwnam(name).pw_dir)
    home.chmod(0o700)  # nothing of one student's is readable by another
    return home


def remove(name: str) -> None:
    """Delete the account and its home (and end its processes first: userdel refuses a user still logged in)."""
    try:
        uid = pwd.getpwnam(name).pw_uid
    except KeyError:
        return
    for pid in _processes_of(uid):
        try:
            os.kill(pid, 9)
        except ProcessLookupError:
            pass
    subprocess.run(["userdel", "--remove", name], capture_output=True)


def _processes_of(uid: int) -> list[int]:
    pids = []
    for entry in Path("/proc").iterdir():
        try:
            if entry.name.isdigit() and entry.stat().st_uid == uid:
                pids.append(int(entry.name))
        except FileNotFoundError:
            continue
    return pids


def write_as(name: str, path: Path, text: str) -> None:
    """Write ``path`` (folders made as needed) owned by ``name``, as a file of theirs."""
    entry = pwd.getpwnam(name)
    path.parent.mkdir(parents=True, exist_ok=True)
    for p in [path.parent, *path.parent.parents]:
        if p == Path(entry.pw_dir):
            break
        os.chown(p, entry.pw_uid, entry.pw_gid)
    path.write_text(text, encoding="utf-8")
    os.chown(path, entry.pw_uid, entry.pw_gid)


def jupyter_settings(name: str, *, course_id: str, exchange: Path, course_root: Path | None,
                     late_penalty: str | None = None, language: str | None = None) -> None:
    """Each person's ~/.jupyter: nbgrader's course and exchange; for the instructor the course folder and a release
    holding every language's notebook, for a student the notebooks fetched in ``language`` (English when None) and
    nbgrader's instructor tools switched off (what `jupyter labextension disable --level=user` and `jupyter server
    extension disable --user` write)."""
    home = Path(pwd.getpwnam(name).pw_dir)
    lines = ["c = get_config()  # noqa: F821", f"c.CourseDirectory.course_id = {course_id!r}",
             f"c.Exchange.root = {str(exchange)!r}"]
    if course_root is not None:
        lines.append(f"c.CourseDirectory.root = {str(course_root)!r}")
    if late_penalty is not None:  # nbgrader's own policy: "zero" scores late work 0, "none" keeps its score
        lines.append(f"c.LateSubmissionPlugin.penalty_method = {late_penalty!r}")
    if course_root is None:  # a hand-in only its author and the instructor can read (exchange.py)
        lines.append('c.ExchangeFactory.submit = "bertgrader.hub.exchange.PrivateSubmit"')
        # each notebook fetched in the student's language (exchange.py); the instructor releases them all
        lines.append('c.ExchangeFactory.fetch_assignment = "bertgrader.hub.exchange.FetchInOwnLanguage"')
        if language is not None:
            lines.append(f"c.FetchInOwnLanguage.language = {language!r}")
        # nbgrader validate (and the Validate button) as the course checks: each failure's reason first, in the
        # notebook's language, the course's cell timeout; what a laptop student's workspace gets (bertgrader.student)
        lines += ["from bertgrader.student import configure_student", "configure_student(c)"]
    else:
        lines.append('c.ExchangeFactory.release_assignment = "bertgrader.hub.exchange.ReleaseWithTranslations"')
    write_as(name, home / ".jupyter" / "nbgrader_config.py", "\n".join(lines) + "\n")
    # JupyterLab's news asks to fetch from the internet; nobody on the course server needs it
    write_as(name, home / ".jupyter" / "labconfig" / "page_config.json", page_config(student=course_root is None))
    if course_root is None:
        write_as(name, home / ".jupyter" / "jupyter_server_config.json", server_config())
