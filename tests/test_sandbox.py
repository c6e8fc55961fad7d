"""The pieces of trusted grading on their own: the sandbox's view and limits, the wire format, the stubs,
and that grading refuses to run unsandboxed unless told to (and then says so)."""
from __future__ import annotations

import asyncio
import importlib.util
import logging
import os
import re
import subprocess
import sys
import textwrap
import time
import types
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
import torch

from bertgrader import cgroup, sandbox
from bertgrader.kernel import wire
from bertgrader.switch_off import stubbed_bertlib
from nbgrader_harness import REPO, Course, solution_submission

linux_only = pytest.mark.skipif(sys.platform != "linux", reason="the sandbox is Linux-only")
needs_cgroup = pytest.mark.skipif(sys.platform != "linux" or not cgroup.support().version,
                                  reason=f"no cgroup per kernel can be made here: {cgroup.mode()}")


def _in_sandbox(code: str, tmp_path, **kw) -> subprocess.CompletedProcess:
    tmp_path.chmod(0o755)  # as nbgrader's autograded/<student>/<a>/ is (pytest makes it 0700)
    for p in tmp_path.iterdir():
        p.chmod(0o644)
    cmd = sandbox.Sandbox(workdir=tmp_path, **kw).wrap([sys.executable, "-u", "-c", textwrap.dedent(code)])
    return subprocess.run(cmd, capture_output=True, text=True, timeout=120)


@linux_only
def test_the_sandbox_sees_only_what_the_kernel_needs(tmp_path):
    (tmp_path / "mine.txt").write_text("the submission's own folder")
    proc = _in_sandbox(f"""
        import os, socket, sys
        print(open("mine.txt").read())
        print(sorted(os.listdir({str(REPO)!r})))
        print(sorted(os.listdir({str(REPO / 'bertgrader')!r})))
        import bertlib, torch, bertgrader.kernel.notebook
        for path in ({str(REPO / 'solutions')!r}, {str(REPO / 'nbgrader_config.py')!r}, "/etc/shadow", "/root/.bashrc"):
            print(path, os.path.exists(path))
        for path in ({str(REPO / 'bertlib' / 'x.py')!r}, "mine2.txt", {str(tmp_path / 'w.txt')!r}):
            try:
                open(path, "w")
                print("WROTE", path)
            except OSError as e:
                print("read-only", path, e.errno)
        try:
            socket.create_connection(("127.0.0.1", 22), timeout=1)
        except OSError as e:
            print("no network", e.errno)
        print("uid", os.getuid(), "env", sorted(os.environ))
    """, tmp_path)
    out = proc.stdout
    assert proc.returncode == 0, proc.stderr
    assert "the submission's own folder" in out
    # Of the course, only bertlib and the grader's kernel side (and the venv, when it lives in the course).
    venv = Path(sys.prefix).resolve()
    expected = ["bertgrader", "bertlib"] + ([venv.relative_to(REPO).parts[0]] if REPO in venv.parents else [])
    assert out.split("\n")[1] == str(sorted(expected)), out
    assert out.split("\n")[2] == str(["__init__.py", "i18n.py", "kernel", "locale"]), out
    assert out.count(" False") == 4, out
    assert "WROTE" not in out and out.count("read-only") == 3
    assert "no network" in out
    assert "SSH_AUTH_SOCK" not in out and "HOME" in out


@linux_only
def test_the_sandbox_limits_memory_disk_and_time(tmp_path):
    limits = sandbox.Limits(memory_bytes=2**31, cpu_seconds=3, tmp_bytes=8 * 2**20, file_bytes=4 * 2**20)
    proc = _in_sandbox("""
        import torch
        try:
            torch.empty(3 * 2**30, dtype=torch.uint8).fill_(1)
            print("ALLOCATED")
        except (MemoryError, RuntimeError):
            print("no memory")
        import mmap
        try:  # shared anonymous memory, which the data limit does not count: the address-space limit does
            mmap.mmap(-1, 3 * 2**30).write(b"x" * 2**20)
            print("SHARED")
        except (MemoryError, OSError):
            print("no shared memory")
        try:
            open("/tmp/big", "wb").write(b"x" * 6 * 2**20)
            print("WROTE")
        except OSError:
            print("no disk")
        while True:
            pass
    """, tmp_path, limits=limits)
    assert "no memory" in proc.stdout and "ALLOCATED" not in proc.stdout
    assert "no shared memory" in proc.stdout and "SHARED" not in proc.stdout
    assert "WROTE" not in proc.stdout
    assert proc.returncode != 0  # killed by the CPU limit, not looping for ever


