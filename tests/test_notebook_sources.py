"""Each assignment's sources in solutions/<a>/: <a>.py builds the committed <a>.ipynb (python -m bertgrader.assignment),
the sources lint, nothing but the notebook is released, and the builder refuses a malformed source.

Fast (no nbgrader run); tests/test_exercises.py grades the notebooks and the mistakes for real.
"""
from __future__ import annotations

import fnmatch
import json

import pytest

from bertgrader import assignment as builder
from bertgrader.assignment import Assignment
from nbgrader_harness import REPO, SOLUTIONS, assignments

ASSIGNMENTS = assignments()


def test_every_assignment_has_a_source():
    assert ASSIGNMENTS, "no assignment in solutions/"
    missing = [a for a in ASSIGNMENTS if not (SOLUTIONS / a / f"{a}.py").is_file()]
    assert not missing, f"no source solutions/<a>/<a>.py for {missing}: write one (docs/exercises.md)"
    assert not (REPO / "tools" / "notebooks").exists(), "the old specs in tools/notebooks/ came back"


@pytest.mark.parametrize("a", ASSIGNMENTS)
def test_committed_notebook_is_what_its_source_builds(a):
    committed = (SOLUTIONS / a / f"{a}.ipynb").read_text(encoding="utf-8")
    assert committed == Assignment.at(REPO, a).render(), f"solutions/{a}/{a}.ipynb is stale: run `make notebooks`"


@pytest.mark.parametrize("a", ASSIGNMENTS)
def test_jupytext_reads_the_same_cells(a):
    """The source is jupytext's percent format (docs/exercises.md: an editor or JupyterLab can open and run
    it): jupytext finds the builder's cells, with the same code and markdown, after the docstring's."""
    jupytext = pytest.importorskip("jupytext", reason="jupytext is in the book extra")
    read = jupytext.read(str(SOLUTIONS / a / f"{a}.py"), fmt="py:percent").cells[1:]
    built = Assignment.at(REPO, a).build_notebook().cells
    assert len(read) == len(built), f"{a}: jupytext finds {len(read)} cells, the builder {len(built)}"
    for by_jupytext, cell in zip(read, built):
        meta = cell.metadata.get("nbgrader", {})
        source = cell.source
        if meta.get("grade"):
            source = source.removesuffix("\n\n" + builder.HIDDEN_NOTE)
        elif meta.get("locked"):
            source = source.removeprefix(builder.SETUP_PREAMBLE).lstrip("\n")
        assert (by_jupytext.cell_type, by_jupytext.source) == (cell.cell_type, source), f"{a}: cell {cell.id}"


def test_check_finds_a_stale_notebook(tmp_path, monkeypatch, capsys):
    """`--check` is what the test above asks of every notebook, as a command; it must be able to fail."""
    a = ASSIGNMENTS[0]
    (tmp_path / "solutions" / a).mkdir(parents=True)
    (tmp_path / "solutions" / a / f"{a}.py").write_text((SOLUTIONS / a / f"{a}.py").read_text(encoding="utf-8"))
    root = ["--root", str(tmp_path)]
    assert builder.main(root) == 0 and builder.main(root + ["--check"]) == 0
    nb = tmp_path / "solutions" / a / f"{a}.ipynb"
    nb.write_text(nb.read_text(encoding="utf-8").replace('"points": ', '"points": 1', 1))
    assert builder.main(root + ["--check"]) == 1
    assert f"solutions/{a}/{a}.ipynb is stale" in capsys.readouterr().err


def test_sources_and_mistakes_lint():
    """pyflakes over each source as its notebook runs, and over each mistake run in its notebook."""
    pytest.importorskip("pyflakes", reason="pyflakes is in the dev extra")
    messages = [m for a in ASSIGNMENTS for m in Assignment.at(REPO, a).lint()]
    assert not messages, "\n".join(messages)


def test_lint_finds_a_typo_in_a_mistake(tmp_path, monkeypatch):
    pytest.importorskip("pyflakes", reason="pyflakes is in the dev extra")
    a = "08_masking" if "08_masking" in ASSIGNMENTS else ASSIGNMENTS[0]
    (tmp_path / a).mkdir()
    (tmp_path / a / f"{a}.py").write_text((SOLUTIONS / a / f"{a}.py").read_text(encoding="utf-8"))
    gid, code = next(iter(Assignment.at(REPO, a).mistakes().values()))["cells"].popitem()
    line = next(i for i, text in enumerate(code.splitlines()) if "torch." in text)
    (tmp_path / a / "mistakes.py").write_text(f'"""Mistakes."""\n\n\n# %% typo cell={gid} loses=x\n# why: a typo\n'
                                              + code.replace("torch.", "torhc.", 1) + "\n")
    copy = Assignment(a, tmp_path / a)
    [message] = copy.lint()
    assert message.startswith(f"{tmp_path / a / 'mistakes.py'}:{6 + line}:"), message
    assert "[typo] undefined name 'torhc'" in message
    # A mistake that no longer defines the function its notebook's tests call: a NameError, not the mistake.
    (tmp_path / a / "mistakes.py").write_text(f'"""M."""\n# %% renamed cell={gid} loses=x\n# why: w\nx = 1\n')
    assert any("[renamed]" in m and "undefined name" in m for m in copy.lint())


