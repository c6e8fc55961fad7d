"""Can this machine grade? A real kernel started as grading starts one, and the first cause found if not.

    python -m bertgrader.sandbox        # `make venv` runs it; exits 1 with the cause when grading cannot work

Three steps, each under the sandbox and limits grading uses, with bertlib's ``PROBE`` switched off as an
assignment's hidden tests switch functions off:
1. a trivial process: bubblewrap, prlimit (and setpriv as root) and user namespaces work here;
2. the kernel's imports (ipykernel, torch, bertlib, the kernel side of bertgrader) and the probe, with the
   process's own error output kept: a venv the kernel's user cannot reach, a torch that does not load under
   the limits or a bertlib imported from elsewhere is named here, where a kernel would only die;
3. a kernel through bertgrader's kernel manager (ipc sockets, sealed), asked the same over the wire, and
   found inside its cgroup where one is made (bertgrader.cgroup).
The summary says which limits apply: a cgroup per kernel (v1 or v2, and where), or per-process limits only
and why.
"""
from __future__ import annotations

import asyncio
import shutil
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from bertgrader import cgroup
from bertgrader.sandbox import Sandbox, SandboxUnavailable, bwrap_path, check_available, package_dir
from bertgrader.switch_off import probe_code, stubbed_bertlib

PROBE = "bertlib.attention.padding_visibility"  # a function assignment 01 switches off
# the kernel's imports, then the grader's own probe (STUBBED or REAL, as before a student's first cell), then torch's version
PROBE_CODE = ("import ipykernel, torch, bertlib, bertgrader.kernel.notebook\n" + probe_code(PROBE)
              + "\nprint(torch.__version__)\n")


def _sandbox(workdir: Path) -> Sandbox:
    return Sandbox(workdir=workdir, overlays={str(package_dir("bertlib")): str(stubbed_bertlib([PROBE]))})


def _verdict(printed: str, where: str) -> str:
    words = printed.split()
    if words[:1] != ["STUBBED"]:
        raise SandboxUnavailable(f"{where}: bertlib's {PROBE} is {words[0] if words else 'not reported'}, not the "
                                 "grader's stub: is bertlib installed in this Python from another folder?")
    return words[1] if len(words) > 1 else "?"


def check_imports(workdir: Path) -> str:
    """Step 2: the kernel's imports in the sandbox; returns torch's version, raises naming the cause."""
    proc = subprocess.run(_sandbox(workdir).wrap([sys.executable, "-c", PROBE_CODE]), capture_output=True,
                          text=True, timeout=300)
    if proc.returncode != 0:
        raise SandboxUnavailable(f"a kernel's imports fail in the sandbox (as grading runs them): "
                                 f"{proc.stderr.strip()[-800:]}")
    return _verdict(proc.stdout, "in the sandbox")


async def _kernel(workdir: Path) -> str:
    from bertgrader.kernel_manager import SandboxedKernelManager

    km = SandboxedKernelManager(kernel_name="python3")
    km.make_sandbox = _sandbox
    await km.start_kernel(cwd=str(workdir))
    kc = km.client()
    kc.start_channels()
    printed = []
    try:
        await kc.wait_for_ready(timeout=120)
        km.seal()
        if km.kernel_group is not None and not km.kernel_group.pids():
            raise SandboxUnavailable(f"a sandboxed kernel runs outside its cgroup ({km.kernel_group.folders[0]} is "
                                     "empty): its processes would not share its limits")
        reply = await kc.execute_interactive(
            PROBE_CODE, timeout=120,
            output_hook=lambda m: printed.append(m["content"].get("text", "")) if m["msg_type"] == "stream" else None)
        if reply["content"]["status"] != "ok":
            raise SandboxUnavailable(f"a sandboxed kernel started but could not import what grading needs: "
                                     f"{reply['content'].get('ename')}: {reply['content'].get('evalue')}")
    finally:
        kc.stop_channels()
        await km.shutdown_kernel(now=True)
    return _verdict("".join(printed), "in a sandboxed kernel")


def check_kernel() -> str:
    """Steps 1-3; returns a one-line summary, raises SandboxUnavailable naming the first cause found."""
    check_available()
    workdir = Path(tempfile.mkdtemp(prefix="bert-grader-check-"))
    workdir.chmod(0o755)  # as root the kernel runs as another user: it must enter its working folder
    try:
        version = check_imports(workdir)
        try:
            # a thread of its own: asyncio.run refuses to start where an event loop runs already (a notebook,
            # or a test process after Playwright)
            with ThreadPoolExecutor(1) as pool:
                pool.submit(asyncio.run, asyncio.wait_for(_kernel(workdir), 180)).result()
        except (RuntimeError, TimeoutError) as e:  # jupyter_client: "Kernel died before replying to kernel_info"
            raise SandboxUnavailable(f"a sandboxed kernel did not start and answer: {e}") from None
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    return (f"ok ({bwrap_path()}; a sandboxed kernel imports torch {version} and the grader's stubbed bertlib; "
            f"limits: {cgroup.mode()})")


def main() -> None:
    try:
        print(f"grading sandbox: {check_kernel()}")
    except SandboxUnavailable as e:
        print(f"grading sandbox: {e}", file=sys.stderr)
        raise SystemExit(1) from None


if __name__ == "__main__":
    main()
