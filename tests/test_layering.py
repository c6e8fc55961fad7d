"""bertlib's imports run one way: the data code (tokenizer, masking, nsp, collate, io) never loads the model,
the model never loads the training code, and within bertlib.training a part never imports the command that
uses it. Read from the sources with ``ast``, so nothing is imported to check it."""
from __future__ import annotations

import ast
from pathlib import Path

import pytest

BERTLIB = Path(__file__).resolve().parent.parent / "bertlib"
DATA_CODE = ("tokenizer", "masking", "nsp", "collate", "io")
MODEL_CODE = ("activations", "attention", "config", "embeddings", "encoder", "heads", "modeling", "params", "weights")
COMMANDS = ("pretrain", "finetune")  # the documented commands, bertlib.training.<name>


def imported(path: Path) -> set[str]:
    """The bertlib modules ``path`` imports, as dotted names relative to bertlib (``heads``, ``training.loop``)."""
    parts = list(path.relative_to(BERTLIB).parent.parts)  # [] at the top level, ["training"] below it
    names = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.level:  # from .x import y, from .. import x
            base = parts[:len(parts) - (node.level - 1)]
            if node.module:
                names.add(".".join(base + [node.module]))
            else:
                names.update(".".join(base + [a.name]) for a in node.names)
        elif isinstance(node, ast.ImportFrom) and (node.module or "").startswith("bertlib"):
            names.add(node.module.removeprefix("bertlib").lstrip("."))
        elif isinstance(node, ast.Import):
            names.update(a.name.removeprefix("bertlib.") for a in node.names if a.name.startswith("bertlib."))
    return names


@pytest.mark.parametrize("name", DATA_CODE)
def test_data_code_does_not_load_the_model(name):
    found = imported(BERTLIB / f"{name}.py")
    assert not found & set(MODEL_CODE) - {"config"}, f"bertlib/{name}.py imports {sorted(found & set(MODEL_CODE))}"


@pytest.mark.parametrize("name", DATA_CODE + MODEL_CODE)
def test_the_top_level_never_imports_the_training_code(name):
    found = imported(BERTLIB / f"{name}.py")
    assert not [m for m in found if m.startswith("training")], f"bertlib/{name}.py imports {sorted(found)}"


@pytest.mark.parametrize("path", sorted((BERTLIB / "training").glob("*.py")), ids=lambda p: p.name)
def test_a_part_of_training_never_imports_a_command(path):
    """pretrain.py and finetune.py are runs and their commands: the parts they are made of (data, objective,
    tasks, metrics, ...) never import them back."""
    commands = {m.removeprefix("training.") for m in imported(path)} & set(COMMANDS)
    assert not commands, f"training/{path.name} imports the command(s) {sorted(commands)}"


@pytest.mark.parametrize("path", sorted(BERTLIB.rglob("*.py")), ids=lambda p: str(p.relative_to(BERTLIB)))
def test_the_library_never_imports_its_applications(path):
    """Chapter 11's experiments (projects/) import bertlib; bertlib never imports them (issue 21 section 3)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    names = [a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names]
    names += [n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.module and not n.level]
    assert not [m for m in names if m.split(".")[0] in ("projects", "course")], f"{path} imports {names}"


def test_the_checker_sees_an_import():
    assert "weights" in imported(BERTLIB / "modeling.py")
    assert "masking" in imported(BERTLIB / "heads.py")
    assert "training.pretrain" in imported(BERTLIB / "pretrain.py")