def _ignored_by_nbgrader() -> list[str]:
    from traitlets.config import Config

    config = Config()
    path = REPO / "nbgrader_config.py"
    exec(compile(path.read_text(encoding="utf-8"), str(path), "exec"), {"get_config": lambda: config,
                                                                         "__file__": str(path)})
    return list(config.CourseDirectory.ignore)


@pytest.mark.parametrize("a", ASSIGNMENTS)
def test_nbgrader_releases_only_the_notebook_and_its_inputs(a):
    """Every file beside the notebook (its source, mistakes, hidden tests) is in nbgrader's ignore list, so
    generate_assignment never copies it into exercises/ nor autograde next to a submission; but inputs.py, which
    the notebook imports, is released, and exercises/ holds it as it is."""
    ignore = _ignored_by_nbgrader()
    released = [p.name for p in (SOLUTIONS / a).iterdir()
                if p.name not in (f"{a}.ipynb", "inputs.py") and not any(fnmatch.fnmatch(p.name, g) for g in ignore)]
    assert not released, f"solutions/{a}/: {released} would be released to students; add it to the ignore list"
    inputs = SOLUTIONS / a / "inputs.py"
    assert not any(fnmatch.fnmatch("inputs.py", g) for g in ignore)
    shipped = REPO / "exercises" / a / "inputs.py"
    assert shipped.is_file() == inputs.is_file(), f"exercises/{a}/inputs.py is stale: run `make exercises`"
    if inputs.is_file():
        assert shipped.read_text(encoding="utf-8") == inputs.read_text(encoding="utf-8"), (
            f"exercises/{a}/inputs.py is stale: run `make exercises`")


@pytest.mark.parametrize("a", ASSIGNMENTS)
def test_every_mistake_rewrites_a_solution_cell_and_loses_graded_cells(a):
    nb = json.loads((SOLUTIONS / a / f"{a}.ipynb").read_text(encoding="utf-8"))
    meta = [c["metadata"].get("nbgrader", {}) for c in nb["cells"]]
    solutions = {m["grade_id"] for m in meta if m.get("solution")}
    graded = {m["grade_id"] for m in meta if m.get("grade")}
    mistakes = Assignment.at(REPO, a).mistakes()
    assert len(mistakes) >= 3, f"{a}: at least three named mistakes in solutions/{a}/mistakes.py"
    for name, m in mistakes.items():
        assert set(m["cells"]) <= solutions, f"{a}/{name} rewrites {set(m['cells']) - solutions}, not solution cells"
        assert set(m["loses"]) <= graded, f"{a}/{name} loses {set(m['loses']) - graded}, not graded cells"
        assert m["why"].strip(), f"{a}/{name}: say why it is wrong"


# ------------------------------------------------------------------------------------- the format's refusals
GOOD = '''"""A tiny assignment."""


# %% [markdown]
# # Title
#
# Text.


# %% setup
import torch


# %% solution answer
def answer():
    ### BEGIN SOLUTION
    return torch.ones(1)
    ### END SOLUTION


# %% tests test_answer points=2
assert answer().sum() == 1


# %%
print(answer())
'''


def _build(tmp_path, monkeypatch, text, mistakes=None):
    (tmp_path / "10_tiny").mkdir(exist_ok=True)
    (tmp_path / "10_tiny" / "10_tiny.py").write_text(text)
    if mistakes is not None:
        (tmp_path / "10_tiny" / "mistakes.py").write_text(mistakes)
    tiny = Assignment("10_tiny", tmp_path / "10_tiny")
    return tiny.build_notebook(), tiny.mistakes()


