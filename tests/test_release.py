"""What the course ships to students holds no solution, hidden test or named mistake (course/release.py).

Without a built book: the student notebooks (exercises/) and the book's sources hold none of the
instructor's secrets, every download the book offers is a student notebook, and the scan finds a secret
however a page shows it (syntax-highlighted HTML, a notebook's JSON, a search index). With the book
`make book` built (marker book, make check): `make release`'s folder, built from it, holds none either, and
the book's downloads are byte for byte the student notebooks.
"""
from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest

from course import release

ROOT = Path(__file__).resolve().parents[1]
DOWNLOAD = re.compile(r"\{download\}`[^`<]*<([^>]+)>`")


@pytest.fixture(scope="module")
def secrets():
    return release.secrets(ROOT)


def test_every_assignment_has_secrets_of_each_kind(secrets):
    """The scan looks for something: each assignment's solution regions, hidden tests and mistakes, each with
    lines of its own (all but a few tiny helpers, named here so a change is seen)."""
    from bertgrader.assignment import assignments

    kinds = {(s.assignment, s.kind) for s in secrets if s.lines}
    for a in assignments(ROOT):
        assert {(a, "solution"), (a, "hidden test"), (a, "mistake")} <= kinds, a
    solutions = [s for s in secrets if s.kind == "solution"]
    assert solutions and all(s.lines for s in solutions)  # no solution is wholly public
    assert len([s for s in secrets if not s.lines]) <= 5, [str(s) for s in secrets if not s.lines]


def test_the_student_notebooks_and_the_book_sources_hold_no_secret(secrets):
    shipped = [ROOT / "exercises", ROOT / "chapters"]
    findings = [f for folder in shipped for f in release.scan(folder, secrets)]
    for page in ("intro.md", "exercises.md", "glossary.md"):
        lines = release.file_lines(ROOT / page)
        findings += [f"{page}: {s}" for s in secrets if s.lines and 2 * sum(x in lines for x in s.lines) >= len(s.lines)]
    assert not findings, [str(f) for f in findings]
    assert sorted(p.parent.name for p in (ROOT / "exercises").glob("*/*.ipynb"))  # something was scanned


def test_the_code_the_book_shows_holds_no_secret(secrets):
    """The demos' and projects' code (chapters show it) holds no secret; chapter 6's demo does hold the one line
    of the mistake 'padding not masked' (a plain softmax), which alone is not a leak."""
    assert not [str(f) for folder in ("course", "projects") for f in release.scan(ROOT / folder, secrets)]
    [lone] = [s for s in secrets if s.name == "padding_not_masked (softmax)"]
    demo = release.file_lines(ROOT / "course" / "demos" / "attention_masks.py")
    assert lone.lines == ["returnscores.softmax(dim=-1)"] and lone.lines[0] in demo


def test_every_download_the_book_offers_is_a_student_notebook():
    """Each chapter's {download} link (and the exercises page's table) points into exercises/, at a notebook
    that exists; the book's configuration keeps solutions/ out of the build."""
    targets = []
    for page in sorted((ROOT / "chapters").glob("*.md")) + [ROOT / "exercises.md"]:
        for target in DOWNLOAD.findall(page.read_text(encoding="utf-8")):
            path = (page.parent / target).resolve()
            targets.append(path)
            assert path.relative_to(ROOT).parts[0] == "exercises", (page.name, target)
            assert path.is_file(), (page.name, target)
    assert len(targets) >= 11
    config = (ROOT / "_config.yml").read_text()
    assert re.search(r"exclude_patterns:(\n  - .*)*\n  - solutions\n", config)


def test_the_book_links_to_no_repository_unless_told_and_the_release_warns_when_it_does(tmp_path, capsys):
    """Every page gets a repository button when _config.yml names a repository: this one holds solutions/, so
    the course leaves it empty, and make release warns when it is set."""
    assert release.repository_link(ROOT / "_config.yml") is None
    config = tmp_path / "_config.yml"
    config.write_text((ROOT / "_config.yml").read_text().replace('url: ""', 'url: "https://example.org/bert"'))
    assert release.repository_link(config) == "https://example.org/bert"
    rc = release.main(["--book", str(_fake_book(tmp_path / "html")), "--out", str(tmp_path / "r"), "--config", str(config)])
    assert rc == 0 and "WARNING: every page links to https://example.org/bert" in capsys.readouterr().err


def _highlighted(code: str) -> str:
    """Code as Sphinx puts it in a page: pygments' HTML, a span per token, entities escaped."""
    from pygments import highlight
    from pygments.formatters import HtmlFormatter
    from pygments.lexers import PythonLexer

    return highlight(code, PythonLexer(), HtmlFormatter())


def _pick(secrets, kind):
    return max((s for s in secrets if s.kind == kind and s.assignment == "08_masking"), key=lambda s: len(s.lines))


