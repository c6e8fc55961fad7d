"""The chapters as notebooks to run live: ``python -m course.live`` (``make live``).

A chapter is a MyST notebook (``chapters/*.md``): the book turns its roles and directives into numbers, links
and code, but JupyterLab shows them raw (``{glue:text}`bb_A```, ``:pyobject:`` where the code should be), and
opening the ``.md`` itself makes JupyterLab save every run back into the chapter. This module writes, for each
chapter, a plain notebook under ``_build/live/`` in which the Markdown reads as the page does:

- ``{glue:text}`key:fmt``` and ``{glue:md}``, ``{glue}``, ``{glue:math}``: the value the last ``make book`` computed
  (from Jupyter Book's ``_build/jupyter_execute/<page>.glue.json``; a key the build did not record is an error);
- ``{term}``, ``{ref}``: their text; ``{doc}``: a link to the other chapter's live notebook; ``{download}``: a link
  to the file;
- ``literalinclude`` with ``:pyobject:``: the code itself, read from the file now;
- ``dropdown``: an HTML ``<details>`` box; ``(label)=`` targets: removed;
- the cell that shows the page's static demos (``static_demos(``): removed: the live ipywidgets demo beside it
  (hidden on the page) is the one that runs here.

Code cells are kept as they are. The notebooks are written to ``_build/live/chapters/`` (the chapters' own
depth below the course, so paths relative to a chapter still hold); running them changes no file of the
repository.
"""
from __future__ import annotations

import argparse
import ast
import json
import re
import sys
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BUILD = ROOT / "_build"
LIVE = BUILD / "live"
EXECUTED = BUILD / "jupyter_execute"

# A directive's opening fence: ```{name} argument, or :::{name} argument (MyST's colon fence).
_FENCE = re.compile(r"^(?P<fence>`{3,}|:{3,})\{(?P<name>[\w:-]+)\}\s*(?P<arg>.*)$")
_ROLE = re.compile(r"\{(?P<role>[\w:-]+)\}`(?P<body>[^`]*)`")
_TARGET = re.compile(r"^\([\w-]+\)=\s*$")
_LABELLED = re.compile(r"^(?P<text>.*?)\s*<(?P<target>[^<>]+)>$", flags=re.S)


class LiveError(ValueError):
    """A chapter this module cannot turn into a live notebook: the message names the chapter and the problem."""


# ------------------------------------------------------------------------------------------------- glue
def glue_values(page: str) -> dict[str, dict]:
    """``{key: mime bundle}`` the last build recorded for ``page`` (e.g. ``"chapters/07_mlm"``)."""
    path = EXECUTED / f"{page}.glue.json"
    if not path.is_file():
        raise LiveError(f"{page}: {path} is missing: run `make book` first (the live notebooks show the numbers "
                        "that build computed)")
    source = ROOT / f"{page}.md"
    if source.is_file() and source.stat().st_mtime > path.stat().st_mtime:
        raise LiveError(f"{page}: the chapter changed after the last build: run `make book` first")
    return {key: output["data"] for key, output in json.loads(path.read_text()).items()}


def _plain(bundle: dict) -> object:
    """The Python value behind a glued ``text/plain`` repr where it is a literal (a number, a string), else the text."""
    text = bundle.get("text/plain", "")
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError):
        return text


def _bundle(glue: dict, key: str, page: str) -> dict:
    """The mime bundle the build glued under ``key``; a key it did not record is an error naming it."""
    if key not in glue:
        raise LiveError(f"{page}: glue key {key!r} is not in the last build (run `make book`)")
    return glue[key]


def glue_text(glue: dict, spec: str, page: str) -> str:
    """``{glue:text}`key``` or ``key:format`` as Jupyter Book shows it."""
    key, _, fmt = spec.partition(":")
    value = _plain(_bundle(glue, key, page))
    if fmt:
        try:
            return format(float(value), fmt)
        except (TypeError, ValueError):
            raise LiveError(f"{page}: glue key {key!r} = {value!r} cannot take the format {fmt!r}") from None
    return str(value)


def _glue_block(glue: dict, key: str, page: str, kind: str) -> str:
    bundle = _bundle(glue, key, page)
    if kind == "glue:math":
        latex = bundle.get("text/latex", str(_plain(bundle))).strip().strip("$")
        return f"$$\n{latex}\n$$"
    if "text/markdown" in bundle:
        return bundle["text/markdown"]
    if "text/html" in bundle:
        return bundle["text/html"]
    return f"```\n{_plain(bundle)}\n```"


# ---------------------------------------------------------------------------------------------- roles
def _role(match: re.Match, glue: dict, page: str) -> str:
    role, body = match["role"], match["body"]
    labelled = _LABELLED.match(body)
    text, target = (labelled["text"], labelled["target"]) if labelled else (body, body)
    if role in ("glue:text", "glue", "glue:"):
        return glue_text(glue, body, page)
    if role == "glue:md":
        bundle = _bundle(glue, body.partition(":")[0], page)
        return bundle.get("text/markdown", str(_plain(bundle)))
    if role in ("term", "ref"):
        return text
    if role == "doc":
        return f"[{text}]({Path(target).name}.ipynb)"
    if role == "download":
        return f"[{text}]({target})"
    if role == "math":
        return f"${body}$"
    raise LiveError(f"{page}: the role {{{role}}} has no live form (course/live.py)")


def convert_roles(text: str, glue: dict, page: str) -> str:
    return _ROLE.sub(lambda m: _role(m, glue, page), text)