def test_the_format_builds_what_it_says(tmp_path, monkeypatch):
    nb, mistakes = _build(tmp_path, monkeypatch, GOOD, '"""M."""\n\n\n# %% ones cell=answer loses=test_answer\n'
                                                      '# why: two, not one\ndef answer():\n    return torch.ones(2)\n')
    assert [c.id for c in nb.cells] == ["cell-00", "setup", "answer", "test_answer", "cell-04"]
    md, setup, solution, tests, code = nb.cells
    assert md.cell_type == "markdown" and md.source == "# Title\n\nText."
    assert setup.source == builder.SETUP_PREAMBLE + "\nimport torch" and setup.metadata.nbgrader.locked
    assert solution.source.startswith("def answer():") and solution.metadata.nbgrader.solution
    assert tests.source == "assert answer().sum() == 1\n\n" + builder.HIDDEN_NOTE
    assert tests.metadata.nbgrader.points == 2 and tests.metadata.nbgrader.grade and tests.metadata.nbgrader.locked
    assert code.source == "print(answer())" and "nbgrader" not in code.metadata
    assert mistakes == {"ones": {"why": "two, not one", "cells": {"answer": "def answer():\n    return torch.ones(2)"},
                                 "loses": ["test_answer"]}}


@pytest.mark.parametrize("change, message", [
    (("assert answer().sum() == 1", "### BEGIN HIDDEN TESTS\nassert answer().sum() == 1\n### END HIDDEN TESTS"),
     "hidden tests belong in hidden_tests.py"),
    (("    ### BEGIN SOLUTION\n", "    ### BEGIN HIDDEN TESTS\n    ### BEGIN SOLUTION\n"),
     "hidden tests belong in hidden_tests.py"),
    (("assert answer().sum() == 1", "answer()"), "keeps at least one visible assert"),
    ((" points=2", ""), "says what it is worth"),
    ((" points=2", " points=0"), "worth more than 0"),
    (("    ### END SOLUTION\n", ""), "### BEGIN SOLUTION and ### END SOLUTION"),
    (("# %% solution answer", "# %% answer"), "unknown cell header"),
    (("# %% tests test_answer points=2", "# %% tests answer points=2"), "duplicate cell id answer"),
    (("# Text.", "Text."), "a markdown line is a comment"),
    (('"""A tiny assignment."""', '"""A tiny assignment."""\nimport os'), "only a docstring"),
])
def test_a_malformed_source_is_refused_naming_its_line(tmp_path, monkeypatch, change, message):
    old, new = change
    assert old in GOOD
    with pytest.raises(builder.SourceError, match=message) as e:
        _build(tmp_path, monkeypatch, GOOD.replace(old, new, 1))
    assert "10_tiny.py" in str(e.value)


def test_a_source_without_cells_is_refused(tmp_path, monkeypatch):
    with pytest.raises(builder.SourceError, match="no `# %%` cell"):
        _build(tmp_path, monkeypatch, '"""Only a docstring."""\n')


@pytest.mark.parametrize("mistakes, message", [
    ("# %% ones cell=answer\n# why: w\ndef answer(): pass\n", "says what it loses"),
    ("# %% ones cell=answer loses=test_answer\ndef answer(): pass\n", "says what it loses"),
    ("# %% ones loses=test_answer\n# why: w\ndef answer(): pass\n", "a mistake's header"),
    ("# %% ones cell=answer loses=test_answer\n# why: w\n", "has no code"),
    ("# %% ones cell=answer loses=test_answer\n# why: w\nx = 1\n# %% ones cell=answer\nx = 2\n", "twice"),
])
def test_a_malformed_mistake_is_refused(tmp_path, monkeypatch, mistakes, message):
    with pytest.raises(builder.SourceError, match=message):
        _build(tmp_path, monkeypatch, GOOD, mistakes)


# An assignment's visible tests (in its notebook) and hidden tests (in the grader) build their inputs with the
# same functions, solutions/<a>/inputs.py, imported by both (issue 21: 09's two copies of its batch builder had
# drifted apart). A function both define is allowed only where the two sides must differ, each named here with why.
CHECKS_ON_EACH_SIDE = {
    ("05_cls_sep", "_as_lists"): "the visible test asserts, the grader checks what travelled back",
    ("06_attention_masks", "_reference_padding_mask"): "bertlib's mask, the oracle (the visible test's stand-in)",
    ("10_finetuning", "_span"): "the visible test asserts, the grader checks what travelled back",
    ("10_finetuning", "_twin"): "builds the student's model in the notebook / in the kernel, from the grader",
    ("10_finetuning", "_why"): "a message about a wrong span, on each side",
    ("11_pretraining", "_check_schedule"): "the visible test asserts, the grader checks what travelled back",
    ("11_pretraining", "_named_wrong"): "what the common mistakes compute: the messages' hints, on each side",
    ("11_pretraining", "_uniform_loss"): "bertlib's loss of a model that learnt nothing, the oracle",
    ("11_pretraining", "_updates"): "a plural in a message",
    ("11_pretraining", "linear"): "the schedule written out, the oracle",
}


def _functions(path) -> set[str]:
    import ast

    return {n.name for n in ast.walk(ast.parse(path.read_text(encoding="utf-8"))) if isinstance(n, ast.FunctionDef)}


