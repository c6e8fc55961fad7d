"""nbgrader's side of trusted grading, switched on in nbgrader_config.py.

``TrustedExecute`` replaces nbgrader's Execute in ``nbgrader autograde``:

- every kernel starts in the bubblewrap sandbox (bertgrader.sandbox); if the sandbox cannot run,
  grading stops with a message saying why, unless the instructor passes ``--TrustedExecute.sandbox=none``
  (a warning then says that student code runs with the instructor's rights);
- the student's cells run in that kernel as usual, but a graded test cell is not executed there: after
  the notebook's last cell, the grader runs the assignment's hidden tests (``solutions/<a>/hidden_tests.py``)
  of every graded cell, in its own process, calling the student's functions in the kernel with data and
  checking the data that comes back (so no cell of the student's runs after a hidden call, and none can
  show what a call was given). The cell's output is then the result: "passed", or an error holding the
  failed check's message. nbgrader scores the cell from that output, as it always does;
- while the notebook is graded, the kernel sees bertlib with the assignment's ``SWITCHED_OFF`` functions
  replaced by stubs, and no transformers (nor debugpy, ipykernel's debugger: bertgrader.sandbox.HIDDEN_PACKAGES);
- output is capped per cell, rich outputs that could run script (HTML, JavaScript, SVG, widgets) are kept
  as their plain-text form only, and a notebook has a wall-clock budget; a kernel that dies, hangs or runs
  out of a limit costs the cells that had not run yet, nothing else.

``SafeFeedback`` runs first in ``nbgrader generate_feedback``: it turns any rich output left in a notebook
into text and caps it; the page's markdown is cleaned after it is rendered (bertgrader.sanitize), so the
feedback page holds no live script.
"""
from __future__ import annotations

import copy
import re
import time
from pathlib import Path

import nbformat
from nbclient.exceptions import CellTimeoutError, DeadKernelError
from nbclient.util import run_sync
from nbgrader.preprocessors import AssignLatePenalties, Execute, NbGraderPreprocessor
from traitlets import Enum, Integer, List, Unicode

from bertgrader import i18n
from bertgrader.i18n import N_, tr
from bertgrader.kernel_manager import SandboxedKernelManager
from bertgrader.kernel import MIME
from bertgrader.sanitize import clean_html
from bertgrader.sandbox import Limits, Sandbox, check_available, hidden_package_dirs, package_dir
from bertgrader.switch_off import probe_code, stubbed_bertlib

SAFE_MIME = {"text/plain", "image/png", "image/jpeg", MIME}
NOT_RUN = N_("not graded: {why}; the cells after it could not run")  # tr(NOT_RUN, why=...)
_sandbox_checked: list = []


def _is_test_cell(cell) -> bool:
    meta = cell.get("metadata", {}).get("nbgrader", {})
    return cell.cell_type == "code" and bool(meta.get("grade")) and not meta.get("solution")


def _error_output(ename: str, message: str):
    return nbformat.v4.new_output("error", ename=ename, evalue=message, traceback=[f"{ename}: {message}"])


def _text_size(out) -> int:
    if out.get("output_type") == "stream":
        return len(out.get("text", ""))
    if out.get("output_type") == "error":
        return len(out.get("evalue", "")) + sum(len(t) for t in out.get("traceback", []))
    return sum(len(v) if isinstance(v, str) else len(str(v)) for k, v in out.get("data", {}).items() if k != MIME)


def _content_size(value, depth: int = 0) -> int:
    """About how many characters a message's content holds (its strings, however nested)."""
    if isinstance(value, str):
        return len(value)
    if depth > 20:
        return 0
    if isinstance(value, dict):
        return sum(len(str(k)) + _content_size(v, depth + 1) for k, v in value.items())
    if isinstance(value, (list, tuple)):
        return sum(_content_size(v, depth + 1) for v in value)
    return 8