@linux_only
@pytest.mark.skipif(os.geteuid() != 0, reason="as root each kernel has a uid of its own; otherwise its own user namespace")
def test_one_kernel_full_of_processes_does_not_stop_another_from_starting(tmp_path):
    """As root: the process limit counts per user across the machine, so kernels sharing one uid (nobody)
    let one student's processes stop another's kernel from starting (issue 18). Each grading process's
    kernel has a uid of its own (sandbox.kernel_uid)."""
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    for d in (tmp_path, tmp_path / "a", tmp_path / "b"):
        d.chmod(0o755)
    greedy = subprocess.Popen(sandbox.Sandbox(workdir=tmp_path / "a").wrap([sys.executable, "-u", "-c", textwrap.dedent("""
        import subprocess, time
        started = 0
        try:
            while True:
                subprocess.Popen(["sleep", "60"])
                started += 1
        except OSError:
            print("FULL after", started, flush=True)
        time.sleep(60)
    """)]), stdout=subprocess.PIPE, text=True)
    try:
        line = greedy.stdout.readline()
        assert line.startswith("FULL after"), line
        # another grading process (another pid), as a second worker of python -m bertgrader is
        starter = textwrap.dedent(f"""
            import subprocess, sys
            from bertgrader import sandbox
            code = "import threading; ts = [threading.Thread(target=lambda: None) for _ in range(32)]; [t.start() for t in ts]; print('STARTED', flush=True)"
            cmd = sandbox.Sandbox(workdir=__import__('pathlib').Path({str(tmp_path / 'b')!r})).wrap([sys.executable, '-c', code])
            proc = subprocess.run(cmd, capture_output=True, text=True, timeout=60)
            print(proc.stdout, proc.stderr[-500:])
        """)
        other = subprocess.run([sys.executable, "-c", starter], capture_output=True, text=True, timeout=120)
        assert "STARTED" in other.stdout, other.stdout + other.stderr
    finally:
        greedy.kill()
        greedy.wait()


def test_wire_round_trip_and_refusals():
    value = {"ids": torch.arange(6).view(2, 3), "p": 0.15, "rows": [1, (2, 3)], "g": wire.Generator(7),
             "cfg": wire.Config({"hidden_size": 8}), 10: None, "inf": float("inf"), "dtype": torch.float16}
    back = wire.decode(wire.encode(value))
    assert torch.equal(back["ids"], value["ids"]) and back["p"] == 0.15 and back["rows"] == [1, (2, 3)]
    assert back["g"].seed == 7 and back["cfg"].fields == {"hidden_size": 8} and back[10] is None
    assert back["inf"] == float("inf") and back["dtype"] is torch.float16
    built = wire.decode(wire.encode({"g": wire.Generator(3)}), build=wire.materialize)["g"]
    assert torch.equal(torch.rand(3, generator=built), torch.rand(3, generator=torch.Generator().manual_seed(3)))
    with pytest.raises(wire.WireError, match="allow-list"):
        wire.Module("os.system", ["echo hi"])
    with pytest.raises(wire.Unsendable):
        wire.encode(object())
    for garbage in (b"", b"\xff" * 7, b"\x10\x00\x00\x00\x00\x00\x00\x00{not json}"):
        with pytest.raises(wire.WireError):
            wire.decode(garbage)
    forged = wire.encode({"ok": 1}).replace(b'\\"ok\\"', b'\\"ok\\"')
    assert wire.decode(forged) == {"ok": 1}


