"""The grader's half of trusted grading: call the student's functions in their kernel, get data back.

    student = Student(run)                     # run(code) executes code in the student's kernel
    got = student.select_for_prediction(ids, [0, 101, 102], 0.15, wire.Generator(7))   # a tensor, here
    model = student.SequenceClassifier(wire.Config(cfg))   # a Remote: the model stays in the kernel
    model.load_state_dict(state)
    logits = model(input_ids, attention_mask=mask).logits

Everything that comes back is data, checked here, in the grader's own process, against bertlib: the
student's code cannot patch the comparisons, the oracle or the asserts, because none of them run where
it runs.

Every call is also held to the rules of bertgrader.effects (issue 28): the kernel measures what the call
did (bertgrader.kernel.watch) and the grader judges it, so a call that changes an argument it was given
(a tensor, list, dict or config), changes the weights, train()/eval() mode or requires_grad of a module it
is given or called on, reseeds a global random generator, draws from a global generator although it was
given one, or draws nothing from the generator it was given, raises ``EffectFailed``, whose message names
the rule in words (checks.case adds the input). Calls whose purpose is an effect are not watched: a last
attribute in ``DRIVING`` (``model.eval()``, ``model.load_state_dict(...)``, ``student.torch.manual_seed(3)``).

    student.f.call_with(allow={"writes_args": "the task says it fills labels in place"})(labels, ...)
    student.f.call_with(manual_seed=3)(x)      # torch.manual_seed(3) in the kernel just before the call
    g = student.keep_in_kernel(wire.Generator(5))   # one generator the kernel keeps: pass it to two calls
    g.get_state()                                   # its state now, as data
    wire.Strided(t)                                 # an argument that arrives as a non-contiguous view
    model.gradients(cotangent, ids, output="logits")   # see checks.same_gradients
    f.gradients(cotangent, layer, x, stand_ins={"self_attention": checks.linearised(...)})   # through a stand-in

``allow`` maps a rule of ``effects.RULES`` to the reason the task gives (a few words; a rule name that does
not exist, or no reason, is a ValueError).
"""
from __future__ import annotations

import re

import torch

from bertgrader import effects
from bertgrader.i18n import tr
from bertgrader.kernel import wire
from bertgrader.kernel.kernel_side import MIME, REQUEST_KEY

# Methods called for their effect: the grader driving an object, not the student's function being graded.
DRIVING = frozenset({"train", "eval", "load_state_dict", "manual_seed", "set_state", "requires_grad_", "zero_grad"})


class StudentError(Exception):
    """The student's code raised (or never answered); ``str()`` is a message written for the student."""

    def __init__(self, message: str, kind: str = "error", error_type: str = ""):
        super().__init__(message)
        self.kind, self.error_type = kind, error_type  # error_type: the student's exception class name


class KernelGone(StudentError):
    """The kernel died or stopped answering: nothing more can be asked of it."""

    def __init__(self, message: str):
        super().__init__(message, kind="kernel")


class EffectFailed(StudentError):
    """The call broke a rule of bertgrader.effects; ``str()`` names it in words, for the student."""

    def __init__(self, message: str):
        super().__init__(message, kind="effect")


class Student:
    """The student's notebook namespace, seen from the grader."""

    def __init__(self, run, metadata: bool = False):
        # run(code) -> (outputs, status): status is "ok", "error", "timeout" or "dead". With ``metadata``,
        # run(code, metadata) sends ``metadata`` (a dict) in the execute_request's metadata, and the request
        # travels there instead of as a literal in the code: IPython parses a cell's code (about 1 s per MB
        # of tensors sent), never its metadata
        self._run, self._metadata = run, metadata

    def __getattr__(self, name: str) -> "Remote":
        if name.startswith("_"):
            raise AttributeError(name)
        return Remote(self, name, [])

    def has(self, name: str) -> bool:
        """Whether the notebook defines ``name``."""
        try:
            self._request({"op": "get", "target": name})
            return True
        except StudentError as e:
            if isinstance(e, KernelGone):
                raise
            return False

    def keep_in_kernel(self, value) -> "Remote":
        """``value`` (a wire.Generator, say) built in the kernel and kept there: one object that several calls
        can be given (two calls with one generator must give two draws)."""
        return self._request({"op": "keep", "value": value})

    def _request(self, request: dict, reply: bool = False):
        """The answer's value (a Remote for an object left in the kernel); with ``reply``, (value, the answer)."""
        text = wire.to_text(wire.encode(request))
        code = "__import__('bertgrader.kernel.kernel_side', fromlist=['serve']).serve({})"
        if self._metadata:
            outputs, status = self._run(code.format(""), {REQUEST_KEY: text})
        else:
            outputs, status = self._run(code.format(repr(text)))
        if status == "dead":
            raise KernelGone(tr("the kernel stopped (it crashed, exited or ran out of memory or time)"))
        if status == "timeout":
            raise StudentError(tr("did not return within the time limit of a cell (an endless loop?)"), kind="timeout")
        payloads = [o for o in outputs if o.get("output_type") == "display_data" and MIME in o.get("data", {})]
        if not payloads:
            raise StudentError(tr("the call gave no answer (did the code replace the grader's helper?)"), "protocol")
        try:
            answer = wire.decode(wire.from_text(payloads[-1]["data"][MIME]))
        except wire.WireError as e:
            raise StudentError(tr("the answer could not be read as data ({error})", error=e), "protocol") from None
        if not isinstance(answer, dict):
            raise StudentError(tr("the answer was not in the grader's format"), "protocol")
        if "error" in answer:
            where = "; ".join(_frame(str(t)) for t in answer.get("traceback", [])[-2:])
            raise StudentError(tr("raised {error}: {message}", error=answer["error"], message=answer.get("message", ""))
                               + (f" ({where})" if where else ""),
                               error_type=str(answer["error"]))
        value = answer.get("ok")
        value = Remote(self, wire.Handle(value.id, value.type_name), []) if isinstance(value, wire.Handle) else value
        return (value, answer) if reply else value


