"""Start a kernel that exits when the grader that started it is gone, however the grader died.

    python -m bertgrader.kernel.lifeline FD -m ipykernel_launcher -f kernel.json

FD is the read end of a pipe whose write end only the grader holds. A thread blocks reading it; when
the grader exits, even by SIGKILL, the read returns end-of-file and the kernel exits at once, taking the
sandbox with it (bubblewrap's --die-with-parent cannot be relied on here: a change of user inside the
sandbox clears the kernel's parent-death signal).
"""
from __future__ import annotations

import os
import runpy
import sys
import threading


def _watch(fd: int, exit_now=os._exit) -> None:  # exit_now bound here, out of reach of student code
    try:
        while os.read(fd, 1):
            pass
    except OSError:
        pass
    exit_now(0)


def main() -> None:
    fd = int(sys.argv[1])
    threading.Thread(target=_watch, args=(fd,), daemon=True, name="grader-lifeline").start()
    if sys.argv[2] != "-m":
        raise SystemExit("usage: python -m bertgrader.kernel.lifeline FD -m MODULE [ARGS...]")
    module = sys.argv[3]
    sys.argv = [module] + sys.argv[4:]
    runpy.run_module(module, run_name="__main__", alter_sys=True)


if __name__ == "__main__":
    main()
