"""nbgrader configuration for the BERT course. Run nbgrader from this folder (the course root).

solutions/<assignment>/<assignment>.ipynb   source: solutions and hidden tests (instructors)
exercises/<assignment>/<assignment>.ipynb   release: what students get (nbgrader generate_assignment)
submitted/<student>/<assignment>/           collected submissions; autograded/, feedback/ alongside
"""
import os

c = get_config()  # noqa: F821 (provided by nbgrader when it loads this file)

# The course root is wherever this file is, so a copy of the course (a test's temporary folder) works as is.
c.CourseDirectory.root = os.path.dirname(os.path.abspath(__file__))
c.CourseDirectory.course_id = "bert-course"
c.CourseDirectory.source_directory = "solutions"
c.CourseDirectory.release_directory = "exercises"
# mistakes.py holds the named wrong answers the tests submit; it stays with the instructor.
c.CourseDirectory.ignore = [".ipynb_checkpoints", "*.pyc", "__pycache__", "feedback", ".*", "mistakes.py"]

# The slowest graded cell takes about 3 s on a 2-core machine running three other jobs
# (benchmarks/bench_autograde.py); 20 s leaves room for a slower one, and an infinite loop costs 20 s.
c.Execute.timeout = 20
c.Execute.interrupt_on_timeout = True
# The kernel is thrown away after grading: killing it saves the 2-3 s a polite shutdown waits per notebook.
c.Execute.shutdown_kernel = "immediate"

# nbgrader scores a test cell zero if it wrote anything to stderr. Each notebook's setup cell already sends
# Python warnings and log records to stdout; this catches what bypasses the warnings module (a C++ or a
# subprocess warning written straight to file descriptor 2), so a warning never costs a correct answer.
c.IgnorePattern.enabled = True
c.IgnorePattern.pattern = r"(?i)warn"
