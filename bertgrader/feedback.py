"""Feedback pages that need no network: formulas typeset by a MathJax copied into the page itself.

nbgrader's feedback template loads MathJax 2 from a CDN (nbconvert's ``mathjax()`` macro, called without a
URL), so offline a student sees raw ``$W^O$``. ``OfflineHTMLExporter`` (``GenerateFeedback.exporter_class``
in nbgrader_config.py) removes that script and, on a page whose markdown holds a formula, puts in MathJax 3
(SVG output: its fonts are inside the one script) read from the installed package the book uses
(sphinx-mathjax-offline; nothing third-party is committed). The page stays one file, which is what
``nbgrader release_feedback`` hands back. TeX's ``\\href``, ``\\class``, ``\\style`` (the html package),
``\\require`` and autoloading are off: a student's own markdown cannot make a link or load a script through a
formula. A page that would still load a script from another host is refused, not written.
"""
from __future__ import annotations

import copy
import functools
import os
import re
from importlib import metadata
from pathlib import Path

from nbconvert.exporters import HTMLExporter
from nbconvert.preprocessors import Preprocessor

from bertgrader import i18n
from bertgrader.i18n import N_, tr
from bertgrader.sanitize import clean_page

MATHJAX_PACKAGE = "sphinx-mathjax-offline"
MATHJAX_FILE = "sphinx-mathjax-offline/static/mathjax/tex-svg.js"

# nbconvert's macro (templates/base/mathjax.html.j2), from its first comment to its last.
_CDN_MATHJAX = re.compile(r"<!-- Load mathjax -->.*?<!-- End of mathjax configuration -->", re.S)
_REMOTE_SCRIPT = re.compile(r"<script[^>]*\bsrc\s*=\s*[\"']?(?:https?:)?//", re.I)
_MATH = re.compile(r"\$|\\\(|\\\[")

MATHJAX_CONFIG = """window.MathJax = {
  tex: {inlineMath: [['$', '$'], ['\\\\(', '\\\\)']], processEscapes: true,
        packages: {'[-]': ['autoload', 'require', 'html']}},
  svg: {fontCache: 'global'},
  options: {enableMenu: false}
};"""


class MathJaxUnavailable(RuntimeError):
    """The package MathJax is copied from is not installed."""


@functools.cache
def mathjax_script() -> str:
    """MathJax 3's tex-svg.js from the installed package, safe to put inside a <script> element."""
    try:
        path = metadata.distribution(MATHJAX_PACKAGE).locate_file(MATHJAX_FILE)
        text = path.read_text(encoding="utf-8")
    except (metadata.PackageNotFoundError, OSError) as e:
        raise MathJaxUnavailable(f"feedback pages typeset formulas with MathJax from the package {MATHJAX_PACKAGE} "
                                 f"(a course dependency), which is not installed here: {e}") from None
    return text.replace("</script", "<\\/script")


_CODE = re.compile(r"^(```|~~~).*?^\1|`+[^`]*`+", re.M | re.S)  # fenced blocks and code spans: no formula there


def has_math(nb) -> bool:
    """Whether a markdown cell holds a formula (a `$` in code, as in "`$x$` works", is none)."""
    return any(cell.cell_type == "markdown" and _MATH.search(_CODE.sub("", cell.source)) for cell in nb.cells)


def offline_mathjax(html: str, nb) -> str:
    """``html`` without the CDN MathJax; with MathJax inside it if ``nb``'s markdown holds a formula."""
    local = (f"<script>{MATHJAX_CONFIG}</script>\n<script>{mathjax_script()}</script>" if has_math(nb) else "")
    html = _CDN_MATHJAX.sub(lambda _: local, html, count=1)
    if _REMOTE_SCRIPT.search(html):
        raise RuntimeError("this feedback page would load a script from another host (nbconvert's or nbgrader's "
                           "template changed?): refusing to write it")
    return html


# ----------------------------------------------------------------------------------------------- layout
TEMPLATES = Path(__file__).parent / "templates"  # bert_feedback: nbgrader's feedback page, verdict first
_SAID_AS_IS = {"CheckFailed", "NotGraded", "DeadKernelError"}  # the grader's own words: no exception name
VERDICT_CAP = 4000  # characters of a verdict shown (the grader's messages are far shorter)


def nbgrader_templates() -> str:
    import nbgrader

    return str(Path(nbgrader.__file__).parent / "server_extensions" / "formgrader" / "templates")


def is_test_cell(cell) -> bool:
    meta = cell.get("metadata", {}).get("nbgrader", {})
    return cell.get("cell_type") == "code" and bool(meta.get("grade")) and not meta.get("solution")