def _frame(line: str) -> str:
    """A frame of the student's traceback as the kernel wrote it ("line 3 in f: code"), in the language spoken."""
    m = re.fullmatch(r"line (\d+) in (.*?): (.*)", line, re.S)
    return tr("line {line} in {function}: {code}", line=m[1], function=m[2], code=m[3]) if m else line


class Linearised:
    """A stand-in's answer that gradients pass through: ``value`` (the correct result of the part it stands for,
    data) and ``linear`` ({"names", "wrt", "jacobian"}: the correct function's derivative at the input it
    should get, with respect to the tensors and module parameters ``wrt`` names). Made by checks.linearised;
    a call (``call_standing_in``) sends the value alone, ``gradients`` both."""

    def __init__(self, value, linear: dict):
        self.value, self.linear = value, linear


def _stand_in_request(stand_ins: dict, linear: bool) -> dict:
    """The request's "stand_in" (and, with ``linear``, "linear") fields for these stand-ins."""
    request = {"stand_in": {name: v.value if isinstance(v, Linearised) else v for name, v in stand_ins.items()}}
    if linear:
        request["linear"] = {name: v.linear for name, v in stand_ins.items() if isinstance(v, Linearised)}
    return request


def _unwrap(value):
    """Remotes in the arguments travel as handles to the objects they stand for."""
    if isinstance(value, Remote):
        if value._path:
            raise TypeError("pass the object itself, not one of its attributes")
        return value._target
    if isinstance(value, (list, tuple)):
        items = [_unwrap(v) for v in value]
        return items if isinstance(value, list) else tuple(items)
    if isinstance(value, dict):
        return {k: _unwrap(v) for k, v in value.items()}
    return value


