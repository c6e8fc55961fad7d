"""A submission is data: plain files in plain folders, or it is refused before anything of it is read.

nbgrader copies a submission's files with ``shutil.copy`` and reads its notebooks by path, so a symbolic
link would be followed with the instructor's rights (a link to the hidden tests or the gradebook, copied
into the folder the kernel sees; a notebook that is a link to the solution), a FIFO would block the copy
and a link to /dev/zero would never end. ``check_submission`` walks the folder without following links
and refuses anything that is not a regular file or a folder; ``install()`` (nbgrader_config.py calls it)
runs it at the start of every student's conversion, so the refusal is that student's failure, with the
reason in the log, and the run goes on with the next student.
"""
from __future__ import annotations

import os
import stat
from pathlib import Path


class SubmissionRefused(ValueError):
    """A submission holds something that is not a plain file or folder; the message names it."""


def _kind(mode: int) -> str:
    for test, name in ((stat.S_ISLNK, "a symbolic link"), (stat.S_ISFIFO, "a FIFO"), (stat.S_ISSOCK, "a socket"),
                       (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device")):
        if test(mode):
            return name
    return "not a regular file"


def check_submission(folder: Path, inside: Path | None = None) -> None:
    """Raise SubmissionRefused if ``folder`` (or a folder between ``inside`` and it) is a link, or if anything
    under it is not a regular file or a folder."""
    folder = Path(folder)
    if inside is not None:
        part = Path(inside)
        for name in folder.relative_to(inside).parts:
            part = part / name
            mode = os.lstat(part).st_mode
            if not stat.S_ISDIR(mode):
                raise SubmissionRefused(f"{part} is {_kind(mode)}: a submission is plain files in plain folders")
    for dirpath, dirnames, filenames in os.walk(folder, followlinks=False):
        for name in dirnames + filenames:
            path = os.path.join(dirpath, name)
            mode = os.lstat(path).st_mode
            if not (stat.S_ISREG(mode) or stat.S_ISDIR(mode)):
                raise SubmissionRefused(f"{path} is {_kind(mode)}: a submission is plain files in plain folders "
                                        "(not graded; submit the notebook itself)")


def install() -> None:
    """Check each submission at the start of nbgrader's conversion of it (BaseConverter.init_assignment)."""
    from nbgrader.converters.base import BaseConverter

    original = BaseConverter.init_assignment
    if getattr(original, "_checks_submissions", False):
        return

    def init_assignment(self, assignment_id: str, student_id: str) -> None:
        source = Path(self._format_source(assignment_id, student_id))
        root = Path(self.coursedir.format_path(self._input_directory, ".", "."))
        check_submission(source, inside=root if root in source.parents else None)
        original(self, assignment_id, student_id)

    init_assignment._checks_submissions = True
    init_assignment.__wrapped__ = original  # inspect.unwrap finds nbgrader's own
    BaseConverter.init_assignment = init_assignment