def verdict(cell) -> tuple[bool, str]:
    """(passed, what the grader said) of a graded test cell of an autograded notebook: nbgrader scores a
    test cell zero when it holds an error output, so the first error is what failed."""
    errors = [o for o in cell.get("outputs", []) if o.get("output_type") == "error"]
    if not errors:
        said = "".join(str(o.get("text", "")) for o in cell.get("outputs", []) if o.get("output_type") == "stream")
        return True, (said.strip() or tr("Passed."))[:VERDICT_CAP]
    e = errors[0]
    name, message = str(e.get("ename", "")), str(e.get("evalue", "")).strip()
    said = message if name in _SAID_AS_IS else f"{name}: {message}"
    return False, said if len(said) <= VERDICT_CAP else said[:VERDICT_CAP] + " ..."


def is_written_cell(cell) -> bool:
    """A written answer: a markdown answer cell with points, graded by hand in Formgrader."""
    meta = cell.get("metadata", {}).get("nbgrader", {})
    return cell.get("cell_type") == "markdown" and bool(meta.get("grade")) and bool(meta.get("solution"))


def written_state(grade: dict | None) -> str:
    """What a written answer's grade says: "graded" (a manual score), "blank" (the box left as released:
    nbgrader scores it 0 itself) or "awaiting" (answered, no score yet)."""
    if grade and grade.get("manual_score") is not None:
        return "graded"
    if grade and grade.get("auto_score") is not None:
        return "blank"
    return "awaiting"


def hand_grades(resources) -> tuple[dict, dict]:
    """({grade id: {"auto_score", "manual_score", "extra_credit", "needs_manual_grade"}}, {cell id: comment})
    of the notebook a feedback page is made for, from nbgrader's gradebook (what Formgrader stored)."""
    nbg = (resources or {}).get("nbgrader") or {}
    if not all(nbg.get(k) for k in ("db_url", "assignment", "notebook", "student")):
        return {}, {}
    from nbgrader.api import Gradebook, MissingEntry

    with Gradebook(nbg["db_url"]) as gb:
        try:
            sub = gb.find_submission_notebook(nbg["notebook"], nbg["assignment"], nbg["student"])
        except MissingEntry:
            return {}, {}
        grades = {g.name: {"auto_score": g.auto_score, "manual_score": g.manual_score,
                           "extra_credit": g.extra_credit, "needs_manual_grade": bool(g.needs_manual_grade)}
                  for g in sub.grades}
        comments = {c.name: c.comment for c in sub.comments if (c.comment or "").strip()}
    return grades, comments


def annotate(nb, known: list, grades: dict | None = None, comments: dict | None = None) -> None:
    """Put each graded test cell's verdict and the named mistakes its failure shows (``known``: the
    assignment's bertgrader.mistakes.Mistake list) in ``cell.metadata.bertgrader.part``, which the
    bert_feedback template shows first; with the gradebook's ``grades`` and ``comments`` (``hand_grades``),
    what the instructor did by hand: a part's score adjusted (its manual score and extra credit) with the
    comment on its answer cell, and each written answer's state (``written_state``), score and comment."""
    from bertgrader.mistakes import failures, groups, identify

    grades, comments = grades or {}, comments or {}
    shown = groups(identify(known, failures(nb))) if known else []  # the mistakes shown, grouped (mistakes.groups)
    answer = None  # the answer cell a test cell tests: the last one before it
    answer_cells = {}  # grade id: answer cell, whose comment moves to the first part testing it (shown once)
    for cell in nb.cells:
        cell.get("metadata", {}).pop("bertgrader", None)  # a submission's own says nothing here
        meta = cell.get("metadata", {}).get("nbgrader", {})
        gid = meta.get("grade_id")
        if is_written_cell(cell):
            g = grades.get(gid) or {}
            cell.metadata["bertgrader"] = {"written": {
                "state": written_state(g), "points": meta.get("points"), "comment": comments.get(gid, ""),
                "score": g.get("manual_score") if g.get("manual_score") is not None else g.get("auto_score"),
                "extra_credit": g.get("extra_credit") or 0}}
            continue
        if cell.get("cell_type") == "code" and meta.get("solution"):
            answer = gid
            answer_cells[gid] = cell
        if not is_test_cell(cell):
            continue
        passed, said = verdict(cell)
        # each a group of mistakes that lose the same parts alike: one, or several the messages cannot tell apart
        mistakes = [[{"name": m.name, "title": m.name.replace("_", " "), "why": m.why} for m in alike]
                    for alike in shown if gid in alike[0].messages] if not passed else []
        g = grades.get(gid) or {}
        adjusted = None
        if g.get("manual_score") is not None or g.get("extra_credit"):
            adjusted = {"auto": g.get("auto_score"), "manual": g.get("manual_score"),
                        "extra_credit": g.get("extra_credit") or 0}
        comment = ""
        if answer in answer_cells and comments.get(answer):
            # beside the verdict, and not again in nbgrader's footer of the answer: GetGrades puts the comment
            # there after this (the exporter's preprocessors run later), so the template drops it there
            comment = comments[answer]
            answer_cells.pop(answer).metadata["bertgrader"] = {"comment_at_part": True}
        cell.metadata.setdefault("bertgrader", {})["part"] = {
            "passed": passed, "verdict": said, "mistakes": mistakes, "adjusted": adjusted, "comment": comment}


