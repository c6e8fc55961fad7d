"""Every hidden call checks what the function did, not only what it returned (issue 28 §1).

Small functions, defined in a real sandboxed kernel (the one grading starts), are called through
bertgrader.remote as hidden tests call them: each plausible mistake (an argument changed in place, a
module left in eval() mode, a global generator reseeded or drawn from, a generator copied instead of
advanced, a gradient cut, float32 returned for float64) fails with the rule in words, and the correct
function passes every rule. Then grading itself: no cell of the student's runs after a hidden call.
"""
from __future__ import annotations

import sys
import textwrap
from concurrent.futures import ThreadPoolExecutor

import nbformat
import pytest
import torch

from bertgrader import checks
from bertgrader.checks import CheckFailed, case, check_like, same_gradients
from bertgrader.kernel import wire
from bertgrader.remote import EffectFailed, Student, StudentError

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="the sandbox is Linux-only")


# ---------------------------------------------------------------------------------------------------- the wire
def test_bool_int32_and_float64_tensors_travel_as_they_are():
    sent = {"mask": torch.tensor([[True, False]]), "ids": torch.tensor([3, 4], dtype=torch.int32),
            "x": torch.tensor([1.0 + 1e-12], dtype=torch.float64)}
    got = wire.decode(wire.encode(sent))
    for k, v in sent.items():
        assert got[k].dtype == v.dtype and torch.equal(got[k], v), k


def test_a_strided_tensor_arrives_as_a_non_contiguous_view_of_the_same_values():
    t = torch.arange(12).view(3, 4)
    built = wire.decode(wire.encode([wire.Strided(t)]), build=wire.materialize)[0]
    assert not built.is_contiguous() and torch.equal(built, t)
    with pytest.raises(RuntimeError):
        built.view(-1)  # what a caller's slice does to code that assumes contiguity
    described = wire.decode(wire.encode([wire.Strided(t)]))[0]
    assert isinstance(described, wire.Strided) and torch.equal(described.tensor, t)


# ---------------------------------------------------------------------------------------------------- a kernel
class Kernel:
    """A sandboxed kernel (bertgrader.kernel_manager, as grading starts one) driven from a thread of its own."""

    def __init__(self, workdir):
        from nbclient import NotebookClient

        from bertgrader.kernel_manager import SandboxedKernelManager

        self.nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("")])
        self.client = NotebookClient(self.nb, kernel_manager_class=SandboxedKernelManager, timeout=60,
                                     resources={"metadata": {"path": str(workdir)}}, allow_errors=True)
        self.pool = ThreadPoolExecutor(1)
        self.setup = self.client.setup_kernel()
        self.pool.submit(self.setup.__enter__).result()

    def run(self, code: str, metadata: dict | None = None):
        """(outputs, "ok" | "error"), as TrustedExecute._run_in_kernel answers bertgrader.remote, ``metadata`` in
        the execute_request as it sends it."""
        from bertgrader.preprocessors import _execute_with_metadata

        cell = nbformat.v4.new_code_cell(code)
        self.nb.cells[0] = cell
        if metadata:
            self.client.kc.execute = _execute_with_metadata(self.client.kc, metadata)
        try:
            self.pool.submit(self.client.execute_cell, cell, 0, store_history=False).result()
        finally:
            self.client.kc.__dict__.pop("execute", None)
        errors = [o for o in cell.outputs if o.get("output_type") == "error"]
        return cell.outputs, "error" if errors else "ok"

    def define(self, code: str) -> None:
        outputs, status = self.run(textwrap.dedent(code))
        assert status == "ok", outputs

    def close(self):
        self.pool.submit(self.setup.__exit__, None, None, None).result()
        self.pool.shutdown()


@pytest.fixture(scope="module")
def student(tmp_path_factory):
    workdir = tmp_path_factory.mktemp("kernel")
    workdir.chmod(0o755)
    kernel = Kernel(workdir)
    kernel.define("import random\nimport torch\nimport torch.nn.functional as F\n")
    yield Student(kernel.run, metadata=True), kernel
    kernel.close()


def test_a_request_travels_in_the_messages_metadata_or_as_code(student):
    """The grader sends each request in the execute_request's metadata (IPython would parse it as code, about
    1 s a MB); a runner that cannot send metadata still has the request in the code."""
    student, kernel = student
    kernel.define("def total(x):\n    return x.sum()\n")
    big = torch.arange(300_000, dtype=torch.float64)  # 2.4 MB, its sum exact in any order
    assert student.total(big).item() == 299_999 * 300_000 / 2
    assert Student(kernel.run).total(big[:1000]).item() == 999 * 1000 / 2


