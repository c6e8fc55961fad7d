"""The instructor's course folder and nbgrader's exchange, with the permissions nbgrader documents."""
from __future__ import annotations

import os
import pwd
import shutil
from pathlib import Path

COURSE_ID = "bert-course"  # nbgrader_config.py's CourseDirectory.course_id
# What the instructor's copy of the course holds: the configuration, the sources (solutions, hidden tests) and the
# released notebooks. Grading runs from this copy, as its owner; nobody else can open it.
COURSE_FILES = ["nbgrader_config.py", "solutions", "exercises", "locale"]
# The translations: each language's released notebooks (exercises/<lang>/<a>/) and the catalogue its hidden tests'
# messages are read from when a notebook in that language is graded (locale/<lang>/LC_MESSAGES/exercises/<a>.po).
TRANSLATED = ("exercises/{lang}/{a}", "locale/{lang}/LC_MESSAGES/exercises/{a}.po")
# What students must not read in the checkout whose environment they use: the solutions and hidden tests, the
# history that holds them, and student data an instructor may have graded there before.
PRIVATE_IN_CHECKOUT = ["solutions", ".git", "gradebook.db", "submitted", "autograded", "feedback", "grades.csv"]


def _chown_tree(path: Path, uid: int, gid: int) -> None:
    os.chown(path, uid, gid)
    for parent, dirs, files in os.walk(path):
        for n in dirs + files:
            os.chown(os.path.join(parent, n), uid, gid, follow_symlinks=False)


def make_course(repo: Path, instructor: str, assignments: list[str] | None = None) -> Path:
    """~instructor/bert-course: a private copy of the course (``assignments`` only, when given); returns it."""
    entry = pwd.getpwnam(instructor)
    root = Path(entry.pw_dir) / COURSE_ID
    root.mkdir(mode=0o700)
    shutil.copy2(repo / "nbgrader_config.py", root / "nbgrader_config.py")
    names = assignments or sorted(p.name for p in (repo / "solutions").iterdir() if (p / f"{p.name}.py").is_file())
    languages = sorted(p.name for p in (repo / "locale").iterdir() if p.is_dir()) if (repo / "locale").is_dir() else []
    paths = [f"{folder}/{a}" for folder in ("solutions", "exercises") for a in names]
    paths += [pattern.format(lang=lang, a=a) for lang in languages for a in names for pattern in TRANSLATED]
    for rel in paths:
        source, target = repo / rel, root / rel
        if source.is_dir():
            shutil.copytree(source, target, ignore=shutil.ignore_patterns("__pycache__", ".ipynb_checkpoints"))
        elif source.is_file():
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target)
    _chown_tree(root, entry.pw_uid, entry.pw_gid)
    return root


def make_exchange(exchange: Path, instructor: str) -> Path:
    """nbgrader's exchange: its root writable by all (mode 0777, as nbgrader's release sets and checks it), and the
    course's folder made now, owned by the instructor, so no student can create it first. nbgrader makes inbound/
    (0733: anyone may hand in, nobody but the instructor may list), outbound/ and feedback/ inside it."""
    exchange.mkdir(parents=True, exist_ok=True)
    exchange.chmod(0o777)
    course = exchange / COURSE_ID
    course.mkdir(mode=0o755)
    entry = pwd.getpwnam(instructor)
    os.chown(course, entry.pw_uid, entry.pw_gid)
    return course


def protect_checkout(repo: Path) -> list[Path]:
    """Make what students must not read in the checkout (their kernels run from its .venv) readable by its owner
    only; returns the paths changed."""
    changed = []
    for name in PRIVATE_IN_CHECKOUT:
        p = repo / name
        if p.exists() and p.stat().st_mode & 0o077:
            p.chmod(p.stat().st_mode & 0o700)
            changed.append(p)
    return changed
