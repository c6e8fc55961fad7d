"""What the course ships to students, without solutions/: ``make release`` (``python -m course.release``).

The release is the built book (``_build/html``) and the student notebooks (``exercises/``), copied into
``_build/release/book/`` and ``_build/release/exercises/``: a folder to publish as it is (a web server, GitHub
Pages, a repository of its own for the class). Nothing under ``solutions/`` is copied; then every file of
the release is scanned for the instructor's secrets, and the command fails, naming each file and secret,
if one is there:

- each solution region of each assignment's source notebook (the code between ``### BEGIN SOLUTION`` and
  ``### END SOLUTION``, which nbgrader's release removes);
- each function of ``solutions/<a>/hidden_tests.py`` (its body: the checks and the hidden inputs);
- each named mistake of ``solutions/<a>/mistakes.py`` (its code).

A secret is compared line by line: each line without its comment and its whitespace (so syntax
highlighting's markup, HTML escapes, indentation and a notebook's JSON quoting do not hide it). A line is
the secret's own when it is 16 characters or more so compared and is not public: not in the assignment's
source notebook outside its solution regions (the signatures, the visible tests, which students get by
design) and not in bertlib or bertgrader's kernel side (the library students install and the book shows).
A file holds the secret when it holds at least half of those lines (one of one, two of three, ...), and
either two of them or one of 40 characters or more: one short line alone (``return scores.softmax(dim=-1)``,
the whole of the mistake "padding not masked", is in chapter 6's demo) is ordinary code, not a leak.
"""
from __future__ import annotations

import argparse
import ast
import html
import json
import re
import shutil
import sys
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
MIN_CHARS = 16  # shorter lines ("return x", "else:") are in every program
LONE_CHARS = 40  # one line found alone counts only when it is this long
SOLUTION = re.compile(r"### BEGIN SOLUTION\n(.*?)### END SOLUTION", re.S)
TAG = re.compile(r"<[^>]*>")
PUBLIC_CODE = ("bertlib", "bertgrader/kernel")  # installed by every student; the book shows bertlib's code
BINARY = {".png", ".jpg", ".jpeg", ".gif", ".ico", ".woff", ".woff2", ".ttf", ".eot", ".pdf", ".zip", ".pickle",
          ".doctree", ".db", ".svgz"}


def norm(line: str) -> str:
    """A line as compared: up to its first '#', without whitespace (the same cut on both sides)."""
    return "".join(line.split("#", 1)[0].split())


@dataclass
class Secret:
    assignment: str
    kind: str  # "solution", "hidden test", "mistake"
    name: str  # the cell's grade id, the test function, the mistake
    lines: list[str]  # its own lines, normalised

    def __str__(self) -> str:
        return f"{self.assignment} {self.kind} {self.name}"


@dataclass
class Finding:
    path: Path
    secret: Secret
    found: int  # of len(secret.lines)


def _functions(source: str) -> list[tuple[str, str]]:
    """(name, body source) of each function in a module, at any depth."""
    tree, lines = ast.parse(source), source.splitlines()
    return [(node.name, "\n".join(lines[node.body[0].lineno - 1:node.end_lineno]))
            for node in ast.walk(tree) if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))]


def _public_lines(root: Path) -> set[str]:
    public = set()
    for folder in PUBLIC_CODE:
        for path in sorted((root / folder).rglob("*.py")):
            public.update(norm(line) for line in path.read_text(encoding="utf-8").splitlines())
    return public


def secrets(root: Path = ROOT) -> list[Secret]:
    """Every solution region, hidden test function and named mistake of the course at ``root``."""
    from bertgrader.assignment import Assignment, assignments

    library = _public_lines(root)
    found = []
    for a in assignments(root):
        folder = root / "solutions" / a
        nb = json.loads((folder / f"{a}.ipynb").read_text(encoding="utf-8"))
        pieces, public = [], set(library)
        for cell in nb["cells"]:
            src = "".join(cell["source"]) if isinstance(cell["source"], list) else cell["source"]
            gid = cell.get("metadata", {}).get("nbgrader", {}).get("grade_id", cell.get("id", "?"))
            for i, region in enumerate(SOLUTION.findall(src)):
                pieces.append(("solution", gid if i == 0 else f"{gid} (region {i + 1})", region))
            public.update(norm(line) for line in SOLUTION.sub("", src).splitlines())
        hidden = folder / "hidden_tests.py"
        if hidden.is_file():
            pieces += [("hidden test", name, body) for name, body in _functions(hidden.read_text(encoding="utf-8"))]
        if (folder / "mistakes.py").is_file():
            for name, m in Assignment.at(root, a).mistakes().items():
                pieces += [("mistake", f"{name} ({gid})", code) for gid, code in m["cells"].items()]
        for kind, name, text in pieces:
            own = [n for n in dict.fromkeys(norm(line) for line in text.splitlines())
                   if len(n) >= MIN_CHARS and n not in public]
            found.append(Secret(a, kind, name, own))  # no own line: public by design, nothing to look for
    return found