def test_calls_in_one_round_trip_are_each_watched_and_judged(student):
    """Remote.calls: several calls in one round trip give what the calls one by one give, and each is held to
    the rules alone: a write in the second call of three fails, naming it; a call that raises fails."""
    student, kernel = student
    kernel.define("""
        def scaled(x, k):
            return x * k

        def scaled_writing_once(x, k):
            if k == 2:
                x.mul_(k)  # the caller's tensor
            return x * k
    """)
    x = torch.arange(3.0)
    got = student.scaled.calls([([x, k], {}) for k in (1, 2, 3)])
    assert [t.tolist() for t in got] == [[0.0, 1.0, 2.0], [0.0, 2.0, 4.0], [0.0, 3.0, 6.0]]
    assert student.scaled.calls([([x], {"k": 5})])[0].tolist() == student.scaled(x, k=5).tolist()
    _fails(lambda: student.scaled_writing_once.calls([([x, k], {}) for k in (1, 2, 3)]),
           "changed the tensor it was given as `x` (argument 1)", "2 of its 3 values changed")
    with pytest.raises(StudentError, match="TypeError"):
        student.scaled.calls([([x, 2], {}), ([x, "a"], {})])


def _fails(call, *needles):
    """The call breaks a rule: its message (through checks.case, as a hidden test shows it) holds ``needles``."""
    with pytest.raises(CheckFailed) as info:
        with case("on the test's input"):
            call()
    message = str(info.value)
    assert message.startswith("on the test's input: your "), message
    for needle in needles:
        assert needle in message, message
    return message


# ------------------------------------------------------------------------------------- (a) arguments changed
def test_a_mask_unsqueezed_in_place_is_caught_with_its_shapes(student):
    student, kernel = student
    kernel.define("""
        def add_mask(scores, mask):
            mask.unsqueeze_(1)                    # (B, 1, T): changes the caller's mask
            return scores + (1.0 - mask.float()) * -1e4

        def add_mask_right(scores, mask):
            return scores + (1.0 - mask.float().unsqueeze(1)) * -1e4
    """)
    scores, mask = torch.randn(2, 7, 7), torch.ones(2, 7, dtype=torch.long)
    mask[1, 5:] = 0
    message = _fails(lambda: student.add_mask(scores, mask), "changed the tensor it was given as `mask` (argument 2)",
                     "its shape went from (2, 7) to (2, 1, 7)")
    assert "hidden" not in message and "def " not in message
    got = student.add_mask_right(scores, mask)
    assert torch.equal(got, scores + (1.0 - mask.float().unsqueeze(1)) * -1e4)
    # A task that says the function writes its argument turns the rule off for that call, with its reason.
    student.add_mask.call_with(allow={"writes_args": "the task says it reshapes the mask in place"})(scores, mask)
    with pytest.raises(ValueError):
        student.add_mask.call_with(allow={"writes_args": ""})
    with pytest.raises(ValueError):
        student.add_mask.call_with(allow={"no_such_rule": "a reason given in words"})


def test_values_lists_and_configs_written_in_place_are_caught(student):
    student, kernel = student
    kernel.define("""
        def fill(scores, mask):
            scores.masked_fill_(mask == 0, float("-inf"))
            return scores

        def drop_specials(ids, special_ids):
            special_ids.pop()
            return [i for i in ids if i not in special_ids]

        def with_defaults(options):
            options.setdefault("mlm_probability", 0.15)    # writes into the caller's dict
            return options["mlm_probability"]

        def size(config):
            return config.hidden_size
    """)
    scores, mask = torch.zeros(2, 3), torch.tensor([[1, 1, 0], [1, 1, 1]])
    _fails(lambda: student.fill(scores, mask), "changed the tensor it was given as `scores` (argument 1)",
           "1 of its 6 values changed (at (0, 2): 0 became -inf)", "masked_fill_")
    _fails(lambda: student.drop_specials([5, 6, 7], [0, 101, 102]),
           "changed the list it was given as `special_ids` (argument 2)", "its length went from 3 to 2")
    _fails(lambda: student.with_defaults({"seed": 1}), "changed the dict it was given as `options` (argument 1)",
           "mlm_probability added")
    fields = dict(vocab_size=50, hidden_size=8, num_hidden_layers=1, num_attention_heads=2, intermediate_size=16)
    assert student.size(wire.Config(fields)) == 8  # a config read, not written: no rule broken


