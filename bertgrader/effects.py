"""The rules every hidden call is held to besides its result, judged here from the kernel's report.

bertgrader.kernel.watch measures, in the student's kernel, what a call did to its arguments, to the
modules it was given or called on, and to random state; bertgrader.remote asks for that report with
every call and hands it to ``judge``, which names the first rule broken, in words, or returns None:

    RULES["writes_args"]   # "a function leaves the arguments it is given as they were"
    judge(report, sent_args, sent_kwargs, allow={}, subject="your function")
    # "your function changed the tensor it was given as `mask` (argument 2): its shape went from (2, 7)
    #  to (2, 1, 7). ..."

``allow`` turns rules off for one call, each with the reason the task gives (``check_allow``).
"""
from __future__ import annotations

import torch

from bertgrader.kernel import wire

RULES = {
    "writes_args": "a function leaves the arguments it is given as they were (tensors, lists, dicts, configs)",
    "module_state": "a call leaves the parameters and buffers of a module it is given (or is called on) as they were",
    "train_mode": "a call leaves every module's train()/eval() mode as it was",
    "requires_grad": "a call leaves every parameter's requires_grad as it was",
    "reseeds": "a call never reseeds a global random generator (torch's, Python's or numpy's)",
    "global_rng": "a call given a generator draws from it alone; no call draws from Python's or numpy's global "
                  "random generator",
    "generator_unused": "a call given a generator draws from it (two calls with one generator give two draws)",
}
_GLOBAL = {"torch": "torch's global random generator (torch.rand, torch.randint, torch.randperm ... without "
                    "generator=)",
           "random": "Python's global random generator (random.random, random.shuffle ...)",
           "numpy": "numpy's global random generator (np.random.*)"}
_RESEEDED = {"torch": "torch's global random generator", "random": "Python's global random generator",
             "numpy": "numpy's global random generator"}


class MalformedReport(ValueError):
    """The kernel's report of a call is not in the form bertgrader.kernel.watch sends."""


def check_allow(allow) -> dict[str, str]:
    """``allow`` as {rule: reason}: every rule one of RULES, every reason a sentence (three words or more)
    saying why the task lets the function do it. A test-writing error raises ValueError."""
    allow = dict(allow or {})
    for rule, reason in allow.items():
        if rule not in RULES:
            raise ValueError(f"unknown rule {rule!r}: the rules are {sorted(RULES)}")
        if not isinstance(reason, str) or len(reason.split()) < 3:
            raise ValueError(f"allow[{rule!r}] needs the reason the task gives, in words (got {reason!r})")
    return allow


def is_generator(sent) -> bool:
    """Whether a value the grader sent stands for a random generator (a seed, or one kept in the kernel)."""
    if isinstance(sent, (wire.Generator, wire.Random)):
        return True
    return isinstance(sent, wire.Handle) and sent.type_name in ("Generator", "Random")


def _label(key: str, names: dict) -> str:
    name = names.get(key) if isinstance(names, dict) else None
    if key.isdigit():
        return f"`{name}` (argument {int(key) + 1})" if isinstance(name, str) else f"argument {int(key) + 1}"
    return f"`{key}`"


def _short(value, limit: int = 60) -> str:
    text = repr(value.tolist() if isinstance(value, torch.Tensor) and value.numel() <= 8 else value)
    return text if len(text) <= limit else text[:limit] + "..."


def _kind(sent) -> str:
    if isinstance(sent, (torch.Tensor, wire.Strided)):
        return "tensor"
    if isinstance(sent, wire.Config):
        return "config"
    return {list: "list", tuple: "tuple", dict: "dict"}.get(type(sent), type(sent).__name__)


