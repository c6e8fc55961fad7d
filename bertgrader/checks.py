"""What hidden tests are written with, and the runner that grades one cell with them.

An assignment's hidden tests live beside its source notebook, in ``solutions/<a>/hidden_tests.py``: one
function per graded cell, named by the cell's grade id, taking the student's notebook as a
bertgrader.remote.Student. They run in the grader's process (never in the student's kernel), call
the student's functions through ``student``, and compare what comes back with bertlib::

    SWITCHED_OFF = ["bertlib.masking.mask_tokens"]       # stubs in the kernel while it is graded

    def test_select(student):
        ids = ...
        with case("with mlm_probability=0.4"):           # names the input in the message
            got = student.select_for_prediction(ids, SPECIALS, 0.4, wire.Generator(1))
            check(got.dtype == torch.bool, f"expected a torch.bool tensor, got {got.dtype}")

A failed check shows the student its message (and the case), never the test's source.
"""
from __future__ import annotations

import contextlib
import importlib.util
from pathlib import Path

import torch

from bertgrader.assignment import HIDDEN_TESTS
from bertgrader.remote import KernelGone, StudentError



class CheckFailed(AssertionError):
    """A property of the student's answer does not hold; the message is written for the student."""


def check(condition, message: str) -> None:
    """Like ``assert``, but not removed by ``python -O``, and meant to be read by the student."""
    if not condition:
        raise CheckFailed(message)


def tensor(value, what: str = "the result") -> torch.Tensor:
    """``value`` as a tensor, or a CheckFailed that says what came back instead."""
    if isinstance(value, torch.Tensor):
        return value
    raise CheckFailed(f"expected {what} to be a torch.Tensor, got {type(value).__name__}")


@contextlib.contextmanager
def case(description: str):
    """Prefix the message of a failure in this block with the input it happened on."""
    try:
        yield
    except KernelGone:
        raise
    except CheckFailed as e:
        raise CheckFailed(f"{description}: {e}") from None
    except StudentError as e:
        raise CheckFailed(f"{description}: your code {e}") from None
    except Exception as e:  # the answer had a form the test did not expect (a list for a tensor, say)
        raise CheckFailed(f"{description}: {_unexpected(e)}") from None


def load(source_dir: Path):
    """The hidden-tests module of an assignment's source folder, or None if it has none."""
    path = Path(source_dir) / HIDDEN_TESTS
    if not path.is_file():
        return None
    spec = importlib.util.spec_from_file_location(f"hidden_tests_{Path(source_dir).name}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def run(module, grade_id: str, student) -> str | None:
    """Grade one cell: None if every check passed, else the message for the student.
    Raises KernelGone if the kernel stopped (the caller marks the remaining cells)."""
    test = getattr(module, grade_id, None)
    if test is None:
        return f"the grader has no hidden tests for the cell {grade_id!r} (tell your instructor)"
    try:
        test(student)
    except KernelGone:
        raise
    except CheckFailed as e:
        return str(e)
    except StudentError as e:
        return f"your code {e}"
    except Exception as e:  # never lets one answer stop the grading of the others
        return _unexpected(e)
    return None


def _unexpected(e: Exception) -> str:
    return (f"your answer could not be checked ({type(e).__name__}: {str(e)[:300]}): check what your function "
            "returns (its type, shape and dtype)")


def kind_of(value) -> str:
    """What came back, in words: an object left in the kernel (not plain data) says which."""
    from bertgrader.remote import Remote

    if isinstance(value, Remote):
        return f"an object that is not plain data ({value!r})"
    return f"a {type(value).__name__}"
