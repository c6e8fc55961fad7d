"""One kernel, one budget: a cgroup per sandboxed kernel, so that a kernel and every process it starts share
its memory, its process count and its CPU (per-process limits let three forked children hold 2.4 GiB in a
kernel allowed 2 GiB, and 256 processes each take that much).

    mode()                                  # "cgroup v1 (memory, pids, cpu)", or why there is none here
    group = KernelGroup.make(limits)        # <controller>/<the grader's own group>/bertgrader/<pid>-<n>/
    cmd = group.enter(cmd)                  # /bin/sh puts itself in the group, then execs cmd (bwrap)
    group.remove()                          # kills what is left in it, removes it

Each group sits below the grader's own group in each hierarchy (so whatever bounds the grader bounds its
kernels too). cgroup v2 (one hierarchy: memory.max, pids.max, cpu.max) where the grader's group can hand
memory and pids to groups below it; otherwise cgroup v1 (memory, pids and cpu hierarchies, as root);
otherwise none (an ordinary user without a delegated v2 group): ``KernelGroup.make`` returns None and the
sandbox keeps its per-process limits only (``prlimit``), which ``mode()`` says. The kernel enters its
group before bubblewrap starts, so nothing of the student's runs outside it. A group left by a grader that
died (its pid in the name) is removed when the next grader makes its first group.
"""
from __future__ import annotations

import atexit
import errno
import itertools
import os
import signal
import time
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

PARENT = "bertgrader"  # the folder of every kernel's group, below the grader's own group
V1_CONTROLLERS = ("memory", "pids", "cpu")
# /bin/sh writes its own pid into each cgroup.procs given before "--", then becomes the command: the kernel
# and all it starts are in the group from their first instruction. A write that fails stops it (exit 126).
ENTER = 'while [ "$1" != -- ]; do echo $$ > "$1" || exit 126; shift; done; shift; exec "$@"'
_counter = itertools.count()


@dataclass(frozen=True)
class Support:
    version: int  # 1 or 2; 0: no group can be made here
    bases: dict  # {controller or "unified": the folder holding this grader's kernels' groups}
    why: str = ""  # when version is 0: what stopped it
    controllers: tuple = ()  # what each kernel's group limits

    def describe(self) -> str:
        if self.version == 0:
            return f"per-process limits only, no cgroup per kernel ({self.why})"
        names = ", ".join(self.controllers)
        return f"a cgroup per kernel (cgroup v{self.version}: {names}; under {self._where()})"

    def _where(self) -> str:
        return ", ".join(str(p) for p in self.bases.values())


def _read(path: Path) -> str:
    try:
        return path.read_text()
    except OSError:
        return ""


def _mounts() -> list[tuple[str, Path, str, set]]:
    """(fstype, mount point, root of the hierarchy mounted there, super options) of each cgroup mount."""
    out = []
    for line in _read(Path("/proc/self/mountinfo")).splitlines():
        left, _, right = line.partition(" - ")
        fields, tail = left.split(), right.split()
        if len(fields) >= 5 and len(tail) >= 3 and tail[0] in ("cgroup", "cgroup2"):
            out.append((tail[0], Path(fields[4].replace("\\040", " ")), fields[3], set(tail[2].split(","))))
    return out


def _own_groups() -> dict[str, str]:
    """{controller: this process's group in that hierarchy}; "" keys the v2 (unified) hierarchy."""
    groups = {}
    for line in _read(Path("/proc/self/cgroup")).splitlines():
        _, controllers, path = line.split(":", 2)
        for c in controllers.split(",") if controllers else [""]:
            groups[c] = path
    return groups


def _below(mount: Path, root: str, own: str) -> Path | None:
    """The folder of this process's group in a hierarchy mounted at ``mount`` (None if the mount does not show it)."""
    if own != root and not own.startswith(root.rstrip("/") + "/"):
        return None
    return mount / own[len(root.rstrip("/")):].lstrip("/")


def _make_parent(base: Path, v2_controllers=()) -> Path:
    """base/bertgrader (again, if a grader that ended removed it meanwhile); in v2, handing down the controllers."""
    parent = base / PARENT
    parent.mkdir(exist_ok=True)
    if not os.access(parent, os.W_OK | os.X_OK):  # made by another user (root's grader): no group of ours fits in it
        raise PermissionError(errno.EACCES, os.strerror(errno.EACCES), str(parent))
    if v2_controllers:
        (parent / "cgroup.subtree_control").write_text(" ".join(f"+{c}" for c in v2_controllers))
    return parent


