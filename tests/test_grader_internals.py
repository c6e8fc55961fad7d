"""The jupyter_client, nbclient and nbgrader internals bertgrader relies on, checked by name and by how they
are called: when an upgrade renames or stops calling one, this fails naming it, instead of grading going
quietly unprotected (issue 21 §6). The attacked class of tests/test_grading_security.py checks the same
end to end."""
from __future__ import annotations

import inspect
import subprocess
import sys

import jupyter_client
import nbclient
import pytest
from jupyter_client import AsyncKernelManager
from nbclient import NotebookClient
from nbgrader.converters.base import BaseConverter

from bertgrader.kernel_manager import SandboxedKernelManager
from bertgrader.preprocessors import TrustedExecute
from nbgrader_harness import REPO


@pytest.mark.parametrize("name", ["_async_pre_start_kernel", "_async_launch_kernel", "_async_cleanup_resources",
                                  "cleanup_ipc_files", "cleanup_connection_file", "client", "_async_wait"])
def test_the_kernel_manager_overrides_methods_jupyter_client_has(name):
    assert callable(getattr(AsyncKernelManager, name, None)), (
        f"jupyter_client {jupyter_client.__version__}: AsyncKernelManager.{name} is gone; "
        f"bertgrader.kernel_manager.SandboxedKernelManager overrides it")
    assert name in vars(SandboxedKernelManager)


def test_a_killed_kernel_is_awaited_through_the_overridden_poll():
    """autograde kills each kernel (Execute.shutdown_kernel = "immediate"); jupyter_client then polls it until it
    is gone, through _async_wait, which the manager calls with its own 10 ms interval instead of 100 ms."""
    assert "self._async_wait()" in inspect.getsource(AsyncKernelManager._async_kill_kernel)
    assert inspect.signature(SandboxedKernelManager._async_wait).parameters["pollinterval"].default == 0.01


def test_loading_the_course_configuration_imports_no_torch():
    """Every nbgrader command loads nbgrader_config.py, which imports bertgrader.preprocessors: torch (2 s of
    CPU) is imported where a notebook is graded, not there, so generate_assignment, export, validate or a class
    run's coordinator do not pay for it. Grading itself imports it (the hidden tests): checked here too."""
    code = ("import sys\nfrom traitlets.config.loader import PyFileConfigLoader\n"
            f"PyFileConfigLoader('nbgrader_config.py', path={str(REPO)!r}).load_config()\n"
            "print('loaded', 'torch' in sys.modules)\n"
            "from bertgrader import checks\nprint('grading', 'torch' in sys.modules)\n")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, cwd=REPO)
    assert proc.stdout.split("\n")[:2] == ["loaded False", "grading True"], proc.stdout + proc.stderr


def test_nbclient_calls_what_trusted_execute_overrides():
    """TrustedExecute seals the kernel's sockets in start_new_kernel_client (the synchronous form that
    setup_kernel calls) and gates every message in process_message, which must hand outputs to output()."""
    setup = inspect.getsource(NotebookClient.setup_kernel)
    assert "self.start_new_kernel_client()" in setup, (
        f"nbclient {nbclient.__version__}: setup_kernel no longer calls start_new_kernel_client, so the kernel's "
        "socket folder would never be sealed")
    process = inspect.getsource(NotebookClient.process_message)
    assert "self.output(" in process and "handle_comm_msg" in process, (
        f"nbclient {nbclient.__version__}: process_message changed; review TrustedExecute.process_message")
    for name in ("start_new_kernel_client", "process_message", "output", "preprocess_cell"):
        assert name in vars(TrustedExecute), name
    assert "store_widget_state" in NotebookClient.class_traits()


