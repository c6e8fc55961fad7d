"""How the book is built, read from the Makefile, the CI workflow and _config.yml: CI builds it exactly as
`make book` does; execution is cached, time-limited and allows no error; every released exercise is offered
for download; the glossary's numbers are glued. The built pages themselves are opened and checked in one
module, tests/test_pages.py.
"""
from __future__ import annotations

import re
import shlex
from pathlib import Path

import yaml


ROOT = Path(__file__).resolve().parents[1]


# --- the build command, as the Makefile and the workflow state it -------------------------------------------

def _jupyter_book_args(command: str) -> list[str] | None:
    """['build', '.', '-W', ...] from a shell line that runs jupyter-book, else None."""
    words = shlex.split(command.replace("$(VENV)", ".venv"))
    for i, w in enumerate(words):
        if w == "jupyter-book" or w.endswith("/jupyter-book"):
            return words[i + 1:]
    return None


def make_book_args() -> list[str]:
    """The jupyter-book arguments of the Makefile's `book` recipe."""
    lines = (ROOT / "Makefile").read_text().splitlines()
    start = next(i for i, line in enumerate(lines) if re.match(r"^book\s*:", line))
    for line in lines[start + 1:]:
        if not line.startswith("\t"):
            break
        args = _jupyter_book_args(line.strip())
        if args is not None:
            return args
    raise AssertionError("the Makefile's book recipe does not run jupyter-book")


def test_workflow_runs_the_make_book_command():
    """CI builds the book exactly as `make book` does, then publishes _build/html to GitHub Pages."""
    wf = yaml.safe_load((ROOT / ".github" / "workflows" / "book.yml").read_text())
    triggers = wf.get("on", wf.get(True))  # YAML 1.1 reads a bare `on` as True
    assert "main" in triggers["push"]["branches"]
    runs = [step["run"] for job in wf["jobs"].values() for step in job.get("steps", []) if "run" in step]
    commands = [line.strip() for run in runs for line in run.splitlines() if line.strip()]
    built = [_jupyter_book_args(c) for c in commands]
    built = [a for a in built if a is not None]
    uses_make = any(re.fullmatch(r"make\s+book", c) for c in commands)
    assert uses_make or built, "the workflow never builds the book"
    for args in built:
        assert args == make_book_args(), f"workflow runs jupyter-book {args}, make book runs {make_book_args()}"
    uploads = [step for job in wf["jobs"].values() for step in job.get("steps", [])
               if "upload-pages-artifact" in step.get("uses", "")]
    assert uploads and uploads[0]["with"]["path"] == "_build/html"
    assert any("deploy-pages" in step.get("uses", "") for job in wf["jobs"].values()
               for step in job.get("steps", []))


def test_config_is_strict():
    """The build executes chapters with the cache, a finite timeout, and no global allow_errors."""
    cfg = yaml.safe_load((ROOT / "_config.yml").read_text())
    ex = cfg["execute"]
    assert ex["execute_notebooks"] == "cache"
    assert 0 < ex["timeout"] <= 600
    assert ex.get("allow_errors", False) is False
    assert make_book_args()[:2] == ["build", "."] and {"-W", "-n", "--keep-going"} <= set(make_book_args())


def test_every_released_exercise_is_offered_for_download():
    """exercises.md links each student notebook under exercises/ with a download role."""
    page = (ROOT / "exercises.md").read_text(encoding="utf-8")
    for nb in sorted((ROOT / "exercises").glob("*/*.ipynb")):
        rel = nb.relative_to(ROOT).as_posix()
        assert re.search(r"\{download\}`[^`]*<" + re.escape(rel) + ">`", page), f"{rel} has no download link"


def test_glossary_numbers():
    """The glossary is a notebook whose numbers are glued: every glue role it uses is set by its code cell."""
    text = (ROOT / "glossary.md").read_text(encoding="utf-8")
    assert text.startswith("---\njupytext:"), "the glossary must be a MyST notebook so that it is executed"
    used = set(re.findall(r"\{glue:[a-z]+\}`([A-Za-z0-9_]+)", text))
    glued = set(re.findall(r"glue\(\"([A-Za-z0-9_]+)\"", text))
    assert used and used <= glued, sorted(used - glued)