# ------------------------------------------------------------------------------------- (b) modules and modes
def test_a_module_left_in_eval_mode_or_with_changed_weights_is_caught(student):
    student, kernel = student
    kernel.define("""
        class Head(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.dense = torch.nn.Linear(4, 4)
                self.dropout = torch.nn.Dropout(0.1)

            def forward(self, x):
                self.eval()                        # to switch dropout off: leaves the caller's model in eval()
                return self.dropout(self.dense(x))

        class RightHead(Head):
            def forward(self, x):
                return self.dropout(self.dense(x))

        def apply_eval(dense, x):
            dense.eval()
            return dense(x)

        def shrink(dense, x):
            dense.weight.data.mul_(0.5)
            return dense(x)

        def freeze(dense, x):
            dense.bias.requires_grad_(False)
            return dense(x)
    """)
    x = torch.randn(3, 4)
    model = student.Head()
    model.train()  # the grader drives the model: not watched
    _fails(lambda: model(x), "your Head left the model in eval() mode", "it was in train() mode before the call")
    right = student.RightHead()
    right.eval()
    assert tuple(right(x).shape) == (3, 4)
    dense = torch.nn.Linear(4, 4)
    sent = wire.Module.of(dense, 4, 4)
    sent.training = True
    _fails(lambda: student.apply_eval(sent, x), "left the module given as `dense` (argument 1) in eval() mode")
    _fails(lambda: student.shrink(sent, x), "changed the weights of the module given as `dense` (argument 1)",
           "weight")
    _fails(lambda: student.freeze(sent, x), "changed requires_grad of `bias`", "from True to False")


# ------------------------------------------------------------------------------------- (c), (d) random state
def test_reseeding_drawing_globally_or_copying_the_generator_is_caught(student):
    student, kernel = student
    kernel.define("""
        def draw_reseeding(n, generator):
            torch.manual_seed(generator.initial_seed())   # the same numbers, from the global generator
            return torch.rand(n)

        def draw_globally(n, generator):
            return torch.rand(n)

        def draw_python_reseeding(n, generator):
            random.seed(0)
            return torch.rand(n, generator=generator)

        def draw_from_a_copy(n, generator):
            own = torch.Generator().set_state(generator.get_state())   # the caller's generator never moves
            return torch.rand(n, generator=own)

        def draw(n, generator):
            return torch.rand(n, generator=generator)

        def shuffled(items):
            items = list(items)
            random.shuffle(items)      # Python's global generator: the caller's random state moves
            return items
    """)
    _fails(lambda: student.draw_reseeding(5, wire.Generator(3)),
           "reseeded torch's global random generator (it called torch.manual_seed)")
    _fails(lambda: student.draw_python_reseeding(5, wire.Generator(3)),
           "reseeded Python's global random generator (it called random.seed)")
    _fails(lambda: student.draw_globally(5, wire.Generator(3)),
           "drew from torch's global random generator", "although it was given a generator (`generator` (argument 2))")
    _fails(lambda: student.draw_from_a_copy(5, wire.Generator(3)),
           "drew nothing from the generator it was given as `generator` (argument 2)", "two different draws")
    _fails(lambda: student.shuffled([1, 2, 3]), "drew from Python's global random generator (random.random, "
           "random.shuffle ...): its caller's random state changed")
    expected = torch.rand(5, generator=torch.Generator().manual_seed(3))
    assert torch.equal(student.draw(5, wire.Generator(3)), expected)
    # One generator kept in the kernel, given to two calls in a row: two draws.
    shared = student.keep_in_kernel(wire.Generator(4))
    first, second = student.draw(5, shared), student.draw(5, shared)
    mine = torch.Generator().manual_seed(4)
    assert torch.equal(first, torch.rand(5, generator=mine)) and torch.equal(second, torch.rand(5, generator=mine))
    assert torch.equal(shared.get_state(), mine.get_state())  # its state, read back as data
    copied = student.keep_in_kernel(wire.Generator(4))
    with pytest.raises(EffectFailed, match="drew nothing from the generator"):
        student.draw_from_a_copy(5, copied)


