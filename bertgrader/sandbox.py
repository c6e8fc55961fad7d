"""Run a student's kernel in a bubblewrap sandbox: no network, a read-only view of what it needs, limits.

What the kernel sees: the system's /usr, the Python installation and the virtualenv, bertlib (with the
functions the assignment asks for switched off, see bertgrader.switch_off), the kernel side of this
package (``bertgrader/kernel/``: nothing of the grader's own side, the hidden tests or the book), the folder of
the notebook it grades (read-only) and a small private /tmp. Not the instructor's home, solutions/, the
gradebook, other students' folders, the environment, or the network: it runs in its own network, PID,
IPC and mount namespaces, as an unprivileged user (as root: a uid of its own, ``kernel_uid``), with
resource limits (``Limits``): per kernel where a cgroup can be made for it (``bertgrader.cgroup``: the kernel
and every process it starts share its memory, processes and CPU), and per process (``prlimit``) always.

The kernel talks to jupyter_client over the ``ipc`` transport: its sockets are files in a folder the grader
makes and owns, shown to the kernel at ``/ipc``; once the kernel has made them, and before any student code
runs, the grader takes back the right to change that folder (bertgrader.kernel_manager), so the kernel can
never swap a socket for a link to a socket of the grader's machine. Nothing else the kernel can write is on
the instructor's disk.

    check_available()                 # raises SandboxUnavailable, naming what is missing
    cmd = Sandbox(workdir=nb_dir).wrap([python, "-m", "ipykernel_launcher", "-f", conn])
"""
from __future__ import annotations

import importlib.util
import json
import os
import select
import shutil
import site
import subprocess
import sys
import sysconfig
import tempfile
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

from bertgrader.cgroup import KernelGroup

GRADER = Path(__file__).resolve().parent  # this package
# As root, each kernel runs as a user of its own: KERNEL_UID_BASE + the grader's pid (one kernel at a time per
# grading process), a uid no account has. Per-user limits (processes, counted across the machine) then
# count one student only: a student who starts hundreds of processes cannot stop another's kernel starting.
KERNEL_UID_BASE = 1_000_000_000
IPC_DIR = "/ipc"  # inside the sandbox: the folder of the kernel's sockets, a host folder the grader owns
IPC_PREFIX = f"{IPC_DIR}/kernel"  # the kernel's sockets: /ipc/kernel-<port>


class SandboxUnavailable(RuntimeError):
    """The sandbox cannot run here; the message says why and what to install or pass."""


@dataclass(frozen=True)
class Limits:
    """Resource limits of one kernel. A kernel that passes one is stopped; the cells left score zero."""

    # memory the kernel may use: with a cgroup (bertgrader.cgroup), the kernel and all its processes together
    # (memory they touch, /tmp included); per process always (RLIMIT_DATA: the heap and private mappings): a
    # 3 GiB allocation fails (torch + bertlib take about 0.2 of it). Its address space may also hold the shared
    # libraries torch maps from files, which are not its own memory: RLIMIT_AS is this plus their size
    # (shared_library_bytes)
    memory_bytes: int = 2 * 2**30
    cpu_seconds: int = 300  # CPU time of each process of the kernel (RLIMIT_CPU)
    cpus: float = 1.0  # with a cgroup: the CPUs the whole kernel may keep busy (torch runs one thread in it)
    processes: int = 256  # threads count too (torch and zmq start several per kernel); per kernel with a cgroup
    open_files: int = 256
    file_bytes: int = 16 * 2**20  # the largest file the kernel may write (in its own /tmp)
    tmp_bytes: int = 64 * 2**20  # the size of its /tmp
    wall_seconds: int = 600  # a whole notebook, enforced by the grader


def kernel_uid() -> int:
    """The uid (and gid) a kernel started by this process runs as, when grading as root."""
    return KERNEL_UID_BASE + os.getpid()


def bwrap_path() -> str | None:
    return shutil.which("bwrap")


def _ancestors(path: Path) -> list[Path]:
    return [p for p in reversed(path.parents) if str(p) != "/"]


