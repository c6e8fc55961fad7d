"""A student's own copy of the exercises on a laptop: ``python -m bertgrader.student start``, then ``... lab``.

The notebooks in the course's ``exercises/`` are tracked files that regenerating the assignments rewrites, so a
student works in a copy of them, outside the repository (default ``~/bert-course-work``):

    python -m bertgrader.student start              # copy every assignment there; run again for new ones
    python -m bertgrader.student start --language zh_CN   # the Chinese notebooks (exercises/zh_CN/) instead
    python -m bertgrader.student lab                # JupyterLab in it, without the instructor's tools

A Chinese notebook has the same name, cells and code as the English one and is graded by the same tests into
the same gradebook, its messages in Chinese (bertgrader/i18n.py): hand it in as the English one.

``start`` copies each assignment folder of ``exercises/`` that the workspace does not have yet and never touches
one it has (a student's work is never overwritten; ``--refresh NAME`` replaces one, keeping the old as a
dated copy beside it). It writes the workspace's ``nbgrader_config.py``, so that ``nbgrader validate`` run there
checks as the course does (each failure's reason first, exit 1; ``configure_student``), and ``.jupyter/``:
nbgrader's instructor tools switched off (Formgrader, Create Assignment, Course List), which ``lab`` puts on
JupyterLab's config path (``JUPYTER_CONFIG_PATH``), as the course server does for each student
(bertgrader/hub/accounts.py).
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

from bertgrader.i18n import LANGUAGES

# nbgrader's JupyterLab plugins and server extensions a student does not get (nbgrader's documentation, "Using
# nbgrader with JupyterHub": students have the Assignment List and Validate only), here and on the course server
# (bertgrader/hub/accounts.py). Hiding them is for clarity, not security: a student who turns Formgrader back on sees
# only their own files.
INSTRUCTOR_ONLY_PLUGINS = ["@jupyter/nbgrader:formgrader", "@jupyter/nbgrader:create-assignment",
                           "@jupyter/nbgrader:course-list"]
INSTRUCTOR_ONLY_EXTENSIONS = ["nbgrader.server_extensions.formgrader", "nbgrader.server_extensions.course_list"]
COURSE = Path(__file__).resolve().parents[1]  # the repository (the package is installed from it, editable)
DEFAULT = Path("~/bert-course-work")
CONFIG = '''"""nbgrader's settings for your copy of the course's exercises (written by python -m bertgrader.student start):
`nbgrader validate <assignment>/<assignment>.ipynb`, run here, checks your notebook as the course does."""
from bertgrader.student import configure_student

configure_student(get_config())  # noqa: F821 (provided by nbgrader when it loads this file)
'''


def configure_student(c) -> None:
    """What ``nbgrader validate`` (and JupyterLab's Validate button) needs in a student's workspace: the course's
    cell timeout, its kernels over ipc (no TCP warning), and validate's reason first with an exit status."""
    from bertgrader.validate import install

    c.Execute.timeout = 20
    c.Execute.interrupt_on_timeout = True
    c.Execute.kernel_manager_class = "bertgrader.kernel_manager.LocalIpcKernelManager"
    install()


def page_config(student: bool = True) -> str:
    """labconfig/page_config.json: JupyterLab's news (a request to the internet) off, and for a student
    nbgrader's instructor tools."""
    off = dict.fromkeys(["@jupyterlab/apputils-extension:announcements"]
                        + (INSTRUCTOR_ONLY_PLUGINS if student else []), True)
    return json.dumps({"disabledExtensions": off, "lockedExtensions": off}, indent=2) + "\n"


def server_config() -> str:
    """jupyter_server_config.json of a student: nbgrader's instructor server extensions off."""
    return json.dumps({"ServerApp": {"jpserver_extensions": dict.fromkeys(INSTRUCTOR_ONLY_EXTENSIONS, False)}},
                      indent=2) + "\n"


def jupyter_settings(folder: Path) -> None:
    """``folder``/.jupyter: nbgrader's instructor tools off, JupyterLab's news (a request to the internet) off."""
    (folder / "labconfig").mkdir(parents=True, exist_ok=True)
    (folder / "labconfig" / "page_config.json").write_text(page_config())
    (folder / "jupyter_server_config.json").write_text(server_config())


def start(workspace: Path, exercises: Path = COURSE / "exercises", refresh: tuple[str, ...] = ()) -> dict:
    """Copy the assignments ``workspace`` lacks; returns {"copied": [...], "kept": [...], "refreshed": [...]}."""
    if not exercises.is_dir():
        raise SystemExit(f"no exercises/ folder at {exercises}: install the course from its repository "
                         "(python3 install.py there), or name the folder with --exercises")
    names = sorted(d.name for d in exercises.iterdir() if d.is_dir() and (d / f"{d.name}.ipynb").is_file())
    unknown = sorted(set(refresh) - set(names))
    if unknown:
        raise SystemExit(f"no assignment named {', '.join(unknown)} in {exercises} (there are {', '.join(names)})")
    workspace.mkdir(parents=True, exist_ok=True)
    done: dict = {"copied": [], "kept": [], "refreshed": []}
    for name in names:
        target = workspace / name
        if target.exists() and name in refresh:
            target.rename(workspace / f"{name}.before-{time.strftime('%Y%m%d-%H%M%S')}")
            done["refreshed"].append(name)
        elif target.exists():
            done["kept"].append(name)
            continue
        else:
            done["copied"].append(name)
        shutil.copytree(exercises / name, target, ignore=shutil.ignore_patterns(".ipynb_checkpoints"))
        for path in [target, *target.rglob("*")]:  # nbgrader releases read-only copies: these are the student's
            path.chmod(path.stat().st_mode | 0o200)
    (workspace / "nbgrader_config.py").write_text(CONFIG)
    jupyter_settings(workspace / ".jupyter")
    return done


def lab_environment(workspace: Path, environ=os.environ) -> dict:
    extra = str(workspace / ".jupyter")
    path = environ.get("JUPYTER_CONFIG_PATH")
    return {**environ, "JUPYTER_CONFIG_PATH": extra + (os.pathsep + path if path else "")}


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python -m bertgrader.student", description=__doc__.split("\n\n")[0])
    sub = p.add_subparsers(dest="command", required=True)
    s = sub.add_parser("start", help="copy the exercises into your workspace (only those it lacks)")
    s.add_argument("workspace", nargs="?", default=str(DEFAULT), help=f"your folder (default {DEFAULT})")
    s.add_argument("--exercises", default=str(COURSE / "exercises"), help="the course's student notebooks "
                   "(default: exercises/ of the repository the course is installed from)")
    s.add_argument("--language", default="en", choices=["en", *LANGUAGES],
                   help="the notebooks' language: en (default) or zh_CN, the Chinese notebooks in exercises/zh_CN/")
    s.add_argument("--refresh", action="append", default=[], metavar="ASSIGNMENT",
                   help="replace this assignment with a fresh copy (yours is kept, renamed with the date)")
    lab = sub.add_parser("lab", help="JupyterLab in your workspace, without the instructor's tools")
    lab.add_argument("workspace", nargs="?", default=str(DEFAULT))
    lab.add_argument("jupyter_args", nargs=argparse.REMAINDER, help="passed on to jupyter lab (after --)")
    a = p.parse_args(argv)
    workspace = Path(a.workspace).expanduser().resolve()
    if a.command == "start":
        exercises = Path(a.exercises) if a.language == "en" else Path(a.exercises) / a.language
        done = start(workspace, exercises, refresh=tuple(a.refresh))
        for what, said in (("copied", "copied"), ("refreshed", "fresh copy (yours kept beside it)"),
                           ("kept", "already there, left as it is")):
            if done[what]:
                print(f"{said}: {', '.join(done[what])}")
        print(f"Your workspace: {workspace}; open it in JupyterLab: python -m bertgrader.student lab"
              + ("" if workspace == DEFAULT.expanduser().resolve() else f" {workspace}"))
        return 0
    if not (workspace / ".jupyter").is_dir():
        p.error(f"{workspace} is not a workspace yet: run python -m bertgrader.student start first")
    args = [x for x in a.jupyter_args if x != "--"]
    jupyter = Path(sys.executable).parent / "jupyter"
    return subprocess.call([str(jupyter) if jupyter.exists() else "jupyter", "lab", *args], cwd=workspace,
                           env=lab_environment(workspace))


if __name__ == "__main__":
    sys.exit(main())