def _v2() -> Support:
    own = _own_groups().get("")
    for fstype, mount, root, _ in _mounts():
        if fstype != "cgroup2" or own is None:
            continue
        base = _below(mount, root, own)
        if base is None or not (base / "cgroup.controllers").is_file():
            continue
        have = _read(base / "cgroup.controllers").split()
        wanted = [c for c in V1_CONTROLLERS if c in have]
        if not {"memory", "pids"} <= set(wanted):
            return Support(0, {}, f"cgroup v2 at {mount} offers {' '.join(have) or 'no controller'} to this "
                                  "process's group, not memory and pids")
        try:
            enabled = set(_read(base / "cgroup.subtree_control").split())
            if not set(wanted) <= enabled:  # fails (EBUSY) where the grader's own group holds processes
                (base / "cgroup.subtree_control").write_text(" ".join(f"+{c}" for c in wanted))
            parent = _make_parent(base, wanted)
        except OSError as e:
            return Support(0, {}, f"cgroup v2: cannot make groups below {base} ({e.strerror}); run the grader in "
                                  "a group delegated to its user whose processes sit in a leaf group of it")
        return Support(2, {"unified": parent}, controllers=tuple(wanted))
    return Support(0, {}, "no cgroup v2 hierarchy")


def _v1() -> Support:
    own, bases = _own_groups(), {}
    for controller in V1_CONTROLLERS:
        mount = next(((m, r) for t, m, r, opts in _mounts() if t == "cgroup" and controller in opts), None)
        if mount is None or controller not in own:
            return Support(0, {}, f"no cgroup v1 {controller} hierarchy mounted")
        base = _below(*mount, own[controller])
        if base is None or not base.is_dir():
            return Support(0, {}, f"this process's {controller} group is not visible under {mount[0]}")
        try:
            bases[controller] = _make_parent(base)
        except OSError as e:
            return Support(0, {}, f"cgroup v1: cannot make a group in {base} ({e.strerror}; root can)")
    return Support(1, bases, controllers=V1_CONTROLLERS)


@lru_cache(maxsize=1)
def support() -> Support:
    """What this machine allows this process, found once (and groups of dead graders removed)."""
    if os.environ.get("BERTGRADER_NO_CGROUP"):  # the fallback, on purpose (tests of it)
        return Support(0, {}, "BERTGRADER_NO_CGROUP is set")
    found = _v2()
    if found.version == 0:
        v2_why = found.why
        found = _v1()
        if found.version == 0:
            found = Support(0, {}, f"{v2_why}; {found.why}")
    for parent in found.bases.values():
        _sweep(parent, lambda pid: not _alive(pid))
    if found.version:
        atexit.register(_at_exit, found)
    return found


def _at_exit(found: Support) -> None:
    """This grader's groups go, and the bertgrader folder too once no grader has a group in it (a folder left
    in a group would stop whoever made that group from removing it)."""
    for parent in found.bases.values():
        _sweep(parent, lambda pid: pid == os.getpid())
        try:
            parent.rmdir()
        except OSError:
            pass  # another grader's kernels are in it


def mode() -> str:
    return support().describe()


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _sweep(parent: Path, whose) -> None:
    """Remove the groups under ``parent`` whose grader's pid satisfies ``whose`` (killing what is left in them)."""
    try:
        entries = list(parent.iterdir())
    except OSError:
        return
    for folder in entries:
        owner = folder.name.split("-", 1)[0]
        if folder.is_dir() and owner.isdigit() and whose(int(owner)):
            _remove(folder, wait=1.0)


def _share_per_kernel(parent: Path) -> None:
    """The CPU weight of the bertgrader folder: one task's per kernel group in it. Its kernels compete for CPU as
    one entity with the grader and every other process beside that folder; at the default weight, all kernels
    together would count as one process (measured under load: a busy kernel got a third of the CPU a process
    outside got)."""
    kernels = sum(1 for f in parent.iterdir() if f.is_dir())
    for name, per_kernel, most in (("cpu.shares", 1024, 2**18), ("cpu.weight", 100, 10_000)):
        if (parent / name).exists():
            try:
                (parent / name).write_text(str(min(most, per_kernel * max(1, kernels))))
            except OSError:
                pass  # a weight that cannot change leaves the kernels slower, not unbounded