def package_dir(name: str) -> Path:
    """Where this interpreter imports a package from, without importing it: the kernel must see the same
    copy (an editable install may point anywhere; a plain install puts it in site-packages)."""
    spec = importlib.util.find_spec(name)
    if spec is None or not spec.submodule_search_locations:
        raise SandboxUnavailable(f"the package {name!r} is not importable by {sys.executable}: install the course "
                                 "into this environment (make venv)")
    return Path(list(spec.submodule_search_locations)[0]).resolve()


def kernel_packages() -> list[Path]:
    """What a student's kernel imports besides Python's own: bertlib and the kernel side of this package,
    its __init__ and kernel/, and the messages kernel/notebook.py speaks in the notebook's language (i18n.py, which
    imports only Python's own modules, and the package's catalogues, locale/) (never the grader's side: the hidden
    tests' helpers, the sandbox, the class runner)."""
    return [package_dir("bertlib"), GRADER / "__init__.py", GRADER / "kernel", GRADER / "i18n.py", GRADER / "locale"]


@lru_cache(maxsize=1)
def shared_library_bytes() -> int:
    """The size of torch's shared libraries (and NVIDIA's, beside a CUDA build of torch), found without importing
    them: the address space a kernel maps from files when it imports torch, on top of the memory it may allocate.
    A CPU build has about 0.4 GiB of them; the CUDA build pip installs by default on Linux about 3.6 GiB, which an
    address-space limit of 2 GiB alone refuses ("libtorch_cpu.so: failed to map segment from shared object")."""
    total = 0
    for name in ("torch", "nvidia"):
        spec = importlib.util.find_spec(name)
        for location in (spec.submodule_search_locations or []) if spec else []:
            total += sum(p.stat().st_size for p in Path(location).rglob("*.so*") if p.is_file())
    return total


# Installed packages a kernel is shown as empty folders (``Sandbox.hidden``), so importing them fails:
# transformers, whose BERT would answer the exercises; debugpy, the debugger ipykernel loads at every start when
# it is importable (a debugging server no grading uses: 0.12 s of CPU per kernel, about a fifth of an idle
# kernel's start, measured in benchmarks/bench_kernel_start.py).
HIDDEN_PACKAGES = ("transformers", "debugpy")


def hidden_package_dirs(names=HIDDEN_PACKAGES) -> list[str]:
    """The folders of the installed packages ``names``, found without importing them (transformers takes 2-3 s)."""
    found = []
    for name in names:
        try:
            spec = importlib.util.find_spec(name)
        except (ImportError, ValueError):
            spec = None
        if spec is not None and spec.origin:
            found.append(str(Path(spec.origin).resolve().parent))
    return found


def kernel_import_path() -> str:
    """PYTHONPATH of a kernel: the folders this process imports bertlib and bertgrader from. The kernel then
    imports the copies the sandbox shows (the stubbed bertlib), whatever else its interpreter would find: an
    editable install pointing at another checkout, or none (a course run from its folder with `python -m`),
    would leave it importing a bertlib the sandbox does not show, and every kernel would die."""
    return ":".join(dict.fromkeys(str(p) for p in (package_dir("bertlib").parent, GRADER.parent)))


def _python_paths() -> list[Path]:
    """What a kernel of this interpreter needs to read: the installation, the virtualenv, site-packages."""
    paths = {Path(sys.base_prefix).resolve(), Path(sys.prefix).resolve(), Path(sys.executable).resolve().parent}
    for key in ("stdlib", "platstdlib", "purelib", "platlib"):
        paths.add(Path(sysconfig.get_paths()[key]).resolve())
    for p in site.getsitepackages():
        paths.add(Path(p).resolve())
    # keep the outermost of nested paths
    keep = []
    for p in sorted(paths, key=lambda p: len(p.parts)):
        if p.exists() and not any(p == k or k in p.parents for k in keep):
            keep.append(p)
    return keep


