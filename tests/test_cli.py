"""The three command lines document every option they take (``--help`` is the reader's manual)."""
import argparse

import pytest

from bertlib import experiments, finetune, pretrain


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
    assert parser.prog == f"python -m {module.__name__}"
    assert parser.description, "the command says what it does"
    undocumented = [a.option_strings[-1] if a.option_strings else a.dest for a in parser._actions if not a.help]
    assert undocumented == [], f"options without help text in {module.__name__}: {undocumented}"
