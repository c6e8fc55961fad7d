"""The three command lines document every option they take (``--help`` is the reader's manual)."""
import argparse

import pytest

from bertlib.training import experiments, finetune, pretrain


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
    assert parser.prog == f"python -m {module.__name__.replace('.training', '')}"
    assert parser.description, "the command says what it does"
    undocumented = [a.option_strings[-1] if a.option_strings else a.dest for a in parser._actions if not a.help]
    assert undocumented == [], f"options without help text in {module.__name__}: {undocumented}"


@pytest.mark.parametrize("name", ["pretrain", "finetune", "experiments"])
def test_documented_command_runs_the_training_module(name):
    """``python -m bertlib.NAME`` (README, chapters) stays the command: its module only runs the main of
    ``bertlib.training.NAME``, and bertlib's top level holds nothing else of the applications."""
    import importlib

    alias = importlib.import_module(f"bertlib.{name}")
    assert alias.main is importlib.import_module(f"bertlib.training.{name}").main
    assert [n for n in vars(alias) if not n.startswith("__")] == ["main"]
