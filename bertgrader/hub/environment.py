"""The environment every person's JupyterLab and kernel run from: the course's .venv itself when everyone can run it,
else a view of it on a copy of its own Python that everyone can run.

A venv is only as usable as the Python it was made from: one made from pyenv's Python under /root (mode 0700) has an
interpreter no student may execute. Then the server copies that interpreter (its binary, shared library and standard
library, not its site-packages or its tests: about 140 MB) to a readable place, points the copy's binary at its own
shared library ($ORIGIN instead of the original folder), and makes a small venv from it whose site-packages folder
is a link to the course's: the same Python, byte for byte, and the same packages, nothing reinstalled. Its .pth
files (bertlib's editable install) are read as in the course's venv, and the grading sandbox, which shows a kernel
its interpreter's site-packages, shows the course's. The course's console scripts (nbgrader, jupyterhub-singleuser,
...) are pointed at the view, and the course's Jupyter data (nbgrader's JupyterLab extensions, the server
extensions' settings) is linked in. (A view on another Python of the same version is not enough: Debian's 3.11.2
fails soupsieve's selectors, which the course's packages, resolved on 3.11.7, use.)
"""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

from bertgrader.hub.preflight import NotReady, readable_by_all

VERSION = f"python{sys.version_info.major}.{sys.version_info.minor}"


def runnable_by_all(venv: Path) -> bool:
    python = Path(os.path.realpath(venv / "bin" / "python"))
    return readable_by_all(venv) and readable_by_all(python) and readable_by_all(Path(sys.base_prefix))


def plan(venv: Path) -> Path | None:
    """None when the course's venv serves as is; else the Python installation a view will be built on (a copy of
    it). Refuses, naming the problem, when neither works."""
    if runnable_by_all(venv):
        return None
    if not readable_by_all(venv):
        raise NotReady(f"the course's environment {venv} is not readable by other users (every student's "
                       "JupyterLab and kernel run from it): put the checkout where everyone may read it")
    base = Path(sys.base_prefix)
    if not (base / "bin" / VERSION).is_file() or not (base / "lib" / VERSION / "os.py").is_file():
        raise NotReady(f"students cannot run the course's Python ({os.path.realpath(venv / 'bin' / 'python')}: a "
                       f"folder above it is private) and its installation {base} is not one this server can copy: "
                       f"build the course's .venv from a Python every user can run (make venv PYTHON=/usr/bin/python3)")
    return base


def copy_python(base: Path, dest: Path) -> Path:
    """A copy of the Python installation ``base`` at ``dest``, runnable from there; returns its binary."""
    (dest / "bin").mkdir(parents=True)
    binary = dest / "bin" / VERSION
    data = (base / "bin" / VERSION).read_bytes()
    old = str(base / "lib").encode()
    if data.count(old) == 1:  # the binary's RUNPATH names the original folder: its own lib/ instead, NUL-padded
        data = data.replace(old, b"$ORIGIN/../lib".ljust(len(old), b"\0"))
    binary.write_bytes(data)
    binary.chmod(0o755)
    (dest / "lib").mkdir()
    for lib in (base / "lib").glob("libpython*"):
        shutil.copy2(lib, dest / "lib" / lib.name, follow_symlinks=False)
    shutil.copytree(base / "lib" / VERSION, dest / "lib" / VERSION, symlinks=True,
                    ignore=lambda d, names: [n for n in names if Path(d) == base / "lib" / VERSION
                                             and n in ("site-packages", "test", "idlelib", "tkinter")])
    (dest / "lib" / VERSION / "site-packages").mkdir()
    return binary


def build_view(venv: Path, base: Path, dest: Path) -> Path:
    """A venv at ``dest`` on a copy of the installation ``base`` that imports the course's packages from ``venv``;
    returns ``dest``."""
    python = copy_python(base, dest / "python")
    subprocess.run([str(python), "-m", "venv", "--without-pip", str(dest)], check=True, capture_output=True,
                   text=True)
    site = Path(sysconfig.get_path("purelib", vars={"base": str(venv), "platbase": str(venv)}))
    own = Path(sysconfig.get_path("purelib", vars={"base": str(dest), "platbase": str(dest)}))
    own.rmdir()  # empty: the venv was made without pip
    own.symlink_to(site)
    shebang = f"#!{venv / 'bin' / 'python'}"
    for script in sorted((venv / "bin").iterdir()):
        target = dest / "bin" / script.name
        if target.exists() or script.is_symlink() or not script.is_file():
            continue
        head = script.read_bytes()[:200]
        if head.startswith(shebang.encode()):
            text = script.read_text(encoding="utf-8")
            target.write_text(f"#!{dest / 'bin' / 'python'}" + text[len(shebang):], encoding="utf-8")
            target.chmod(0o755)
    for data in ("share/jupyter", "etc/jupyter"):  # labextensions, kernelspecs, server extension settings
        (dest / data).parent.mkdir(parents=True, exist_ok=True)
        if (venv / data).exists():
            (dest / data).symlink_to(venv / data)
    for p in [dest, *dest.rglob("*")]:
        if not p.is_symlink():
            p.chmod(p.stat().st_mode | 0o755 if p.is_dir() else p.stat().st_mode | 0o644)
    return dest


def remove_view(dest: Path) -> None:
    shutil.rmtree(dest, ignore_errors=True)