def _original(secret) -> str:
    """The secret's text as the instructor wrote it (from its file), found again by its own lines."""
    folder = ROOT / "solutions" / secret.assignment
    if secret.kind == "solution":
        nb = json.loads((folder / f"{secret.assignment}.ipynb").read_text())
        texts = [r for c in nb["cells"] for r in release.SOLUTION.findall("".join(c["source"]))]
    elif secret.kind == "hidden test":
        texts = [body for _, body in release._functions((folder / "hidden_tests.py").read_text())]
    else:
        from bertgrader.assignment import Assignment

        texts = [code for m in Assignment.at(ROOT, secret.assignment).mistakes().values() for code in m["cells"].values()]
    [text] = [t for t in texts if all(line in {release.norm(x) for x in t.splitlines()} for line in secret.lines)][:1]
    return text


@pytest.mark.parametrize("kind", ["solution", "hidden test", "mistake"])
def test_the_scan_finds_a_secret_however_a_page_shows_it(secrets, tmp_path, kind):
    secret = _pick(secrets, kind)
    text = _original(secret)
    folder = tmp_path / "release"
    folder.mkdir()
    (folder / "page.html").write_text(f"<html><body><p>Chapter</p>{_highlighted(text)}</body></html>")
    nb = {"cells": [{"cell_type": "code", "source": text.splitlines(keepends=True), "metadata": {}, "outputs": []}],
          "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    (folder / "notebook.ipynb").write_text(json.dumps(nb, indent=1))
    (folder / "searchindex.js").write_text("Search.setIndex(" + json.dumps({"docs": [text]}) + ")")
    own = list({release.norm(x): x for x in reversed(text.splitlines())
                if release.norm(x) in secret.lines}.values())[::-1]  # its own lines as written, each once
    half = -(-len(secret.lines) // 2)
    (folder / "half.txt").write_text("\n".join(own[:half]))  # a partial leak: half its own lines
    (folder / "less.txt").write_text("\n".join(own[:half - 1]))  # less than half: not counted
    assert half >= 2 or len(secret.lines[0]) >= release.LONE_CHARS
    (folder / "clean.html").write_text(_highlighted("x = torch.zeros(3)\nreturn x\n"))
    found = {f.path.name for f in release.scan(folder, secrets) if f.secret is secret}
    assert {"page.html", "notebook.ipynb", "searchindex.js"} <= found, (str(secret), found)
    assert len(secret.lines) >= 3  # the case is worth making: several lines, so "half" means something
    assert "half.txt" in found and "less.txt" not in found and "clean.html" not in found


def _fake_book(folder: Path) -> Path:
    (folder / "chapters").mkdir(parents=True)
    (folder / "index.html").write_text("<html><body>BERT, built from scratch</body></html>")
    (folder / "chapters" / "08_masking.html").write_text("<html><body><p>Masking</p></body></html>")
    return folder


def test_make_release_copies_the_book_and_the_notebooks_and_fails_on_a_leak(secrets, tmp_path, capsys):
    book, out = _fake_book(tmp_path / "html"), tmp_path / "release"
    assert release.main(["--book", str(book), "--out", str(out)]) == 0
    assert "fit to publish" in capsys.readouterr().out
    assert (out / "book" / "index.html").is_file()
    assert sorted(p.relative_to(out / "exercises") for p in (out / "exercises").rglob("*.ipynb")) == \
        sorted(p.relative_to(ROOT / "exercises") for p in (ROOT / "exercises").rglob("*.ipynb"))
    assert not any("solutions" in p.parts for p in out.rglob("*"))
    secret = _pick(secrets, "hidden test")
    (book / "chapters" / "08_masking.html").write_text(f"<html><body>{_highlighted(_original(secret))}</body></html>")
    assert release.main(["--book", str(book), "--out", str(out)]) == 1
    err = capsys.readouterr().err
    assert f"LEAK: book/chapters/08_masking.html holds {secret}" in err and "NOT fit to publish" in err


def test_a_missing_book_is_named(tmp_path):
    with pytest.raises(SystemExit, match="holds no built book .* run `make book` first"):
        release.main(["--book", str(tmp_path / "nothing"), "--out", str(tmp_path / "release")])


# ----------------------------------------------------------------------------------------------- built book
@pytest.fixture(scope="module")
def book_html() -> Path:
    given = os.environ.get("BOOK_BUILD_DIR")
    root = Path(given) if given else ROOT / "_build"
    html_dir = root / "html" if (root / "html").is_dir() else root
    if not (html_dir / "index.html").is_file():
        pytest.fail(f"{html_dir} holds no built book: run `make book` first (`make check` does)")
    return html_dir


@pytest.mark.book
def test_the_release_of_the_built_book_holds_no_secret(book_html, tmp_path, capsys):
    out = tmp_path / "release"
    rc = release.main(["--book", str(book_html), "--out", str(out)])
    printed = capsys.readouterr()
    assert rc == 0, printed.err[-4000:]
    print(printed.out)
    downloads = sorted((out / "book" / "_downloads").rglob("*.ipynb"))
    assert downloads, "the book offers no notebook for download"
    for path in downloads:
        a = path.stem
        assert path.read_bytes() == (ROOT / "exercises" / a / f"{a}.ipynb").read_bytes(), path
    assert not [p for p in out.rglob("*") if "solutions" in p.parts or p.name in ("hidden_tests.py", "mistakes.py")]
