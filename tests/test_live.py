"""course.live: the chapters as notebooks that read, in JupyterLab, as the page does."""
import hashlib
from pathlib import Path

import pytest

from course import live

ROOT = Path(__file__).resolve().parent.parent
GLUE = {"n": {"text/plain": "30522"}, "p": {"text/plain": "0.15"}, "word": {"text/plain": "'dog'"},
        "table": {"text/markdown": "| a |\n|---|\n| 1 |"}, "eq": {"text/latex": "$x^2$", "text/plain": "x"}}


def convert(text: str, glue=GLUE) -> str:
    return live.convert_markdown(text, glue, "chapters/test", ROOT / "chapters")


def test_roles_read_as_the_page_does():
    assert convert("V = {glue:text}`n`, rate {glue:text}`p:.0%`, word {glue:text}`word`") == "V = 30522, rate 15%, word dog"
    assert convert("a {term}`bidirectional <Bidirectional attention>` model, {term}`WordPiece`") == \
        "a bidirectional model, WordPiece"
    assert convert("see {doc}`chapter 8 <08_masking>` and {ref}`the tutorials <the-tutorials>`") == \
        "see [chapter 8](08_masking.ipynb) and the tutorials"
    assert convert("{download}`07_mlm.ipynb <../exercises/07_mlm/07_mlm.ipynb>`") == \
        "[07_mlm.ipynb](../exercises/07_mlm/07_mlm.ipynb)"
    assert convert("{glue:md}`table`") == "| a |\n|---|\n| 1 |"


def test_directives_become_markdown_and_code():
    code = convert("```{literalinclude} ../bertlib/heads.py\n:language: python\n:pyobject: mlm_loss\n```")
    assert code.startswith("```python\ndef mlm_loss(") and code.endswith("\n```")
    assert code.count("\ndef ") == 1, "only the one function"
    box = convert(":::{dropdown} Why {glue:text}`n`?\nBecause.\n\n```{glue:math} eq\n```\n:::")
    assert box == "<details><summary>Why 30522?</summary>\n\nBecause.\n\n$$\nx^2\n$$\n\n</details>"
    nested = convert("````{dropdown} Outer\n```{glue} table\n```\n````\n(a-label)=\nafter")
    assert nested == "<details><summary>Outer</summary>\n\n| a |\n|---|\n| 1 |\n\n</details>\nafter"


def test_what_it_cannot_show_is_named():
    with pytest.raises(live.LiveError, match="glue key 'missing'"):
        convert("{glue:text}`missing`")
    with pytest.raises(live.LiveError, match="role {unknownrole}"):
        convert("{unknownrole}`x`")
    with pytest.raises(live.LiveError, match="directive {mermaid}"):
        convert("```{mermaid}\ngraph\n```")
    with pytest.raises(live.LiveError, match="never closed"):
        convert(":::{dropdown} open\ntext")
    with pytest.raises(live.LiveError, match="cannot take the format"):
        convert("{glue:text}`word:.2f`")
    with pytest.raises(live.LiveError, match="has no NoSuchThing"):
        convert("```{literalinclude} ../bertlib/heads.py\n:pyobject: NoSuchThing\n```")


def test_the_command_names_a_missing_chapter(capsys):
    with pytest.raises(SystemExit):
        live.main(["chapters/99_nothing.md"])
    assert "no such chapter: chapters/99_nothing.md" in capsys.readouterr().err


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    """Every chapter's live notebook from the book `make book` built (book marker: make check)."""
    import os

    given = os.environ.get("BOOK_BUILD_DIR")
    build = Path(given) if given else ROOT / "_build"
    build = build.parent if build.name == "html" else build
    if not (build / "jupyter_execute").is_dir():
        pytest.fail(f"{build} holds no built book: run `make book` first")
    live.EXECUTED = build / "jupyter_execute"
    out = tmp_path_factory.mktemp("live")
    return out, live.write(live.chapters(), out)


@pytest.mark.book
def test_every_chapter_reads_without_markup_and_runs_its_live_demo(built):
    import nbformat

    out, written = built
    assert len(written) == len(live.chapters())
    for path in written:
        nb = nbformat.read(path, as_version=4)
        markdown = "\n".join(c.source for c in nb.cells if c.cell_type == "markdown")
        code = [c.source for c in nb.cells if c.cell_type == "code"]
        assert not live._ROLE.search(markdown), (path.name, live._ROLE.search(markdown)[0])
        assert "```{" not in markdown and ":::{" not in markdown and ":pyobject:" not in markdown, path.name
        assert not any(live.is_static_demo(c) for c in code), path.name
        if any("make_demo(" in c for c in (ROOT / "chapters").joinpath(path.with_suffix(".md").name).read_text().split("\n")):
            assert any("make_demo(" in c for c in code), f"{path.name}: the live demo is missing"


@pytest.mark.book
def test_a_live_chapter_runs_and_changes_no_file_of_the_course(built):
    """Chapter 8 (one of the quickest) run as a reader runs it in JupyterLab: no error, its ipywidgets demo
    shown, and no chapter file touched (opening the .md in JupyterLab saved every run into it)."""
    import nbclient
    import nbformat

    out, written = built
    before = {p: hashlib.sha256(p.read_bytes()).hexdigest() for p in (ROOT / "chapters").glob("*")}
    path = next(p for p in written if p.name == "08_masking.ipynb")
    nb = nbformat.read(path, as_version=4)
    nbclient.NotebookClient(nb, timeout=300, kernel_name="python3",
                            resources={"metadata": {"path": str(path.parent)}}).execute()
    outputs = [o for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", [])]
    assert not [o for o in outputs if o.output_type == "error"]
    assert any("application/vnd.jupyter.widget-view+json" in o.get("data", {}) for o in outputs)
    assert before == {p: hashlib.sha256(p.read_bytes()).hexdigest() for p in (ROOT / "chapters").glob("*")}
