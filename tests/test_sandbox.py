"""The pieces of trusted grading on their own: the sandbox's view and limits, the wire format, the stubs,
and that grading refuses to run unsandboxed unless told to (and then says so)."""
from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import textwrap
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
import torch

from bertgrader import sandbox
from bertgrader.kernel import wire
from bertgrader.switch_off import stubbed_bertlib
from nbgrader_harness import REPO, Course, solution_submission

linux_only = pytest.mark.skipif(sys.platform != "linux", reason="the sandbox is Linux-only")


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
    assert out.split("\n")[2] == str(["__init__.py", "kernel"]), out
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

    # here it works: a sandboxed kernel imports torch and sees the grader's stub
    assert selfcheck.check_kernel().startswith(f"ok ({sandbox.bwrap_path()}; a sandboxed kernel imports torch {torch.__version__}")

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
