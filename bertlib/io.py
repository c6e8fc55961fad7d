"""Small file helpers that more than one module needs: reading a JSON object with a message that names the
file, and the permissions an ordinary new file gets.

``config.py`` and ``tokenizer.py`` read config.json and tokenizer_config.json with ``read_json_object``;
``weights.py`` and ``training/checkpoint.py`` give what they write ``ordinary_mode``.
"""
from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any


def read_json_object(path: str | Path) -> dict[str, Any]:
    """The JSON object in ``path`` (config.json, tokenizer_config.json). A file that is empty, truncated,
    not UTF-8 or holds something other than an object is a ValueError that names the file."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as e:
        raise ValueError(f"{path} is not a UTF-8 text file, so not JSON ({e})") from e
    if not text.strip():
        raise ValueError(f"{path} is empty: expected a JSON object {{...}}")
    try:
        value = json.loads(text)
    except json.JSONDecodeError as e:
        raise ValueError(f"{path} is not valid JSON (truncated or edited by hand?): {e}") from e
    if not isinstance(value, dict):
        raise ValueError(f"{path} must hold a JSON object {{...}}, but holds a {type(value).__name__}")
    return value


def ordinary_mode(mode: int = 0o666) -> int:
    """``mode`` less the process's umask: the permissions ``open()`` or ``mkdir()`` would give."""
    umask = os.umask(0)
    os.umask(umask)
    return mode & ~umask
