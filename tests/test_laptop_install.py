"""``python3 install.py``, the self-study set-up on a laptop (issue 29 §7): what it refuses and says before any work,
where it takes torch from (never the GBs of CUDA without being asked), and a whole install in a fresh venv."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
import install  # noqa: E402  (install.py, at the repository's root: a student runs it before any package exists)


def test_a_python_too_old_is_refused_naming_the_version_and_the_fix():
    with pytest.raises(install.Missing, match=r"this is Python 3\.9; the course needs 3\.10 or newer.*python3\.11"):
        install.check_python((3, 9, 18), has_venv=True)
    install.check_python((3, 10, 0), has_venv=True)  # the oldest it takes


def test_a_python_without_venv_is_refused_naming_the_package():
    with pytest.raises(install.Missing, match=r"apt install python3\.12-venv"):
        install.check_python((3, 12, 1), has_venv=False)


def test_the_cpu_index_when_it_answers(monkeypatch):
    monkeypatch.setattr(install.platform, "system", lambda: "Linux")
    monkeypatch.setattr(install, "nvidia_packages", lambda python: pytest.fail("no index query needed"))
    assert install.torch_plan("python", True, False) == ["install", "torch==2.13.0", "--index-url",
                                                         "https://download.pytorch.org/whl/cpu"]


def test_without_the_cpu_index_cuda_only_is_refused_unless_asked(monkeypatch):
    monkeypatch.setattr(install.platform, "system", lambda: "Linux")
    monkeypatch.setattr(install, "nvidia_packages", lambda python: ["nvidia-cublas", "nvidia-cudnn", "nvidia-nccl"])
    with pytest.raises(install.Missing, match=r"download\.pytorch\.org does not answer.*3 NVIDIA packages.*"
                                              r"--torch-wheel FILE\.whl.*--allow-cuda"):
        install.torch_plan("python", False, False)
    assert install.torch_plan("python", False, True) == ["install", "torch==2.13.0"]
    assert install.torch_plan("python", False, False, wheel="t.whl") == ["install", "t.whl"]


def test_without_the_cpu_index_a_cpu_torch_in_pips_own_index_is_taken(monkeypatch):
    monkeypatch.setattr(install, "nvidia_packages", lambda python: [])
    assert install.torch_plan("python", False, False) == ["install", "torch==2.13.0"]


def test_what_pips_index_offers_here_is_read_from_a_dry_run():
    """The real query: pip's dry-run report of ``torch==2.13.0`` from this machine's configured index; it names
    the NVIDIA packages exactly when the torch it picks is not a CPU build."""
    python = sys.executable
    needs = install.nvidia_packages(python)
    report = subprocess.run([python, "-m", "pip", "install", "--dry-run", "--ignore-installed", "--quiet",
                             "--report", "-", "torch==2.13.0"], capture_output=True, text=True, check=True)
    [torch] = [i for i in json.loads(report.stdout)["install"] if i["metadata"]["name"] == "torch"]
    assert (needs == []) == (torch["metadata"]["version"].endswith("+cpu") or sys.platform == "darwin"), (needs, torch)


@pytest.mark.full  # a fresh environment with torch and the course in it: minutes
def test_install_py_sets_up_a_fresh_environment(tmp_path):
    venv = tmp_path / ".venv"
    work = tmp_path / "work"
    # PIP_NO_COMPILE=0 (pip reads it as compile: no): pip writes no bytecode for the thousands of files of torch and
    # the book's packages, which nothing here imports (a laptop's install compiles them; Python compiles on import)
    proc = subprocess.run([sys.executable, str(ROOT / "install.py"), "--venv", str(venv), "--workspace", str(work)],
                          capture_output=True, text=True, timeout=1800, env={**os.environ, "PIP_NO_COMPILE": "0"})
    if proc.returncode == 2 and "does not answer" in proc.stderr:
        pytest.skip("no CPU torch to be had on this machine: " + proc.stderr.strip()[-300:])
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-3000:]
    [ready] = [line for line in proc.stdout.splitlines() if line.startswith("ready: torch")]
    assert ready.startswith("ready: torch 2.13.0") and "CPU" in ready, proc.stdout[-500:]
    assert (work / "01_positioning" / "01_positioning.ipynb").is_file(), proc.stdout[-500:]  # the student's copy
    assert proc.stdout.splitlines()[-1].endswith(f"python -m bertgrader.student lab {work}"), proc.stdout[-500:]
    listed = subprocess.run([str(venv / "bin" / "python"), "-m", "pip", "list", "--format=json"],
                            capture_output=True, text=True, check=True).stdout
    assert not [p["name"] for p in json.loads(listed) if p["name"].lower().startswith("nvidia")]
    again = subprocess.run([sys.executable, str(ROOT / "install.py"), "--venv", str(venv), "--dry-run"],
                           capture_output=True, text=True, timeout=600)
    assert again.returncode == 0 and "torch==2.13.0" not in again.stdout, again.stdout  # done once, not again