def test_dropout_after_the_graders_seed_may_draw_from_the_global_generator(student):
    """No generator given: drawing from torch's global generator (dropout, a model's init) breaks no rule;
    call_with(manual_seed=...) seeds it in the kernel first, so the draw is the reference's."""
    student, kernel = student
    kernel.define("""
        def drop(x):
            return F.dropout(x, 0.5, True)
    """)
    x = torch.ones(4, 6)
    got = student.drop.call_with(manual_seed=11)(x)
    torch.manual_seed(11)
    assert torch.equal(got, torch.nn.functional.dropout(x, 0.5, True))


# ---------------------------------------------------------------------------------------------- (e) gradients
class Summer(torch.nn.Module):
    """The reference: the embedding sum, with transformers' names."""

    def __init__(self):
        super().__init__()
        self.word_embeddings = torch.nn.Embedding(10, 4)
        self.position_embeddings = torch.nn.Embedding(6, 4)

    def forward(self, ids):
        return self.word_embeddings(ids) + self.position_embeddings.weight[: ids.shape[1]]


def test_a_detached_gradient_is_caught_naming_what_it_no_longer_reaches(student):
    student, kernel = student
    kernel.define("""
        class Summer(torch.nn.Module):
            def __init__(self, detach=False):
                super().__init__()
                self.word_embeddings = torch.nn.Embedding(10, 4)
                self.position_embeddings = torch.nn.Embedding(6, 4)
                self.detach = detach

            def forward(self, ids):
                words = self.word_embeddings(ids)
                words = words.detach() if self.detach else words
                return words + self.position_embeddings.weight[: ids.shape[1]]

        def project_detached(x, dense):
            return dense(x.detach())

        def project_through_data(x, dense):
            return x @ dense.weight.data.T + dense.bias

        def project(x, dense):
            return dense(x)
    """)
    torch.manual_seed(0)
    reference = Summer()
    state = {k: v.detach().clone() for k, v in reference.state_dict().items()}
    ids = torch.tensor([[1, 2, 3], [4, 5, 9]])
    for detach, verdict in [(True, "no gradient reaches `word_embeddings.weight`"), (False, None)]:
        mine = student.Summer(detach)
        mine.load_state_dict(state)
        if verdict:
            with pytest.raises(CheckFailed, match=verdict):
                same_gradients(mine, reference, ids)
        else:
            same_gradients(mine, reference, ids)
    dense = torch.nn.Linear(4, 3)
    x = torch.randn(2, 4)
    sent = wire.Module.of(dense, 4, 3)

    def reference_project(x, dense):
        return dense(x)

    with pytest.raises(CheckFailed, match=r"no gradient reaches the input `x` \(argument 1\)"):
        same_gradients(student.project_detached, reference_project, x, sent)
    with pytest.raises(CheckFailed, match="no gradient reaches `weight` of the module given as `dense` "):
        same_gradients(student.project_through_data, reference_project, x, sent)
    same_gradients(student.project, reference_project, x, sent)
    same_gradients(student.project, reference_project, wire.Strided(x), sent)


def test_a_gradient_goes_through_a_linearised_stand_in_and_a_cut_before_it_is_caught(student):
    """A part graded with a stand-in for another (call_standing_in) has its gradients compared too: the stand-in
    is the correct function's linearisation at the input it should get (checks.linearised), so the gradient
    reaches what the student's code gave it, and a cut in the student's own code shows."""
    student, kernel = student
    kernel.define("""
        def inner(x, dense):  # the part stood in for: never runs while the stand-in answers
            raise RuntimeError("the stand-in should answer")

        def outer(dense, x):
            return torch.tanh(inner(2 * x, dense=dense))

        def outer_cut(dense, x):
            return torch.tanh(inner((2 * x).detach(), dense))
    """)
    torch.manual_seed(1)
    dense, x = torch.nn.Linear(4, 3), torch.randn(2, 4)
    sent = wire.Module.of(dense, 4, 3)

    def reference(dense, x):  # the whole computation, bertlib's side
        return torch.tanh(dense(2 * x))

    def inner(x, dense):
        return dense(x)

    stand_in = checks.linearised(inner, 2 * x, dense)
    assert stand_in.linear["wrt"] == ["x", "dense.weight", "dense.bias"]
    got, calls = student.outer.call_standing_in({"inner": stand_in}, sent, x)
    assert torch.allclose(got, reference(dense, x).detach()) and len(calls["inner"]) == 1
    same_gradients(student.outer, reference, sent, x, stand_ins={"inner": stand_in})
    with pytest.raises(CheckFailed, match=r"no gradient reaches the input `x` \(argument 2\)"):
        same_gradients(student.outer_cut, reference, sent, x, stand_ins={"inner": stand_in})
    # A stand-in that answers a plain value stops the gradient: what the linearisation is for.
    with pytest.raises(CheckFailed, match="no gradient flows back"):
        same_gradients(student.outer, reference, sent, x, stand_ins={"inner": stand_in.value})