@dataclass
class Sandbox:
    """The bubblewrap command line for one kernel."""

    workdir: Path  # the graded notebook's folder: the kernel's read-only working directory
    limits: Limits = field(default_factory=Limits)
    overlays: dict = field(default_factory=dict)  # {path in the sandbox: host path to show there instead}
    hidden: list = field(default_factory=list)  # paths shown as empty folders (e.g. transformers)
    ro_files: list = field(default_factory=list)  # single host files visible read-only (the connection file)
    rw_dirs: list = field(default_factory=list)  # (host folder, path inside) the kernel may write (its sockets)
    threads: int = 1
    group: KernelGroup | None = None  # the kernel's cgroup (bertgrader.cgroup), entered before bubblewrap starts

    def env(self) -> dict[str, str]:
        venv_bin = str(Path(sys.executable).parent)
        return {"PATH": f"{venv_bin}:/usr/bin:/bin", "HOME": "/tmp", "TMPDIR": "/tmp", "LANG": "C.UTF-8",
                "MPLBACKEND": "Agg", "MPLCONFIGDIR": "/tmp/matplotlib", "HF_HUB_OFFLINE": "1",
                "TRANSFORMERS_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false", "PYTHONDONTWRITEBYTECODE": "1",
                "OMP_NUM_THREADS": str(self.threads), "MKL_NUM_THREADS": str(self.threads),
                "JPY_PARENT_PID": "1", "PYDEVD_DISABLE_FILE_VALIDATION": "1", "PYTHONPATH": kernel_import_path()}

    def wrap(self, cmd: list[str], info_fd: int | None = None) -> list[str]:
        bwrap = bwrap_path()
        if not bwrap:
            raise SandboxUnavailable(_missing_message())
        root = os.geteuid() == 0
        args = [bwrap, "--die-with-parent", "--new-session", "--unshare-pid", "--unshare-net", "--unshare-ipc",
                "--unshare-uts", "--unshare-cgroup-try", "--hostname", "grader"]
        if root:
            # Privileged bubblewrap: build the namespaces as root, then become a user of this kernel's own
            # (kernel_uid), so that per-user limits apply to it alone and no file of the instructor's is
            # writable even by mistake.
            args += ["--cap-drop", "ALL", "--cap-add", "CAP_SETUID", "--cap-add", "CAP_SETGID"]
        else:
            args += ["--unshare-user", "--disable-userns", "--cap-drop", "ALL"]
        if info_fd is not None:
            args += ["--info-fd", str(info_fd)]
        args += ["--ro-bind", "/usr", "/usr", "--proc", "/proc", "--dev", "/dev",
                 "--size", str(self.limits.tmp_bytes), "--perms", "1777", "--tmpfs", "/tmp"]
        for name in ("bin", "lib", "lib64", "sbin"):
            link = Path("/") / name
            if link.is_symlink():
                args += ["--symlink", os.readlink(link), str(link)]
            elif link.is_dir():
                args += ["--ro-bind", str(link), str(link)]
        for f in ("/etc/ld.so.cache", "/etc/localtime", "/etc/nsswitch.conf"):
            if os.path.exists(f):
                args += ["--ro-bind", f, f]
        made = {"/", "/tmp", "/usr", "/proc", "/dev", "/etc"}
        binds = [(p, p) for p in _python_paths()]
        binds += [(p, p) for p in kernel_packages() if str(p) not in self.overlays]
        binds += [(Path(host), Path(inside)) for inside, host in self.overlays.items()]
        binds += [(Path(self.workdir).resolve(), Path(self.workdir).resolve())]
        binds += [(Path(f), Path(f)) for f in self.ro_files]
        # Outer folders first: a bind laid over a folder hides what was bound inside it before (the course's
        # venv under /tmp/..., then a working folder /tmp, would leave the venv behind a folder the kernel's
        # user may not enter).
        binds.sort(key=lambda b: len(b[1].parts))
        for host, inside in binds:
            for parent in _ancestors(inside):
                if str(parent) not in made and not str(parent).startswith("/usr"):
                    args += ["--perms", "0755", "--dir", str(parent)]
                    made.add(str(parent))
            args += ["--ro-bind", str(host), str(inside)]
            made.add(str(inside))
        for host, inside in self.rw_dirs:
            for parent in _ancestors(Path(inside)):
                if str(parent) not in made:
                    args += ["--perms", "0755", "--dir", str(parent)]
                    made.add(str(parent))
            args += ["--bind", str(host), str(inside)]
        for path in self.hidden:
            args += ["--tmpfs", str(path)]
        args += ["--chdir", str(Path(self.workdir).resolve()), "--clearenv"]
        for k, v in self.env().items():
            args += ["--setenv", k, v]
        args += ["--"]
        if root:
            uid = kernel_uid()
            args += [shutil.which("setpriv") or "/usr/bin/setpriv", f"--reuid={uid}", f"--regid={uid}",
                     "--clear-groups", "--inh-caps=-all", "--bounding-set=-all", "--"]
        lim = self.limits
        # RLIMIT_NPROC counts a user's processes across the machine (as an ordinary user, all of the instructor's):
        # a group counts the kernel's own instead
        nproc = [] if self.group else [f"--nproc={lim.processes}"]
        args += [shutil.which("prlimit") or "/usr/bin/prlimit", f"--data={lim.memory_bytes}",
                 f"--as={lim.memory_bytes + shared_library_bytes()}", f"--cpu={lim.cpu_seconds}", *nproc,
                 f"--nofile={lim.open_files}", f"--fsize={lim.file_bytes}", "--core=0", "--"]
        args += list(cmd)
        return self.group.enter(args) if self.group else args


