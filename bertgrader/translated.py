"""A translated notebook in nbgrader's hands: its student version, and its read-only cells after autograde.

nbgrader knows one notebook per assignment, the English one it stored in the gradebook when it generated the
student version. A Chinese notebook (bertgrader.i18n) has the same cells, grade ids and points, so it is graded
into the same gradebook; two steps of nbgrader's would otherwise lose its language:

- ``release``: the student version of the translated source notebook, made by the preprocessors that
  ``nbgrader generate_assignment`` runs (but SaveCells: the gradebook keeps the English), with the stubs a
  student replaces in the notebook's language; every cell's checksum is its own, so ``nbgrader validate`` on a
  student's Chinese notebook sees the read-only cells unchanged.
- ``RestoreTranslatedCells``: nbgrader's OverwriteCells compares each read-only (locked) cell's checksum with the
  one in the gradebook and, where it differs, puts the gradebook's source back: the English. For a notebook that
  says it is in another language, this preprocessor (after OverwriteCells) puts back the instructor's copy of that
  language instead, ``solutions/<a>/<language>/<a>.ipynb``: never the student's text, so an edited read-only cell
  is restored, in the student's language. The checksum nbgrader set stays; the scores are the hidden tests'.
"""
from __future__ import annotations

import ast
import copy
import shutil
from pathlib import Path

import nbformat
from nbgrader.preprocessors import NbGraderPreprocessor
from traitlets import Unicode

from bertgrader.i18n import ENGLISH, language_of, tr


def text_free(code: str) -> str:
    """``code``'s syntax tree with every string's text blanked (comments are not in it): what two editions of a code
    cell share. An f-string keeps its fields (in any order: another language may place them otherwise). Code that
    does not parse is returned as it is (compared whole)."""
    try:
        tree = ast.parse(code)
    except SyntaxError:
        return code
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            node.value = ""
        elif isinstance(node, ast.JoinedStr):
            node.values = sorted((v for v in node.values if not isinstance(v, ast.Constant)), key=ast.dump)
    return ast.dump(tree)


def stubs(language: str) -> tuple[str, str]:
    """(code stub, written-answer stub) of a student version in ``language``: nbgrader's, translated."""
    return ("# " + tr("YOUR CODE HERE", language) + "\nraise NotImplementedError()", tr("YOUR ANSWER HERE", language))


def student_version(source_nb, language: str):
    """The student version of a source notebook, as ``nbgrader generate_assignment`` makes it (without storing
    anything in the gradebook), its stubs in ``language``."""
    from nbgrader.preprocessors import (CheckCellMetadata, ClearHiddenTests, ClearMarkScheme, ClearOutput,
                                        ClearSolutions, ComputeChecksums, LockCells)

    code_stub, text_stub = stubs(language)
    nb = copy.deepcopy(source_nb)
    resources: dict = {}
    steps = [LockCells(), ClearSolutions(code_stub={"python": code_stub}, text_stub=text_stub), ClearOutput(),
             CheckCellMetadata(), ComputeChecksums(), ClearHiddenTests(), ClearMarkScheme(), ComputeChecksums(),
             CheckCellMetadata()]
    for step in steps:
        nb, resources = step.preprocess(nb, resources)
    return nb


def release_folder(root: Path, name: str, language: str) -> Path:
    """exercises/<language>/<a>/: what a student of that language gets (the notebook under its own name);
    exercises/<a>/ in English."""
    return Path(root) / "exercises" / name if language == ENGLISH else Path(root) / "exercises" / language / name


def render_release(root: Path, name: str, language: str) -> str:
    from bertgrader.assignment import Assignment

    source = nbformat.read(str(Assignment.at(root, name).translated_notebook(language)), as_version=4)
    return nbformat.writes(student_version(source, language)) + "\n"


def write_release(root: Path, name: str, language: str) -> Path:
    """exercises/<language>/<a>/<a>.ipynb from the translated source notebook, and the other files of the
    English release (inputs.py) beside it."""
    english = release_folder(root, name, ENGLISH)
    folder = release_folder(root, name, language)
    folder.mkdir(parents=True, exist_ok=True)
    for path in sorted(english.iterdir()) if english.is_dir() else []:
        if path.is_file() and path.suffix != ".ipynb":
            shutil.copyfile(path, folder / path.name)
    target = folder / f"{name}.ipynb"
    target.write_text(render_release(root, name, language), encoding="utf-8")
    return target


class RestoreTranslatedCells(NbGraderPreprocessor):
    """After OverwriteCells in autograde's sanitising steps: a notebook in another language gets its read-only
    cells from the instructor's copy in that language (see the module's docstring)."""

    source_root = Unicode("", help="The folder of the assignments' source folders").tag(config=True)

    def preprocess(self, nb, resources):
        language = language_of(nb)
        if language == ENGLISH:
            return nb, resources
        meta = resources.get("nbgrader", {})
        assignment, notebook = str(meta.get("assignment")), str(meta.get("notebook"))
        path = Path(self.source_root) / assignment / language / f"{notebook}.ipynb"
        if not path.is_file():  # no translation of this notebook: nbgrader's English cells stay
            self.log.warning("no %s copy of %s (%s): its read-only cells are shown in English", language, notebook, path)
            return nb, resources
        copies = {c.metadata["nbgrader"]["grade_id"]: c.source for c in nbformat.read(str(path), as_version=4).cells
                  if c.get("metadata", {}).get("nbgrader", {}).get("locked") and "grade_id" in c.metadata["nbgrader"]}
        for cell in nb.cells:
            meta = cell.get("metadata", {}).get("nbgrader", {})
            if meta.get("locked") and meta.get("grade_id") in copies:
                cell.source = copies[meta["grade_id"]]
        return nb, resources
