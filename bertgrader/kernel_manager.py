"""A jupyter_client kernel manager that starts every kernel inside bertgrader.sandbox.

The kernel binds its ipc sockets in a folder this manager makes (mode 0777, owned by the grader), shown to
the kernel at ``/ipc``; this manager's side connects to the same files on the host. ``seal()``, called once
the kernel answers and before any student code runs, makes the folder read-only (0555) and checks that
every socket is a socket: from then on the kernel cannot replace one with a link to a socket of the
grader's machine (zmq reconnects by path). Interrupts go as messages on the control channel (a signal to
bubblewrap would not reach the kernel, which runs in its own session). The kernel's own stdout and stderr
(not the cells' output, which travels over zmq) go nowhere, so a kernel cannot flood the instructor's
terminal. Its client (``SandboxedKernelClient``) is ready as soon as the kernel answers, without waiting
out jupyter_client's 0.2 s of IOPub silence at every kernel start. Each kernel gets a cgroup of its own
(bertgrader.cgroup) where this machine allows one, entered before bubblewrap starts and removed, with
anything left in it, when the kernel is; where none can be made, the first kernel's start says why, once.
"""
from __future__ import annotations

import os
import shutil
import stat
import subprocess
import tempfile
import time
from pathlib import Path
from queue import Empty

import zmq
from jupyter_client import AsyncKernelManager
from jupyter_client.asynchronous import AsyncKernelClient
from traitlets import DottedObjectName, Type

from bertgrader import cgroup
from bertgrader.sandbox import IPC_DIR, IPC_PREFIX, Sandbox, read_child_pid


MAX_MESSAGE_BYTES = 96 * 2**20  # above the wire's 64 MiB answers, base64-encoded


_said_no_cgroup: list[bool] = []  # the warning that limits are per process only, given once per process


class KernelSocketsChanged(RuntimeError):
    """The kernel's socket folder held something other than its sockets when it was sealed."""


class SandboxedKernelClient(AsyncKernelClient):
    """jupyter_client's client, ready once the kernel answers kernel_info on shell and IOPub is connected,
    as jupyter_client's own; then it drops only what IOPub holds already, where jupyter_client drains
    until 0.2 s pass without a message: a wait at every kernel start, one per notebook. A message of the
    kernel's that arrives later is ignored anyway: nbclient reads only the replies to the cell it runs
    (their parent is the request it sent, an id the kernel cannot know beforehand)."""

    async def wait_for_ready(self, timeout: float | None = None) -> None:
        deadline = time.monotonic() + (float("inf") if timeout is None else timeout)
        while True:
            self.kernel_info()
            try:
                msg = await self.shell_channel.get_msg(timeout=1)
            except Empty:
                pass
            else:
                if msg["msg_type"] == "kernel_info_reply":
                    try:  # IOPub is connected once the kernel's status for that request arrives there
                        await self.iopub_channel.get_msg(timeout=0.2)
                    except Empty:
                        pass
                    else:
                        self._handle_kernel_info_reply(msg)
                        break
            if not await self._async_is_alive():
                raise RuntimeError("Kernel died before replying to kernel_info")
            if time.monotonic() > deadline:
                raise RuntimeError(f"Kernel didn't respond in {timeout} seconds")
        while True:
            try:
                await self.iopub_channel.get_msg(timeout=0.01)
            except Empty:
                break


