"""The kernel's half of trusted grading: run one call the grader asks for, send back data.

The grader (bertgrader.remote) executes ``serve("<base64 request>")`` in the student's kernel. The
request names a function of the notebook (or an object kept from an earlier call) and carries its
arguments as data (bertgrader.kernel.wire). The result goes back as a display output of type ``MIME``;
a result that cannot travel as data (a model, say) stays here and the grader gets a handle to it.

This module runs in the student's process, so the student can replace it; that changes nothing, because
the grader only ever reads data from here and decides everything on its own side.
"""
from __future__ import annotations

import sys
import traceback

from bertgrader.kernel import wire

MIME = "application/x-bert-grader"
_objects: dict[int, object] = {}


def _resolve(value):
    if isinstance(value, wire.Handle):
        if value.id not in _objects:
            raise LookupError(f"object {value.id} is gone")
        return _objects[value.id]
    if isinstance(value, list):
        return [_resolve(v) for v in value]
    if isinstance(value, tuple):
        return tuple(_resolve(v) for v in value)
    if isinstance(value, dict):
        return {k: _resolve(v) for k, v in value.items()}
    return value


def _send(value) -> bytes:
    try:
        return wire.encode({"ok": value})
    except wire.Unsendable:
        _objects[len(_objects) + 1] = value
        return wire.encode({"ok": wire.Handle(len(_objects), type(value).__name__)})


def _data_or_none(value):
    try:
        wire.encode(value)
        return value
    except wire.Unsendable:
        return None


def _student_traceback(exc: BaseException) -> list[str]:
    """The frames of the student's own code (cells, and bertlib's stubs), without this module's or torch's."""
    frames = [f for f in traceback.extract_tb(exc.__traceback__)
              if "bertgrader" not in f.filename and "site-packages" not in f.filename]
    return [f"line {f.lineno} in {f.name}: {f.line}" for f in frames][-5:]


def _run(request: dict):
    namespace = sys.modules["__main__"].__dict__
    target = request["target"]
    if isinstance(target, wire.Handle):
        obj = _resolve(target)
    elif target in namespace:
        obj = namespace[target]
    else:
        raise NameError(f"{target} is not defined: run the cell that defines it (and keep its name)")
    for name in request.get("path", []):
        obj = getattr(obj, name)
    if request["op"] == "get":
        return obj, None
    args, kwargs = _resolve(request.get("args", [])), _resolve(request.get("kwargs", {}))
    if "stand_in" in request:
        return _call_standing_in(namespace, obj, args, kwargs, request["stand_in"], request.get("manual_seed")), None
    result = obj(*args, **kwargs)
    return result, ([_data_or_none(a) for a in args] if request.get("return_args") else None)


def _where(value, args) -> str | None:
    """Where an object that is not data sits among a call's arguments: "args[0].attention.self", say."""
    for i, arg in enumerate(args):
        if value is arg:
            return f"args[{i}]"
        named = getattr(arg, "named_modules", None)
        if callable(named):
            for name, module in named():
                if module is value:
                    return f"args[{i}].{name}" if name else f"args[{i}]"
    return None


def _call_standing_in(namespace: dict, obj, args, kwargs, stand_ins: dict, manual_seed=None):
    """Call ``obj`` while each notebook function named in ``stand_ins`` is replaced by one that records what it
    is given and returns ``stand_ins[name]``: how a part that builds on others is graded, with their correct
    results, computed by the grader. What was recorded goes back as data (an object that is not data as
    where it sits among the call's arguments); the grader checks it, never this module. ``manual_seed``:
    torch.manual_seed first (dropout draws from torch's global generator)."""
    calls = {name: [] for name in stand_ins}
    blobs = {name: wire.encode(value) for name, value in stand_ins.items()}  # encoded once, decoded per call

    def stand_in(name):
        def record(*a, **k):
            given = {**{str(i): x for i, x in enumerate(a)}, **k}
            data = {key: _data_or_none(x) for key, x in given.items()}  # each argument encoded once
            calls[name].append({
                "args": [data[str(i)] for i in range(len(a))], "kwargs": {key: data[key] for key in k},
                "where": {key: _where(x, args) for key, x in given.items() if x is not None and data[key] is None}})
            return wire.decode(blobs[name], build=wire.materialize)  # a fresh copy each time
        return record

    missing = object()
    theirs = {name: namespace.get(name, missing) for name in stand_ins}
    namespace.update({name: stand_in(name) for name in stand_ins})
    try:
        if manual_seed is not None:
            import torch

            torch.manual_seed(manual_seed)
        result = obj(*args, **kwargs)
    finally:
        for name, value in theirs.items():
            if value is missing:
                namespace.pop(name, None)
            else:
                namespace[name] = value
    return {"result": result, "calls": calls}


def serve(text: str) -> None:
    from IPython.display import publish_display_data

    try:
        request = wire.decode(wire.from_text(text), build=wire.materialize)
        result, args_after = _run(request)
        blob = _send(result) if args_after is None else _send({"result": result, "args_after": args_after})
    except Exception as exc:  # the student's error, reported to the grader as data
        blob = wire.encode({"error": type(exc).__name__, "message": str(exc)[:2000],
                            "traceback": _student_traceback(exc)})
    publish_display_data({MIME: wire.to_text(blob)})
