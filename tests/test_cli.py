"""The three command lines document every option they take (``--help`` is the reader's manual)."""
import argparse

import pytest

from bertlib.training import finetune, pretrain
from projects.pretraining_experiments import experiments


@pytest.mark.parametrize("module", [pretrain, finetune, experiments], ids=lambda m: m.__name__)
def test_every_option_has_help_text(module, monkeypatch):
    parsers = []

    def capture(self, args=None, namespace=None):
        parsers.append(self)
        raise SystemExit(0)  # stop before any work is done

    monkeypatch.setattr(argparse.ArgumentParser, "parse_args", capture)
    with pytest.raises(SystemExit):
        module.main([])
    (parser,) = parsers
    # the documented command: bertlib.pretrain is a two-line module that runs bertlib.training.pretrain's main
    # experiments: python -m projects.pretraining_experiments, the project's own __main__
    assert parser.prog == f"python -m {module.__name__.replace('.training', '').removesuffix('.experiments')}"
    assert parser.description, "the command says what it does"
    undocumented = [a.option_strings[-1] if a.option_strings else a.dest for a in parser._actions if not a.help]
    assert undocumented == [], f"options without help text in {module.__name__}: {undocumented}"


@pytest.mark.parametrize("name", ["pretrain", "finetune"])
def test_documented_command_runs_the_training_module(name):
    """``python -m bertlib.NAME`` (README, chapters) stays the command: its module only runs the main of
    ``bertlib.training.NAME``, and bertlib's top level holds nothing else of the applications."""
    import importlib

    alias = importlib.import_module(f"bertlib.{name}")
    assert alias.main is importlib.import_module(f"bertlib.training.{name}").main
    assert [n for n in vars(alias) if not n.startswith("__")] == ["main"]


def test_pretrain_options_are_generated_from_its_config():
    """Each field of PretrainConfig made with ``cli.option`` is an option (the one place to add one): no
    option given, the config is the book's run; each option given alone reaches its field and no other."""
    import dataclasses

    from bertlib.training.pretrain import parse_args
    from bertlib.training.pretrain_config import PretrainConfig

    options = [f for f in dataclasses.fields(PretrainConfig) if "cli" in f.metadata]
    assert len(options) >= 20
    assert parse_args([])[0] == PretrainConfig()
    default = PretrainConfig()
    for f in options:
        spec = f.metadata["cli"]
        flag = spec["flag"] or "--" + f.name.replace("_", "-")
        if spec["action"]:
            argv, expected = [flag], not f.default
        elif f.name == "vocab":
            argv, expected = [flag, "minilm"], "minilm"
        elif f.name == "device":
            continue  # the only device every machine has is the default
        elif isinstance(f.default, int):
            expected = f.default * 2 or 3
            argv = [flag, str(expected)]
        else:
            expected = f.default / 2 if 0 < f.default <= 1 else f.default * 2 or 0.5
            argv = [flag, repr(expected)]
        cfg, _ = parse_args(argv)
        assert getattr(cfg, f.name) == expected, f"{flag} did not reach PretrainConfig.{f.name}"
        others = {k: v for k, v in dataclasses.asdict(cfg).items() if k != f.name}
        assert others == {k: v for k, v in dataclasses.asdict(default).items() if k != f.name}, flag


def test_the_experiments_are_a_project_beside_the_library():
    """Chapter 11's experiments run as ``python -m projects.pretraining_experiments``; bertlib holds no module of
    theirs (issue 21 section 3: the library's applications apart, as minGPT keeps ``projects/``)."""
    import importlib
    import importlib.util

    entry = importlib.import_module("projects.pretraining_experiments.__main__")
    assert entry.main is experiments.main
    for gone in ("bertlib.experiments", "bertlib.training.experiments", "bertlib.training.synthetic"):
        assert importlib.util.find_spec(gone) is None, gone
