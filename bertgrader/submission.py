"""A submission is data: plain files in plain folders, or it is refused before anything of it is read.

nbgrader copies a submission's files with ``shutil.copy`` and reads its notebooks by path, so a symbolic
link would be followed with the instructor's rights (a link to the hidden tests or the gradebook, copied
into the folder the kernel sees; a notebook that is a link to the solution), a FIFO would block the copy
and a link to /dev/zero would never end. ``check_submission`` walks the folder without following links
and refuses anything that is not a regular file or a folder; ``install()`` (nbgrader_config.py calls it)
runs it at the start of every student's conversion, so the refusal is that student's failure, with the
reason in the log, and the run goes on with the next student.

A notebook is checked as bytes before nbformat reads it (``check_notebook_file``): nbformat upgrades an
older notebook in the grader's own process, before any sandbox, and its v3 upgrade writes ``"#" * level``
for a heading cell (3 KB on disk, 10 GiB in memory). Only nbformat 4 JSON under ``MAX_NOTEBOOK_BYTES``, at
most ``MAX_DEPTH`` deep, with at most ``MAX_CONTAINERS`` lists and objects, ``MAX_STRINGS`` strings and no
string over ``MAX_STRING_CHARS`` is read; that bounds what parsing it (here and then in nbformat) costs in
time and memory. The same check runs on what ``generate_feedback`` reads (the autograded notebook: every
converter's source goes through ``install()``'s hook). A student id (the folder's name) must be UTF-8,
printable, without separators and at most ``MAX_STUDENT_ID`` characters (``check_student_id``).

With these bounds every step of the grader's own (not the kernel's) is bounded by the file's size: cells
are at most ``MAX_CELLS``, a markdown cell is cut and cleaned in linear time, a page renders at most a
bounded amount of markdown (bertgrader.sanitize). A watchdog besides: each pass of nbgrader's over one
notebook has a wall-clock budget (``budget_seconds``) and a memory budget (``MEMORY_BUDGET_BYTES`` of growth
of the grader's resident memory during the pass, sampled every ``MEMORY_POLL_SECONDS``), past either of which
that student fails with the reason and the next is graded.
"""
from __future__ import annotations

import json
import os
import stat
import unicodedata
from pathlib import Path

MAX_NOTEBOOK_BYTES = 32 * 2**20  # a solved notebook of this course is under 100 KB; plots add a few MB
MAX_DEPTH = 32  # nesting of a notebook's JSON (nbformat 4's own: 7, with an output's metadata)
MAX_CONTAINERS = 500_000  # lists and objects (a notebook of 100 cells: a few thousand)
MAX_STRINGS = 1_000_000
MAX_STRING_CHARS = 8 * 2**20  # one string: a cell's source, an output's text, an image
MAX_CELLS = 1_000  # a notebook of this course has under 60; every step's work per cell is capped besides
MAX_STUDENT_ID = 100
# Wall-clock budget of one pass of nbgrader's over one notebook (autograde makes two: sanitising, then grading),
# past which that student fails and the next is graded: autograde's is the kernel's notebook budget
# (TrustedExecute.notebook_seconds, which stops the kernel first) plus this margin for the grader's own work.
MARGIN_SECONDS = 300
# The grader's own memory: how much its resident set may grow during one pass over one notebook (the hidden
# tests' reference models and one notebook's outputs take a few hundred MB; the largest notebook the checks
# above let through peaks at under 0.5 GiB), past which that student fails and the next is graded.
MEMORY_BUDGET_BYTES = 2 * 2**30
MEMORY_POLL_SECONDS = 0.05


class SubmissionRefused(ValueError):
    """A submission holds something that is not a plain file or folder; the message names it."""


