"""What one call of the student's code did besides returning: measured in the kernel, judged by the grader.

    watch = Watch(args, kwargs, self_module=model)   # snapshots taken here, before the call
    with watch:                                       # reseeding functions are recorded while it runs
        result = fn(*args, **kwargs)
    report = watch.report()                           # data, sent to the grader with the result

The report says, as data, what differs after the call (bertgrader.effects turns it into a verdict and words):

    {"names":      {"0": "input_ids", "mask": "mask"},      # parameter names, by argument key (when any is found)
     "changed":    {"1": <the argument after the call>},    # data arguments that differ (None: no longer data)
     "modules":    {"self": {"values": ["dense.weight"],     # parameters/buffers changed, added or removed
                             "training": [["", True, False]],   # submodule, mode before, mode after
                             "requires_grad": [["dense.bias", True, False]]}},
     "reseeded":   ["torch.manual_seed"],                   # global seeding functions the call used
     "global":     ["torch"],                               # global generators whose state moved
     "generators": {"3": {"advanced": True, "state": <uint8 tensor>}}}   # generators given: moved or not

An argument's key is its position ("0", "1", ...) or its keyword. Only what differs is sent, so a call
whose arguments are left alone adds a few hundred bytes to its answer. This runs in the student's
process: it is a measurement for honest code, which a student who rewrites it can fool, never a way
to make a wrong result right (the results themselves are checked by the grader).
"""
from __future__ import annotations

import dataclasses
import inspect
import random
import sys

import torch

from bertgrader.kernel import wire

# Global seeding functions a call must not use (module, attribute): wrapped while the call runs.
RESEEDERS = [("torch", "manual_seed"), ("torch", "seed"), ("torch", "set_rng_state"),
             ("torch.random", "manual_seed"), ("torch.random", "seed"), ("torch.random", "set_rng_state"),
             ("random", "seed"), ("random", "setstate"), ("numpy.random", "seed"), ("numpy.random", "set_state")]
_UNTRACKED = object()


def arguments(args, kwargs) -> list[tuple[str, object]]:
    """[(key, value)]: positions as "0", "1", ..., keywords by name."""
    return [(str(i), a) for i, a in enumerate(args)] + list(kwargs.items())


def parameter_names(fn, args, kwargs) -> dict[str, str]:
    """{argument key: the name of the parameter it binds to} for a call of ``fn`` (empty where unknown)."""
    try:
        target = fn.forward if isinstance(fn, torch.nn.Module) else fn
        parameters = list(inspect.signature(target).parameters.values())
    except (TypeError, ValueError, AttributeError):
        return {}
    positional = [p.name for p in parameters if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    names = {str(i): positional[i] for i in range(min(len(args), len(positional)))}
    names.update({k: k for k in kwargs})
    return names


def _copy(value, depth: int = 0):
    """A copy of a data argument to compare with after the call (tensors cloned), or _UNTRACKED."""
    if depth > wire.MAX_DEPTH:
        return _UNTRACKED
    if isinstance(value, torch.Tensor):
        return value.detach().clone()
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, (list, tuple, dict)):
        items = value.items() if isinstance(value, dict) else enumerate(value)
        copied = {k: _copy(v, depth + 1) for k, v in items}
        if any(c is _UNTRACKED for c in copied.values()):
            return _UNTRACKED
        return (type(value), len(value), copied)
    if dataclasses.is_dataclass(value) and not isinstance(value, type):  # a config
        return (type(value), None, _copy(vars(value), depth + 1))
    return _UNTRACKED


def _bytes(t: torch.Tensor) -> bytes:
    """A tensor's values as bytes: compared as Python bytes, not with torch.equal or ==, which the student's
    code may have replaced (a cheat that makes every comparison true would make every generator look unused)."""
    flat = t.detach().reshape(-1).contiguous()
    return flat.view(torch.uint8).numpy().tobytes() if flat.numel() else b""


def _same_tensor(a: torch.Tensor, b) -> bool:
    """Same shape, dtype and bits (a NaN equals itself; -0.0 written over 0.0 is a change)."""
    return isinstance(b, torch.Tensor) and a.shape == b.shape and a.dtype == b.dtype and _bytes(a) == _bytes(b)


def _same(copy, value, depth: int = 0) -> bool:
    if isinstance(copy, torch.Tensor):
        return _same_tensor(copy, value)
    if not isinstance(copy, tuple):
        return type(copy) is type(value) and (copy == value or (copy != copy and value != value))  # NaN is NaN
    kind, length, items = copy
    if type(value) is not kind:
        return False
    if length is None:  # a dataclass: its fields
        return _same(items, vars(value), depth + 1)
    if len(value) != length:
        return False
    now = value.items() if isinstance(value, dict) else enumerate(value)
    now = dict(now)
    return now.keys() == items.keys() and all(_same(items[k], now[k], depth + 1) for k in items)


def _module_state(module: torch.nn.Module):
    values = {k: v.detach().clone() for k, v in [*module.named_parameters(), *module.named_buffers()]}
    return (values, {k: m.training for k, m in module.named_modules()},
            {k: p.requires_grad for k, p in module.named_parameters()})


def _module_changes(before, module: torch.nn.Module) -> dict:
    values, modes, grads = before
    now_values, now_modes, now_grads = _module_state(module)
    changed = sorted(k for k in values.keys() | now_values.keys()
                     if k not in values or k not in now_values or not _same_tensor(values[k], now_values[k]))
    training = [[k, modes[k], now_modes[k]] for k in modes if k in now_modes and modes[k] != now_modes[k]]
    requires = [[k, grads[k], now_grads[k]] for k in grads if k in now_grads and grads[k] != now_grads[k]]
    return {key: v for key, v in [("values", changed), ("training", training), ("requires_grad", requires)] if v}


