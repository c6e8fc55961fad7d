"""The kernel's half of trusted grading: run one call the grader asks for, send back data.

The grader (bertgrader.remote) executes ``serve()`` in the student's kernel, the request (base64 text) in
the execute_request's metadata under ``REQUEST_KEY`` (or ``serve("<base64 request>")``, where the grader's
runner cannot send metadata). The request names a function of the notebook (or an object kept from an
earlier call) and carries its arguments as data (bertgrader.kernel.wire). The result goes back as a
display output of type ``MIME``; a result that cannot travel as data (a model, say) stays here and the
grader gets a handle to it.

This module runs in the student's process, so the student can replace it; that changes nothing, because
the grader only ever reads data from here and decides everything on its own side.

Requests (``op``): "get" an attribute; "call" a function or object (``watch``: measure what the call did,
bertgrader.kernel.watch, and send the report as ``effects``; ``manual_seed``: seed torch's global generator
first; ``return_args``; ``stand_in``, with ``linear``); "calls": one function on each of several argument
lists (``calls``), in order, in one round trip, each call watched alone (``effects``: one report a call);
"keep" a value built here (a generator two calls share) and answer a handle to it; "grad": call (with
``stand_in`` and ``linear`` too), backpropagate the grader's cotangent, answer the gradients (``_gradients``).
"""
from __future__ import annotations

import contextlib
import sys
import traceback

import torch

from bertgrader.kernel import MIME, REQUEST_KEY, wire
from bertgrader.kernel.watch import (Watch, arguments, data_or_none, float_tensors, lift_leaves, map_tensors,
                                     parameter_names)

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


def _keep(value) -> wire.Handle:
    _objects[len(_objects) + 1] = value
    return wire.Handle(len(_objects), type(value).__name__)


def _send(value, extra: dict) -> bytes:
    try:
        return wire.encode({"ok": value, **extra})
    except wire.Unsendable:
        return wire.encode({"ok": _keep(value), **extra})



def _student_traceback(exc: BaseException) -> list[str]:
    """The frames of the student's own code (cells, and bertlib's stubs), without this module's or torch's."""
    frames = [f for f in traceback.extract_tb(exc.__traceback__)
              if "bertgrader" not in f.filename and "site-packages" not in f.filename]
    return [f"line {f.lineno} in {f.name}: {f.line}" for f in frames][-5:]


def _run(request: dict):
    """(the value to answer, extra fields of the answer)."""
    namespace = sys.modules["__main__"].__dict__
    if request["op"] == "keep":
        return _keep(request["value"]), {}
    target = request["target"]
    if isinstance(target, wire.Handle):
        root = _resolve(target)
    elif target in namespace:
        root = namespace[target]
    else:
        raise NameError(f"{target} is not defined: run the cell that defines it (and keep its name)")
    obj = root
    for name in request.get("path", []):
        obj = getattr(obj, name)
    if request["op"] == "get":
        return obj, {}
    args, kwargs = _resolve(request.get("args", [])), _resolve(request.get("kwargs", {}))
    model = root if isinstance(root, torch.nn.Module) else obj if isinstance(obj, torch.nn.Module) else None
    if request["op"] == "grad":
        with _standing_in(namespace, request.get("stand_in") or {}, request.get("linear") or {}, args, record=False):
            return _gradients(obj, model, args, kwargs, request["cotangent"], request.get("output")), {}
    if request["op"] == "calls":  # one function on several argument lists, in order, each call watched alone
        results, reports = [], []
        for call_args, call_kwargs in request["calls"]:
            call_args, call_kwargs = _resolve(call_args), _resolve(call_kwargs)
            if request.get("manual_seed") is not None:
                torch.manual_seed(int(request["manual_seed"]))
            watch = Watch(call_args, call_kwargs, fn=obj, self_module=model) if request.get("watch") else None
            with watch or contextlib.nullcontext():
                results.append(obj(*call_args, **call_kwargs))
            reports.append(watch.report() if watch else None)
        return results, ({"effects": reports} if request.get("watch") else {})
    if request.get("manual_seed") is not None:
        torch.manual_seed(int(request["manual_seed"]))
    watch = Watch(args, kwargs, fn=obj, self_module=model) if request.get("watch") else None
    with watch or contextlib.nullcontext():
        if "stand_in" in request:
            with _standing_in(namespace, request["stand_in"], request.get("linear") or {}, args) as calls:
                result = {"result": obj(*args, **kwargs), "calls": calls}
        else:
            result = obj(*args, **kwargs)
    if request.get("return_args"):
        result = {"result": result, "args_after": [data_or_none(a) for a in args]}
    return result, ({"effects": watch.report()} if watch else {})


def _pick(result, output):
    """The output a gradient flows back from: the result, its item ``output`` (an index) or field (a name)."""
    if output is None:
        return result
    if isinstance(output, int) or isinstance(result, dict):
        return result[output]
    return getattr(result, str(output))


