"""nbgrader's exchange as the course server uses it: hand-ins no other student can read, and each student's
notebook in their own language.

PrivateSubmit: nbgrader's own submit leaves a hand-in readable by everyone (files 0644) in a folder everyone may
write (0777), hidden only by its name's timestamp and random suffix. The exchange's inbound/ is the instructor's,
mode 0733 with the set-group-id bit, so what a student creates in it belongs to the instructor's group, as long as
no mode is copied onto it (shutil.copytree copies the source folder's mode, which clears that bit before nbgrader
writes timestamp.txt): this submit copies the files without their modes, then makes the hand-in readable by its
author and that group only (files 0640, folders 0750, the hand-in's own folder 0770 so the instructor can delete
it, as nbgrader intends).

ReleaseWithTranslations and FetchInOwnLanguage (issue 31 §3): the instructor releases an assignment once; the
release holds the English notebook as nbgrader releases it and, in ``.translations/<lang>/``, the same notebook in
each language of the course (exercises/<lang>/<a>/, the same cells, ids and grade ids). A student's fetch gives
them the notebook of their language (``c.FetchInOwnLanguage.language``, which start writes), under the English
one's name and nothing else: one notebook to work in, hand in and be graded into the one gradebook, its feedback
in its language. The language only chooses the text: the hidden tests are the same.

Students get PrivateSubmit and FetchInOwnLanguage, the instructor ReleaseWithTranslations, through their
nbgrader_config.py (accounts.py).
"""
import os
import shutil
import stat
import tempfile

import nbformat
from nbgrader.exchange.default.fetch_assignment import ExchangeFetchAssignment
from nbgrader.exchange.default.release_assignment import ExchangeReleaseAssignment
from nbgrader.exchange.default.submit import ExchangeSubmit
from traitlets import Enum

from bertgrader.i18n import ENGLISH, LANGUAGES
from bertgrader.translated import release_folder, text_free

TRANSLATIONS = ".translations"  # in a released assignment: <lang>/<notebook>.ipynb


class PrivateSubmit(ExchangeSubmit):
    def do_copy(self, src, dest, log=None):
        if os.path.dirname(os.path.abspath(dest)) != os.path.abspath(self.inbound_path):
            return super().do_copy(src, dest, log)  # the student's own cache
        with tempfile.TemporaryDirectory() as staged:  # nbgrader's copy: its size limit, ignore and include rules
            staged = os.path.join(staged, "hand-in")
            super().do_copy(src, staged, log)
            for parent, _, files in os.walk(staged):  # then into inbound/, no mode copied
                here = os.path.join(dest, os.path.relpath(parent, staged))
                os.makedirs(here, exist_ok=True)
                for f in files:
                    shutil.copyfile(os.path.join(parent, f), os.path.join(here, f))

    def copy_files(self):
        super().copy_files()
        dest = os.path.join(self.inbound_path, self.assignment_filename)
        if not os.stat(self.inbound_path).st_mode & stat.S_ISGID:
            self.log.warning("%s does not pass its group on (no set-group-id bit): the instructor may not be able "
                             "to read this hand-in", self.inbound_path)
        self.set_perms(dest, fileperms=0o640, dirperms=0o750)
        os.chmod(dest, 0o770)


def graded_cells(cells) -> list[tuple]:
    """What the gradebook knows of a notebook's cells: each graded or answer cell's grade id, type and points, in
    order."""
    out = []
    for cell in cells:
        meta = cell.get("metadata", {}).get("nbgrader", {})
        if meta.get("grade") or meta.get("solution") or meta.get("locked"):
            out.append((meta.get("grade_id"), cell.cell_type, meta.get("points")))
    return out


def translation_problem(english, translated) -> str:
    """Why ``translated`` cannot stand for the released ``english`` notebook ("" when it can): missing, other
    graded cells than the release's (the instructor changed the assignment; the translation was not rebuilt), or a
    code cell that is other code, not only other words."""
    if not os.path.isfile(translated):
        return f"{translated} is missing"
    en, other = (nbformat.read(str(p), as_version=4).cells for p in (english, translated))
    ours, theirs = graded_cells(en), graded_cells(other)
    if ours != theirs:
        differ = sorted({str(c[0]) for c in set(ours) ^ set(theirs)}) or ["their order"]
        return (f"{translated} has other graded cells than {english} ({', '.join(differ)}: the assignment changed "
                "since it was translated): rebuild it (make notebooks, make exercises) and copy it into the course")
    # the same code, other words: a translation never hands out what the English release holds back (a solution,
    # a hidden test), however it was made
    if len(en) != len(other):
        return f"{translated} has {len(other)} cells, {english} {len(en)}: rebuild it (make exercises)"
    for i, (e, t) in enumerate(zip(en, other), start=1):
        if e.cell_type == "code" and text_free(e.source) != text_free(t.source):
            return (f"{translated}'s cell {i} is other code than the release's, not only other words (a solution or "
                    "hidden test left in?): rebuild it (make exercises)")
    return ""


class ReleaseWithTranslations(ExchangeReleaseAssignment):
    """nbgrader's release, with each language's notebook of the assignment in ``.translations/<lang>/``. A
    translation whose graded cells are not the English release's is left out, with a warning naming it (its
    students then fetch the English notebook): two notebooks graded into one gradebook must be the same one."""

    def do_copy(self, src, dest, log=None):
        super().do_copy(src, dest, log)
        name = self.coursedir.assignment_id
        for language in LANGUAGES:
            folder = release_folder(self.coursedir.root, name, language)
            for english in sorted(p for p in os.listdir(dest) if p.endswith(".ipynb")):
                problem = translation_problem(os.path.join(dest, english), os.path.join(folder, english))
                if problem:
                    self.log.warning("Not released in %s: %s", language, problem)
                    continue
                os.makedirs(os.path.join(dest, TRANSLATIONS, language), exist_ok=True)
                shutil.copyfile(os.path.join(folder, english), os.path.join(dest, TRANSLATIONS, language, english))
                self.log.info("Released in %s too: %s", language, english)


class FetchInOwnLanguage(ExchangeFetchAssignment):
    """nbgrader's fetch, each notebook in the student's language where the release has it (English otherwise, with
    a warning), under its one name; the other languages' notebooks are not fetched."""

    language = Enum((ENGLISH, *LANGUAGES), default_value=ENGLISH,
                    help="the language of the notebooks this student fetches").tag(config=True)

    def do_copy(self, src, dest):
        with tempfile.TemporaryDirectory() as staged:
            staged = os.path.join(staged, os.path.basename(src))
            shutil.copytree(src, staged, ignore=shutil.ignore_patterns(TRANSLATIONS))
            if self.language != ENGLISH:
                chosen = os.path.join(src, TRANSLATIONS, self.language)
                for name in sorted(p for p in os.listdir(staged) if p.endswith(".ipynb")):
                    if os.path.isfile(os.path.join(chosen, name)):
                        shutil.copyfile(os.path.join(chosen, name), os.path.join(staged, name))
                    else:
                        self.log.warning("%s is not released in %s: fetched in English", name, self.language)
            super().do_copy(staged, dest)