def _imported_inputs(path) -> set[str]:
    import ast

    return {alias.name for n in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
            if isinstance(n, ast.ImportFrom) and n.module == "inputs" for alias in n.names}


@pytest.mark.parametrize("a", assignments())
def test_visible_and_hidden_tests_share_their_input_builders(a):
    source, hidden = SOLUTIONS / a / f"{a}.py", SOLUTIONS / a / builder.HIDDEN_TESTS
    twins = sorted(_functions(source) & _functions(hidden) - {name for (x, name) in CHECKS_ON_EACH_SIDE if x == a})
    assert not twins, (f"{a}: {twins} defined in both the notebook's source and its hidden tests: put an input "
                       "builder in solutions/<a>/inputs.py, imported by both (or name why they differ above)")
    assert _imported_inputs(source) == _imported_inputs(hidden), (
        f"{a}: the notebook builds its inputs with {sorted(_imported_inputs(source))} of its inputs.py, "
        f"the hidden tests with {sorted(_imported_inputs(hidden))}")
    assert not (REPO / "bertgrader" / "kernel" / "inputs.py").exists(), "the shared inputs module came back"


@pytest.mark.parametrize("a", assignments())
def test_every_input_builder_is_used_and_lints(a):
    """An assignment's inputs.py defines what its tests import, nothing more, and pyflakes finds nothing in it."""
    import ast
    import io

    from pyflakes.api import check
    from pyflakes.reporter import Reporter

    path = SOLUTIONS / a / "inputs.py"
    used = _imported_inputs(SOLUTIONS / a / f"{a}.py")
    source = path.read_text(encoding="utf-8") if path.is_file() else ""
    defined = {n.name for n in ast.parse(source).body if isinstance(n, ast.FunctionDef)}
    assert defined == used, f"{a}: inputs.py defines {sorted(defined)}, the tests import {sorted(used)}"
    out = io.StringIO()
    assert check(source, str(path), Reporter(out, out)) == 0, out.getvalue()


def _calls_to(tree, names: set[str], aliases: dict[str, str] | None = None) -> dict[str, set[str]]:
    """{function: the keyword arguments it is called with} for calls of ``names`` (by name, or through an alias
    ``aliases[name] = function``, or as ``student.<function>`` and its call_* / gradients forms)."""
    import ast

    found: dict[str, set[str]] = {}
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        f, own = node.func, {"manual_seed", "output", "stand_ins", "allow"}  # the call mechanism's own keywords
        if isinstance(f, ast.Call):  # student.f.call_with(...)(...)
            f = f.func.value if isinstance(f.func, ast.Attribute) and f.func.attr == "call_with" else f
        if isinstance(f, ast.Attribute) and f.attr in ("call_standing_in", "call_keeping_args", "gradients"):
            f = f.value
        name = (f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) else None)
        name = (aliases or {}).get(name, name)
        if name in names:
            found.setdefault(name, set()).update(k.arg for k in node.keywords if k.arg and k.arg not in own)
    return found


@pytest.mark.parametrize("a", ASSIGNMENTS)
def test_the_visible_tests_call_each_function_as_the_hidden_tests_do(a):
    """A keyword argument in a visible test that the hidden tests pass by position (or not at all) fails a
    function whose parameter a student renamed, which the grader accepts (issue 29 §10: validate said
    "failed" on a notebook that earned full marks): the visible tests call the student's functions with no
    keyword that the hidden tests do not use for that function."""
    import ast

    cells = builder.split_cells((SOLUTIONS / a / f"{a}.py").read_text(encoding="utf-8"), SOLUTIONS / a / f"{a}.py")
    functions = {n.name for c in cells if c.header[:1] == ["solution"] for n in ast.parse(c.code).body
                 if isinstance(n, ast.FunctionDef)}
    visible = {}
    for c in cells:
        if c.header[:1] == ["tests"]:
            for name, keywords in _calls_to(ast.parse(c.code), functions).items():
                visible.setdefault(name, set()).update(keywords)
    tree = ast.parse((SOLUTIONS / a / builder.HIDDEN_TESTS).read_text(encoding="utf-8"))
    aliases = {t.id: n.value.attr for n in ast.walk(tree) if isinstance(n, ast.Assign)
               and isinstance(n.value, ast.Attribute) and n.value.attr in functions for t in n.targets
               if isinstance(t, ast.Name)}
    hidden = _calls_to(tree, functions, aliases)
    odd = {name: sorted(kw - hidden.get(name, set())) for name, kw in visible.items() if kw - hidden.get(name, set())}
    assert not odd, f"{a}: the visible tests pass {odd} by keyword, the hidden tests by position: pass them as the " \
                    "hidden tests do"
