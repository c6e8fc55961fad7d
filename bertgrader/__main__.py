"""``python -m bertgrader <assignment|all> --workers N``: grade a whole class at once.

The command lives in bertgrader.classes.run (``--help`` lists every option); this module is its
entry point, so the instructor's command is short. ``python -m bertgrader report <assignment|all>``
shows what the class got wrong (bertgrader.report).
"""
import sys

from bertgrader.classes import skip_unused_imports

if __name__ == "__main__":
    skip_unused_imports()  # before the command's modules import nbformat
    if sys.argv[1:2] == ["report"]:
        from bertgrader.report import main as report

        sys.exit(report(sys.argv[2:]))
    from bertgrader.classes.run import main

    sys.exit(main())