class SandboxedKernelManager(AsyncKernelManager):
    client_class = DottedObjectName("bertgrader.kernel_manager.SandboxedKernelClient")
    client_factory = Type(SandboxedKernelClient, klass=AsyncKernelClient)
    # Set by the grader before the kernel starts: workdir -> Sandbox
    make_sandbox = None

    async def _async_pre_start_kernel(self, **kw):
        self.transport = "ipc"
        self.ip = IPC_PREFIX
        self._host_dir = tempfile.mkdtemp(prefix="bert-grader-")
        os.chmod(self._host_dir, 0o755)
        self._sockets = os.path.join(self._host_dir, "sockets")
        os.mkdir(self._sockets)
        os.chmod(self._sockets, 0o777)  # the kernel (another user, as root) makes its sockets here; seal() ends it
        self.connection_file = os.path.join(self._host_dir, "kernel.json")
        cmd, kw = await super()._async_pre_start_kernel(**kw)
        os.chmod(self.connection_file, 0o644)  # the kernel runs as another user; the key is per kernel
        self.kernel_spec.interrupt_mode = "message"
        workdir = Path(kw.get("cwd") or os.getcwd())
        box = (self.make_sandbox or (lambda w: Sandbox(workdir=w)))(workdir)
        box.ro_files.append(self.connection_file)
        box.rw_dirs.append((self._sockets, IPC_DIR))
        self.kernel_group = box.group = cgroup.KernelGroup.make(box.limits)
        if self.kernel_group is None and not _said_no_cgroup:
            _said_no_cgroup.append(True)
            self.log.warning("the sandbox limits each process of a kernel, not the kernel as a whole (its children "
                             "each get the memory limit): %s", cgroup.mode())
        self._info_r, info_w = os.pipe()
        # The lifeline: the kernel exits when this pipe's write end closes, i.e. when this process dies.
        life_r, self._lifeline = os.pipe()
        if cmd[1:3] == ["-m", "ipykernel_launcher"]:
            cmd = [cmd[0], "-m", "bertgrader.kernel.lifeline", str(life_r)] + cmd[1:]
        cmd = box.wrap(cmd, info_fd=info_w)
        kw.update(stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                  pass_fds=(info_w, life_r), env={"PATH": os.environ.get("PATH", "/usr/bin:/bin")})
        self._info_w, self._life_r = info_w, life_r
        return cmd, kw

    async def _async_launch_kernel(self, kernel_cmd, **kw):
        try:
            await super()._async_launch_kernel(kernel_cmd, **kw)
        finally:
            os.close(self._info_w)
            os.close(self._life_r)
        try:
            pid = read_child_pid(self._info_r)
        finally:
            os.close(self._info_r)
        self.sandbox_pid = pid
        self.ip = os.path.join(self._sockets, "kernel")  # the same sockets, seen from the host

    def seal(self) -> None:
        """Once the kernel answers: its socket folder becomes read-only and each socket is checked to be one,
        so the kernel can no longer put a link where the grader reconnects. Raises KernelSocketsChanged."""
        os.chmod(self._sockets, 0o555)
        ports = [self.shell_port, self.iopub_port, self.stdin_port, self.control_port, self.hb_port]
        for port in ports:
            path = os.path.join(self._sockets, f"kernel-{port}")
            try:
                mode = os.lstat(path).st_mode
            except FileNotFoundError:
                continue  # a channel the kernel never bound (zmq binds lazily on some): nothing to follow
            if not stat.S_ISSOCK(mode):
                raise KernelSocketsChanged(f"the kernel's socket {os.path.basename(path)} is not a socket")
        extra = set(os.listdir(self._sockets)) - {f"kernel-{p}" for p in ports}
        if any(not stat.S_ISSOCK(os.lstat(os.path.join(self._sockets, e)).st_mode) for e in extra):
            raise KernelSocketsChanged("the kernel left something that is not a socket beside its sockets")

    async def _async_cleanup_resources(self, restart: bool = False) -> None:
        try:
            await super()._async_cleanup_resources(restart=restart)
        finally:
            if getattr(self, "_sockets", None) and os.path.isdir(self._sockets):
                os.chmod(self._sockets, 0o700)  # sealed read-only: open it again to remove it
            shutil.rmtree(getattr(self, "_host_dir", ""), ignore_errors=True)
            if getattr(self, "_lifeline", None) is not None:
                os.close(self._lifeline)
                self._lifeline = None
            if getattr(self, "kernel_group", None) is not None:
                self.kernel_group.remove()  # and whatever the kernel left running in it
                self.kernel_group = None

    def client(self, **kwargs):
        """A client whose sockets drop any single message over MAX_MESSAGE_BYTES, so a kernel cannot make
        the grader hold a huge output in memory (output below that is capped per cell by the grader)."""
        kc = super().client(**kwargs)
        kc.context.setsockopt(zmq.MAXMSGSIZE, MAX_MESSAGE_BYTES)
        return kc

    async def _async_wait(self, pollinterval: float = 0.01) -> None:
        """Until the killed kernel is gone (its exit is reaped by the poll): every 10 ms, not jupyter_client's
        100 ms, which added 0.1 s of waiting to every notebook's end (each poll is one waitpid)."""
        await super()._async_wait(pollinterval=pollinterval)

    def cleanup_ipc_files(self) -> None:
        pass  # they live in this manager's own folder, removed with it (_async_cleanup_resources)

    def cleanup_connection_file(self) -> None:
        try:
            os.remove(self.connection_file)
        except OSError:
            pass


class LocalIpcKernelManager(AsyncKernelManager):
    """A kernel outside the sandbox (``nbgrader validate``, ``--TrustedExecute.sandbox=none``) over ipc sockets
    instead of TCP ports, in a folder of its own that only this user may enter (its connection file beside
    them), removed when the kernel is. Over TCP, ipykernel warns on every start that anyone on the machine
    could listen; jupyter_client's own ipc default names its sockets relative to the working directory,
    which the kernel (started in the notebook's folder) and this side do not share."""

    async def _async_pre_start_kernel(self, **kw):
        self._folder = tempfile.mkdtemp(prefix="bert-kernel-")  # mode 0700
        self.transport = "ipc"
        self.connection_file = os.path.join(self._folder, "kernel.json")
        self.ip = os.path.join(self._folder, "kernel")  # sockets kernel-<port>, absolute paths
        return await super()._async_pre_start_kernel(**kw)

    async def _async_cleanup_resources(self, restart: bool = False) -> None:
        try:
            await super()._async_cleanup_resources(restart=restart)
        finally:
            if not restart:
                shutil.rmtree(getattr(self, "_folder", ""), ignore_errors=True)
