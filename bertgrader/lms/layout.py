"""What each LMS's files are called: the names in a submissions download, and the names its feedback upload reads.

Canvas ("Download Submissions" on an assignment): one flat zip, a file per uploaded file, named
``<name>[_LATE]_<user id>_<attachment id>_<file name as uploaded>``, where <name> is the student's sortable
name squashed into lower-case letters ("smithbob") and the late marker is there when Canvas counts the
submission late; a resubmitted file's name gets ``-1``, ``-2`` before its extension. Canvas's "Re-Upload
Submissions" reads a zip of files named the same way: it takes the first two pieces of a name that are all
digits as the user id and the attachment id (canvas-lms, ``Assignment#infer_comment_context_from_filename``),
and attaches the file as a comment on that student's submission.

Moodle ("Download all submissions" of an assignment): a folder per student and submission plugin,
``<Full name>_<participant id>_assignsubmission_file_/<file>`` (``..._file/`` without the last underscore
from Moodle 4.1; in Moodle before 3.1, or with "Download submissions in folders" off, one flat file
``<Full name>_<participant id>_assignsubmission_file_<file>``); Moodle writes the full name with its
underscores made spaces, and the participant id is the assignment's own number for the student (the
grading worksheet's Identifier, "Participant <id>"). "Upload multiple feedback files in a zip" reads the
flat form of those names (mod/assign/feedback/file/importziplib.php splits a name on its first four
underscores: name, participant id, plugin type, plugin name, then the file's own name).
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import PurePosixPath

CANVAS_NAME = re.compile(r"^(?P<who>[^_]+?)(?P<late>_late)?_(?P<user>\d+)_(?P<attachment>\d+)_(?P<file>.+)$",
                         re.IGNORECASE)
MOODLE_FOLDER = re.compile(r"^(?P<who>[^_/]+)_(?P<participant>\d+)_(?P<plugin>assignsubmission_[a-z]+)_?"
                           r"/(?P<file>.+)$")
MOODLE_FLAT = re.compile(r"^(?P<who>[^_/]+)_(?P<participant>\d+)_(?P<plugin>assignsubmission_[a-z]+)_"
                         r"(?P<file>[^/]+)$")
LMS = ("canvas", "moodle")


@dataclass
class Upload:
    """One file of one student in a download."""
    student: str  # the id under submitted/: Canvas's user id, Moodle's participant id
    file: str  # the file's own name, as the student uploaded it
    member: str  # the member's name in the zip
    person: dict = field(default_factory=dict)  # what the LMS says about the student (kept in the roster)


def parse_canvas(name: str) -> Upload | None:
    m = CANVAS_NAME.match(PurePosixPath(name).name)
    if not m:
        return None
    return Upload(m["user"], m["file"], name, {"name": m["who"], "canvas_user_id": m["user"],
                                               "attachment_id": m["attachment"], "canvas_late": bool(m["late"])})


def parse_moodle(name: str) -> Upload | None:
    m = MOODLE_FOLDER.match(name) or MOODLE_FLAT.match(name)
    if not m or m["plugin"] != "assignsubmission_file":  # onlinetext and others hold no uploaded file
        return None
    return Upload(m["participant"], PurePosixPath(m["file"]).name, name,
                  {"name": m["who"], "participant_id": m["participant"]})


PARSE = {"canvas": parse_canvas, "moodle": parse_moodle}
EXPECTED = {
    "canvas": "<name>[_LATE]_<user id>_<attachment id>_<file>, e.g. smithbob_340934_208490284_08_masking.ipynb",
    "moodle": "<Full name>_<participant id>_assignsubmission_file_/<file>, e.g. "
              "Bob Smith_123456_assignsubmission_file_/08_masking.ipynb",
}


def canvas_feedback_name(person: dict, assignment: str) -> str:
    """A feedback page's name in the zip for Canvas's Re-Upload Submissions (no late marker: Canvas reads
    only the digits)."""
    return f"{person['name']}_{person['canvas_user_id']}_{person['attachment_id']}_{assignment}_feedback.html"


def moodle_feedback_name(person: dict, assignment: str) -> str:
    """A feedback page's name in the zip for Moodle's feedback-files upload (the flat form every version reads)."""
    return f"{person['name']}_{person['participant_id']}_assignsubmission_file_{assignment}_feedback.html"
