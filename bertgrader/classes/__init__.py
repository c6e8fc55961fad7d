"""The class runner: ``python -m bertgrader <assignment|all> --workers N`` grades a whole class in parallel."""
import sys


def skip_unused_imports() -> None:
    """Called first in the command's processes (the coordinator, each worker). jsonschema, which nbformat and
    nbgrader import, imports rfc3987_syntax when it is installed (the course's environment has it, through
    jupyter-events), and that module builds its grammar at import: the slowest import of a grading process,
    for the "iri" formats that no schema nbformat or nbgrader validates with uses. jsonschema skips the
    module, and those two formats, when it cannot be imported."""
    sys.modules.setdefault("rfc3987_syntax", None)  # None: `import rfc3987_syntax` raises ImportError
