"""The grader's half of trusted grading: call the student's functions in their kernel, get data back.

    student = Student(run)                     # run(code) executes code in the student's kernel
    got = student.select_for_prediction(ids, [0, 101, 102], 0.15, wire.Generator(7))   # a tensor, here
    model = student.SequenceClassifier(wire.Config(cfg))   # a Remote: the model stays in the kernel
    model.call("load_state_dict", state)
    logits = model(input_ids, attention_mask=mask).logits

Everything that comes back is data, checked here, in the grader's own process, against bertlib: the
student's code cannot patch the comparisons, the oracle or the asserts, because none of them run where
it runs.
"""
from __future__ import annotations

from bertgrader.kernel import wire
from bertgrader.kernel.kernel_side import MIME


class StudentError(Exception):
    """The student's code raised (or never answered); ``str()`` is a message written for the student."""

    def __init__(self, message: str, kind: str = "error", error_type: str = ""):
        super().__init__(message)
        self.kind, self.error_type = kind, error_type  # error_type: the student's exception class name


class KernelGone(StudentError):
    """The kernel died or stopped answering: nothing more can be asked of it."""

    def __init__(self, message: str):
        super().__init__(message, kind="kernel")


class Student:
    """The student's notebook namespace, seen from the grader."""

    def __init__(self, run):
        # run(code) -> (outputs, status): status is "ok", "error", "timeout" or "dead"
        self._run = run

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

    def _request(self, request: dict):
        code = ("__import__('bertgrader.kernel.kernel_side', fromlist=['serve']).serve("
                f"{wire.to_text(wire.encode(request))!r})")
        outputs, status = self._run(code)
        if status == "dead":
            raise KernelGone("the kernel stopped (it crashed, exited or ran out of memory or time)")
        if status == "timeout":
            raise StudentError("did not return within the time limit of a cell (an endless loop?)", kind="timeout")
        payloads = [o for o in outputs if o.get("output_type") == "display_data" and MIME in o.get("data", {})]
        if not payloads:
            raise StudentError("the call gave no answer (did the code replace the grader's helper?)", "protocol")
        try:
            reply = wire.decode(wire.from_text(payloads[-1]["data"][MIME]))
        except wire.WireError as e:
            raise StudentError(f"the answer could not be read as data ({e})", "protocol") from None
        if not isinstance(reply, dict):
            raise StudentError("the answer was not in the grader's format", "protocol")
        if "error" in reply:
            where = "; ".join(str(t) for t in reply.get("traceback", [])[-2:])
            raise StudentError(f"raised {reply['error']}: {reply.get('message', '')}" + (f" ({where})" if where else ""),
                               error_type=str(reply["error"]))
        value = reply.get("ok")
        return Remote(self, wire.Handle(value.id, value.type_name), []) if isinstance(value, wire.Handle) else value


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

    def __init__(self, student: Student, target, path: list[str]):
        self._student, self._target, self._path = student, target, list(path)

    def __getattr__(self, name: str) -> "Remote":
        if name.startswith("_"):
            raise AttributeError(name)
        return Remote(self._student, self._target, self._path + [name])

    def __call__(self, *args, **kwargs):
        return self._student._request({"op": "call", "target": self._target, "path": self._path,
                                       "args": _unwrap(list(args)), "kwargs": _unwrap(kwargs)})

    def call_keeping_args(self, *args, **kwargs):
        """(result, the positional arguments as they were after the call): to see what was changed in place."""
        out = self._student._request({"op": "call", "target": self._target, "path": self._path,
                                      "args": _unwrap(list(args)), "kwargs": _unwrap(kwargs),
                                      "return_args": True})
        if isinstance(out, Remote) or not isinstance(out, dict) or "args_after" not in out:
            raise StudentError("the answer could not travel back as data", "protocol")
        return out["result"], out["args_after"]

    def call_standing_in(self, stand_ins: dict, *args, manual_seed: int | None = None, **kwargs):
        """Call this function of the notebook while each notebook function named in ``stand_ins`` is replaced by
        a stand-in returning ``stand_ins[name]`` (data the grader computed: the correct result of the part it
        stands for). Returns (result, calls): {name: [each call of its stand-in as {"args", "kwargs", "where"}]};
        an argument that is not data is None in "args"/"kwargs", and "where" maps its position ("0", "1", ...)
        or keyword to where it sat among this call's own arguments ("args[0].attention.self").
        ``manual_seed``: torch.manual_seed(manual_seed) in the kernel just before the call."""
        request = {"op": "call", "target": self._target, "path": self._path, "args": _unwrap(list(args)),
                   "kwargs": _unwrap(kwargs), "stand_in": dict(stand_ins)}
        if manual_seed is not None:
            request["manual_seed"] = int(manual_seed)
        out = self._student._request(request)
        if isinstance(out, Remote) or not isinstance(out, dict) or not isinstance(out.get("calls"), dict):
            raise StudentError("the answer could not travel back as data", "protocol")
        calls = {name: out["calls"].get(name) for name in stand_ins}
        if not all(isinstance(c, list) for c in calls.values()):
            raise StudentError("the answer could not travel back as data", "protocol")
        return out["result"], calls

    def value(self):
        """The attribute's value itself (data, or a Remote for an object)."""
        return self._student._request({"op": "get", "target": self._target, "path": self._path})

    def __repr__(self):
        return f"<remote {self._target}{''.join('.' + p for p in self._path)}>"