# The words nbgrader's own feedback template (which bert_feedback extends) writes, each with the markup around it,
# so only its labels match: a student's text reaches the page escaped, and cannot hold these tags.
_NBGRADER_LABELS = [('<span class="nbgrader-label">Student\'s answer</span>', '<span class="nbgrader-label">{}</span>',
                     N_("Student's answer")),
                    ('<a href="#top">(Top)</a>', '<a href="#top">{}</a>', N_("(Top)")),
                    ('">Test cell</a> (Score: ', '">{}</a> ({} ', N_("Test cell"), N_("Score:")),
                    ('">Written response</a> (Score: ', '">{}</a> ({} ', N_("Written response"), N_("Score:")),
                    ('">Written response</a> (', '">{}</a> (', N_("Written response")),
                    ('">Comment</a>', '">{}</a>', N_("Comment")),
                    ('<li class="late-penalty">Late submission penalty (Score: ', '<li class="late-penalty">{} ({} ',
                     N_("Late submission penalty"), N_("Score:"))]
_HEADING_SCORE = re.compile(r"(<h4>[^<]*?) \(Score: ")  # the page's heading: "<notebook> (Score: 7.0 / 10.0)"


def nbgrader_labels(html: str) -> str:
    """nbgrader's own labels on a feedback page, in the language spoken (the heading's score, the contents list,
    "Student's answer", "(Top)"); unchanged in English."""
    if i18n.current() == i18n.ENGLISH:
        return html
    for english, form, *words in _NBGRADER_LABELS:
        html = html.replace(english, form.format(*(tr(w) for w in words)))
    return _HEADING_SCORE.sub(lambda m: f"{m.group(1)} ({tr('Score:')} ", html, count=1)


def offline_formgrader(c) -> None:
    """Formgrader's pages like the feedback page (nbgrader_config.py calls this with its configuration ``c``):
    Formgrader renders each submission with a plain ``HTMLExporter(config=...)`` and nbgrader's formgrade
    template, which loads MathJax from a CDN and shows a test's source above its one-line verdict. With this
    folder first, it renders templates/formgrade instead, which extends nbgrader's: MathJax inlined from
    the installed package, each graded part verdict first and its test folded, no prompt on graded cells.
    Formgrader reads the configuration after its own settings, so these win; generate_feedback keeps its
    own template (this exporter's) and adds its own template paths."""
    c.HTMLExporter.extra_template_basedirs = [str(TEMPLATES), nbgrader_templates()]
    c.HTMLExporter.extra_template_paths = [nbgrader_templates(), mathjax_dir()]
    # each written answer's rubric, for the grader (GraderRubric; after SafePage, which bertgrader.sanitize puts first)
    steps = list(c.HTMLExporter.preprocessors) if "preprocessors" in c.HTMLExporter else []
    if RUBRIC_STEP not in steps:
        c.HTMLExporter.preprocessors = [*steps, RUBRIC_STEP]


RUBRIC_STEP = "bertgrader.feedback.GraderRubric"
_PLAIN_NAME = re.compile(r"[A-Za-z0-9_.-]{1,100}")