def _kind(mode: int) -> str:
    for test, name in ((stat.S_ISLNK, "a symbolic link"), (stat.S_ISFIFO, "a FIFO"), (stat.S_ISSOCK, "a socket"),
                       (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device")):
        if test(mode):
            return name
    return "not a regular file"


def check_submission(folder: Path, inside: Path | None = None) -> None:
    """Raise SubmissionRefused if ``folder`` (or a folder between ``inside`` and it) is a link, or if anything
    under it is not a regular file or a folder."""
    folder = Path(folder)
    if inside is not None:
        part = Path(inside)
        for name in folder.relative_to(inside).parts:
            part = part / name
            mode = os.lstat(part).st_mode
            if not stat.S_ISDIR(mode):
                raise SubmissionRefused(f"{part} is {_kind(mode)}: a submission is plain files in plain folders")
    for dirpath, dirnames, filenames in os.walk(folder, followlinks=False):
        for name in dirnames + filenames:
            path = os.path.join(dirpath, name)
            mode = os.lstat(path).st_mode
            if not (stat.S_ISREG(mode) or stat.S_ISDIR(mode)):
                raise SubmissionRefused(f"{path} is {_kind(mode)}: a submission is plain files in plain folders "
                                        "(not graded; submit the notebook itself)")
            if stat.S_ISREG(mode) and name.endswith(".ipynb"):
                check_notebook_file(path)


def _refuse(path, why: str) -> SubmissionRefused:
    return SubmissionRefused(f"{os.fsdecode(path)!r} {why} (not graded: save the notebook from Jupyter and "
                             "submit it again)")


def check_notebook_file(path) -> None:
    """Raise SubmissionRefused, naming ``path``, unless it is nbformat 4 JSON within this module's bounds.
    Reads the file once, as bytes; nothing of it is upgraded or executed."""
    size = os.lstat(path).st_size
    if size > MAX_NOTEBOOK_BYTES:
        raise _refuse(path, f"is {size / 2**20:.1f} MiB, over the {MAX_NOTEBOOK_BYTES // 2**20} MiB a notebook may be")
    with open(path, "rb") as f:
        raw = f.read(MAX_NOTEBOOK_BYTES + 1)
    if len(raw) > MAX_NOTEBOOK_BYTES:  # it grew while read
        raise _refuse(path, f"is over the {MAX_NOTEBOOK_BYTES // 2**20} MiB a notebook may be")
    # Upper bounds before parsing (a bracket or quote inside a string counts too): what json.loads may build.
    if raw.count(b"[") + raw.count(b"{") > MAX_CONTAINERS:
        raise _refuse(path, f"holds more than {MAX_CONTAINERS:,} JSON lists and objects")
    if raw.count(b'"') > 4 * MAX_STRINGS:  # two quotes a string, escaped quotes inside strings besides
        raise _refuse(path, f"holds more than {MAX_STRINGS:,} JSON strings")
    try:
        nb = json.loads(raw.decode("utf-8"))
    except UnicodeDecodeError as e:
        raise _refuse(path, f"is not UTF-8 text ({e.reason} at byte {e.start})") from None
    except RecursionError:
        raise _refuse(path, f"is JSON nested more than {MAX_DEPTH} deep") from None
    except ValueError as e:
        raise _refuse(path, f"is not JSON ({e})") from None
    if not isinstance(nb, dict) or "nbformat" not in nb:
        raise _refuse(path, "is not a Jupyter notebook (no nbformat field)")
    version = nb.get("nbformat")
    if version != 4 or isinstance(version, bool) or not isinstance(nb.get("nbformat_minor", 0), int):
        raise _refuse(path, f"is nbformat {version!r}: only nbformat 4 notebooks are graded (an older one is "
                            "upgraded in the grader's own process; open it in Jupyter and save it, or run "
                            "jupyter nbconvert --to notebook on your own machine)")
    cells = nb.get("cells")
    if not isinstance(cells, list):
        raise _refuse(path, "has no list of cells")
    if len(cells) > MAX_CELLS:
        raise _refuse(path, f"has {len(cells):,} cells (at most {MAX_CELLS:,})")
    _check_tree(path, nb)


def _check_tree(path, nb) -> None:
    """Depth, count and string sizes of the parsed JSON, walked without recursion."""
    stack, strings = [(nb, 1)], 0
    while stack:
        value, depth = stack.pop()
        if depth > MAX_DEPTH:
            raise _refuse(path, f"is JSON nested more than {MAX_DEPTH} deep")
        if isinstance(value, dict):
            for key, item in value.items():
                strings += 1
                if len(key) > MAX_STRING_CHARS:
                    raise _refuse(path, f"holds a key of {len(key):,} characters (at most {MAX_STRING_CHARS:,})")
                stack.append((item, depth + 1))
        elif isinstance(value, list):
            stack.extend((item, depth + 1) for item in value)
        elif isinstance(value, str):
            strings += 1
            if len(value) > MAX_STRING_CHARS:
                raise _refuse(path, f"holds a string of {len(value):,} characters (at most {MAX_STRING_CHARS:,})")
        if strings > MAX_STRINGS:
            raise _refuse(path, f"holds more than {MAX_STRINGS:,} JSON strings")


def check_student_id(student_id: str, folder=None) -> None:
    """Raise SubmissionRefused, naming the folder, unless ``student_id`` is printable UTF-8 of at most
    ``MAX_STUDENT_ID`` characters, without path separators, wildcards, markup characters (an id is shown in
    the formgrader's and the class runner's pages) or control characters."""
    where = folder if folder is not None else student_id
    try:
        student_id.encode("utf-8")
    except UnicodeEncodeError:  # os.fsdecode's surrogates: bytes that are not UTF-8
        raise SubmissionRefused(f"student folder {os.fsdecode(where)!r}: its name is not UTF-8 (not graded: rename "
                                "it to the student's id)") from None
    bad = None
    if not student_id or student_id in (".", "..") or student_id.strip() != student_id:
        bad = "is empty, '.' or '..', or starts or ends with a space"
    elif len(student_id) > MAX_STUDENT_ID:
        bad = f"is {len(student_id)} characters long (at most {MAX_STUDENT_ID})"
    elif any(c in "/\\*?[]<>\"&" or unicodedata.category(c)[0] in "CZ" and c != " " for c in student_id):
        bad = "holds a path separator, a wildcard, markup (< > \" &) or a control or invisible character"
    if bad:
        raise SubmissionRefused(f"student folder {os.fsdecode(where)!r}: its name {bad} (not graded: rename it to the "
                                "student's id)")


def install() -> None:
    """Check each submission (its student id, its files, its notebooks as bytes) at the start of nbgrader's
    conversion of it (BaseConverter.init_assignment, before nbgrader writes anything of that student's)."""
    from nbgrader.converters.base import BaseConverter

    original = BaseConverter.init_assignment
    if getattr(original, "_checks_submissions", False):
        return

    def init_assignment(self, assignment_id: str, student_id: str) -> None:
        if student_id != ".":  # generate_assignment's "no student"
            check_student_id(student_id, folder=self._format_source(assignment_id, student_id))
        source = Path(self._format_source(assignment_id, student_id))
        root = Path(self.coursedir.format_path(self._input_directory, ".", "."))
        check_submission(source, inside=root if root in source.parents else None)
        original(self, assignment_id, student_id)

    init_assignment._checks_submissions = True
    init_assignment.__wrapped__ = original  # inspect.unwrap finds nbgrader's own
    BaseConverter.init_assignment = init_assignment
    _install_watchdog(BaseConverter)


class OverBudget(TimeoutError):
    """One pass over one notebook took longer than its budget (``budget_seconds``); that student fails."""


class OverMemory(MemoryError):
    """The grader's memory grew past ``MEMORY_BUDGET_BYTES`` during one pass over one notebook; that student
    fails."""


def resident_bytes() -> int:
    """This process's resident set size (Linux: /proc/self/statm), or 0 where it cannot be read."""
    try:
        with open("/proc/self/statm") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return 0


def budget_seconds(converter) -> float:
    """How long one pass of ``converter`` over one notebook may take: autograde's, the kernel's notebook
    budget plus ``MARGIN_SECONDS``; any other converter's (generate_feedback), ``MARGIN_SECONDS``."""
    from nbgrader.converters import Autograde

    if isinstance(converter, Autograde):
        from bertgrader.sandbox import Limits

        seconds = converter.config.get("TrustedExecute", {}).get("notebook_seconds", Limits.wall_seconds)
        return float(seconds) + MARGIN_SECONDS
    return float(MARGIN_SECONDS)


def watchdog(seconds: float, what: str, memory_bytes: int | None = None):
    """A context in which SIGALRM raises OverBudget after ``seconds``, and OverMemory is raised once this
    process's resident memory has grown by more than ``memory_bytes`` (default ``MEMORY_BUDGET_BYTES``) since
    the context began: a thread samples it and signals the main thread (SIGUSR1), whose handler raises at
    the next Python instruction. Main thread only: elsewhere it does nothing, and the class runner's
    per-submission --timeout is the bound."""
    import contextlib
    import signal
    import threading

    budget = MEMORY_BUDGET_BYTES if memory_bytes is None else memory_bytes

    @contextlib.contextmanager
    def armed():
        if threading.current_thread() is not threading.main_thread() or signal.getitimer(signal.ITIMER_REAL)[0]:
            yield  # not the main thread, or a budget already running (a nested pass)
            return
        start = resident_bytes()
        grown = []  # the growth the sampler saw, once it passed the budget

        def over_time(signum, frame):
            raise OverBudget(f"{what} took more than {seconds:.0f} s: not graded (the grader's own work on it was "
                             "stopped; the next student is graded)")

        def over_memory(signum, frame):
            if grown:
                raise OverMemory(f"{what} made the grader's memory grow by {grown[0] / 2**20:,.0f} MiB, more than "
                                 f"its budget of {budget / 2**20:,.0f} MiB: not graded (the grader's own work on it "
                                 "was stopped; the next student is graded)")

        stop = threading.Event()
        main = threading.main_thread().ident

        def sample():
            while not stop.wait(MEMORY_POLL_SECONDS):
                growth = resident_bytes() - start
                if start and growth > budget:
                    grown.append(growth)
                    signal.pthread_kill(main, signal.SIGUSR1)
                    return

        previous = signal.signal(signal.SIGALRM, over_time), signal.signal(signal.SIGUSR1, over_memory)
        signal.setitimer(signal.ITIMER_REAL, seconds)
        sampler = threading.Thread(target=sample, name="bertgrader-memory-budget", daemon=True)
        sampler.start()
        try:
            yield
        finally:
            stop.set()
            signal.setitimer(signal.ITIMER_REAL, 0)
            sampler.join()
            signal.signal(signal.SIGALRM, previous[0])
            signal.signal(signal.SIGUSR1, previous[1])

    return armed()


def _install_watchdog(BaseConverter) -> None:
    """Every pass of every converter over one notebook runs under ``watchdog(budget_seconds(...))``."""
    original = BaseConverter.convert_single_notebook
    if getattr(original, "_has_budget", False):
        return

    def convert_single_notebook(self, notebook_filename: str) -> None:
        with watchdog(budget_seconds(self), os.fsdecode(notebook_filename)):
            return original(self, notebook_filename)

    convert_single_notebook._has_budget = True
    convert_single_notebook.__wrapped__ = original
    BaseConverter.convert_single_notebook = convert_single_notebook
