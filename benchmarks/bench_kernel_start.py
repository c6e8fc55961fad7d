"""The CPU one graded notebook's kernel costs to start, as the grader starts it now against as it did before.

    python benchmarks/bench_kernel_start.py          # target: now <= 0.95 x before (CPU), on a 2-core machine

Every notebook autograde grades gets a fresh sandboxed kernel (never one kernel for two students), and in
test_exercises' class of 230 that start is most of the CPU grading costs: a kernel that imports torch and bertlib
takes about 2 s of CPU, the grader's own work per notebook about 0.3 s. Each round starts two kernels in turn
(bertgrader.kernel_manager, in the sandbox and the cgroup of a graded kernel), runs a notebook's first import
(``import torch, bertlib``) in each, and kills it as autograde does:

    before   ipykernel's debugger importable (debugpy: ipykernel loads it at every start), the stubbed bertlib
             without bytecode (the kernel compiles every module of it again), the kill reaped at
             jupyter_client's 100 ms poll
    now      TrustedExecute's own sandbox (bertgrader.preprocessors): bertgrader.sandbox.HIDDEN_PACKAGES hidden,
             the stubbed bertlib's bytecode written by the grader, the kill reaped at a 10 ms poll

Where one graded notebook's CPU goes (08_masking, a class of 10 graded by one `nbgrader autograde`, a cpuacct group
around it, the kernel's own getrusage read between the grader's steps; 2-core machine, issue 31): each notebook
after the first costs about 2.0 s, of which the kernel 1.75 (ipykernel's start 0.3, `import torch, bertlib` 1.15,
the student's cells 0.08, answering the hidden tests' calls 0.18, the sandbox's processes the rest) and the grader
0.27 (nbgrader's preprocessors and gradebook, the hidden tests' checks and their calls into the kernel); the
grader's start (nbgrader, torch, the configuration) about 3.2 s once per process. torch's import is most of it and
is paid once per student, as it must be: no kernel serves two.

CPU is counted for the kernels only (a cpuacct group holding this process and its kernels, less this process's
own CPU), medians over the rounds; kernels of both kinds take turns, so other load slows both alike and the
ratio now / before is the verdict. The wall time from the kill to the kernel reaped is reported beside it.
"""
from __future__ import annotations

import asyncio
import os
import shutil
import statistics
import sys
import tempfile
import time
import types
from pathlib import Path

from bench_autograde import CpuGroup  # benchmarks/ is on sys.path when this runs as a script

from bertgrader.kernel_manager import SandboxedKernelManager
from bertgrader.preprocessors import TrustedExecute
from bertgrader.sandbox import Sandbox, package_dir
from bertgrader.switch_off import stubbed_bertlib

ROUNDS = int(os.environ.get("BENCH_ROUNDS", 7))
TARGET = 0.95
SWITCHED_OFF = ["bertlib.masking.mask_tokens", "bertlib.masking.masking_statistics"]  # 08_masking's
FIRST_IMPORT = "import torch, bertlib"


class _JupyterClientPoll(SandboxedKernelManager):
    async def _async_wait(self, pollinterval: float = 0.1) -> None:  # jupyter_client's own interval
        while await self._async_is_alive():
            await asyncio.sleep(pollinterval)


def sandboxes(workdir: Path) -> dict:
    """{kind: (kernel manager class, the Sandbox its kernels start in)}."""
    grader = TrustedExecute(kernel_name="python3")
    grader._module = types.SimpleNamespace(SWITCHED_OFF=SWITCHED_OFF)
    now = grader.create_kernel_manager().make_sandbox(workdir)
    raw = Path(tempfile.mkdtemp(prefix="bench-bertlib-")) / "bertlib"  # the same stubbed copy, without bytecode
    shutil.copytree(stubbed_bertlib(SWITCHED_OFF), raw, ignore=shutil.ignore_patterns("__pycache__"))
    before = Sandbox(workdir=workdir, limits=now.limits, overlays={str(package_dir("bertlib")): str(raw)},
                     hidden=[h for h in now.hidden if not h.endswith("/debugpy")])
    return {"before": (_JupyterClientPoll, before), "now": (SandboxedKernelManager, now)}


async def one_kernel(manager_class, box: Sandbox, workdir: Path) -> float:
    """Start, import, kill; the seconds from the kill to the kernel reaped."""
    km = manager_class(kernel_name="python3")
    km.make_sandbox = lambda w: Sandbox(workdir=w, limits=box.limits, overlays=dict(box.overlays),
                                        hidden=list(box.hidden))
    await km.start_kernel(cwd=str(workdir))
    kc = km.client()
    kc.start_channels()
    try:
        await kc.wait_for_ready(timeout=120)
        km.seal()
        reply = await kc.execute_interactive(FIRST_IMPORT, timeout=120)
        if reply["content"]["status"] != "ok":
            raise RuntimeError(f"{FIRST_IMPORT!r} failed in the kernel: {reply['content']}")
    finally:
        kc.stop_channels()
        killed = time.perf_counter()
        await km.shutdown_kernel(now=True)
    return time.perf_counter() - killed


async def measure(group: CpuGroup, workdir: Path) -> dict[str, dict[str, list[float]]]:
    kinds = sandboxes(workdir)
    found = {kind: {"cpu": [], "reaped": []} for kind in kinds}
    for _ in range(ROUNDS):
        for kind, (manager_class, box) in kinds.items():
            cpu0, own0 = group.seconds(), time.process_time()
            reaped = await one_kernel(manager_class, box, workdir)
            await asyncio.sleep(0.2)  # the cgroup's count settles once the killed kernel is gone
            found[kind]["cpu"].append(group.seconds() - cpu0 - (time.process_time() - own0))
            found[kind]["reaped"].append(reaped)
    return found


def main() -> int:
    group = CpuGroup.make()
    if group is None:
        print("no cpuacct group can be made here (cgroup v1 cpuacct or v2, as root): the kernels' CPU cannot be "
              "counted, nothing measured")
        return 0
    group.join()  # this process; its kernels follow it
    workdir = Path(tempfile.mkdtemp(prefix="bench-kernel-start-"))
    workdir.chmod(0o755)
    try:
        found = asyncio.run(measure(group, workdir))
    finally:
        (group.path.parent / group._join.name).write_text(str(os.getpid()))  # back out, so the group can go
        group.remove()
    median = {kind: {k: statistics.median(v) for k, v in d.items()} for kind, d in found.items()}
    ratio = median["now"]["cpu"] / median["before"]["cpu"]
    print(f"a graded kernel's start and `{FIRST_IMPORT}`, {ROUNDS} rounds (load average now "
          f"{os.getloadavg()[0]:.1f} on {os.cpu_count()} cores)")
    for kind, d in median.items():
        print(f"  {kind:<7} kernel CPU {d['cpu']:.3f} s (each: {' '.join(f'{x:.2f}' for x in found[kind]['cpu'])}); "
              f"kill to reaped {d['reaped'] * 1000:.0f} ms")
    print(f"now / before: {ratio:.2f} of the CPU (target <= {TARGET}); "
          f"{median['before']['cpu'] - median['now']['cpu']:.3f} s less a notebook")
    return 0 if ratio <= TARGET else 1


if __name__ == "__main__":
    sys.exit(main())