def make_safe(out, cap: int):
    """A copy of one output with only inert mime types, its text cut to ``cap`` characters."""
    kind = out.get("output_type")
    if kind == "stream":
        text = out.get("text", "")
        if len(text) > cap:
            out["text"] = text[:cap] + "\n" + tr("... output cut at {cap} characters ...", cap=cap) + "\n"
    elif kind == "error":
        out["evalue"] = str(out.get("evalue", ""))[:cap]
        out["traceback"] = [str(t)[:cap] for t in out.get("traceback", [])][:100]
    elif kind in ("display_data", "execute_result"):
        data = out.get("data", {})
        kept = {k: v for k, v in data.items() if k in SAFE_MIME and k != MIME}
        if not kept and data:
            kept = {"text/plain": tr("[a rich output (HTML, script or widget) removed by the grader]")}
        if isinstance(kept.get("text/plain"), str) and len(kept["text/plain"]) > cap:
            kept["text/plain"] = kept["text/plain"][:cap] + "\n" + tr("... output cut at {cap} characters ...", cap=cap)
        out["data"] = kept
        out["metadata"] = {}
    return out


def _execute_with_metadata(kc, metadata: dict):
    """``kc.execute`` (jupyter_client's: the same request, sent the same way) with ``metadata`` in the
    execute_request's metadata."""
    def execute(code, silent=False, store_history=True, user_expressions=None, allow_stdin=None, stop_on_error=True):
        content = {"code": code, "silent": silent, "store_history": store_history,
                   "user_expressions": user_expressions or {},
                   "allow_stdin": kc.allow_stdin if allow_stdin is None else allow_stdin,
                   "stop_on_error": stop_on_error}
        msg = kc.session.msg("execute_request", content, metadata=dict(metadata))
        kc.shell_channel.send(msg)
        return msg["header"]["msg_id"]
    return execute


