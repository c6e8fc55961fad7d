"""What the course server needs, checked before it changes anything: each check names what is missing."""
from __future__ import annotations

import os
import pwd
import re
import shutil
import socket
import stat
import subprocess
import sys
from pathlib import Path

# A local account name that is also a valid nbgrader student id: nbgrader's exchange joins ids with '+', and
# useradd refuses upper case and most punctuation on Debian.
NAME = re.compile(r"[a-z_][a-z0-9_-]{0,31}")
VENV = Path(sys.prefix)  # the course's environment: every kernel, every user's JupyterLab, nbgrader
PROXY_NPM = "configurable-http-proxy@5"


class NotReady(RuntimeError):
    """The server cannot start here; the message says what is missing and how to get it."""


def proxy_command(venv: Path = VENV) -> str | None:
    """JupyterHub's proxy (npm's configurable-http-proxy): the one `make hub` installs into the venv, or on PATH."""
    local = venv / "js" / "node_modules" / ".bin" / "configurable-http-proxy"
    return str(local) if local.exists() else shutil.which("configurable-http-proxy")


def check_names(students: list[str], instructor: str) -> None:
    people = students + [instructor]
    bad = [n for n in people if not NAME.fullmatch(n)]
    if bad:
        raise NotReady(f"not usable as an account name and nbgrader id: {bad} (lower-case letters, digits, '_' "
                       "and '-', starting with a letter or '_', at most 32 characters)")
    if not students:
        raise NotReady("no students: pass --students alice,bob,...")
    twice = sorted({n for n in people if people.count(n) > 1})
    if twice:
        raise NotReady(f"named twice: {twice}")


def check_new_accounts(names: list[str], ours: set[str]) -> None:
    """Accounts that exist already and this server did not make are refused: start never takes over an account."""
    taken = []
    for n in names:
        try:
            pwd.getpwnam(n)
        except KeyError:
            continue
        if n not in ours:
            taken.append(n)
    if taken:
        raise NotReady(f"these accounts exist already and were not made by this course server: {taken}; "
                       "choose other names (start creates every account itself)")


def check_port(port: int) -> None:
    """The hub's port and the two after it (the hub's own API, the proxy's API) must be free on 127.0.0.1."""
    for p, what in ((port, "the hub"), (port + 1, "the hub's API, --port + 1"), (port + 2, "the proxy's API, --port + 2")):
        with socket.socket() as s:
            try:
                s.bind(("127.0.0.1", p))
            except OSError as e:
                raise NotReady(f"port {p} ({what}) on 127.0.0.1 is busy ({e.strerror}); pass another --port") \
                    from None


def readable_by_all(path: Path) -> bool:
    """Every folder from / down to ``path`` lets other users in, and ``path`` lets them read."""
    for p in [*reversed(path.parents), path]:
        mode = p.stat().st_mode
        if not mode & stat.S_IXOTH or (p == path and not mode & stat.S_IROTH):
            return False
    return True


def check_machine(venv: Path = VENV) -> None:
    """Root, the account tools, the proxy, JupyterHub and the grading sandbox (environment.plan checks that students
    can run the course's environment)."""
    if sys.platform != "linux":
        raise NotReady(f"the course server runs on Linux (this is {sys.platform})")
    if os.geteuid() != 0:
        raise NotReady("not root: the course server creates local accounts and starts each person's JupyterLab as "
                       "that person; run it with sudo (sudo .venv/bin/python -m bertgrader.hub start ...)")
    missing = [t for t in ("useradd", "userdel", "chpasswd", "node") if not shutil.which(t)]
    if missing:
        raise NotReady(f"missing commands: {missing} (Debian: apt-get install passwd nodejs)")
    if not (venv / "bin" / "jupyterhub").exists() or not (venv / "bin" / "jupyterhub-singleuser").exists():
        raise NotReady(f"JupyterHub is not installed in {venv}: pip install -e '.[hub]' (or make hub)")
    if proxy_command(venv) is None:
        raise NotReady(f"JupyterHub's proxy is missing: npm install --prefix {venv}/js {PROXY_NPM} (make hub does "
                       "this)")
    from bertgrader.sandbox import SandboxUnavailable, check_available

    try:
        check_available()
    except SandboxUnavailable as e:
        raise NotReady(f"student work could not be graded here: {e}") from None
    # The instructor grades as an ordinary user: the sandbox then needs a user namespace of its own.
    probe = subprocess.run(["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "bwrap",
                            "--unshare-all", "--ro-bind", "/", "/", "true"], capture_output=True, text=True)
    if probe.returncode != 0:
        raise NotReady("an ordinary user cannot start the grading sandbox here (the instructor grades as one): "
                       f"{probe.stderr.strip()[-300:]} (unprivileged user namespaces must be on)")