def test_nbgrader_copies_a_submission_in_init_assignment():
    """bertgrader.submission checks a submission where nbgrader starts converting it."""
    source = inspect.getsource(inspect.unwrap(BaseConverter.init_assignment))  # nbgrader's, even once installed
    assert "shutil.copy" in source and "_format_source" in source, (
        "nbgrader's BaseConverter.init_assignment changed: review bertgrader.submission.install")
    assert "init_assignment(gd['assignment_id'], gd['student_id'])" in inspect.getsource(BaseConverter.convert_notebooks)


@pytest.mark.parametrize("name", ["_async_pre_start_kernel", "_async_cleanup_resources"])
def test_the_local_kernel_manager_overrides_methods_jupyter_client_has(name):
    from bertgrader.kernel_manager import LocalIpcKernelManager

    assert callable(getattr(AsyncKernelManager, name, None)), (
        f"jupyter_client {jupyter_client.__version__}: AsyncKernelManager.{name} is gone; "
        f"bertgrader.kernel_manager.LocalIpcKernelManager overrides it")
    assert name in vars(LocalIpcKernelManager)


def test_a_local_kernel_answers_over_ipc_in_a_private_folder_removed_after(tmp_path):
    """nbgrader validate's kernel (nbgrader_config.py: Execute.kernel_manager_class): ipc sockets, absolute
    paths in a 0700 folder of its own, although the kernel starts in another working directory (with
    jupyter_client's relative ipc default it never answered: the unsandboxed autograde failed)."""
    import asyncio
    import concurrent.futures
    import os
    import stat

    from bertgrader.kernel_manager import LocalIpcKernelManager

    async def run():
        km = LocalIpcKernelManager()
        await km.start_kernel(cwd=str(tmp_path))
        folder = km._folder
        try:
            kc = km.client()
            kc.start_channels()
            await kc.wait_for_ready(timeout=60)
            kc.stop_channels()
            assert km.transport == "ipc" and km.ip.startswith(folder + os.sep)
            assert stat.S_IMODE(os.stat(folder).st_mode) & 0o777 == 0o700  # (jupyter_client adds the sticky bit)
            assert any(stat.S_ISSOCK(os.lstat(os.path.join(folder, f)).st_mode) for f in os.listdir(folder))
        finally:
            await km.shutdown_kernel(now=True)
        return folder

    # In a thread of its own: another test's Playwright may hold this thread's event loop (asyncio.run refuses).
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        folder = pool.submit(asyncio.run, run()).result()
    assert not os.path.exists(folder), "the kernel's folder is left behind"


def test_feedback_uses_the_configured_exporter():
    """nbgrader_config.py sets GenerateFeedback.exporter_class (bertgrader/feedback.py): the trait is nbgrader's."""
    assert BaseConverter.class_traits()["exporter_class"].metadata.get("config"), (
        "nbgrader's BaseConverter.exporter_class is no longer configurable: feedback pages would load MathJax "
        "from a CDN again")


def test_nbconvert_runs_every_cell_while_the_kernel_is_up():
    """TrustedExecute grades the hidden tests after the notebook's last cell, from preprocess_cell of that
    cell's index (bertgrader/preprocessors.py: _grade_deferred): nbconvert must call preprocess_cell for
    every index, in order, inside setup_kernel (the kernel is shut down when that block ends)."""
    from nbconvert.preprocessors import ExecutePreprocessor

    lines = inspect.getsource(ExecutePreprocessor.preprocess).splitlines()
    setup = next(i for i, line in enumerate(lines) if "with self.setup_kernel()" in line)
    loop = next(i for i, line in enumerate(lines) if "for index, cell in enumerate(self.nb.cells)" in line)
    call = next(i for i, line in enumerate(lines) if "self.preprocess_cell(cell, resources, index)" in line)
    indent = [len(lines[i]) - len(lines[i].lstrip()) for i in (setup, loop, call)]
    assert setup < loop < call and indent[0] < indent[1] < indent[2], (
        "nbconvert's ExecutePreprocessor.preprocess changed: review TrustedExecute._grade_deferred")
