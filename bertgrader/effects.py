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

from bertgrader.i18n import N_, tr
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
_GLOBAL = {"torch": N_("torch's global random generator (torch.rand, torch.randint, torch.randperm ... without "
                       "generator=)"),
           "random": N_("Python's global random generator (random.random, random.shuffle ...)"),
           "numpy": N_("numpy's global random generator (np.random.*)")}
_RESEEDED = {"torch": N_("torch's global random generator"), "random": N_("Python's global random generator"),
             "numpy": N_("numpy's global random generator")}


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
        return tr("`{name}` (argument {n})", name=name, n=int(key) + 1) if isinstance(name, str) \
            else tr("argument {n}", n=int(key) + 1)
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


def _kind_words(kind: str) -> str:
    """A kind of argument, in the language spoken (a Python type name stays as it is)."""
    return {"tensor": tr("tensor"), "config": tr("config"), "list": tr("list"), "tuple": tr("tuple"),
            "dict": tr("dict")}.get(kind, kind)


def describe_change(sent, after) -> str:
    """How ``after`` (the argument after the call, as the kernel sent it) differs from ``sent``, in words."""
    if isinstance(sent, wire.Strided):
        sent = sent.tensor
    if after is None:
        return tr("it now holds something that cannot travel as data")
    if isinstance(sent, torch.Tensor):
        if not isinstance(after, torch.Tensor):
            return tr("it became a {type}", type=type(after).__name__)
        if sent.shape != after.shape:
            return tr("its shape went from {before} to {after}", before=tuple(sent.shape), after=tuple(after.shape))
        if sent.dtype != after.dtype:
            return tr("its dtype went from {before} to {after}", before=sent.dtype, after=after.dtype)
        same = sent == after
        if sent.is_floating_point():
            same |= sent.isnan() & after.isnan()
        if bool(same.all()):
            return tr("it was written in place")
        where = tuple(int(i) for i in (~same).nonzero()[0])
        return tr("{n} of its {total} values changed (at {where}: {before:.6g} became {after:.6g})",
                  n=int((~same).sum()), total=sent.numel(), where=where, before=sent[where].item(),
                  after=after[where].item())
    if isinstance(sent, wire.Config):
        fields = dict(after) if isinstance(after, dict) else {}
        for k, v in sent.fields.items():
            if k in fields and fields[k] != v:
                return tr("its field {field} went from {before!r} to {after!r}", field=k, before=v, after=fields[k])
        return tr("it was changed")
    if isinstance(sent, (list, tuple)) and isinstance(after, (list, tuple)):
        if len(sent) != len(after):
            return tr("its length went from {before} to {after} (it now holds {now})", before=len(sent),
                      after=len(after), now=_short(after))
        i = next((i for i, (a, b) in enumerate(zip(sent, after)) if not _equal(a, b)), None)
        return tr("item {i} went from {before} to {after}", i=i, before=_short(sent[i]), after=_short(after[i])) \
            if i is not None else tr("it was changed")
    if isinstance(sent, dict) and isinstance(after, dict):
        added, removed = sorted(map(str, after.keys() - sent.keys())), sorted(map(str, sent.keys() - after.keys()))
        if added or removed:
            return "; ".join(p for p in [tr("{keys} added", keys=", ".join(added)) if added else "",
                                         tr("{keys} removed", keys=", ".join(removed)) if removed else ""] if p)
        k = next((k for k in sent if not _equal(sent[k], after[k])), None)
        return tr("its item {key!r} went from {before} to {after}", key=k, before=_short(sent[k]),
                  after=_short(after[k])) if k is not None else tr("it was changed")
    return tr("it was changed") if type(sent) is type(after) else tr("it became a {type}", type=type(after).__name__)


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
    return tr("the model") if key == "self" else tr("the module given as {label}", label=_label(key, names))


def _mode(training: bool) -> str:
    return "train()" if training else "eval()"