def file_lines(path: Path) -> set[str]:
    """A release file's lines, normalised: a notebook's cells and outputs, an HTML page's text (tags
    removed, entities decoded, so highlighted code reads as code), any other text file as it is."""
    if path.suffix.lower() in BINARY:
        return set()
    raw = path.read_bytes()
    text = raw.decode("utf-8", errors="replace")
    if path.suffix == ".ipynb":
        try:
            nb = json.loads(text)
            parts = []
            for cell in nb.get("cells", []):
                parts.append(_joined(cell.get("source", "")))
                for out in cell.get("outputs", []):
                    parts += [_joined(out.get("text", ""))] + [_joined(v) for v in out.get("data", {}).values()
                                                                if isinstance(v, (str, list))]
            text = "\n".join(parts)
        except (json.JSONDecodeError, AttributeError, TypeError):
            pass  # scanned as text
    elif path.suffix in (".html", ".htm", ".xml", ".svg"):
        text = html.unescape(TAG.sub("", text))
    lines = {norm(line) for line in text.splitlines()}
    if path.suffix in (".js", ".json"):  # a search index or a script holds page text in JSON strings: "\n"
        lines |= {norm(line) for line in text.replace("\\n", "\n").replace('\\"', '"').splitlines()}
    return lines


def _joined(value) -> str:
    return "".join(value) if isinstance(value, list) else str(value)


def scan(folder: Path, found_secrets: list[Secret]) -> list[Finding]:
    """Every (file, secret) where the file holds the secret (at least half of its own lines: the module's doc)."""
    findings = []
    for path in sorted(p for p in Path(folder).rglob("*") if p.is_file() and not p.is_symlink()):
        lines = file_lines(path)
        for s in found_secrets:
            if not s.lines:
                continue
            hits = [line for line in s.lines if line in lines]
            if hits and 2 * len(hits) >= len(s.lines) and (len(hits) >= 2 or len(hits[0]) >= LONE_CHARS):
                findings.append(Finding(path, s, len(hits)))
    return findings


def build(book: Path, exercises: Path, out: Path) -> None:
    """Copy the built book and the student notebooks into ``out`` (emptied first); links are not followed
    and checkpoints, caches and the build's bookkeeping are left out."""
    if not (book / "index.html").is_file():
        raise SystemExit(f"{book} holds no built book (no index.html): run `make book` first")
    if out.exists():
        shutil.rmtree(out)
    skip = shutil.ignore_patterns(".ipynb_checkpoints", "__pycache__", ".buildinfo", ".doctrees", "*.pyc")
    shutil.copytree(book, out / "book", ignore=skip, symlinks=True)
    shutil.copytree(exercises, out / "exercises", ignore=skip, symlinks=True)


def repository_link(config: Path) -> str | None:
    """The repository every page of the book links to (_config.yml's repository.url), or None."""
    import yaml

    data = yaml.safe_load(Path(config).read_text(encoding="utf-8")) or {}
    return ((data.get("repository") or {}).get("url") or "").strip() or None


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m course.release", description=__doc__.split("\n\n")[0])
    p.add_argument("--book", type=Path, default=ROOT / "_build" / "html", help="the built book (make book)")
    p.add_argument("--out", type=Path, default=ROOT / "_build" / "release", help="the release folder")
    p.add_argument("--check-only", action="store_true", help="scan --out as it is, copying nothing")
    p.add_argument("--config", type=Path, default=ROOT / "_config.yml", help="the book's configuration")
    args = p.parse_args(argv)
    if not args.check_only:
        build(args.book, ROOT / "exercises", args.out)
    found = secrets(ROOT)
    findings = scan(args.out, found)
    files = sum(1 for p in args.out.rglob("*") if p.is_file())
    for f in findings:
        print(f"LEAK: {f.path.relative_to(args.out)} holds {f.secret} ({f.found} of its {len(f.secret.lines)} "
              "own lines)", file=sys.stderr)
    if findings:
        print(f"{args.out}: NOT fit to publish: {len(findings)} secret(s) found (above)", file=sys.stderr)
        return 1
    link = repository_link(args.config)
    if link:
        print(f"WARNING: every page links to {link} (_config.yml's repository.url): make it a repository without "
              "solutions/ (the students' own, holding this release), or leave it empty", file=sys.stderr)
    empty = [s for s in found if not s.lines]
    print(f"{args.out}: {files} files, none holding any of {len(found) - len(empty)} secrets (solution regions, "
          "hidden test functions, named mistakes): fit to publish")
    if empty:
        print(f"{len(empty)} more have no line of their own (every line short or public, e.g. in bertlib): "
              + ", ".join(map(str, empty)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