# ------------------------------------------------------------------------------------------ (f) dtype, forms
def test_float32_returned_for_float64_is_caught_and_a_strided_input_is_tried(student):
    student, kernel = student
    kernel.define("""
        def scale(x):
            return x.float() * 2

        def scale_right(x):
            return x * 2

        def flatten(x):
            return x.view(-1)

        def flatten_right(x):
            return x.reshape(-1)
    """)
    x = torch.randn(3, 4, dtype=torch.float64)
    with pytest.raises(CheckFailed, match="has dtype torch.float32 where the reference's has torch.float64"):
        check_like(student.scale(x), x * 2, "the scaled input")
    check_like(student.scale_right(x), x * 2, "the scaled input")
    with pytest.raises(StudentError, match="view"):
        student.flatten(wire.Strided(x))
    assert torch.equal(student.flatten_right(wire.Strided(x)), x.reshape(-1))


def test_a_report_left_out_by_a_replaced_helper_is_a_protocol_error(student):
    """A kernel whose answer does not say what the call did is not taken at its word."""
    student, kernel = student
    kernel.define("""
        def plain(x):
            return x
    """)
    from bertgrader.remote import Remote

    original = Student._request

    def without_report(self, request, reply=False):
        value, answer = original(self, request, reply=True)
        answer.pop("effects", None)
        return (value, answer) if reply else value

    Student._request = without_report
    try:
        with pytest.raises(StudentError, match="did not say what the call did"):
            Remote(student, "plain", [])(torch.ones(2))
    finally:
        Student._request = original


# ------------------------------------------------------------------------- (6) nothing leaves through later cells
HIDDEN = '''
import torch
from bertgrader.checks import case, check

def test_f(student):
    with case("on a 3 x 17 input"):
        got = student.f(torch.full((3, 17), 4242))
        check(tuple(got.shape) == (3, 17), "wrong shape")
'''


def _graded_cell(grade_id: str, source: str = "") -> nbformat.NotebookNode:
    cell = nbformat.v4.new_code_cell(source or f"# {grade_id}")
    cell.metadata["nbgrader"] = {"grade": True, "grade_id": grade_id, "points": 1, "solution": False,
                                 "locked": True, "schema_version": 3}
    return cell


def _autograde_toy(tmp_path, hidden: str, cells: list) -> nbformat.NotebookNode:
    """Grade a notebook of ``cells`` with TrustedExecute (the sandbox, hidden tests ``hidden``), as autograde does."""
    from bertgrader.preprocessors import TrustedExecute

    source = tmp_path / "source" / "toy"
    source.mkdir(parents=True)
    (source / checks.HIDDEN_TESTS).write_text(hidden)
    work = tmp_path / "work"
    work.mkdir()
    for p in (tmp_path, work):
        p.chmod(0o755)
    executor = TrustedExecute(source_root=str(tmp_path / "source"), timeout=60)
    nb, _ = executor.preprocess(nbformat.v4.new_notebook(cells=cells),
                                {"nbgrader": {"assignment": "toy", "notebook": "toy"}, "metadata": {"path": str(work)}})
    return nb


def test_no_student_cell_runs_after_a_hidden_call(tmp_path):
    """A function that logs every call, a later ungraded cell that prints the log and a thread that keeps
    printing it: graded, the print shows no hidden call (the hidden tests run after the last cell), what the
    thread prints while they run is not stored, and the part is still graded."""
    nb = _autograde_toy(tmp_path, HIDDEN, [
        nbformat.v4.new_code_cell("import torch\nLOG = []\ndef f(x):\n    LOG.append((tuple(x.shape), x.flatten()[0].item()))\n"
                                  "    return x.clone()"),
        _graded_cell("test_f", "assert f(torch.ones(1, 2)).shape == (1, 2)"),
        nbformat.v4.new_code_cell("print('LOG', LOG)"),
        # a thread started by a cell of the student's, printing the log while the hidden calls run
        nbformat.v4.new_code_cell("import threading, time\n"
                                  "def _tell():\n    for _ in range(400):\n        print('LATER', LOG, flush=True)\n"
                                  "        time.sleep(0.01)\n"
                                  "threading.Thread(target=_tell, daemon=True).start()"),
    ])
    verdict = "".join(o.get("text", "") + o.get("evalue", "") for o in nb.cells[1].outputs)
    printed = "".join(o.get("text", "") for o in nb.cells[2].outputs)
    assert verdict.startswith("Passed"), verdict
    assert printed.strip() == "LOG []", printed
    assert "4242" not in printed and "17" not in printed
    everything = nbformat.writes(nb)  # no output of any cell, the thread's included, holds a hidden input
    assert "4242" not in everything and "(3, 17)" not in everything