def _pids(folder: Path) -> list[int]:
    return [int(p) for p in _read(folder / "cgroup.procs").split()]


def _remove(folder: Path, wait: float) -> bool:
    deadline = time.monotonic() + wait
    while True:
        for pid in _pids(folder):
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        try:
            folder.rmdir()
            return True
        except FileNotFoundError:
            return True
        except OSError:  # EBUSY until the killed processes are gone
            if time.monotonic() > deadline:
                return False
            time.sleep(0.01)


@dataclass
class KernelGroup:
    """One kernel's group: a folder per hierarchy (one in v2), with the kernel's limits written in."""

    folders: list[Path]
    version: int

    @classmethod
    def make(cls, limits) -> KernelGroup | None:
        """A new group with ``limits`` (bertgrader.sandbox.Limits: memory_bytes, processes, cpus), or None where
        this machine allows none (see mode())."""
        found = support()
        if not found.version:
            return None
        name = f"{os.getpid()}-{next(_counter)}"
        folders = [parent / name for parent in found.bases.values()]
        group = cls(folders, found.version)
        try:
            for f in folders:
                if not f.parent.is_dir():  # removed by a grader that ended (_at_exit) since support() ran
                    _make_parent(f.parent.parent, found.controllers if found.version == 2 else ())
                f.mkdir()
            group._write_limits(limits)
            for f in folders:
                _share_per_kernel(f.parent)
        except OSError:
            group.remove()
            raise
        return group

    def _file(self, name: str) -> Path | None:
        """The file ``name`` (e.g. memory.max) in whichever folder has it (v1: one per controller)."""
        return next((f / name for f in self.folders if (f / name).exists()), None)

    def _set(self, name: str, value, required: bool = True) -> None:
        path = self._file(name)
        if path is None:
            if required:
                raise OSError(f"{name} is missing in {self.folders}")
            return
        path.write_text(str(value))

    def _write_limits(self, limits) -> None:
        quota = int(limits.cpus * 100_000)
        if self.version == 2:
            self._set("memory.max", limits.memory_bytes)
            self._set("memory.swap.max", 0, required=False)
            self._set("memory.oom.group", 1, required=False)  # an out-of-memory kernel is stopped whole
            self._set("pids.max", limits.processes)
            self._set("cpu.max", f"{quota} 100000", required=False)
        else:
            self._set("memory.limit_in_bytes", limits.memory_bytes)
            self._set("memory.memsw.limit_in_bytes", limits.memory_bytes, required=False)  # no swap beyond it
            self._set("pids.max", limits.processes)
            self._set("cpu.cfs_period_us", 100_000)
            self._set("cpu.cfs_quota_us", quota)

    def enter(self, cmd: list[str]) -> list[str]:
        """``cmd``, started inside this group."""
        return ["/bin/sh", "-c", ENTER, "bertgrader-cgroup",
                *[str(f / "cgroup.procs") for f in self.folders], "--", *cmd]

    def pids(self) -> list[int]:
        """The processes in the group now (host pids)."""
        return sorted({pid for f in self.folders for pid in _pids(f)})

    def memory_peak(self) -> int | None:
        """The most memory the group has held, bytes (where the kernel keeps count)."""
        path = self._file("memory.max_usage_in_bytes") or self._file("memory.peak")
        text = _read(path).strip() if path else ""
        return int(text) if text.isdigit() else None

    def counter(self, events_file: str, key: str) -> int:
        """A count from an events file (memory.oom_control's or memory.events' oom_kill, pids.events' max)."""
        path = self._file(events_file)
        for line in (_read(path) if path else "").splitlines():
            name, _, value = line.partition(" ")
            if name == key and value.strip().isdigit():
                return int(value)
        return 0

    def oom_kills(self) -> int:
        return self.counter("memory.oom_control", "oom_kill") or self.counter("memory.events", "oom_kill")

    def pids_refused(self) -> int:
        """How many forks the process limit refused."""
        return self.counter("pids.events", "max")

    def remove(self, wait: float = 5.0) -> bool:
        """Kill what is left in the group and remove it; False if it could not be removed within ``wait`` s
        (then the next grader to start removes it)."""
        removed = all([_remove(f, wait) for f in self.folders])
        for f in self.folders:
            if f.parent.is_dir():
                _share_per_kernel(f.parent)
        return removed