class TrustedExecute(Execute):
    sandbox = Enum(["bwrap", "none"], "bwrap", help=(
        "bwrap: run every student kernel in a bubblewrap sandbox (the default; grading refuses to start if "
        "the sandbox cannot run). none: run student code with your own rights, files and network: only for "
        "code you trust.")).tag(config=True)
    source_root = Unicode("", help="The folder of the assignments' source folders (hidden_tests.py)").tag(config=True)
    max_output_chars = Integer(20_000, help="Characters of output kept per cell").tag(config=True)
    notebook_seconds = Integer(Limits.wall_seconds, help="Wall-clock budget of one notebook").tag(config=True)
    memory_mb = Integer(Limits.memory_bytes // 2**20, help=(
        "Memory a kernel may allocate, MiB (its address space may hold torch's shared libraries besides)")).tag(config=True)
    cpu_seconds = Integer(Limits.cpu_seconds, help="CPU-time limit of a kernel").tag(config=True)
    max_submission_bytes = Integer(256 * 2**20, help=(
        "Characters of output (the grader's own answers included) one notebook may send in all; past it the "
        "kernel is stopped and the cells left are not graded")).tag(config=True)

    # ------------------------------------------------------------------ set-up
    # torch, and the modules that need it (checks, remote), are imported where a notebook is graded, not with this
    # module: nbgrader_config.py imports it for every nbgrader command (generate_assignment, export, validate, a
    # class run's coordinator), and torch alone costs each of them 2 s of CPU.
    def _hidden_tests(self, resources, language: str = i18n.ENGLISH):
        from bertgrader import checks

        assignment = resources.get("nbgrader", {}).get("assignment")
        if not self.source_root or not assignment:
            raise RuntimeError("TrustedExecute needs source_root (set in nbgrader_config.py) and an assignment")
        module = checks.load(Path(self.source_root) / assignment, language)
        if module is None:
            raise RuntimeError(f"no {checks.HIDDEN_TESTS} in {Path(self.source_root) / assignment}: the graded "
                               f"cells of {assignment} have no trusted tests")
        return module

    def _limits(self) -> Limits:
        return Limits(memory_bytes=self.memory_mb * 2**20, cpu_seconds=self.cpu_seconds,
                      wall_seconds=self.notebook_seconds)

    def create_kernel_manager(self):
        if self.sandbox == "none":
            return super().create_kernel_manager()
        self.kernel_manager_class = SandboxedKernelManager
        km = super().create_kernel_manager()
        overlays, hidden = {}, []
        switched_off = list(getattr(self._module, "SWITCHED_OFF", []))
        if switched_off:
            overlays[str(package_dir("bertlib"))] = str(stubbed_bertlib(switched_off, i18n.current()))
        hidden += hidden_package_dirs()  # transformers, debugpy (bertgrader.sandbox.HIDDEN_PACKAGES)
        limits = self._limits()
        km.make_sandbox = lambda workdir: Sandbox(workdir=workdir, limits=limits, overlays=overlays, hidden=hidden)
        return km

    def start_new_kernel_client(self):
        """The kernel answers: seal its socket folder before any cell of the student's runs. (nbclient's
        setup_kernel, which nbconvert's preprocess uses, calls this synchronous form; the attacked class of
        tests/test_grading_security.py fails if it ever stops being called.)"""
        kc = super().start_new_kernel_client()
        seal = getattr(self.km, "seal", None)
        if seal is not None:
            seal()
        self._verify_switched_off()
        return kc

    def _verify_switched_off(self):
        """Before the student's first cell: the kernel's bertlib must be the grader's stubbed copy (a kernel
        that imports bertlib from elsewhere would hand students the functions they are asked to write)."""
        names = list(getattr(self._module, "SWITCHED_OFF", []))
        if not names or self.sandbox == "none" or not self.nb.cells:
            return
        self._index, self._cell = 0, self.nb.cells[0]
        outputs, status = self._run_in_kernel(probe_code(names[0]))
        printed = "".join(o.get("text", "") for o in outputs if o.get("output_type") == "stream")
        if status == "ok" and printed.strip() == "STUBBED":
            return
        if status == "dead":
            return  # the kernel died on its own: the cells will say so
        raise RuntimeError(f"refusing to grade: the kernel's bertlib is not the grader's stubbed copy ({names[0]} "
                           f"is {printed.strip() or status}); is bertlib installed in this Python from another folder?")

    def preprocess(self, nb, resources=None, km=None):
        # The notebook's language (untrusted) chooses the text of the messages only: the same hidden tests run.
        language = i18n.language_of(nb)
        with i18n.speaking(language):
            return self._preprocess(nb, resources, km, language)

    def _preprocess(self, nb, resources, km, language):
        self._module = self._hidden_tests(resources, language)  # before any kernel starts: a clear error if missing
        if self.sandbox == "bwrap":
            if not _sandbox_checked:
                check_available()
                _sandbox_checked.append(True)
        else:
            self.log.warning("GRADING WITHOUT A SANDBOX (--TrustedExecute.sandbox=none): student code runs with "
                             "your rights, files, environment and network")
        self._dead = None  # why the kernel can no longer run anything, once it cannot
        self._died_in = None  # the index of the student's cell the kernel died in (a crash, not a budget spent)
        self._aside = False  # True while the grader's own call runs in the kernel
        self._received = 0  # characters of output the kernel has sent, all cells together
        self.store_widget_state = False
        nb.metadata.pop("widgets", None)  # a submission's own widget state is not kept either
        self._deadline = time.monotonic() + self.notebook_seconds
        self._used: dict[int, int] = {}
        self._cut: set[int] = set()
        from bertgrader.remote import Student

        self._student = Student(self._run_in_kernel, metadata=True)
        self._deferred: list = []  # (index, cell) of the graded test cells, graded after the last cell
        try:
            return super().preprocess(nb, resources, km)
        except DeadKernelError:  # died between cells (nbclient checks at the end too)
            return nb, resources

    # ------------------------------------------------------------------ cells
    def preprocess_cell(self, cell, resources, index):
        self._index, self._cell = index, cell
        if cell.cell_type != "code":  # markdown (a written answer may be the last cell) or raw
            cell = _inert_markdown(cell) if cell.cell_type == "markdown" else cell
            if index == len(self.nb.cells) - 1:
                self._grade_deferred()
            return cell, resources
        if not self._dead and time.monotonic() > self._deadline:
            self._stop_kernel(tr("the notebook ran past its time limit of {seconds} s", seconds=self.notebook_seconds))
        if _is_test_cell(cell):
            # Graded after the notebook's last cell (_grade_deferred), on its final state: no cell of the
            # student's runs after a hidden call, so none can print what a call was given. Until then the
            # cell says it was not graded (a cell left so scores nothing).
            cell.outputs = [_error_output("NotGraded", tr(NOT_RUN, why=self._dead) if self._dead else
                                          tr("not graded: the grading stopped before the hidden tests ran"))]
            if not self._dead:
                self._deferred.append((index, cell))
        elif self._dead:
            cell.outputs = []
        else:
            cell, resources = self._run_student_cell(cell, resources, index)
        if index == len(self.nb.cells) - 1:
            self._grade_deferred()
        return cell, resources

    def _grade_deferred(self):
        """Run the hidden tests of every graded cell, in notebook order, after the student's last cell. They run on
        one torch thread: their tensors are small, and torch's threads (one per core) cost more than they give
        there (at load 13 on 2 cores, 07's hidden tests took 3.5 s in the grader with 2 threads, 0.2 s with 1)."""
        import torch

        threads = torch.get_num_threads()
        torch.set_num_threads(1)
        try:
            self._grade_deferred_cells()
        finally:
            torch.set_num_threads(threads)

    def _grade_deferred_cells(self):
        from bertgrader import checks
        from bertgrader.remote import KernelGone

        if self._dead and self._died_in is not None and self._deferred:
            self._restart_before(self._died_in)
        for index, cell in self._deferred:
            self._index, self._cell = index, cell
            if self._dead:
                cell.outputs = [_error_output("NotGraded", tr(NOT_RUN, why=self._dead))]
                continue
            grade_id = cell.metadata["nbgrader"]["grade_id"]
            try:
                message = checks.run(self._module, grade_id, self._student)
            except KernelGone as e:
                self._dead = self._dead or str(e)
                message = tr("not graded: {why}", why=e)
            if message is None:
                cell.outputs = [nbformat.v4.new_output(
                    "stream", name="stdout", text=tr("Passed: the grader's checks of this part (visible and hidden).") + "\n")]
            else:
                cell.outputs = [_error_output("CheckFailed", message)]
        self._deferred = []

    def _restart_before(self, index: int):
        """The kernel died in the student's cell ``index``: the graded cells before it are still graded, as they
        were when each part was graded where it stood. A fresh kernel (sandboxed and checked as the first was)
        runs the student's code cells before ``index`` again, their output dropped (it was stored the first
        time), and the hidden tests run on that state; so no student cell runs after a hidden call here either.
        The notebook's time budget is the same one: what the first kernel used is not given back."""
        why = self._dead
        try:
            if self.kc is not None:
                self.kc.stop_channels()
            self.kc = None
            if self.km is not None and self.km.has_kernel:
                run_sync(self.km.shutdown_kernel)(now=True)
            self.km = self.create_kernel_manager()  # the old one's zmq context is closed with its kernel
            self._dead = None
            self.start_new_kernel(cwd=self.resources.get("metadata", {}).get("path") or None)
            self.start_new_kernel_client()
        except Exception as e:  # the kernel cannot start again: the cells before say why they were not graded
            self.log.warning("could not start a kernel again to grade the cells before a crash: %s", e)
            self._dead = why
            return
        for before in self.nb.cells[:index]:
            if before.cell_type != "code" or _is_test_cell(before):
                continue
            _, status = self._run_in_kernel(before.source)
            if status == "dead":
                self._dead = self._dead or why
                return

    def _run_student_cell(self, cell, resources, index):
        try:
            cell, resources = super().preprocess_cell(cell, resources, index)
        except DeadKernelError:
            self._dead = tr("the kernel stopped (it crashed, exited or ran out of memory or CPU time)")
            self._died_in = index
            cell.outputs.append(_error_output("DeadKernelError", self._dead))
        except CellTimeoutError:
            self._after_timeout()
            self._died_in = index if self._dead else None
        else:
            if any(o.get("ename") == "CellTimeoutError" for o in cell.outputs if o.get("output_type") == "error"):
                self._after_timeout()
                self._died_in = index if self._dead else None
        if self._stop_if_flooded():
            cell.outputs.append(_error_output("OutputLimit", self._dead))
        return cell, resources

    def _stop_if_flooded(self) -> bool:
        """Stop the kernel once the notebook has sent more than its total budget of output."""
        if self._received <= self.max_submission_bytes or self._dead:
            return False
        self._stop_kernel(tr("the notebook sent more than {mib} MiB of output in all", mib=self.max_submission_bytes // 2**20))
        return True

    def _run_in_kernel(self, code: str, metadata: dict | None = None):
        """Execute grader code in the kernel, ``metadata`` in its execute_request's metadata (bertgrader.remote
        sends its requests there): (outputs, "ok" | "error" | "timeout" | "dead")."""
        if self._dead:
            return [], "dead"
        if time.monotonic() > self._deadline:
            self._stop_kernel(tr("the notebook ran past its time limit of {seconds} s", seconds=self.notebook_seconds))
            return [], "dead"
        scratch = nbformat.v4.new_code_cell(code)
        try:
            self._execute_aside(scratch, metadata)
        except DeadKernelError:
            self._dead = tr("the kernel stopped (it crashed, exited or ran out of memory or CPU time)")
            return [], "dead"
        except CellTimeoutError:
            self._after_timeout()
            return [], "timeout" if not self._dead else "dead"
        if self._stop_if_flooded():
            return [], "dead"
        errors = [o for o in scratch.outputs if o.get("output_type") == "error"]
        if any(o.get("ename") == "CellTimeoutError" for o in errors):
            self._after_timeout()
            return scratch.outputs, "timeout" if not self._dead else "dead"
        return scratch.outputs, "error" if errors else "ok"

    def _execute_aside(self, scratch, metadata: dict | None = None):
        """Run a cell that is not part of the notebook (nbclient writes the cell it ran back into the
        notebook at its index: put the notebook's own cell back), ``metadata`` in its execute_request."""
        self._aside = True
        if metadata:
            self.kc.execute = _execute_with_metadata(self.kc, metadata)  # nbclient's execute_cell calls it
        try:
            self.execute_cell(scratch, self._index, store_history=False)
        finally:
            self._aside = False
            self.nb.cells[self._index] = self._cell
            if self.kc is not None:
                self.kc.__dict__.pop("execute", None)

    def _after_timeout(self):
        """After an interrupt: if the kernel does not answer a trivial request within 10 s, stop it."""
        if self._dead:
            return
        probe = nbformat.v4.new_code_cell("pass")
        saved = self.timeout
        self.timeout = 10
        try:
            self._execute_aside(probe)
            ok = not any(o.get("output_type") == "error" for o in probe.outputs)
        except (CellTimeoutError, DeadKernelError):
            ok = False
        finally:
            self.timeout = saved
        if not ok:
            self._stop_kernel(tr("the kernel stopped answering after a cell ran past its time limit (it ignores "
                                 "interrupts)"))

    def _stop_kernel(self, why: str):
        self._dead = why
        try:
            if self.km is not None:
                run_sync(self.km.shutdown_kernel)(now=True)
        except Exception as e:  # already gone
            self.log.debug("stopping the kernel: %s", e)

    # ------------------------------------------------------------------ output
    def process_message(self, msg, cell, cell_index):
        """The one gate every message from the kernel passes. Widget (comm) messages and display updates
        are dropped, so no widget state, no Output-widget capture and no rewrite of an earlier output is
        stored; display ids are cleared; the answer channel's mime type is kept only in the grader's own
        calls; a submission that sends more than ``max_submission_bytes`` in all is stopped. What is left
        (stream, display_data, execute_result, error) goes through ``output``: capped and made inert."""
        msg_type = msg.get("msg_type") or msg.get("header", {}).get("msg_type", "")
        content = msg.get("content")
        if not isinstance(content, dict):
            return None
        if msg_type in ("status", "execute_input", "clear_output"):
            return super().process_message(msg, cell, cell_index)
        if msg_type not in ("stream", "display_data", "execute_result", "error"):
            return None  # comm_open / comm_msg / comm_close, update_display_data, anything else
        self._received += _content_size(content)
        if self._received > self.max_submission_bytes:
            return None  # dropped; the kernel is stopped once this cell is over (_stop_if_flooded)
        if "transient" in content:
            content["transient"] = {}
        data = content.get("data")
        if isinstance(data, dict) and MIME in data and not self._aside:
            data.pop(MIME)
        return super().process_message(msg, cell, cell_index)

    def output(self, outs, msg, display_id, cell_index):
        out = super().output(outs, msg, display_id, cell_index)
        if out is None:
            return out
        if MIME in out.get("data", {}):
            if self._aside:
                return out  # the grader's own answer channel, read by bertgrader.remote and never stored
            out["data"].pop(MIME)
        used = self._used.get(cell_index, 0) + _text_size(out)
        self._used[cell_index] = used
        if used > self.max_output_chars:
            if out in outs:
                outs.remove(out)
            if cell_index not in self._cut:
                self._cut.add(cell_index)
                outs.append(nbformat.v4.new_output(
                    "stream", name="stdout", text="\n" + tr("... output cut at {cap} characters ...",
                                                              cap=self.max_output_chars) + "\n"))
            return None
        make_safe(out, self.max_output_chars)
        return out


class CleanSubmission(NbGraderPreprocessor):
    """First of autograde's sanitising steps: a submission's nbgrader metadata is the release's, whatever the
    student's file says. A cell whose grade id the release does not have (a cell the student added or
    copied, ``{"nbgrader": {}}``, another schema version) loses its nbgrader metadata; a release cell gets
    the release's own. nbgrader would otherwise stop the whole run at the first such notebook."""

    source_root = Unicode("", help="The folder of the assignments' source folders").tag(config=True)

    def preprocess(self, nb, resources):
        meta = resources.get("nbgrader", {})
        assignment, notebook = meta.get("assignment"), meta.get("notebook")
        source = Path(self.source_root) / str(assignment) / f"{notebook}.ipynb"
        if not self.source_root or not source.is_file():
            raise RuntimeError(f"CleanSubmission: no source notebook {source} (set source_root in nbgrader_config.py)")
        release, release_ids = {}, {}
        for cell in nbformat.read(str(source), as_version=4).cells:
            gid = cell.metadata.get("nbgrader", {}).get("grade_id")
            if gid and gid not in release:
                release[gid], release_ids[gid] = cell.metadata["nbgrader"], cell.get("id")

        def grade_id(cell):
            meta = cell.get("metadata", {}).get("nbgrader") if isinstance(cell.get("metadata"), dict) else None
            gid = meta.get("grade_id") if isinstance(meta, dict) else None
            return gid if isinstance(gid, str) and gid in release else None

        # One cell per grade id keeps it: the one with the release's cell id, else the first (a cell the
        # student copied or pasted has a new id and becomes an ordinary cell).
        keep = {}
        for i, cell in enumerate(nb.cells):
            gid = grade_id(cell)
            if gid is not None and (gid not in keep or (cell.get("id") == release_ids[gid]
                                                        and nb.cells[keep[gid]].get("id") != release_ids[gid])):
                keep[gid] = i
        for i, cell in enumerate(nb.cells):
            if not isinstance(cell.get("metadata"), dict) or "nbgrader" not in cell.metadata:
                continue
            gid = grade_id(cell)
            if gid is not None and keep[gid] == i:
                cell.metadata["nbgrader"] = nbformat.from_dict(copy.deepcopy(release[gid]))
            else:
                del cell.metadata["nbgrader"]
        return nb, resources


MAX_MARKDOWN_SOURCE = 256 * 1024  # characters of one markdown cell kept in the autograded notebook and the page
_ACTIVE_MARKDOWN = re.compile(r"<[A-Za-z/!?]|&#?[A-Za-z0-9]+;?|(?:java|vb)script\s*:", re.I)
_SCRIPT_SCHEME = re.compile(r"(?:java|vb)script(\s*):", re.I)


def _inert_markdown(cell):
    """A markdown cell cut at ``MAX_MARKDOWN_SOURCE`` characters; if it holds HTML, an entity or a script
    URL, its HTML cleaned with nh3's allow-list (bertgrader.sanitize: linear time; bleach, used before, took
    quadratic time) and any ``javascript:``/``vbscript:`` left in its text (a markdown link's target, or one
    an entity spelled) broken. The pages clean the rendered HTML again (bertgrader.sanitize.markdown2html)."""
    source = cell.source if isinstance(cell.source, str) else str(cell.source)
    if len(source) > MAX_MARKDOWN_SOURCE:
        source = (source[:MAX_MARKDOWN_SOURCE]
                  + f"\n\n*... cut by the grader at {MAX_MARKDOWN_SOURCE:,} characters ...*\n")
    if _ACTIVE_MARKDOWN.search(source):
        source = _SCRIPT_SCHEME.sub(lambda m: "script-removed" + m.group(1) + ":", clean_html(source))
    cell.source = source
    return cell


class LatePenaltyAgain(AssignLatePenalties):
    """nbgrader's AssignLatePenalties, run again by generate_feedback before GetGrades (nbgrader_config.py):
    autograde set the late penalty from the score then, and a score given by hand since (a written answer
    graded in Formgrader) must not escape it. Only the display_data_priority setting is added, as on
    SafeFeedback (nbconvert sets it on every preprocessor of the exporter; traitlets warned without it)."""

    display_data_priority = List(NbGraderPreprocessor.class_traits()["display_data_priority"].default_value
                                 ).tag(config=True)


class SafeFeedback(NbGraderPreprocessor):
    """Keep only inert outputs, capped, in the notebook a feedback page is made from; a markdown cell is cut
    and cleaned as in autograde (``_inert_markdown``). The page's own rendering cleans the HTML again
    (bertgrader.sanitize), whatever the notebook holds."""

    max_output_chars = Integer(20_000).tag(config=True)
    # nbconvert's HTML exporter sets display_data_priority for every NbConvertBase; nbgrader's preprocessors have
    # it but not as a setting (but GetGrades), so traitlets warned at every feedback page: "Config option
    # `display_data_priority` not recognized by `SafeFeedback`". A setting here, as GetGrades has it.
    display_data_priority = List(NbGraderPreprocessor.class_traits()["display_data_priority"].default_value
                                 ).tag(config=True)

    def preprocess_cell(self, cell, resources, index):
        if cell.cell_type == "code":
            cell.outputs = [make_safe(o, self.max_output_chars) for o in cell.get("outputs", [])][:50]
        elif cell.cell_type == "markdown":
            _inert_markdown(cell)
        return cell, resources