class GraderRubric(Preprocessor):
    """Formgrader's page of a submission: each written answer (a markdown answer cell with points, graded by
    hand) gets its rubric, the solution region of the same cell in the course's source notebook
    (``<root>/<source_directory>/<assignment>/<notebook>.ipynb``: the rubric and a full answer, which the
    release replaced by the student's box), in ``cell.metadata.bertgrader.rubric``; templates/formgrade shows
    it above the student's answer. Only Formgrader's page gets it (its resources name the submission); a
    feedback page or ``jupyter nbconvert`` of an autograded notebook never does, and whatever a notebook
    says there itself is dropped."""

    def preprocess(self, nb, resources):
        for cell in nb.cells:
            meta = cell.get("metadata")
            if isinstance(meta, dict) and isinstance(meta.get("bertgrader"), dict):
                meta["bertgrader"].pop("rubric", None)
        resources = resources or {}
        if "nbgrader" in resources or not {"submission_id", "assignment_id", "notebook_id"} <= set(resources):
            return nb, resources
        assignment, notebook = str(resources["assignment_id"]), str(resources["notebook_id"])
        if not (_PLAIN_NAME.fullmatch(assignment) and _PLAIN_NAME.fullmatch(notebook)):
            return nb, resources
        rubrics = self.rubrics(assignment, notebook)
        for cell in nb.cells:
            gid = cell.get("metadata", {}).get("nbgrader", {}).get("grade_id")
            if is_written_cell(cell) and rubrics.get(gid):
                cell.metadata.setdefault("bertgrader", {})["rubric"] = rubrics[gid]
        return nb, resources

    def rubrics(self, assignment: str, notebook: str) -> dict[str, str]:
        """{grade id: rubric} of the written answers of the source notebook ({} if it cannot be read)."""
        import nbformat

        from bertgrader.assignment import rubric

        cd = self.config.get("CourseDirectory", {})
        root = Path(cd.get("root") or os.getcwd())
        path = root / str(cd.get("source_directory") or "source") / assignment / f"{notebook}.ipynb"
        try:
            source = nbformat.read(str(path), as_version=4)
        except (OSError, ValueError) as e:
            self.log.warning("no rubric for %s's written answers: cannot read %s (%s)", assignment, path, e)
            return {}
        return {c.metadata["nbgrader"]["grade_id"]: rubric(c) for c in source.cells if is_written_cell(c)}


def mathjax_dir() -> str:
    """The folder of the installed MathJax (a template path: a page includes tex-svg.js from it)."""
    try:
        return str(metadata.distribution(MATHJAX_PACKAGE).locate_file(MATHJAX_FILE).parent)
    except metadata.PackageNotFoundError as e:
        raise MathJaxUnavailable(f"Formgrader's pages typeset formulas with MathJax from {MATHJAX_PACKAGE}, "
                                 f"which is not installed here: {e}") from None


class OfflineHTMLExporter(HTMLExporter):
    """nbconvert's HTML exporter whose pages load nothing from the network (see the module docstring),
    and, for nbgrader's feedback page, the bert_feedback layout: each graded part opens with its verdict."""

    def __init__(self, *args, **kw):
        super().__init__(*args, **kw)
        if self.template_name == "feedback":  # what nbgrader's generate_feedback asks for
            self.extra_template_basedirs = [str(TEMPLATES), *self.extra_template_basedirs]
            self.extra_template_paths = [*self.extra_template_paths, nbgrader_templates()]
            self.template_name = "bert_feedback"
            self.template_paths = self._template_paths()  # a default computed once, from the old name
        self._known: dict[tuple, list] = {}

    def _course_root(self) -> Path:
        root = self.config.get("CourseDirectory", {}).get("root")
        return Path(root) if root else Path(os.getcwd())

    def _mistakes(self, resources, language: str = i18n.ENGLISH) -> list:
        """The assignment's named mistakes whose signatures (in the notebook's language) are current ([] when
        none are known)."""
        assignment = ((resources or {}).get("nbgrader") or {}).get("assignment")
        if not assignment:
            return []
        if (assignment, language) not in self._known:
            from bertgrader.mistakes import load

            try:
                self._known[(assignment, language)] = load(self._course_root(), assignment, language)
            except Exception as e:  # a page is still made, without names
                self.log.warning("feedback for %s names no mistakes: %s", assignment, e)
                self._known[(assignment, language)] = []
        return self._known[(assignment, language)]

    def _create_environment(self):
        env = super()._create_environment()
        env.globals["tr"] = tr  # the page's own labels, in the language of the notebook (from_notebook_node)
        return env

    def from_notebook_node(self, nb, resources=None, **kw):
        # The notebook's language (untrusted: it chooses the labels' language, nothing else).
        with i18n.speaking(i18n.language_of(nb)):
            return self._from_notebook_node(nb, resources, **kw)

    def _from_notebook_node(self, nb, resources=None, **kw):
        if self.template_name == "bert_feedback":
            nb = copy.deepcopy(nb)
            try:
                grades, comments = hand_grades(resources)
            except Exception as e:  # a page is still made, without what was graded by hand
                self.log.warning("feedback for %s shows no manual grades: %s", (resources or {}).get("nbgrader"), e)
                grades, comments = {}, {}
            annotate(nb, self._mistakes(resources, i18n.language_of(nb)), grades, comments)
        output, resources = super().from_notebook_node(nb, resources, **kw)
        if self.template_name == "bert_feedback":
            output = nbgrader_labels(output)
        # the page's body through an allow-list, after every template and filter ran (bertgrader.sanitize)
        return clean_page(offline_mathjax(output, nb)), resources
