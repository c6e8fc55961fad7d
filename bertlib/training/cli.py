"""What the command lines (``bertlib.pretrain``, ``bertlib.finetune``, and chapter 12's experiments) share:
argument types that reject a bad value while the arguments are parsed, before any data is read or any step
is trained, and the check of ``--device``.

A type raises ``argparse.ArgumentTypeError``, so argparse prints the option's name with the message and
exits with status 2: ``error: argument --steps: must be a positive integer, got 0``.
"""
from __future__ import annotations

import argparse
import dataclasses
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


def integer(text: str) -> int:
    """Any integer (a seed)."""
    return _int(text)


def one_of(*choices: str):
    """A type that accepts only ``choices``, naming them when it refuses."""
    def parse(text: str) -> str:
        if text not in choices:
            raise argparse.ArgumentTypeError(f"must be one of {', '.join(choices)}, got {text!r}")
        return text
    parse.__name__ = "one of " + "/".join(choices)
    return parse


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


# ----------------------------------------------------------------------------- options from a config dataclass
def option(default, help: str, *, type=None, flag: str | None = None, none_as=None, unset_default: bool = False,
           action: str | None = None):
    """A field of a run's config dataclass that is also a command-line option: the one place to add one.

    ``flag`` defaults to the field's name with dashes (``batch_size`` -> ``--batch-size``); ``type`` is one of
    the checking types above; ``none_as`` is the command-line value that stands for the field's None (0 for
    "no long phase", "torch's default threads"); ``unset_default`` leaves the option's default None, for a
    field whose default depends on other options; ``action`` ``store_true``/``store_false`` makes a switch.
    """

    spec = dict(help=help, type=type, flag=flag, none_as=none_as, unset_default=unset_default, action=action)
    return dataclasses.field(default=default, metadata={"cli": spec})


def add_config_options(parser: argparse.ArgumentParser, config_class) -> None:
    """One option per field of ``config_class`` made with ``option()``, in the fields' order."""

    for f in dataclasses.fields(config_class):
        spec = f.metadata.get("cli")
        if spec is None:
            continue
        flag = spec["flag"] or "--" + f.name.replace("_", "-")
        if spec["action"]:
            parser.add_argument(flag, dest=f.name, action=spec["action"], help=spec["help"])
            continue
        default = None if spec["unset_default"] else f.default
        if default is None and spec["none_as"] is not None:
            default = spec["none_as"]
        parser.add_argument(flag, dest=f.name, type=spec["type"], default=default, help=spec["help"])


def config_from_args(config_class, args: argparse.Namespace, **values):
    """``config_class`` with every option's parsed value (``none_as`` read back as None); ``values`` win."""

    for f in dataclasses.fields(config_class):
        spec = f.metadata.get("cli")
        if spec is None or f.name in values:
            continue
        value = getattr(args, f.name)
        values[f.name] = None if spec["none_as"] is not None and value == spec["none_as"] else value
    return config_class(**values)
