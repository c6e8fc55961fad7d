"""The test schedule in tests/conftest.py: the files it ranks exist, and the ranking is what the run uses."""
from pathlib import Path

import conftest

TESTS = Path(__file__).parent


def test_every_ranked_file_exists_once():
    missing = [name for name in conftest.LONGEST_FIRST if not (TESTS / name).is_file()]
    assert not missing, f"tests/conftest.py's LONGEST_FIRST names files that do not exist: {missing}"
    assert len(set(conftest.LONGEST_FIRST)) == len(conftest.LONGEST_FIRST), "a file is ranked twice"


def test_the_makefile_keeps_the_ranked_order():
    """xdist reorders files by their number of tests unless told not to: then the ranking would do nothing."""
    makefile = (TESTS.parent / "Makefile").read_text()
    pytest_line = next(line for line in makefile.splitlines() if line.startswith("PYTEST :="))
    assert "--dist loadfile" in pytest_line and "--no-loadscope-reorder" in pytest_line, pytest_line


def test_ranked_files_come_first_in_their_order(pytester):
    """The hook sorts the ranked files to the front, in rank order, and keeps every other file's order."""
    pytester.makeconftest(_hook_source())
    for name in ["test_a.py", "test_exercises.py", "test_b.py", "test_experiments.py"]:
        pytester.makepyfile(**{name[:-3]: "def test_one():\n    pass\n\ndef test_two():\n    pass\n"})
    result = pytester.runpytest_subprocess("--collect-only", "-q", "-p", "no:xdist")  # apart from this session's modules
    files = [line.split("::")[0] for line in result.outlines if "::" in line]
    assert files == ["test_exercises.py"] * 2 + ["test_experiments.py"] * 2 + ["test_a.py"] * 2 + ["test_b.py"] * 2


def _hook_source() -> str:
    text = (TESTS / "conftest.py").read_text()
    return text[text.index("LONGEST_FIRST = ["):]