def _gradients(obj, model, args, kwargs, cotangent, output) -> dict:
    """Call ``obj`` with every floating-point tensor argument made a leaf that requires grad, backpropagate
    ``cotangent`` from its output, and answer {"shape", "dtype", "connected", "names", "grads"}: the
    gradient of each such argument (key "0", "mask", "1[2]" inside a list) and of each parameter of the
    model called ("dense.weight") or of a module given ("2.dense.weight"); None where none arrived."""
    leaves: dict[str, torch.Tensor] = {}

    keyed = arguments(args, kwargs)
    lifted = {key: lift_leaves(v, key, leaves) for key, v in keyed}
    args = [lifted[str(i)] for i in range(len(args))]
    kwargs = {k: lifted[k] for k in kwargs}
    params = {}
    for prefix, module in [("", model)] + [(f"{k}.", v) for k, v in keyed if isinstance(v, torch.nn.Module)]:
        if isinstance(module, torch.nn.Module):
            for name, p in module.named_parameters():
                p.grad = None
                params[prefix + name] = p
    with torch.enable_grad():
        out = _pick(obj(*args, **kwargs), output)
    if not isinstance(out, torch.Tensor):
        raise TypeError(f"expected a tensor to backpropagate from, got {type(out).__name__}")
    answer = {"shape": list(out.shape), "dtype": out.dtype, "connected": bool(out.requires_grad),
              "names": parameter_names(obj, args, kwargs), "grads": {}}
    if out.requires_grad and list(out.shape) == list(cotangent.shape):
        # <out, cotangent> backpropagated from a scalar: the same gradient, bit for bit, without the gradient
        # argument of backward(out, cotangent), which makes torch import sympy (0.7 s in every fresh kernel)
        (out * cotangent.to(out.dtype)).sum().backward()
    answer["grads"] = {key: (t.grad.detach() if t.grad is not None else None)
                       for key, t in [*leaves.items(), *params.items()]}
    return answer


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


@contextlib.contextmanager
def _standing_in(namespace: dict, stand_ins: dict, linear: dict, args, record: bool = True):
    """While active, each notebook function named in ``stand_ins`` is replaced by one that records what it is
    given and returns ``stand_ins[name]``: how a part that builds on others is graded, with their correct
    results, computed by the grader. Yields {name: [each call as {"args", "kwargs", "where"}]}: data (an
    object that is not data as where it sits among the call's arguments, ``args``); the grader checks it,
    never this module. ``linear[name]``, when given, makes that stand-in differentiable (``_linear_part``)."""
    calls = {name: [] for name in stand_ins}
    blobs = {name: wire.encode(value) for name, value in stand_ins.items()}  # encoded once, decoded per call

    def stand_in(name):
        def record(*a, **k):
            if record_calls:
                given = {**{str(i): x for i, x in enumerate(a)}, **k}
                data = {key: data_or_none(x) for key, x in given.items()}  # each argument encoded once
                calls[name].append({
                    "args": [data[str(i)] for i in range(len(a))], "kwargs": {key: data[key] for key in k},
                    "where": {key: _where(x, args) for key, x in given.items() if x is not None and data[key] is None}})
            value = wire.decode(blobs[name], build=wire.materialize)  # a fresh copy each time
            return _linear_part(value, linear[name], a, k) if name in linear else value
        return record

    record_calls = record
    missing = object()
    theirs = {name: namespace.get(name, missing) for name in stand_ins}
    namespace.update({name: stand_in(name) for name in stand_ins})
    try:
        yield calls
    finally:
        for name, value in theirs.items():
            if value is missing:
                namespace.pop(name, None)
            else:
                namespace[name] = value


def _linear_part(value, spec: dict, a, k):
    """``value`` plus J (x - x0) where x is what the stand-in was given (the tensors and module parameters
    ``spec["wrt"]`` names: "hidden_states", "attn.query.weight", by the stand-in's parameter names
    ``spec["names"]``) and x0 the same, detached: the same numbers, and the gradient of the correct function
    at the input it should get, J^T g, the grader's Jacobian J (``spec["jacobian"]``, outputs x inputs). So a
    gradient that reaches the stand-in goes on to what it was given, as through the function it stands for."""
    if not torch.is_grad_enabled():
        return value
    bound = dict(zip(spec["names"], a)) | dict(k)
    inputs = []
    for key in spec["wrt"]:
        head, _, rest = key.partition(".")
        if bound.get(head) is None:
            raise TypeError(f"missing the argument `{head}`")
        x = bound[head].get_parameter(rest) if rest else bound[head]
        inputs.append(x.reshape(-1))
    x = torch.cat(inputs)
    if not x.requires_grad:
        return value
    delta = torch.where(torch.isfinite(x), x - x.detach(), torch.zeros_like(x))  # 0, with x's gradient
    step = spec["jacobian"].to(delta.dtype) @ delta  # (outputs,)
    outputs, pieces, at = float_tensors(value), {}, 0
    for t in outputs:
        pieces[id(t)] = step[at:at + t.numel()].reshape(t.shape).to(t.dtype)
        at += t.numel()
    return map_tensors(value, lambda t: t + pieces[id(t)] if id(t) in pieces else t)


def _request_in_metadata() -> str:
    """The request the grader put in the metadata of the execute_request running now. Sent there rather than
    as a literal in the cell's code, which IPython tokenizes and parses (about 1 s for each MB of tensors);
    the metadata is only JSON-decoded."""
    from IPython import get_ipython

    text = get_ipython().kernel.get_parent("shell").get("metadata", {}).get(REQUEST_KEY)
    if not isinstance(text, str):
        raise LookupError("no request in the message that ran this code")
    return text


def serve(text: str | None = None) -> None:
    """Answer one request: ``text``, or with none, the one in the running execute_request's metadata."""
    from IPython.display import publish_display_data

    try:
        text = _request_in_metadata() if text is None else text
        request = wire.decode(wire.from_text(text), build=wire.materialize)
        result, extra = _run(request)
        blob = _send(result, extra)
    except Exception as exc:  # the student's error, reported to the grader as data
        blob = wire.encode({"error": type(exc).__name__, "message": str(exc)[:2000],
                            "traceback": _student_traceback(exc)})
    publish_display_data({MIME: wire.to_text(blob)})