def _missing_message() -> str:
    return ("the grading sandbox needs bubblewrap (`bwrap`), which is not installed. On Debian or Ubuntu: "
            "`sudo apt-get install bubblewrap` (it also needs user namespaces, on by default). Student code "
            "is never run unsandboxed by default; to grade without the sandbox anyway (only for code you "
            "trust) pass --TrustedExecute.sandbox=none")


def check_available() -> None:
    """Start a trivial sandboxed process; raise SandboxUnavailable with the reason if that fails."""
    if sys.platform != "linux":
        raise SandboxUnavailable(f"the grading sandbox runs on Linux only (this is {sys.platform}); "
                                 "grade on a Linux machine, or pass --TrustedExecute.sandbox=none for trusted code")
    if not bwrap_path():
        raise SandboxUnavailable(_missing_message())
    for tool in ("prlimit",) + (("setpriv",) if os.geteuid() == 0 else ()):
        if not shutil.which(tool):
            raise SandboxUnavailable(f"the grading sandbox needs `{tool}` (Debian package util-linux)")
    workdir = Path(tempfile.mkdtemp(prefix="bert-grader-check-"))
    workdir.chmod(0o755)
    cmd = Sandbox(workdir=workdir).wrap([sys.executable, "-c", "pass"])
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=60)
    except subprocess.TimeoutExpired:
        raise SandboxUnavailable("a trial sandboxed process did not finish within 60 s") from None
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    if proc.returncode != 0:
        raise SandboxUnavailable(
            f"bubblewrap is installed but could not start a sandbox here: {proc.stderr.strip()[-500:]} "
            "(it needs unprivileged user namespaces: sysctl kernel.unprivileged_userns_clone=1, or "
            "kernel.apparmor_restrict_unprivileged_userns=0 on Ubuntu 24.04)")


def read_child_pid(fd: int, timeout: float = 30) -> int:
    """bubblewrap writes {"child-pid": N} to its --info-fd once the sandbox exists."""
    data = b""
    while b"}" not in data:
        ready, _, _ = select.select([fd], [], [], timeout)
        if not ready:
            raise SandboxUnavailable("bubblewrap did not report its sandbox within 30 s")
        chunk = os.read(fd, 4096)
        if not chunk:
            break
        data += chunk
    try:
        return int(json.loads(data.decode())["child-pid"])
    except (ValueError, KeyError) as e:
        raise SandboxUnavailable(f"bubblewrap's report was unreadable: {data[:200]!r}") from e


if __name__ == "__main__":  # python -m bertgrader.sandbox: can this machine grade? (bertgrader.selfcheck)
    from bertgrader.selfcheck import main

    main()