class Remote:
    """A name in the student's notebook, or an object kept in their kernel, with an attribute path."""

    def __init__(self, student: Student, target, path: list[str], options: dict | None = None):
        self._student, self._target, self._path = student, target, list(path)
        self._options = dict(options or {})

    def __getattr__(self, name: str) -> "Remote":
        if name.startswith("_"):
            raise AttributeError(name)
        return Remote(self._student, self._target, self._path + [name])

    def call_with(self, allow: dict | None = None, manual_seed: int | None = None) -> "Remote":
        """This callable, with the rules in ``allow`` ({rule: the task's reason}) off for its calls and
        torch.manual_seed(``manual_seed``) in the kernel just before each call (dropout draws from torch's
        global generator)."""
        options = {"allow": effects.check_allow(allow)}
        if manual_seed is not None:
            options["manual_seed"] = int(manual_seed)
        return Remote(self._student, self._target, self._path, options)

    def _subject(self) -> str:
        if self._path or not isinstance(self._target, wire.Handle):
            return "your function" if not self._path else "your code"
        kind = self._target.type_name
        return "your function" if kind in ("", "function", "method", "partial") else f"your {kind}"

    def _call(self, args: list, kwargs: dict, **extra):
        args, kwargs = _unwrap(list(args)), _unwrap(kwargs)
        request = {"op": "call", "target": self._target, "path": self._path, "args": args, "kwargs": kwargs, **extra}
        watched = not (self._path and self._path[-1] in DRIVING)
        if watched:
            request["watch"] = True
        if "manual_seed" in self._options:
            request["manual_seed"] = self._options["manual_seed"]
        value, answer = self._student._request(request, reply=True)
        if watched:
            try:
                broken = effects.judge(answer.get("effects"), args, kwargs, self._options.get("allow"), self._subject())
            except effects.MalformedReport:
                raise StudentError(tr("the answer did not say what the call did (did the code replace the grader's "
                                      "helper?)"), "protocol") from None
            if broken:
                raise EffectFailed(broken)
        return value

    def __call__(self, *args, **kwargs):
        return self._call(list(args), kwargs)

    def calls(self, arguments) -> list:
        """``[self(*args, **kwargs) for args, kwargs in arguments]`` in one round trip to the kernel (a round
        trip costs about 10 ms: a schedule asked for at every step makes a hundred). The calls run in order,
        each watched and judged as a call alone is: the first that raises, or the first rule broken, fails."""
        items = [(_unwrap(list(a)), _unwrap(dict(k))) for a, k in arguments]
        request = {"op": "calls", "target": self._target, "path": self._path, "calls": [list(i) for i in items],
                   "watch": True}
        if "manual_seed" in self._options:
            request["manual_seed"] = self._options["manual_seed"]
        values, answer = self._student._request(request, reply=True)
        reports = answer.get("effects")
        if not (isinstance(values, list) and isinstance(reports, list) and len(values) == len(reports) == len(items)):
            raise StudentError(tr("the answer could not travel back as data"), "protocol")
        for (args, kwargs), report in zip(items, reports):
            try:
                broken = effects.judge(report, args, kwargs, self._options.get("allow"), self._subject())
            except effects.MalformedReport:
                raise StudentError(tr("the answer did not say what the call did (did the code replace the grader's "
                                      "helper?)"), "protocol") from None
            if broken:
                raise EffectFailed(broken)
        return values

    def call_keeping_args(self, *args, **kwargs):
        """(result, the positional arguments as they were after the call): to see what was changed in place
        (where ``call_with(allow={"writes_args": ...})`` lets the function write them)."""
        out = self._call(list(args), kwargs, return_args=True)
        if isinstance(out, Remote) or not isinstance(out, dict) or "args_after" not in out:
            raise StudentError(tr("the answer could not travel back as data"), "protocol")
        return out["result"], out["args_after"]

    def call_standing_in(self, stand_ins: dict, *args, manual_seed: int | None = None, **kwargs):
        """Call this function of the notebook while each notebook function named in ``stand_ins`` is replaced by
        a stand-in returning ``stand_ins[name]`` (data the grader computed: the correct result of the part it
        stands for). Returns (result, calls): {name: [each call of its stand-in as {"args", "kwargs", "where"}]};
        an argument that is not data is None in "args"/"kwargs", and "where" maps its position ("0", "1", ...)
        or keyword to where it sat among this call's own arguments ("args[0].attention.self").
        ``manual_seed``: torch.manual_seed(manual_seed) in the kernel just before the call."""
        target = self if manual_seed is None else Remote(self._student, self._target, self._path,
                                                          {**self._options, "manual_seed": int(manual_seed)})
        out = target._call(list(args), kwargs, **_stand_in_request(stand_ins, linear=False))
        if isinstance(out, Remote) or not isinstance(out, dict) or not isinstance(out.get("calls"), dict):
            raise StudentError(tr("the answer could not travel back as data"), "protocol")
        calls = {name: out["calls"].get(name) for name in stand_ins}
        if not all(isinstance(c, list) for c in calls.values()):
            raise StudentError(tr("the answer could not travel back as data"), "protocol")
        return out["result"], calls

    def gradients(self, cotangent: torch.Tensor, *args, output=None, stand_ins: dict | None = None,
                  **kwargs) -> dict:
        """Call this in the kernel with every floating-point tensor argument a leaf that requires grad,
        backpropagate ``cotangent`` from the output (the result, or its item/field ``output``), and return
        {"shape", "dtype", "connected", "names", "grads"}: "grads" maps each such argument's key ("0", "mask")
        and each parameter of the model called ("dense.weight") or of a module given ("2.dense.weight") to
        its gradient, None where none arrived. checks.same_gradients compares them with the reference's.
        ``stand_ins``: as call_standing_in's, for a part that builds on another; a Linearised one passes the
        gradient on to what it was given (a plain value stops it there)."""
        out = self._student._request({"op": "grad", "target": self._target, "path": self._path,
                                      "args": _unwrap(list(args)), "kwargs": _unwrap(kwargs),
                                      "cotangent": cotangent, "output": output,
                                      **(_stand_in_request(stand_ins, linear=True) if stand_ins else {})})
        ok = (isinstance(out, dict) and isinstance(out.get("grads"), dict) and isinstance(out.get("shape"), list)
              and all(g is None or isinstance(g, torch.Tensor) for g in out["grads"].values()))
        if not ok:
            raise StudentError(tr("the answer could not travel back as data"), "protocol")
        return out

    def value(self):
        """The attribute's value itself (data, or a Remote for an object)."""
        return self._student._request({"op": "get", "target": self._target, "path": self._path})

    def __repr__(self):
        return f"<remote {self._target}{''.join('.' + p for p in self._path)}>"
