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

Every call through ``student`` is also held to the rules of bertgrader.effects, on by default (see
bertgrader.remote): arguments unchanged, modules' weights, modes and requires_grad unchanged, no global
generator reseeded, a generator given is the only source of randomness and is advanced. A broken rule
fails the case with its message ("your function changed the tensor it was given as `mask` (argument 2):
its shape went from (2, 7) to (2, 1, 7) ..."). A task that lets a function do one of these says so in the
test, with its reason: ``student.f.call_with(allow={"writes_args": "the task says it fills labels in
place"})(...)``. More helpers for what a result is besides its values:

    check_like(got, expected, "the logits")      # dtype and device (and shape) of the reference's output
    same_gradients(student.embeddings_forward, reference_forward, ids, segments, output=None)
        # one random cotangent, backpropagated here through the reference and there through the student's
        # function: the gradient of every float input and parameter compared ("no gradient reaches
        # word_embeddings.weight (is the sum detached?)"); no expected value enters the kernel
    student.keep_in_kernel(wire.Generator(5))    # one generator for two calls in a row
    wire.Strided(t)                              # an input that arrives as a non-contiguous view
"""
from __future__ import annotations

import contextlib
import importlib.util
import inspect
import sys
from pathlib import Path

import torch

from bertgrader import i18n
from bertgrader.assignment import HIDDEN_TESTS
from bertgrader.i18n import ENGLISH, N_, tr
from bertgrader.kernel import wire
from bertgrader.kernel.watch import float_tensors, lift_leaves, map_tensors
from bertgrader.remote import EffectFailed, KernelGone, Linearised, StudentError



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
    raise CheckFailed(tr("expected {what} to be a torch.Tensor, got {type}", what=what, type=type(value).__name__))


@contextlib.contextmanager
def case(description: str):
    """Prefix the message of a failure in this block with the input it happened on."""
    try:
        yield
    except KernelGone:
        raise
    except (CheckFailed, EffectFailed) as e:
        raise CheckFailed(tr("{case}: {message}", case=description, message=e)) from None
    except StudentError as e:
        raise CheckFailed(tr("{case}: your code {error}", case=description, error=e)) from None
    except Exception as e:  # the answer had a form the test did not expect (a list for a tensor, say)
        raise CheckFailed(tr("{case}: {message}", case=description, message=_unexpected(e))) from None


# The module an assignment's tests build their inputs with, solutions/<a>/inputs.py: handed out beside the
# notebook (nbgrader releases it, and autograde puts the instructor's copy beside each submission), imported
# by the notebook's setup cell and by the hidden tests alike, as `from inputs import ...`.
INPUTS = "inputs"


def load(source_dir: Path, language: str = ENGLISH):
    """The hidden-tests module of an assignment's source folder, or None if it has none. While it loads,
    ``import inputs`` finds that folder's inputs.py (each assignment its own, whichever was loaded before).
    In another language, the same module with its messages translated (bertgrader.i18n: only the text of its
    string literals differs, from the assignment's catalogue)."""
    path = Path(source_dir) / HIDDEN_TESTS
    if not path.is_file():
        return None
    spec = importlib.util.spec_from_file_location(f"hidden_tests_{Path(source_dir).name}", path)
    module = importlib.util.module_from_spec(spec)
    with _inputs_of(Path(source_dir)):
        if language == ENGLISH:
            spec.loader.exec_module(module)
        else:
            table = i18n.translations(Path(source_dir).parents[1], Path(source_dir).name, language)
            code = compile(i18n.translate_module(path.read_text(encoding="utf-8"), table), str(path), "exec")
            exec(code, module.__dict__)
    return module


@contextlib.contextmanager
def _inputs_of(source_dir: Path):
    path = source_dir / f"{INPUTS}.py"
    if not path.is_file():
        yield
        return
    spec = importlib.util.spec_from_file_location(f"{INPUTS}_{source_dir.name}", path)
    inputs = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(inputs)
    missing = object()
    before = sys.modules.get(INPUTS, missing)
    sys.modules[INPUTS] = inputs
    try:
        yield
    finally:
        if before is missing:
            sys.modules.pop(INPUTS, None)
        else:
            sys.modules[INPUTS] = before


def run(module, grade_id: str, student) -> str | None:
    """Grade one cell: None if every check passed, else the message for the student.
    Raises KernelGone if the kernel stopped (the caller marks the remaining cells)."""
    test = getattr(module, grade_id, None)
    if test is None:
        return tr("the grader has no hidden tests for the cell {cell!r} (tell your instructor)", cell=grade_id)
    try:
        test(student)
    except KernelGone:
        raise
    except (CheckFailed, EffectFailed) as e:
        return str(e)
    except StudentError as e:
        return tr("your code {error}", error=e)
    except Exception as e:  # never lets one answer stop the grading of the others
        return _unexpected(e)
    return None


def _unexpected(e: Exception) -> str:
    return tr("your answer could not be checked ({type}: {error}): check what your function returns (its type, "
              "shape and dtype)", type=type(e).__name__, error=str(e)[:300])


def kind_of(value) -> str:
    """What came back, in words: an object left in the kernel (not plain data) says which."""
    from bertgrader.remote import Remote

    if isinstance(value, Remote):
        return tr("an object that is not plain data ({value!r})", value=value)
    return tr("a {type}", type=type(value).__name__)


def check_like(got, expected: torch.Tensor, what: str = "the result", shape: bool = True) -> torch.Tensor:
    """``got`` as a tensor with the reference's dtype and device (and shape): a float64 input computed in
    float32, or a result moved to another device, fails with the reason in words."""
    got = tensor(got, what)
    if shape:
        check(got.shape == expected.shape, tr("expected {what} of shape {expected}, got {got}", what=what,
                                              expected=tuple(expected.shape), got=tuple(got.shape)))
    check(got.dtype == expected.dtype,
          tr("{what} has dtype {got} where the reference's has {expected}: compute in the dtype of the inputs (no "
             ".float() or dtype of your own where they are float64), and return what the task asks for", what=what,
             got=got.dtype, expected=expected.dtype))
    check(got.device == expected.device, tr("{what} is on {got}, the inputs on {expected}: keep the result on the "
                                            "inputs' device", what=what, got=got.device, expected=expected.device))
    return got


def _local(args: list, kwargs: dict):
    """The grader's own copies of what it sends: wire descriptions built (a module, a config, a generator,
    a non-contiguous view), every tensor a fresh copy."""
    return wire.decode(wire.encode([list(args), dict(kwargs)]), build=wire.materialize)


def _pick(result, output):
    if output is None:
        return result
    if isinstance(output, int) or isinstance(result, dict):
        return result[output]
    return getattr(result, output)


def reference_gradients(reference_fn, cotangent_seed: int, *args, output=None, **kwargs):
    """(cotangent, {key: gradient}) of ``reference_fn`` on the grader's copies of the arguments: the keys
    those of Remote.gradients (argument keys "0", "mask"; parameters of ``reference_fn`` if it is a module,
    "dense.weight"; of a module argument, "2.dense.weight"); the cotangent drawn shaped like the output."""
    local_args, local_kwargs = _local(args, kwargs)
    leaves = {}

    local_args = [lift_leaves(v, str(i), leaves) for i, v in enumerate(local_args)]
    local_kwargs = {k: lift_leaves(v, k, leaves) for k, v in local_kwargs.items()}
    params = {}
    owner = reference_fn if isinstance(reference_fn, torch.nn.Module) else getattr(reference_fn, "__self__", None)
    modules = [("", owner)] + [(f"{i}.", v) for i, v in enumerate(local_args)] + [(f"{k}.", v) for k, v in local_kwargs.items()]
    for prefix, module in modules:
        if isinstance(module, torch.nn.Module):
            for name, p in module.named_parameters():
                p.grad = None
                params[prefix + name] = p
    with torch.enable_grad():
        out = _pick(reference_fn(*local_args, **local_kwargs), output)
    if not isinstance(out, torch.Tensor) or not out.requires_grad:
        raise ValueError("the reference's output is not differentiable: same_gradients needs one that is")
    cotangent = torch.randn(out.shape, dtype=out.dtype, generator=torch.Generator().manual_seed(cotangent_seed))
    (out * cotangent).sum().backward()  # as the kernel does it (kernel_side._gradients): no sympy import
    return cotangent, {key: t.grad for key, t in [*leaves.items(), *params.items()]}


def _grad_label(key: str, names: dict) -> str:
    head, _, rest = key.partition(".")
    if head.isdigit() or head in names:
        name = names.get(head)
        arg = (tr("`{name}` (argument {n})", name=name, n=int(head) + 1) if name
               else tr("argument {n}", n=int(head) + 1)) if head.isdigit() else f"`{head}`"
        return tr("`{name}` of the module given as {arg}", name=rest, arg=arg) if rest \
            else tr("the input {arg}", arg=arg)
    return f"`{key}`"


def linearised(fn, *args, **kwargs) -> Linearised:
    """A stand-in that gradients pass through, for a part that builds on another (``same_gradients(...,
    stand_ins={"attention": linearised(eager_attention, q, k, v, mask)})``): ``fn`` (the correct function, run
    here, its parameters named as the notebook's function names them) at the arguments it should be given,
    and its Jacobian there with respect to every float tensor argument and every parameter of a module
    argument. In the kernel the stand-in returns the same value plus J (x - x0), x what it was given: its
    gradient is the correct function's, so a gradient the student's own code cuts shows, and one that the
    student's code passes on reaches what it gave the stand-in. Sizes: one backward pass per output number."""
    bound = inspect.signature(fn).bind(*args, **kwargs)
    inputs, call = [], {}
    for name, value in bound.arguments.items():
        if isinstance(value, torch.nn.Module):
            inputs += [(f"{name}.{p_name}", p) for p_name, p in value.named_parameters()]
            call[name] = value
        elif isinstance(value, torch.Tensor) and value.is_floating_point():
            call[name] = value.detach().clone().requires_grad_()
            inputs.append((name, call[name]))
        else:
            call[name] = value
    for _, t in inputs:
        t.grad = None
    with torch.enable_grad():
        result = fn(**call)
    outputs = float_tensors(result)
    flat = torch.cat([t.reshape(-1) for t in outputs])
    leaves = [t for _, t in inputs]
    rows = []
    for i in range(flat.numel()):
        grads = torch.autograd.grad(flat[i], leaves, retain_graph=True, allow_unused=True)
        rows.append(torch.cat([(g if g is not None else torch.zeros_like(t)).reshape(-1)
                               for g, t in zip(grads, leaves)]))
    jacobian = torch.stack(rows).detach()  # (outputs, inputs)
    value = map_tensors(result, lambda t: t.detach().clone())
    return Linearised(value, {"names": list(inspect.signature(fn).parameters), "wrt": [k for k, _ in inputs],
                              "jacobian": jacobian})


def same_gradients(remote_fn, reference_fn, *args, output=None, seed: int = 0, rtol: float = 1e-4,
                   atol: float = 1e-5, stand_ins: dict | None = None, **kwargs) -> None:
    """The gradients of the student's ``remote_fn`` (a Remote) and of ``reference_fn`` (bertlib's, here) agree
    on these arguments: one random cotangent (seeded ``seed``) shaped like the reference's output (the result,
    or its item/field ``output``) is backpropagated through each; the gradient of every float input and every
    parameter (of the model called, of a module given) that the reference's reaches is compared. A
    CheckFailed names what differs: "no gradient reaches `word_embeddings.weight` (...)". ``stand_ins``: for a
    part graded with a stand-in for another ({name: linearised(...)}, as call_standing_in's), the reference
    being the whole computation (bertlib's layer, say)."""
    cotangent, expected = reference_gradients(reference_fn, seed, *args, output=output, **kwargs)
    got = remote_fn.gradients(cotangent, *args, output=output, stand_ins=stand_ins, **kwargs)
    compare_gradients(got, expected, cotangent.shape, rtol=rtol, atol=atol)


def compare_gradients(got: dict, expected: dict, shape, rtol: float = 1e-4, atol: float = 1e-5,
                      whose: str = N_("the reference's")) -> None:
    """``got`` (what Remote.gradients answered) against ``expected`` ({key: gradient}, as reference_gradients
    gives, or another answer's "grads"): every gradient ``expected`` has reaches the same key with the same
    values. same_gradients' comparison; a test compares two calls of the student's with it (train mode against
    eval mode where dropout drops nothing, say)."""
    names = got.get("names") if isinstance(got.get("names"), dict) else {}
    check(list(got["shape"]) == list(shape), tr("expected an output of shape {expected}, got {got}",
                                                expected=tuple(shape), got=tuple(got["shape"])))
    check(got.get("connected") is True,
          tr("no gradient flows back through your result at all (is it detached, computed under torch.no_grad(), "
             "or rebuilt from .item() or .tolist()?)"))
    theirs = got["grads"]
    reached = {key: ref for key, ref in expected.items() if ref is not None and bool(ref.abs().max() > 0)}
    if not reached:  # a test that compares nothing would pass anything
        raise ValueError("compare_gradients: the expected gradient reaches no float input and no parameter")
    for key, ref in reached.items():
        label = _grad_label(key, names)
        check(key in theirs, tr("{label} is missing: keep the parameter names the task gives", label=label))
        mine = theirs[key]
        check(mine is not None and bool(mine.abs().max() > 0),
              tr("no gradient reaches {label} (is it detached, read through .data, .detach() or .item(), or used "
                 "under torch.no_grad()?)", label=label))
        check(mine.shape == ref.shape, tr("the gradient of {label} has shape {got}, expected {expected}", label=label,
                                          got=tuple(mine.shape), expected=tuple(ref.shape)))
        diff = (mine.double() - ref.double()).abs().max().item()
        scale = max(1.0, ref.abs().max().item())
        check(diff <= atol * scale + rtol * ref.abs().max().item(),
              tr("the gradient of {label} differs from {whose} by up to {diff:.3g}: your function computes the same "
                 "values by another path, or lets a value through that should be cut off", label=label,
                 whose=tr(whose), diff=diff))
