"""Run JupyterHub for the class until Ctrl-C (or SIGTERM), then stop it and every JupyterLab it started."""
from __future__ import annotations

import os
import signal
import subprocess
import time
import urllib.error
import urllib.request
from pathlib import Path

CONFIG = Path(__file__).with_name("jupyterhub_config.py")


def login_answers(url: str) -> bool:
    try:
        with urllib.request.urlopen(f"{url}/hub/login", timeout=5) as r:
            return r.status == 200
    except (urllib.error.URLError, OSError):
        return False


def start_hub(settings_path: Path, state: Path, venv: Path, log) -> subprocess.Popen:
    """JupyterHub in its own session (a Ctrl-C reaches this process only, which then stops the hub in order)."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    env.update(BERT_HUB_SETTINGS=str(settings_path), PATH=f"{venv / 'bin'}:{env.get('PATH', '/usr/bin:/bin')}")
    return subprocess.Popen([str(venv / "bin" / "jupyterhub"), "-f", str(CONFIG)], cwd=state, env=env,
                            stdout=log, stderr=subprocess.STDOUT, start_new_session=True)


def wait_until_up(proc: subprocess.Popen, url: str, timeout: float = 120) -> None:
    deadline = time.monotonic() + timeout
    while not login_answers(url):
        if proc.poll() is not None:
            raise RuntimeError(f"JupyterHub exited with status {proc.returncode} before serving {url}")
        if time.monotonic() > deadline:
            raise RuntimeError(f"JupyterHub did not serve {url}/hub/login within {timeout:.0f} s")
        time.sleep(0.5)


def stop_hub(proc: subprocess.Popen, timeout: float = 60) -> None:
    """SIGTERM: JupyterHub stops each person's server and its proxy, then exits; killed if it has not in time."""
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()


def answer_ctrl_c() -> None:
    """Ctrl-C (SIGINT) stops the server wherever it was started. A command a script starts in the background
    (``cmd &`` in a non-interactive shell: CI, ``nohup``) inherits SIGINT ignored, and so would JupyterHub and each
    JupyterLab it starts: Ctrl-C did nothing (test_hub's teardown waited its 120 s out in make check), and each
    JupyterLab would outlast JupyterHub's SIGINT before its SIGTERM. Restored here, before anything is started,
    every process of the server takes SIGINT again (a Python handler is reset to the default in a child)."""
    if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)


def serve_until_stopped(proc: subprocess.Popen) -> int:
    """Wait for the hub; on SIGINT or SIGTERM stop it cleanly. Returns the exit status for the command."""
    stopping = []

    def stop(signum, frame):
        stopping.append(signum)
        raise KeyboardInterrupt

    old = signal.signal(signal.SIGTERM, stop)
    try:
        proc.wait()
        return proc.returncode or 1  # the hub ended by itself: something went wrong (its log says what)
    except KeyboardInterrupt:
        stop_hub(proc)
        return 0
    finally:
        signal.signal(signal.SIGTERM, old)