def describe_change(sent, after) -> str:
    """How ``after`` (the argument after the call, as the kernel sent it) differs from ``sent``, in words."""
    if isinstance(sent, wire.Strided):
        sent = sent.tensor
    if after is None:
        return "it now holds something that cannot travel as data"
    if isinstance(sent, torch.Tensor):
        if not isinstance(after, torch.Tensor):
            return f"it became a {type(after).__name__}"
        if sent.shape != after.shape:
            return f"its shape went from {tuple(sent.shape)} to {tuple(after.shape)}"
        if sent.dtype != after.dtype:
            return f"its dtype went from {sent.dtype} to {after.dtype}"
        same = sent == after
        if sent.is_floating_point():
            same |= sent.isnan() & after.isnan()
        if bool(same.all()):
            return "it was written in place"
        where = tuple(int(i) for i in (~same).nonzero()[0])
        return (f"{int((~same).sum())} of its {sent.numel()} values changed (at {where}: "
                f"{sent[where].item():.6g} became {after[where].item():.6g})")
    if isinstance(sent, wire.Config):
        fields = dict(after) if isinstance(after, dict) else {}
        for k, v in sent.fields.items():
            if k in fields and fields[k] != v:
                return f"its field {k} went from {v!r} to {fields[k]!r}"
        return "it was changed"
    if isinstance(sent, (list, tuple)) and isinstance(after, (list, tuple)):
        if len(sent) != len(after):
            return f"its length went from {len(sent)} to {len(after)} (it now holds {_short(after)})"
        i = next((i for i, (a, b) in enumerate(zip(sent, after)) if not _equal(a, b)), None)
        return f"item {i} went from {_short(sent[i])} to {_short(after[i])}" if i is not None else "it was changed"
    if isinstance(sent, dict) and isinstance(after, dict):
        added, removed = sorted(map(str, after.keys() - sent.keys())), sorted(map(str, sent.keys() - after.keys()))
        if added or removed:
            return "; ".join(p for p in [f"{', '.join(added)} added" if added else "",
                                         f"{', '.join(removed)} removed" if removed else ""] if p)
        k = next((k for k in sent if not _equal(sent[k], after[k])), None)
        return f"its item {k!r} went from {_short(sent[k])} to {_short(after[k])}" if k is not None else "it was changed"
    return "it was changed" if type(sent) is type(after) else f"it became a {type(after).__name__}"


def _equal(a, b) -> bool:
    """Data equality, tensors compared by shape, dtype and value (NaN equal to NaN)."""
    if isinstance(a, wire.Strided):
        a = a.tensor
    if isinstance(a, torch.Tensor):
        if not isinstance(b, torch.Tensor) or a.shape != b.shape or a.dtype != b.dtype:
            return False
        same = a == b
        return bool((same | (a.isnan() & b.isnan()) if a.is_floating_point() else same).all())
    if isinstance(a, (list, tuple)):
        return isinstance(b, (list, tuple)) and len(a) == len(b) and all(_equal(x, y) for x, y in zip(a, b))
    if isinstance(a, dict):
        return isinstance(b, dict) and a.keys() == b.keys() and all(_equal(a[k], b[k]) for k in a)
    return type(a) is type(b) and a == b


def _module_words(key: str, names: dict) -> str:
    return "the model" if key == "self" else f"the module given as {_label(key, names)}"


def _mode(training: bool) -> str:
    return "train()" if training else "eval()"


def judge(report, sent_args, sent_kwargs, allow: dict | None = None, subject: str = "your function") -> str | None:
    """The first rule (of RULES, less those in ``allow``) the call broke, as a message for the student, or None.
    ``report``: what bertgrader.kernel.watch sent; ``sent_args``/``sent_kwargs``: what the grader sent.
    Raises MalformedReport if the report is not in watch's form."""
    try:
        return _judge(report, sent_args, sent_kwargs, dict(allow or {}), subject)
    except (KeyError, TypeError, ValueError, AttributeError, IndexError, RuntimeError) as e:
        raise MalformedReport(str(e)) from None


