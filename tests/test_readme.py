"""The README's code runs and its asserted figure is right."""
import re
from pathlib import Path

README = Path(__file__).resolve().parents[1] / "README.md"


def test_readme_python_example_runs():
    blocks = re.findall(r"```python\n(.*?)```", README.read_text(encoding="utf-8"), flags=re.S)
    assert blocks, "the README has no python example"
    scope: dict = {}
    exec(compile(blocks[0], "README.md", "exec"), scope)
    assert scope["count_parameters"](scope["cfg"])["total"] == 109_482_240
    assert tuple(scope["out"].last_hidden_state.shape) == (1, 16, 384)
    assert tuple(scope["out"].pooler_output.shape) == (1, 384)