def test_switched_off_functions_raise_and_the_rest_is_real(tmp_path):
    path = stubbed_bertlib(["bertlib.masking.mask_tokens", "bertlib.embeddings.BertEmbeddings.forward"])
    code = f"""
import sys; sys.path.insert(0, {str(path.parent)!r})
import inspect, bertlib, torch
assert bertlib.__file__.startswith({str(path)!r})
for call in (lambda: bertlib.mask_tokens(torch.ones(2, 3, dtype=torch.long)),
             lambda: bertlib.BertEmbeddings(bertlib.BertConfig.base())(torch.ones(1, 3, dtype=torch.long))):
    try:
        call(); print("RAN")
    except RuntimeError as e:
        print("off:", e)
print("real:", bertlib.count_parameters(bertlib.BertConfig.base())["total"])
print("source:", "switched off" in inspect.getsource(bertlib.masking.mask_tokens))
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=tmp_path).stdout
    assert out.count("off:") == 2 and "RAN" not in out and "real: 109482240" in out and "source: True" in out
    with pytest.raises(ValueError, match="not functions"):
        stubbed_bertlib(["bertlib.masking.no_such_function"])


@linux_only
def test_a_graded_kernel_sees_neither_transformers_nor_debugpy_and_imports_bertlib_without_compiling_it(tmp_path):
    from bertgrader.preprocessors import TrustedExecute

    installed = [name for name in sandbox.HIDDEN_PACKAGES if importlib.util.find_spec(name)]
    assert "debugpy" in installed  # ipykernel's dependency: where it is missing there is nothing to hide
    grader = TrustedExecute(kernel_name="python3")
    grader._module = types.SimpleNamespace(SWITCHED_OFF=["bertlib.masking.mask_tokens"])
    box = grader.create_kernel_manager().make_sandbox(tmp_path)  # the sandbox every graded kernel starts in
    assert len(sandbox.hidden_package_dirs()) == len(installed)
    assert set(sandbox.hidden_package_dirs()) <= set(box.hidden)
    proc = _in_sandbox("""
        import importlib, importlib.machinery
        for name in ("debugpy.server", "transformers.models"):
            try:
                importlib.import_module(name)
                print(name, "IMPORTED")
            except ImportError:
                print(name, "hidden")
        from ipykernel.debugger import _is_debugpy_available
        print("debugger", _is_debugpy_available)
        compiled = []  # the modules compiled from source here: none of bertlib's, whose bytecode the grader wrote
        to_code = importlib.machinery.SourceFileLoader.source_to_code
        importlib.machinery.SourceFileLoader.source_to_code = lambda self, data, path, **k: (
            compiled.append(str(path)), to_code(self, data, path, **k))[1]
        import bertlib
        print("compiled", sorted(p for p in compiled if "bertlib" in p), bertlib.masking.__file__)
        try:
            bertlib.mask_tokens(None)
        except RuntimeError as e:
            print("stub:", e)
    """, tmp_path, hidden=box.hidden, overlays=box.overlays)
    out = proc.stdout
    assert proc.returncode == 0, proc.stderr
    assert "debugpy.server hidden" in out and "debugger False" in out and "IMPORTED" not in out, out
    assert ("transformers.models hidden" in out) == ("transformers" in installed), out
    assert f"compiled [] {sandbox.package_dir('bertlib')}/masking.py" in out  # the stubbed copy, where bertlib was and "stub: bertlib.masking.mask_tokens is switched off" in out, out


@pytest.mark.slow
def test_grading_refuses_without_the_sandbox_unless_told(tmp_path, monkeypatch):
    a = "08_masking"
    course = Course(tmp_path / "course", [a])
    course.generate(a)
    course.submit("alice", a, solution_submission(course, a))
    # No bwrap on PATH: autograde must refuse, naming what is missing, and record no grade.
    monkeypatch.setenv("PATH", str(REPO / ".venv" / "bin") + ":" + str(tmp_path / "empty"))
    (tmp_path / "empty").mkdir()
    refused = course.autograde(a)
    assert refused.returncode != 0 and "refusing to grade" in refused.log and "bubblewrap" in refused.log, (
        refused.log[-2000:])
    assert course.scores(a, "alice") is None and not (course.root / "autograded").exists()
    monkeypatch.undo()
    unsafe = course.nbgrader("autograde", a, "--force", "--TrustedExecute.sandbox=none", check=False)
    assert "GRADING WITHOUT A SANDBOX" in unsafe.log
    assert course.total(a, "alice") == 8.0


def test_a_kernel_exits_when_its_grader_is_gone(tmp_path):
    """The lifeline: closing the write end (what the grader's death does, even by SIGKILL) ends the
    process at once, whatever it is doing."""
    (tmp_path / "busy.py").write_text("while True:\n    pass\n")
    read, write = os.pipe()
    proc = subprocess.Popen([sys.executable, "-m", "bertgrader.kernel.lifeline", str(read), "-m", "busy"],
                            pass_fds=(read,), cwd=tmp_path, env=dict(os.environ, PYTHONPATH=f"{tmp_path}:{REPO}"))
    os.close(read)
    with pytest.raises(subprocess.TimeoutExpired):
        proc.wait(timeout=2)  # busy for as long as the grader lives
    os.close(write)
    assert proc.wait(timeout=10) == 0


@linux_only
def test_the_self_check_starts_a_real_kernel_and_names_the_cause_when_grading_cannot_work(monkeypatch):
    from bertgrader import selfcheck

    # here it works: a sandboxed kernel imports torch and sees the grader's stub; the summary names the limits' kind
    summary = selfcheck.check_kernel()
    assert summary.startswith(f"ok ({sandbox.bwrap_path()}; a sandboxed kernel imports torch {torch.__version__}")
    assert summary.endswith(f"; limits: {cgroup.mode()})")
    assert ("a cgroup per kernel (cgroup v" if cgroup.support().version else "per-process limits only") in summary

    # and from inside a running event loop (a notebook's; a test process's after Playwright ran in it)
    async def inside_a_loop():
        return selfcheck.check_kernel()

    with ThreadPoolExecutor(1) as pool:  # a thread of its own: this one may run a loop already (Playwright's)
        assert pool.submit(asyncio.run, inside_a_loop()).result().startswith("ok (")

    # a kernel whose torch cannot load under the limits (as the CUDA build did under an address-space limit
    # alone): the cause is the kernel's own error, not "the kernel died"
    monkeypatch.setattr(selfcheck, "_sandbox", lambda w: sandbox.Sandbox(
        workdir=w, limits=sandbox.Limits(memory_bytes=48 * 2**20)))
    with pytest.raises(sandbox.SandboxUnavailable, match=r"(?s)imports fail in the sandbox.*(Error|alloc|memory)"):
        selfcheck.check_kernel()

    # a kernel that sees the real bertlib (the overlay missing, or bertlib imported from elsewhere)
    monkeypatch.setattr(selfcheck, "_sandbox", lambda w: sandbox.Sandbox(workdir=w))
    with pytest.raises(sandbox.SandboxUnavailable, match=r"padding_visibility is REAL, not the grader's stub"):
        selfcheck.check_kernel()

    # the command make venv runs, here: ok
    proc = subprocess.run([sys.executable, "-m", "bertgrader.sandbox"], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0 and "a sandboxed kernel imports torch" in proc.stdout, proc.stderr


# --------------------------------------------------------------------- one kernel, one budget (cgroups)
FORKED_GIGABYTES = """
    import os, select, time
    r, w = os.pipe()
    kids = []
    for i in range(3):
        pid = os.fork()
        if pid == 0:
            block = b"\\x01" * 2**30  # 1 GiB, every page written
            os.write(w, b"H")
            time.sleep(60)
            os._exit(0)
        kids.append(pid)
        while True:  # until this child holds its GiB, or is gone
            if select.select([r], [], [], 0.05)[0]:
                os.read(r, 1)
                break
            if os.waitpid(pid, os.WNOHANG)[0]:
                break
    def resident(pid):  # bytes; 0 for a child gone or exiting (the out-of-memory killer took its memory)
        try:
            return next(int(x.split()[1]) * 1024 for x in open(f"/proc/{pid}/status") if x.startswith("VmRSS:"))
        except (OSError, StopIteration):
            return 0
    print("HOLDING", sum(resident(pid) >= 2**30 for pid in kids), flush=True)
"""


def _holding(proc: subprocess.CompletedProcess) -> int:
    line = next((x for x in proc.stdout.splitlines() if x.startswith("HOLDING")), None)
    assert line, proc.stdout + proc.stderr[-2000:]
    return int(line.split()[1])


@needs_cgroup
def test_a_kernels_forked_children_share_its_memory(tmp_path):
    """Three children of one kernel each write 1 GiB: with the kernel's 2 GiB counted per process, all three
    held theirs (3 GiB, issue 28); in the kernel's cgroup they cannot, while another kernel's budget is its own."""
    alone = _in_sandbox(FORKED_GIGABYTES, tmp_path)  # per-process limits only: the old way
    assert _holding(alone) == 3
    greedy, other = (cgroup.KernelGroup.make(sandbox.Limits()) for _ in range(2))
    try:
        proc = _in_sandbox(FORKED_GIGABYTES, tmp_path, group=greedy)
        assert _holding(proc) < 3, proc.stdout
        assert greedy.oom_kills() >= 1  # the group's own out-of-memory killer stopped a child
        assert greedy.memory_peak() is None or greedy.memory_peak() <= 2 * 2**30
        one = _in_sandbox(FORKED_GIGABYTES.replace("range(3)", "range(1)"), tmp_path, group=other)
        assert _holding(one) == 1 and other.oom_kills() == 0
    finally:
        assert greedy.remove() and other.remove()
    assert not any(f.exists() for f in greedy.folders + other.folders)


FORKS = """
    import os, time
    started = 0
    try:
        while started < 300:
            if os.fork() == 0:
                time.sleep(60)
                os._exit(0)
            started += 1
        print("STARTED ALL", started, flush=True)
    except OSError as e:
        print("FULL after", started, e.errno, flush=True)
    time.sleep(60)
"""


@needs_cgroup
def test_300_forks_in_one_kernel_hit_its_process_limit_and_another_kernel_still_starts(tmp_path):
    """The kernel's group counts its processes (256): 300 forks stop short, and a kernel the same grading process
    starts next (the same uid as root: a per-user limit would have stopped it) starts and runs a cell."""
    from bertgrader.kernel_manager import SandboxedKernelManager

    tmp_path.chmod(0o755)
    group = cgroup.KernelGroup.make(sandbox.Limits())
    cmd = sandbox.Sandbox(workdir=tmp_path, group=group).wrap([sys.executable, "-u", "-c", textwrap.dedent(FORKS)])
    greedy = subprocess.Popen(cmd, stdout=subprocess.PIPE, text=True)
    try:
        line = greedy.stdout.readline()
        assert line.startswith("FULL after"), line
        assert int(line.split()[2]) < 256 and group.pids_refused() >= 1
        assert len(group.pids()) <= 256

        async def another_kernel():
            km = SandboxedKernelManager(kernel_name="python3")
            await km.start_kernel(cwd=str(tmp_path))
            kc = km.client()
            kc.start_channels()
            try:
                await kc.wait_for_ready(timeout=120)
                km.seal()
                in_group = km.kernel_group.pids()
                printed = []
                await kc.execute_interactive("print(6 * 7)", timeout=60, output_hook=lambda m: printed.append(
                    m["content"].get("text", "")) if m["msg_type"] == "stream" else None)
                return in_group, "".join(printed), km.kernel_group.folders
            finally:
                kc.stop_channels()
                await km.shutdown_kernel(now=True)

        with ThreadPoolExecutor(1) as pool:
            in_group, printed, folders = pool.submit(asyncio.run, another_kernel()).result()
        assert printed.strip() == "42" and in_group  # the kernel ran, inside its own group
        assert not any(f.exists() for f in folders)  # removed with the kernel
    finally:
        greedy.kill()
        greedy.wait()
        assert group.remove()  # the sleepers left in it are killed with it


@needs_cgroup
def test_groups_left_by_a_grader_that_died_are_removed_with_what_runs_in_them():
    """A grader killed outright leaves its kernels' groups; the next grader removes them (and kills what is in
    them) when it makes its first group. Groups of graders still alive are left alone."""
    gone = subprocess.Popen(["true"])
    gone.wait()  # its pid: no process has it now
    bases, version = list(cgroup.support().bases.values()), cgroup.support().version
    stale = cgroup.KernelGroup([b / f"{gone.pid}-0" for b in bases], version)
    alive = cgroup.KernelGroup([b / f"{os.getpid()}-999" for b in bases], version)
    for f in stale.folders + alive.folders:
        f.mkdir()
    sleeper = subprocess.Popen(stale.enter(["sleep", "60"]))
    try:
        for _ in range(100):
            if stale.pids():
                break
            time.sleep(0.05)
        assert stale.pids() == [sleeper.pid]
        cgroup.support.cache_clear()
        cgroup.support()  # what the next grader's first kernel runs
        assert sleeper.wait(timeout=10) == -9
        assert not any(f.exists() for f in stale.folders)
        assert all(f.exists() for f in alive.folders)
    finally:
        sleeper.kill()
        assert alive.remove() and stale.remove()


@linux_only
def test_without_a_cgroup_limits_stay_per_process_and_it_says_why(tmp_path):
    code = ("from bertgrader import cgroup, sandbox\nprint(cgroup.mode())\nprint(cgroup.KernelGroup.make(sandbox.Limits()))\n"
            "print('--nproc=256' in sandbox.Sandbox(workdir='.').wrap(['true']))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=tmp_path,
                         env=dict(os.environ, BERTGRADER_NO_CGROUP="1")).stdout.splitlines()
    assert out == ["per-process limits only, no cgroup per kernel (BERTGRADER_NO_CGROUP is set)", "None", "True"], out


def test_a_group_folder_another_user_made_means_no_cgroup_and_says_why(monkeypatch):
    """The course server's instructor grades as an ordinary user beside root's graders: the bertgrader folder
    root made exists but is not theirs to write. support() finds no cgroup (and says why) instead of offering
    one that every kernel start then fails to make (PermissionError: autograde stopped for the whole class)."""
    from bertgrader import cgroup

    if not cgroup.support().version:
        pytest.skip(f"no cgroup can be made here at all ({cgroup.support().why})")
    real_access = os.access
    monkeypatch.setattr(cgroup.os, "access", lambda path, mode, **kw: (
        False if str(path).endswith("/" + cgroup.PARENT) else real_access(path, mode, **kw)))
    cgroup.support.cache_clear()
    try:
        found = cgroup.support()
        assert found.version == 0 and "cannot make" in found.why, found
        assert cgroup.KernelGroup.make(sandbox.Limits()) is None
    finally:
        cgroup.support.cache_clear()


def test_a_configuration_without_the_graders_steps_is_refused():
    """nbgrader_config.py's settings are checked by bertgrader.config.configure: an edit that would let autograde
    run student code with nbgrader's own Execute (no sandbox, no hidden tests), or skip CleanSubmission, stops
    with the setting named."""
    from nbgrader.preprocessors import ClearOutput, Execute
    from traitlets.config import Config

    from bertgrader.config import configure
    from bertgrader.preprocessors import CleanSubmission, TrustedExecute

    for autograde, sanitize, named in (([Execute], [CleanSubmission], "autograde_preprocessors must start with "
                                        "bertgrader's TrustedExecute (it has ['Execute'])"),
                                       ([TrustedExecute], [ClearOutput, CleanSubmission], "sanitize_preprocessors")):
        c = Config()
        c.Autograde.autograde_preprocessors, c.Autograde.sanitize_preprocessors = autograde, sanitize
        with pytest.raises(ValueError, match=re.escape(named)):
            configure(c)



@linux_only
def test_where_no_cgroup_can_be_made_kernels_keep_per_process_limits_and_the_first_says_why(tmp_path, monkeypatch,
                                                                                             caplog):
    """The fallback (an ordinary user without a delegated cgroup v2; forced here): each kernel's command is
    bubblewrap under prlimit alone, the per-user process limit included, and the first kernel's start warns,
    naming why, once."""
    from bertgrader import kernel_manager

    monkeypatch.setattr(cgroup, "support", lambda: cgroup.Support(0, {}, "forced by this test"))
    monkeypatch.setattr(kernel_manager, "_said_no_cgroup", [])
    tmp_path.chmod(0o755)

    async def prepare_two():
        commands = []
        for _ in range(2):
            km = kernel_manager.SandboxedKernelManager(kernel_name="python3")
            km.log = logging.getLogger("test-fallback")
            cmd, _ = await km._async_pre_start_kernel(cwd=str(tmp_path))
            commands.append((cmd, km.kernel_group))
            for fd in (km._info_r, km._info_w, km._life_r):
                os.close(fd)
            await km._async_cleanup_resources()
        return commands

    with caplog.at_level(logging.WARNING, logger="test-fallback"):
        with ThreadPoolExecutor(1) as pool:
            commands = pool.submit(asyncio.run, prepare_two()).result()
    for cmd, group in commands:
        assert group is None and cmd[0] == sandbox.bwrap_path() and f"--nproc={sandbox.Limits().processes}" in cmd
    said = [r.getMessage() for r in caplog.records]
    assert len(said) == 1 and "not the kernel as a whole" in said[0] and "forced by this test" in said[0], said