def _judge(report, sent_args, sent_kwargs, allow, subject):
    if not isinstance(report, dict):
        raise TypeError("the report is not a dict")
    names = report.get("names") or {}
    sent = {str(i): a for i, a in enumerate(sent_args)} | dict(sent_kwargs)
    changed, modules = dict(report["changed"]), dict(report["modules"])
    if "writes_args" not in allow:
        for key, after in changed.items():
            if key in sent:
                kind = _kind(sent[key])
                how = ("no in-place operations such as unsqueeze_, masked_fill_, clamp_ or +=" if kind == "tensor"
                       else "no .pop, .append, .sort or item assignment" if kind in ("list", "dict") else
                       "no assignment to its fields")
                return (f"{subject} changed the {kind} it was given as {_label(key, names)}: "
                        f"{describe_change(sent[key], after)}. A function leaves its arguments as they were "
                        f"({how}): the caller still uses them")
    for key, found in modules.items():
        module = _module_words(str(key), names)
        if found.get("values") and "module_state" not in allow:
            values = list(found["values"])
            more = f" and {len(values) - 3} more" if len(values) > 3 else ""
            return (f"{subject} changed the weights of {module}: {', '.join(map(str, values[:3]))}{more}. "
                    "A forward pass only reads the parameters and buffers (training changes them, in the "
                    "optimizer's step)")
        if found.get("training") and "train_mode" not in allow:
            name, before, after = found["training"][0]
            where = module if name == "" else f"`{name}` of {module}"
            more = f" (and {len(found['training']) - 1} more submodules)" if len(found["training"]) > 1 else ""
            return (f"{subject} left {where} in {_mode(bool(after))} mode{more}; it was in {_mode(bool(before))} "
                    "mode before the call. The caller chooses the mode (model.train() / model.eval()): a call "
                    "never switches it")
        if found.get("requires_grad") and "requires_grad" not in allow:
            name, before, after = found["requires_grad"][0]
            return (f"{subject} changed requires_grad of `{name}` of {module} from {bool(before)} to {bool(after)}; "
                    "a call leaves which parameters train to the caller")
    reseeded = [str(r) for r in report["reseeded"]]
    if reseeded and "reseeds" not in allow:
        which = _RESEEDED.get(reseeded[0].split(".")[0], "a global random generator")
        return (f"{subject} reseeded {which} (it called {', '.join(reseeded)}): a function never touches the "
                "global random state its caller relies on; draw from the generator it is given")
    given = [key for key, value in sent.items() if is_generator(value)]
    moved = [str(m) for m in report["global"]]
    if given and moved and "global_rng" not in allow:
        return (f"{subject} drew from {_GLOBAL.get(moved[0], moved[0])} although it was given a generator "
                f"({_label(given[0], names)}): draw every random number from that generator, e.g. "
                "torch.rand(shape, generator=generator)")
    # Torch's global generator serves a model's initialisation and dropout; Python's and numpy's serve nothing here
    untouchable = [m for m in moved if m != "torch"]
    if untouchable and "global_rng" not in allow:
        return (f"{subject} drew from {_GLOBAL.get(untouchable[0], untouchable[0])}: its caller's random state "
                "changed. Draw random numbers only from a generator the function is given")
    if "generator_unused" not in allow:
        generators = dict(report["generators"])
        for key in given:
            found = generators.get(key)
            if found is None:
                raise KeyError(f"no report of the generator {key}")
            if not _advanced(sent[key], found):
                return (f"{subject} drew nothing from the generator it was given as {_label(key, names)}: draw the "
                        "random numbers from it, not from a copy of it or a generator seeded from it (two calls "
                        "with one generator must give two different draws)")
    return None


def _advanced(sent, found: dict) -> bool:
    """Whether a generator moved: for one the grader seeded, its state after the call against the seed's."""
    state = found.get("state")
    if isinstance(sent, wire.Generator) and isinstance(state, torch.Tensor):
        return not torch.equal(state, torch.Generator().manual_seed(sent.seed).get_state())
    return bool(found["advanced"])
