"""The course on a laptop, one command: ``python3 install.py`` (from the repository's folder; Linux, macOS, Windows).

It makes a virtual environment in .venv, installs the CPU build of torch (not the GBs of CUDA that pip's default
torch brings on Linux) and the course, checks that the notebooks' imports work, and copies the exercises into your
own workspace, ~/bert-course-work (``python -m bertgrader.student start``: the notebooks in exercises/ are the
course's, rewritten when the assignments are regenerated; a rerun copies only what the workspace lacks). It stops
before any work with what is missing and how to get it: a Python older than 3.10, a Python without venv (Debian and
Ubuntu ship it apart), and, where only torch's CUDA build is to be had, that choice.

Where torch comes from: PyTorch's CPU index (download.pytorch.org/whl/cpu) when it answers within a few seconds;
otherwise pip's own configured index, if it offers a torch that needs no NVIDIA packages (macOS and Windows: always;
Linux: a mirror holding the +cpu wheels, or a wheel you downloaded: ``--torch-wheel FILE``); otherwise it stops and
says so (``--allow-cuda`` takes the CUDA build). Run again, it does only what is not done yet.

    python3 install.py                  # then: source .venv/bin/activate && python -m bertgrader.student lab
    python3 install.py --dry-run        # say what it would run, run nothing
"""
import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
import urllib.request

ROOT = os.path.dirname(os.path.abspath(__file__))
TORCH = "torch==2.13.0"  # pyproject.toml pins this version
PYTORCH_CPU = "https://download.pytorch.org/whl/cpu"
MIN_PYTHON = (3, 10)  # pyproject.toml's requires-python


class Missing(Exception):
    """Something this machine lacks; the message says what and how to get it."""


def check_python(version=sys.version_info, has_venv=None):
    if tuple(version[:2]) < MIN_PYTHON:
        raise Missing("this is Python {}.{}; the course needs {}.{} or newer. Install a newer Python (python.org, "
                      "or your system's packages, e.g. `sudo apt install python3.11`), then run `python3.11 "
                      "install.py`".format(version[0], version[1], *MIN_PYTHON))
    if has_venv is None:
        has_venv = _has_module("venv") and _has_module("ensurepip")
    if not has_venv:
        raise Missing("this Python cannot make a virtual environment (its venv or ensurepip module is missing). "
                      "Debian and Ubuntu: `sudo apt install python3.{}-venv`, then run this again".format(version[1]))


def _has_module(name):
    import importlib.util

    return importlib.util.find_spec(name) is not None


def venv_python(venv):
    return os.path.join(venv, "Scripts", "python.exe") if os.name == "nt" else os.path.join(venv, "bin", "python")


def reachable(url, timeout=5.0):
    try:
        with urllib.request.urlopen(url, timeout=timeout):
            return True
    except Exception:  # DNS, refused, timeout, TLS, HTTP error: not usable
        return False


def torch_plan(python, pytorch_site_answers, allow_cuda, wheel=None):
    """The pip arguments that install a CPU torch, or Missing saying why there is none."""
    if wheel:
        return ["install", wheel]
    if pytorch_site_answers and platform.system() != "Darwin":  # macOS: PyPI's torch is the CPU build
        return ["install", TORCH, "--index-url", PYTORCH_CPU]
    needs = nvidia_packages(python)  # what pip's own index would bring with torch
    if needs and not allow_cuda:
        raise Missing("download.pytorch.org does not answer, and the package index pip is set up with offers only "
                      "torch's CUDA build here, which brings {} NVIDIA packages (about 3 GB): {}. Either connect to "
                      "download.pytorch.org and run this again, or download torch's CPU wheel for this machine "
                      "(`2.13.0+cpu`, from {}) elsewhere and pass it: `python3 install.py --torch-wheel FILE.whl`, or "
                      "take the CUDA build: `--allow-cuda`".format(len(needs), ", ".join(needs[:3]) + ", ...",
                                                                  PYTORCH_CPU))
    return ["install", TORCH]


def nvidia_packages(python):
    """The NVIDIA packages `pip install torch==...` would install from pip's configured index (a dry run, which
    reads the wheels' metadata only)."""
    with tempfile.TemporaryDirectory() as tmp:
        report = os.path.join(tmp, "report.json")
        proc = subprocess.run([python, "-m", "pip", "install", "--dry-run", "--ignore-installed", "--quiet",
                               "--report", report, TORCH], capture_output=True, text=True)
        if proc.returncode != 0:
            raise Missing("pip finds no {} in its configured index: {}".format(TORCH, proc.stderr.strip()[-600:]))
        with open(report, encoding="utf-8") as f:
            items = json.load(f)["install"]
    return sorted(i["metadata"]["name"] for i in items if i["metadata"]["name"].lower().startswith("nvidia"))


def has_torch(python):
    proc = subprocess.run([python, "-c", "import torch; print(torch.__version__)"], capture_output=True, text=True)
    return proc.returncode == 0 and proc.stdout.strip().split("+")[0] == TORCH.split("==")[1]


def run(cmd, dry_run):
    print("+ " + " ".join(cmd), flush=True)
    if not dry_run:
        subprocess.run(cmd, check=True)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--venv", default=os.path.join(ROOT, ".venv"), help="where to make the environment (.venv)")
    p.add_argument("--torch-wheel", help="install torch from this wheel file (a CPU wheel you downloaded)")
    p.add_argument("--allow-cuda", action="store_true", help="take torch's CUDA build if no CPU build is to be had")
    p.add_argument("--workspace", default=os.path.join("~", "bert-course-work"),
                   help="your copy of the exercises, where you work (~/bert-course-work)")
    p.add_argument("--dry-run", action="store_true", help="print the commands, run none")
    a = p.parse_args(argv)
    try:
        check_python()
        python = venv_python(a.venv)
        if not os.path.exists(python):
            run([sys.executable, "-m", "venv", a.venv], a.dry_run)
        if a.dry_run and not os.path.exists(python):
            python = sys.executable  # the plan, asked of this Python's pip
        if not has_torch(python):
            run([python, "-m", "pip", *torch_plan(python, reachable(PYTORCH_CPU + "/"), a.allow_cuda,
                                                    a.torch_wheel)], a.dry_run)
        run([python, "-m", "pip", "install", "-e", ROOT + "[book]"], a.dry_run)
        if not a.dry_run:
            check = subprocess.run([python, "-c", "import torch, bertlib, nbgrader; print(torch.__version__, "
                                    "'CUDA ' + torch.version.cuda if torch.version.cuda else 'CPU')"],
                                   capture_output=True, text=True)
            if check.returncode != 0:
                raise Missing("the environment was made but its imports fail: " + check.stderr.strip()[-800:])
            print("ready: torch " + check.stdout.strip())
        run([python, "-m", "bertgrader.student", "start", os.path.expanduser(a.workspace)], a.dry_run)
    except Missing as e:
        print("install.py: " + str(e), file=sys.stderr)
        return 2
    except subprocess.CalledProcessError as e:
        print("install.py: `{}` failed (exit {}); its output is above".format(" ".join(e.cmd), e.returncode),
              file=sys.stderr)
        return 1
    activate = ".venv\\Scripts\\activate" if os.name == "nt" else "source .venv/bin/activate"
    default = os.path.expanduser(a.workspace) == os.path.expanduser(os.path.join("~", "bert-course-work"))
    print("Next: {} && python -m bertgrader.student lab{}".format(
        activate, "" if default else " " + os.path.expanduser(a.workspace)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
