"""What the three command lines (``bertlib.pretrain``, ``bertlib.finetune``, ``bertlib.experiments``) share:
argument types that reject a bad value while the arguments are parsed, before any data is read or any step
is trained, and the check of ``--device``.

A type raises ``argparse.ArgumentTypeError``, so argparse prints the option's name with the message and
exits with status 2: ``error: argument --steps: must be a positive integer, got 0``.
"""
from __future__ import annotations

import argparse
import math

import torch


def _int(text: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected an integer, got {text!r}") from None


def _float(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None
    if not math.isfinite(value):
        raise argparse.ArgumentTypeError(f"expected a finite number, got {text!r}")
    return value


def positive_int(text: str) -> int:
    value = _int(text)
    if value <= 0:
        raise argparse.ArgumentTypeError(f"must be a positive integer, got {value}")
    return value


def non_negative_int(text: str) -> int:
    value = _int(text)
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be 0 or more, got {value}")
    return value


def int_at_least(low: int, why: str = ""):
    """An integer type that rejects values below ``low``; ``why`` is added to the message."""
    def parse(text: str) -> int:
        value = _int(text)
        if value < low:
            raise argparse.ArgumentTypeError(f"must be at least {low}{why}, got {value}")
        return value
    return parse


def positive_float(text: str) -> float:
    value = _float(text)
    if value <= 0:
        raise argparse.ArgumentTypeError(f"must be a positive number, got {value:g}")
    return value


def non_negative_float(text: str) -> float:
    value = _float(text)
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be 0 or more, got {value:g}")
    return value


def probability(text: str) -> float:
    """A share or probability in [0, 1]: out of range is an error, never clamped."""
    value = _float(text)
    if not 0.0 <= value <= 1.0:
        raise argparse.ArgumentTypeError(f"must be between 0 and 1, got {value:g}")
    return value


def device_problem(spec: str) -> str | None:
    """Why torch cannot compute on ``spec`` here, in words, with torch's own error; None if it can.

    torch's errors name the problem but not the fix ("Torch not compiled with CUDA enabled", "invalid device
    ordinal"): the message says which devices this machine has."""
    try:
        device = torch.device(spec)
    except (RuntimeError, ValueError) as e:
        return (f"{spec!r} is not a device name torch knows (torch says: {_first_line(e)}); "
                f"devices are written cpu, cuda, cuda:N or mps; this machine has {', '.join(available_devices())}")
    try:
        torch.empty(1, device=device)
    except Exception as e:  # AssertionError without CUDA, RuntimeError for a missing GPU or driver
        return (f"{spec!r} cannot be used on this machine (torch says: {_first_line(e)}); "
                f"this machine has {', '.join(available_devices())}")
    return None


def available_devices() -> list[str]:
    devices = ["cpu"]
    if torch.cuda.is_available():
        devices += [f"cuda:{i}" for i in range(torch.cuda.device_count())]
    if getattr(torch.backends, "mps", None) is not None and torch.backends.mps.is_available():
        devices.append("mps")
    return devices


def _first_line(error: BaseException) -> str:
    text = str(error).strip() or type(error).__name__
    return text.splitlines()[0]