# ----------------------------------------------------------------------------------------- directives
def python_object(path: Path, dotted: str) -> str:
    """The source of ``dotted`` (a function, a class, ``Class.method``) in ``path``, as ``:pyobject:`` shows it."""
    tree = ast.parse(path.read_text())
    lines = path.read_text().splitlines()
    body = tree.body
    node = None
    for part in dotted.split("."):
        node = next((n for n in body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
                     and n.name == part), None)
        if node is None:
            raise LiveError(f"{path.relative_to(ROOT)} has no {dotted}")
        body = node.body
    return textwrap.dedent("\n".join(lines[node.lineno - 1:node.end_lineno]))


def _options(lines: list[str]) -> tuple[dict[str, str], list[str]]:
    """A directive body's leading ``:key: value`` lines, and the rest."""
    options, i = {}, 0
    while i < len(lines) and re.match(r"^:[\w-]+:", lines[i]):
        key, _, value = lines[i][1:].partition(":")
        options[key] = value.strip()
        i += 1
    return options, lines[i:]


def _directive(name: str, arg: str, body: list[str], glue: dict, page: str, where: Path) -> str:
    options, content = _options(body)
    if name == "literalinclude":
        path = (where / arg).resolve()
        if not path.is_file():
            raise LiveError(f"{page}: literalinclude {arg} does not exist")
        code = python_object(path, options["pyobject"]) if "pyobject" in options else path.read_text()
        return f"```{options.get('language', '')}\n{code.rstrip()}\n```"
    if name in ("glue", "glue:math", "glue:md", "glue:figure"):
        return _glue_block(glue, arg.strip(), page, name)
    if name == "dropdown":
        inner = convert_markdown("\n".join(content), glue, page, where)
        return f"<details><summary>{convert_roles(arg, glue, page)}</summary>\n\n{inner}\n\n</details>"
    if name in ("note", "tip", "warning", "important", "admonition", "seealso"):
        inner = convert_markdown("\n".join(content), glue, page, where)
        title = arg or name.capitalize()
        return "\n".join(["> **" + convert_roles(title, glue, page) + "**", ">"] +
                         ["> " + line if line else ">" for line in inner.splitlines()])
    if name == "math":
        return "$$\n" + "\n".join(content).strip() + "\n$$"
    raise LiveError(f"{page}: the directive {{{name}}} has no live form (course/live.py)")


def convert_markdown(text: str, glue: dict, page: str, where: Path) -> str:
    """A chapter's Markdown cell as plain Jupyter Markdown (roles, directives and targets converted)."""
    lines, out, i = text.splitlines(), [], 0
    while i < len(lines):
        opening = _FENCE.match(lines[i])
        if opening:
            fence = opening["fence"]
            end = next((j for j in range(i + 1, len(lines))
                        if lines[j].strip() and set(lines[j].strip()) == {fence[0]} and len(lines[j].strip()) >= len(fence)),
                       None)
            if end is None:
                raise LiveError(f"{page}: the {{{opening['name']}}} directive opened at {lines[i]!r} is never closed")
            out.append(_directive(opening["name"], opening["arg"], lines[i + 1:end], glue, page, where))
            i = end + 1
            continue
        if _TARGET.match(lines[i]):
            i += 1
            continue
        out.append(convert_roles(lines[i], glue, page))
        i += 1
    return "\n".join(out)


# ------------------------------------------------------------------------------------------- notebooks
def is_static_demo(source: str) -> bool:
    """The cell that shows the page's pre-computed demo (the live notebook runs the ipywidgets one instead)."""
    return "static_demos(" in source


def live_notebook(chapter: Path):
    """The live notebook of ``chapter`` (a path to a chapter's ``.md``)."""
    import jupytext
    import nbformat

    chapter = Path(chapter).resolve()
    page = chapter.relative_to(ROOT).with_suffix("").as_posix()
    glue = glue_values(page)
    nb = jupytext.read(chapter)
    cells = []
    for cell in nb.cells:
        if cell.cell_type == "markdown":
            source = convert_markdown(cell.source, glue, page, chapter.parent)
            if source.strip():
                cells.append(nbformat.v4.new_markdown_cell(source))
        elif cell.cell_type == "code" and not is_static_demo(cell.source):
            cells.append(nbformat.v4.new_code_cell(cell.source))
    live = nbformat.v4.new_notebook(cells=cells)
    live.metadata["kernelspec"] = nb.metadata.get("kernelspec", {"name": "python3", "display_name": "Python 3",
                                                                 "language": "python"})
    return live


def chapters() -> list[Path]:
    return sorted((ROOT / "chapters").glob("*.md"))


def write(chapter_paths: list[Path], out: Path = LIVE) -> list[Path]:
    """Write each chapter's live notebook under ``out`` (the chapter's own path below the course); all chapters
    are converted before any is written, so a failure leaves the previous notebooks as they were."""
    import nbformat

    notebooks = [(path, live_notebook(path)) for path in chapter_paths]
    written = []
    for path, nb in notebooks:
        target = out / Path(path).resolve().relative_to(ROOT).with_suffix(".ipynb")
        target.parent.mkdir(parents=True, exist_ok=True)
        nbformat.write(nb, target)
        written.append(target)
    return written


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(prog="python -m course.live", description=__doc__.split("\n\n")[0])
    parser.add_argument("chapters", nargs="*", type=Path,
                        help="chapters/*.md to convert (default: every chapter); `make book` must have built them")
    args = parser.parse_args(argv)
    paths = args.chapters or chapters()
    missing = [str(p) for p in paths if not Path(p).is_file()]
    if missing:
        parser.error(f"no such chapter: {', '.join(missing)}")
    try:
        written = write(paths)
    except LiveError as e:
        sys.exit(f"course.live: {e}")
    for target in written:
        print(target.relative_to(ROOT))
    print(f"open one with: .venv/bin/jupyter lab {written[0].relative_to(ROOT)}")


if __name__ == "__main__":
    main()
