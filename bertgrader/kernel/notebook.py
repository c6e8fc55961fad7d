"""What a graded notebook's read-only setup cell imports: ``from bertgrader.kernel.notebook import *``.

- warnings and log records go to stdout: nbgrader scores a test cell zero as soon as it writes to
  stderr, and torch, transformers and matplotlib all warn there;
- ``bertlib_unavailable(...)``: the visible tests use it so that, while you work, calling bertlib's
  version of the function you are writing fails at once with a message saying so. (When your notebook
  is graded, the grader does more: its kernel only has a copy of bertlib in which those functions are
  stubs, and the hidden tests run outside your kernel.)
- ``standing_in(your_function, other=StandIn(result, ...))``: the visible test of a part that builds on
  another runs your function while the other is a correct one, which answers ``result`` and keeps what it
  was given, so a mistake in the other part does not show up again there (grading does the same).

Their messages are in the notebook's language. A kernel is not told which notebook it runs, but the setup cell
that imported this module is in its history, and the release writes that cell's comments in the notebook's
language (bertgrader.assignment.setup_preamble): ``language()`` reads them. Untrusted, like the notebook's own
metadata: it chooses the words of a message, nothing else.
"""
from __future__ import annotations

import contextlib
import copy
import linecache
import logging
import os
import sys
import warnings

__all__ = ["StandIn", "bertlib_unavailable", "standing_in"]
SETUP_IMPORT = "from bertgrader.kernel.notebook import *"  # the setup cell's code, in every language


def N_(text: str) -> str:
    """A message of this module, marked for bertgrader.po (bertgrader.i18n extracts every N_("...") call)."""
    return text


SETUP_COMMENT = N_("Setup (read-only): run this cell first.")  # the setup cell's first line, "# " and this
SWITCHED_OFF = N_("{name} is switched off in this test: write it yourself")
TOO_MANY = N_("takes {n} arguments ({names}), {given} were given")


def _warning_to_stdout(message, category, filename, lineno, file=None, line=None):
    # A warning is information, not a failure: print it where the grader does not count it against you.
    print(f"{category.__name__}: {message}", file=sys.stdout)


def setup() -> None:
    os.environ.setdefault("HF_HUB_OFFLINE", "1")  # never reach for the network
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    os.environ["PYTHONWARNINGS"] = "ignore"  # for subprocesses, whose stderr cannot be redirected
    warnings.showwarning = _warning_to_stdout
    logging.basicConfig(stream=sys.stdout, level=logging.WARNING, force=True)


def language() -> str:
    """The language of the notebook this kernel runs: that of the last setup cell it ran, whose first line is
    ``# `` and SETUP_COMMENT in the notebook's language (bertgrader.assignment.setup_preamble). "en" outside
    IPython, when no setup cell says another language, and on any failure to tell (a grading sandbox without
    bertgrader.i18n, say): a message's language must never break a test."""
    try:
        from IPython import get_ipython

        from bertgrader.i18n import LANGUAGES, tr

        for source in reversed(get_ipython().history_manager.input_hist_raw):
            if SETUP_IMPORT in source:
                first = source.lstrip().split("\n", 1)[0]
                return next((lang for lang in LANGUAGES if first == "# " + tr(SETUP_COMMENT, lang)), "en")
    except Exception:
        pass
    return "en"


def said(message: str, **fields) -> str:
    """``message`` (one of this module's) in the notebook's language, its fields filled; English on any failure."""
    try:
        from bertgrader.i18n import tr

        return tr(message, language(), **fields)
    except Exception:
        return message.format(**fields)


def _raising_code(name: str, n_free: int):
    """A code object that raises, with as many free variables as the one it replaces (Python checks that).

    Its source is in linecache under a name that says what it is, so the traceback's last frame shows the
    line that raised (IPython printed "Could not get source" for it otherwise)."""
    short = name.rsplit(".", 1)[-1]
    message = said(SWITCHED_OFF, name=name)
    free = [f"_v{i}" for i in range(n_free)]
    src = ("def switched_off():\n" + "".join(f"    {v} = None\n" for v in free)
           + f"    def {short}(*args, **kwargs):  # bertlib's, switched off while the visible test runs\n"
           + f"        raise RuntimeError({message!r})\n"
           + "".join(f"        {v}\n" for v in free)  # never run: they make the free variables
           + f"    return {short}\n")
    filename = f"<{name}, switched off>"
    linecache.cache[filename] = (len(src), None, src.splitlines(True), filename)  # no mtime: kept
    namespace: dict = {}
    exec(compile(src, filename, "exec"), namespace)
    code = namespace["switched_off"]().__code__
    return code.replace(co_qualname=short) if hasattr(code, "co_qualname") else code


@contextlib.contextmanager
def bertlib_unavailable(*targets):
    """While active, calling any of ``targets`` (bertlib functions or classes) raises RuntimeError.

    A function's code is swapped in place, so it raises under every name it was imported as; a class has
    each of its methods switched off the same way.
    """
    swapped = []
    try:
        for target in targets:
            functions = [target] if hasattr(target, "__code__") else [
                f for f in vars(target).values() if hasattr(getattr(f, "__func__", f), "__code__")]
            for f in functions:
                f = getattr(f, "__func__", f)  # a staticmethod or classmethod: the function inside
                name = f"{f.__module__}.{f.__qualname__}"
                swapped.append((f, f.__code__))
                f.__code__ = _raising_code(name, len(f.__code__.co_freevars))
        yield
    finally:
        for f, code in reversed(swapped):
            f.__code__ = code


class StandIn:
    """A correct stand-in for a notebook function: each call returns a copy of ``result`` and is kept in
    ``calls``, its arguments bound to ``names`` (the function's parameters, in order; keywords by name), so
    the test can check what your code passed it."""

    def __init__(self, result, *names: str):
        self.result, self.names, self.calls = result, names, []

    def __call__(self, *args, **kwargs):
        if len(args) > len(self.names):
            raise TypeError(said(TOO_MANY, n=len(self.names), names=", ".join(self.names), given=len(args)))
        self.calls.append(dict(zip(self.names, args)) | kwargs)
        return copy.deepcopy(self.result)


@contextlib.contextmanager
def standing_in(function, **stand_ins):
    """While active, each notebook function named (``attention=StandIn(...)``) is, for ``function`` (your
    function under test), the stand-in given; then yours again."""
    namespace, missing = function.__globals__, object()
    saved = {name: namespace.get(name, missing) for name in stand_ins}
    namespace.update(stand_ins)
    try:
        yield
    finally:
        for name, value in saved.items():
            if value is missing:
                namespace.pop(name, None)
            else:
                namespace[name] = value


setup()