def judge(report, sent_args, sent_kwargs, allow: dict | None = None, subject: str | None = None) -> str | None:
    """The first rule (of RULES, less those in ``allow``) the call broke, as a message for the student, or None.
    ``report``: what bertgrader.kernel.watch sent; ``sent_args``/``sent_kwargs``: what the grader sent.
    Raises MalformedReport if the report is not in watch's form."""
    try:
        return _judge(report, sent_args, sent_kwargs, dict(allow or {}), subject or tr("your function"))
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
                how = (tr("no in-place operations such as unsqueeze_, masked_fill_, clamp_ or +=") if kind == "tensor"
                       else tr("no .pop, .append, .sort or item assignment") if kind in ("list", "dict") else
                       tr("no assignment to its fields"))
                return tr("{subject} changed the {kind} it was given as {label}: {change}. A function leaves its "
                          "arguments as they were ({how}): the caller still uses them", subject=subject,
                          kind=_kind_words(kind), label=_label(key, names), change=describe_change(sent[key], after),
                          how=how)
    for key, found in modules.items():
        module = _module_words(str(key), names)
        if found.get("values") and "module_state" not in allow:
            values = list(found["values"])
            more = tr(" and {n} more", n=len(values) - 3) if len(values) > 3 else ""
            return tr("{subject} changed the weights of {module}: {names}{more}. A forward pass only reads the "
                      "parameters and buffers (training changes them, in the optimizer's step)", subject=subject,
                      module=module, names=", ".join(map(str, values[:3])), more=more)
        if found.get("training") and "train_mode" not in allow:
            name, before, after = found["training"][0]
            where = module if name == "" else tr("`{name}` of {module}", name=name, module=module)
            more = tr(" (and {n} more submodules)", n=len(found["training"]) - 1) if len(found["training"]) > 1 else ""
            return tr("{subject} left {where} in {after} mode{more}; it was in {before} mode before the call. The "
                      "caller chooses the mode (model.train() / model.eval()): a call never switches it",
                      subject=subject, where=where, after=_mode(bool(after)), more=more, before=_mode(bool(before)))
        if found.get("requires_grad") and "requires_grad" not in allow:
            name, before, after = found["requires_grad"][0]
            return tr("{subject} changed requires_grad of `{name}` of {module} from {before} to {after}; a call "
                      "leaves which parameters train to the caller", subject=subject, name=name, module=module,
                      before=bool(before), after=bool(after))
    reseeded = [str(r) for r in report["reseeded"]]
    if reseeded and "reseeds" not in allow:
        which = tr(_RESEEDED.get(reseeded[0].split(".")[0], N_("a global random generator")))
        return tr("{subject} reseeded {which} (it called {calls}): a function never touches the global random "
                  "state its caller relies on; draw from the generator it is given", subject=subject, which=which,
                  calls=", ".join(reseeded))
    given = [key for key, value in sent.items() if is_generator(value)]
    moved = [str(m) for m in report["global"]]
    if given and moved and "global_rng" not in allow:
        return tr("{subject} drew from {which} although it was given a generator ({label}): draw every random "
                  "number from that generator, e.g. torch.rand(shape, generator=generator)", subject=subject,
                  which=tr(_GLOBAL.get(moved[0], moved[0])), label=_label(given[0], names))
    # Torch's global generator serves a model's initialisation and dropout; Python's and numpy's serve nothing here
    untouchable = [m for m in moved if m != "torch"]
    if untouchable and "global_rng" not in allow:
        return tr("{subject} drew from {which}: its caller's random state changed. Draw random numbers only "
                  "from a generator the function is given", subject=subject,
                  which=tr(_GLOBAL.get(untouchable[0], untouchable[0])))
    if "generator_unused" not in allow:
        generators = dict(report["generators"])
        for key in given:
            found = generators.get(key)
            if found is None:
                raise KeyError(f"no report of the generator {key}")
            if not _advanced(sent[key], found):
                return tr("{subject} drew nothing from the generator it was given as {label}: draw the random "
                          "numbers from it, not from a copy of it or a generator seeded from it (two calls with one "
                          "generator must give two different draws)", subject=subject, label=_label(key, names))
    return None


def _advanced(sent, found: dict) -> bool:
    """Whether a generator moved: for one the grader seeded, its state after the call against the seed's."""
    state = found.get("state")
    if isinstance(sent, wire.Generator) and isinstance(state, torch.Tensor):
        return not torch.equal(state, torch.Generator().manual_seed(sent.seed).get_state())
    return bool(found["advanced"])