def _global_states() -> dict:
    states = {"torch": torch.get_rng_state(), "random": random.getstate()}
    numpy = sys.modules.get("numpy")
    if numpy is not None:
        kind, keys, pos, *rest = numpy.random.get_state()
        states["numpy"] = (kind, keys.tobytes(), pos, *rest)
    return states


def _generator_state(gen):
    return gen.get_state() if isinstance(gen, torch.Generator) else gen.getstate()


class Watch:
    """Snapshots of a call's arguments, modules, generators and global random state, taken when made; a
    context manager that records the global seeding functions used inside it; ``report()`` after the call."""

    def __init__(self, args, kwargs, fn=None, self_module: torch.nn.Module | None = None):
        self.items = arguments(args, kwargs)
        self._call = (fn, args, kwargs)  # its parameter names are read only for a report that names one
        self.copies, self.modules, self.generators = {}, {}, {}
        if isinstance(self_module, torch.nn.Module):
            self.modules["self"] = (self_module, _module_state(self_module))
        for key, value in self.items:
            if isinstance(value, torch.nn.Module):
                self.modules.setdefault(key, (value, _module_state(value)))
            elif isinstance(value, (torch.Generator, random.Random)):
                self.generators[key] = (value, _generator_state(value))
            else:
                copy = _copy(value)
                if copy is not _UNTRACKED:
                    self.copies[key] = copy
        self.states = _global_states()
        self.reseeded: list[str] = []
        self._saved: list = []

    def __enter__(self):
        for module_name, attr in RESEEDERS:
            module = sys.modules.get(module_name)
            original = getattr(module, attr, None) if module is not None else None
            if callable(original):
                self._saved.append((module, attr, original))
                setattr(module, attr, self._recorder(f"{module_name}.{attr}", original))
        return self

    def __exit__(self, *exc):
        for module, attr, original in reversed(self._saved):
            setattr(module, attr, original)
        self._saved.clear()
        return False

    def _recorder(self, name, original):
        def recorded(*a, **k):
            if name not in self.reseeded:
                self.reseeded.append(name)
            return original(*a, **k)
        return recorded

    def report(self) -> dict:
        values = dict(self.items)
        changed = {key: data_or_none(values[key]) for key, copy in self.copies.items()
                   if not _same(copy, values[key])}
        modules = {key: c for key, (m, before) in self.modules.items() if (c := _module_changes(before, m))}
        now = _global_states()
        moved = [name for name in self.states if name in now and not _equal_state(self.states[name], now[name])]
        generators = {}
        for key, (gen, before) in self.generators.items():
            after = _generator_state(gen)
            generators[key] = {"advanced": not _equal_state(before, after),
                               "state": after if isinstance(after, torch.Tensor) else None}
        fn, args, kwargs = self._call
        found = changed or modules or self.reseeded or moved or not all(g["advanced"] for g in generators.values())
        names = parameter_names(fn, args, kwargs) if found and fn is not None else {}
        return {"names": names, "changed": changed, "modules": modules, "reseeded": list(self.reseeded),
                "global": moved, "generators": generators}


def _equal_state(a, b) -> bool:
    if isinstance(a, torch.Tensor):
        return _same_tensor(a, b)
    return a == b


def data_or_none(value):
    """``value`` if it can travel as data (bertgrader.kernel.wire), else None."""
    try:
        wire.encode(value)
        return value
    except wire.Unsendable:
        return None


def lift_leaves(value, key: str, leaves: dict, depth: int = 0):
    """``value`` with every floating-point tensor in it (inside lists, tuples and dicts, 4 deep) replaced by a
    detached copy that requires grad, recorded in ``leaves`` under its key ("0", "mask", "1[2]"): what both the
    kernel (the student's gradients) and the grader (bertlib's) differentiate, keyed alike."""
    if isinstance(value, torch.Tensor) and value.is_floating_point():
        leaves[key] = value.detach().requires_grad_()
        return leaves[key]
    if isinstance(value, (list, tuple)) and depth < 4:
        items = [lift_leaves(v, f"{key}[{i}]", leaves, depth + 1) for i, v in enumerate(value)]
        return items if isinstance(value, list) else tuple(items)
    if isinstance(value, dict) and depth < 4:
        return {k: lift_leaves(v, f"{key}[{k}]", leaves, depth + 1) for k, v in value.items()}
    return value


def map_tensors(value, fn, depth: int = 0):
    """``value`` with ``fn(t)`` in place of every tensor ``t`` in it (inside lists and tuples, 4 deep)."""
    if isinstance(value, torch.Tensor):
        return fn(value)
    if isinstance(value, (list, tuple)) and depth < 4:
        items = [map_tensors(v, fn, depth + 1) for v in value]
        return items if isinstance(value, list) else tuple(items)
    return value


def float_tensors(value, found: list | None = None, depth: int = 0) -> list:
    """The floating-point tensors of a result (a tensor, or tuples and lists of them, 4 deep), in order: what a
    linearised stand-in's Jacobian has a row for, here (the grader, checks.linearised) and in the kernel."""
    found = [] if found is None else found
    if isinstance(value, torch.Tensor) and value.is_floating_point():
        found.append(value)
    elif isinstance(value, (list, tuple)) and depth < 4:
        for v in value:
            float_tensors(v, found, depth + 1)
    return found