def test_the_measurement_does_not_trust_torchs_comparisons_in_the_kernel(student):
    """A notebook that makes torch.equal, torch.allclose and == always true (tests/test_grading_security.py's
    patches_torch cheat) neither hides a write nor makes a generator it advanced look unused."""
    student, kernel = student
    kernel.define("""
        _saved = torch.equal, torch.allclose, torch.Tensor.__eq__
        def draw_patched(n, generator):
            return torch.rand(n, generator=generator)

        def fill_patched(scores):
            scores.add_(1)
            return scores
    """)
    kernel.define("""
        torch.equal = lambda *a, **k: True
        torch.allclose = lambda *a, **k: True
        torch.Tensor.__eq__ = lambda self, other: torch.ones(self.shape, dtype=torch.bool)
    """)
    try:
        expected = torch.rand(5, generator=torch.Generator().manual_seed(8))
        got = student.draw_patched(5, wire.Generator(8))
        assert torch.equal(got, expected)  # compared here, in the grader
        kept = student.keep_in_kernel(wire.Generator(8))  # its state is compared in the kernel
        assert torch.equal(student.draw_patched(5, kept), expected)
        _fails(lambda: student.fill_patched(torch.zeros(3)), "changed the tensor it was given as `scores`")
    finally:
        kernel.define("torch.equal, torch.allclose, torch.Tensor.__eq__ = _saved")


HIDDEN_TWO_PARTS = '''
import torch
from bertgrader.checks import case, check

def test_f(student):
    with case("on a 2 x 3 input"):
        check(tuple(student.f(torch.ones(2, 3)).shape) == (2, 3), "wrong shape")

def test_g(student):
    with case("on a 2 x 3 input"):
        check(tuple(student.g(torch.ones(2, 3)).shape) == (2, 3), "wrong shape")
'''


def test_a_kernel_killed_in_a_later_part_costs_only_the_parts_from_there(tmp_path):
    """Part 2's cell kills the kernel: part 1, graded after the last cell as every part is, is still graded (a
    fresh kernel runs the cells before the crash again, then the hidden tests); part 2 is not."""
    nb = _autograde_toy(tmp_path, HIDDEN_TWO_PARTS, [
        nbformat.v4.new_code_cell("import torch\ndef f(x):\n    return x.clone()\nprint('FIRST RUN')"),
        _graded_cell("test_f"),
        nbformat.v4.new_code_cell("import os, signal\ndef g(x):\n    return x\nos.kill(os.getpid(), signal.SIGKILL)"),
        _graded_cell("test_g"),
    ])
    said = ["".join(o.get("text", "") + o.get("evalue", "") for o in c.outputs) for c in nb.cells]
    assert said[1].startswith("Passed"), said[1]
    assert "not graded" in said[3] and "kernel stopped" in said[3], said[3]
    assert said[0].count("FIRST RUN") == 1  # the cell's own output once: the rerun's is dropped
    assert "DeadKernelError" in "".join(o.get("ename", "") for o in nb.cells[2].outputs)


def test_the_graded_kernel_has_no_transformers(tmp_path):
    """transformers is hidden from the graded kernel (its folder found without importing it in the grader):
    a student's `from transformers import BertModel` fails there, and the parts are graded."""
    nb = _autograde_toy(tmp_path, HIDDEN, [
        nbformat.v4.new_code_cell("import torch\ndef f(x):\n    return x.clone()"),
        _graded_cell("test_f"),
        nbformat.v4.new_code_cell("try:\n    from transformers import BertModel\n    print('HF found')\n"
                                  "except Exception as e:\n    print('HF missing', type(e).__name__)"),
    ])
    printed = "".join(o.get("text", "") for o in nb.cells[2].outputs)
    assert printed.startswith("HF missing"), printed
    assert "".join(o.get("text", "") for o in nb.cells[1].outputs).startswith("Passed")
