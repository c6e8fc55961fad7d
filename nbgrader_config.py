"""nbgrader configuration for the BERT course. Run nbgrader from this folder (the course root).

solutions/<assignment>/<assignment>.ipynb   source: solutions and hidden tests (instructors)
exercises/<assignment>/<assignment>.ipynb   release: what students get (nbgrader generate_assignment)
submitted/<student>/<assignment>/           collected submissions; autograded/, feedback/ alongside

Settings only; what cannot be said as a setting is bertgrader.config.configure, called at the end: each
submission checked before nbgrader reads it, autograde refusing to run when the sandbox cannot (unless
--TrustedExecute.sandbox=none) and registering an assignment the gradebook lacks, validate's long lines.
"""
import os

from nbconvert.preprocessors import ClearMetadataPreprocessor, CSSHTMLHeaderPreprocessor
from nbgrader.preprocessors import (AssignLatePenalties, CheckCellMetadata, ClearOutput, DeduplicateIds, GetGrades,
                                    IgnorePattern, LimitOutput, OverwriteCells, OverwriteKernelspec, SaveAutoGrades)

from bertgrader.config import configure
from bertgrader.preprocessors import CleanSubmission, LatePenaltyAgain, SafeFeedback, TrustedExecute
from bertgrader.translated import RestoreTranslatedCells

c = get_config()  # noqa: F821 (provided by nbgrader when it loads this file)

# The course root is wherever this file is, so a copy of the course (a test's temporary folder) works as is.
c.CourseDirectory.root = os.path.dirname(os.path.abspath(__file__))
c.CourseDirectory.course_id = "bert-course"
c.CourseDirectory.source_directory = "solutions"
c.CourseDirectory.release_directory = "exercises"
# Instructor-only files beside each source notebook: never released, never copied next to a submission.
# <assignment>.py the notebook's source with its solutions (bertgrader/assignment.py builds the .ipynb from it),
# hidden_tests.py the hidden tests (run by the grader, outside the student's kernel), mistakes.py the named
# wrong answers the tests submit; PROPERTIES.md lists what each task states and the check that covers it.
# The one other file there, inputs.py (what the tests build their inputs with), is released with the notebook,
# which imports it, and autograde puts the instructor's copy beside each submission.
c.CourseDirectory.ignore = [".ipynb_checkpoints", "*.pyc", "__pycache__", "feedback", ".*", "[0-9][0-9]_*.py",
                            "hidden_tests.py", "mistakes.py", "PROPERTIES.md",
                            "zh_CN"]  # solutions/<a>/zh_CN/: the Chinese source notebook (bertgrader.i18n release)

# The slowest graded cell takes about 3 s on a 2-core machine running three other jobs
# (benchmarks/bench_autograde.py); 20 s leaves room for a slower one, and an infinite loop costs 20 s.
c.Execute.timeout = 20
c.Execute.interrupt_on_timeout = True
# The kernel is thrown away after grading: killing it saves the 2-3 s a polite shutdown waits per notebook.
c.Execute.shutdown_kernel = "immediate"

# Trusted grading (bertgrader): every student kernel runs in a bubblewrap sandbox, and graded cells
# are scored by the hidden tests in solutions/<a>/hidden_tests.py, run here in the grader's process
# against the student's functions, never in the student's kernel. If the sandbox cannot run, autograde
# stops and says why; `--TrustedExecute.sandbox=none` grades without it (trusted code only).
c.TrustedExecute.sandbox = "bwrap"
c.TrustedExecute.source_root = os.path.join(c.CourseDirectory.root, c.CourseDirectory.source_directory)
c.CleanSubmission.source_root = c.TrustedExecute.source_root
# A submission's nbgrader metadata is the release's (CleanSubmission first): a cell the student added with
# nbgrader metadata of its own would otherwise stop the whole run, every student after it ungraded.
c.RestoreTranslatedCells.source_root = c.TrustedExecute.source_root
c.Autograde.sanitize_preprocessors = [CleanSubmission, ClearOutput, DeduplicateIds, OverwriteKernelspec,
                                      OverwriteCells, RestoreTranslatedCells, CheckCellMetadata]
c.Autograde.autograde_preprocessors = [TrustedExecute, IgnorePattern, ClearMetadataPreprocessor, LimitOutput,
                                       SaveAutoGrades, AssignLatePenalties, CheckCellMetadata]
# Feedback: inert outputs only, markdown sanitised, so a student cannot put live script into a page.
# nbgrader's AssignLatePenalties again before GetGrades (LatePenaltyAgain): autograde sets a late penalty from the
# score then, and a score given by hand later (a written answer graded in Formgrader) would escape it.
c.GenerateFeedback.preprocessors = [SafeFeedback, LatePenaltyAgain, GetGrades, CSSHTMLHeaderPreprocessor]
c.HTMLExporter.sanitize_html = True
# ... and nothing from the network: nbgrader's template loads MathJax from a CDN; this exporter puts an
# installed MathJax inside the page instead, on pages with a formula (bertgrader/feedback.py).
c.GenerateFeedback.exporter_class = "bertgrader.feedback.OfflineHTMLExporter"

# Kernels outside the sandbox (`nbgrader validate`, `--TrustedExecute.sandbox=none`) talk to nbgrader over ipc
# sockets in a private folder, not TCP: ipykernel warns on every validate that TCP "without encryption" can be
# eavesdropped (the sandboxed grader's kernels use ipc already, through their own manager).
c.Execute.kernel_manager_class = "bertgrader.kernel_manager.LocalIpcKernelManager"

# nbgrader scores a test cell zero if it wrote anything to stderr. Each notebook's setup cell already sends
# Python warnings and log records to stdout; this catches what bypasses the warnings module (a C++ or a
# subprocess warning written straight to file descriptor 2), so a warning never costs a correct answer.
c.IgnorePattern.enabled = True
c.IgnorePattern.pattern = r"(?i)warn"

configure(c)
