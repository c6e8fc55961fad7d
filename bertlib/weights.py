"""Reading and writing checkpoints in transformers' layout (chapter 3 loads the real MiniLM weights).

bertlib's module names are transformers' own, so a checkpoint loads key by key. The few differences
that real checkpoints have are handled here and nowhere else:

- old TensorFlow-converted checkpoints name LayerNorm parameters ``gamma`` / ``beta``;
- a checkpoint of a model with heads prefixes the encoder with ``bert.``, a bare ``BertModel`` does not;
- the MLM decoder's weight is the word-embedding matrix (tied), so it may be absent, and its bias may be
  stored as ``cls.predictions.decoder.bias`` as well as ``cls.predictions.bias``;
- buffers such as ``embeddings.position_ids`` are not parameters.

Anything else that does not match raises a ``CheckpointMismatchError`` naming the keys.
"""
from __future__ import annotations

import os
import re
from pathlib import Path

import torch
from safetensors.torch import load_file, save_file

from .io import ordinary_mode

WEIGHT_FILES = ("model.safetensors", "pytorch_model.bin")
# Modules that belong to a task head, not to the encoder: a base model ignores them in a checkpoint,
# and a head model that does not find its own in a checkpoint starts them fresh (fine-tuning).
HEAD_PREFIXES = ("cls.", "classifier.", "qa_outputs.")
_BUFFERS = re.compile(r"(^|\.)embeddings\.(position_ids|token_type_ids)$")


class CheckpointMismatchError(ValueError):
    """The checkpoint's weights do not fit the model: missing, unexpected or of the wrong shape."""


class MissingWeightsError(FileNotFoundError, ValueError):
    """No weight file in the checkpoint directory."""


class UnreadableWeightsError(ValueError):
    """A weight file that is there but cannot be read: truncated, corrupted, or not a weight file."""


def read_state_dict(model_dir: str | Path) -> dict[str, torch.Tensor]:
    model_dir = Path(model_dir)
    for name in WEIGHT_FILES:
        path = model_dir / name
        if path.is_file():
            # Both readers report a damaged file without its name ("header too small", "not a ZIP archive").
            try:
                if name.endswith(".safetensors"):
                    return load_file(path)
                return torch.load(path, map_location="cpu", weights_only=True)
            except Exception as e:  # SafetensorError, RuntimeError, EOFError, UnpicklingError...
                raise UnreadableWeightsError(
                    f"cannot read the weights in {path} ({path.stat().st_size} bytes): it is truncated or not a "
                    f"{'safetensors' if name.endswith('.safetensors') else 'torch.save'} file "
                    f"({type(e).__name__}: {e})"
                ) from e
    raise MissingWeightsError(f"no weight file in {model_dir}: looked for {', '.join(WEIGHT_FILES)}")


def normalize_keys(state_dict: dict[str, torch.Tensor], prefix: str) -> dict[str, torch.Tensor]:
    """Rename a checkpoint's keys to the names a model with encoder prefix ``prefix`` ("bert." or "") uses."""
    out: dict[str, torch.Tensor] = {}
    for key, tensor in state_dict.items():
        if _BUFFERS.search(key):
            continue
        key = re.sub(r"LayerNorm\.gamma$", "LayerNorm.weight", key)
        key = re.sub(r"LayerNorm\.beta$", "LayerNorm.bias", key)
        if key.startswith("bert."):
            key = key[len("bert."):]
        elif key.startswith(HEAD_PREFIXES):
            out[key] = tensor  # heads never carry the prefix
            continue
        out[prefix + key] = tensor
    # The decoder bias is the same tensor as cls.predictions.bias; keep one name.
    decoder_bias = out.pop("cls.predictions.decoder.bias", None)
    if decoder_bias is not None:
        out.setdefault("cls.predictions.bias", decoder_bias)
    return out


def load_into(model: torch.nn.Module, state_dict: dict[str, torch.Tensor], strict: bool = False) -> None:
    """Copy ``state_dict`` into ``model``; raise ``CheckpointMismatchError`` naming every key that does not fit."""
    prefix = "bert." if getattr(model, "base_model_prefix", "") else ""
    tied = set(getattr(model, "tied_weights", {}))
    ckpt = normalize_keys(state_dict, prefix)
    expected = model.state_dict()

    unexpected = [k for k in ckpt if k not in expected and k not in tied]
    if not strict:
        # Another model's heads (e.g. the MLM head when fine-tuning a classifier), or a pooler this model
        # was built without, are not this model's business: transformers skips them too.
        unexpected = [k for k in unexpected if not (k.startswith(HEAD_PREFIXES) or ".pooler." in "." + k)]
    missing = [k for k in expected if k not in ckpt and k not in tied]
    fresh = [k for k in missing if k.startswith(HEAD_PREFIXES)] if not strict else []
    missing = [k for k in missing if k not in fresh]
    wrong_shape = [
        f"{k}: checkpoint {tuple(ckpt[k].shape)}, model {tuple(expected[k].shape)}"
        for k in ckpt if k in expected and ckpt[k].shape != expected[k].shape
    ]
    problems = []
    if missing:
        problems.append(f"missing from the checkpoint: {', '.join(missing)}")
    if unexpected:
        problems.append(f"unexpected in the checkpoint: {', '.join(unexpected)}")
    if wrong_shape:
        problems.append(f"wrong shape: {'; '.join(wrong_shape)}")
    if problems:
        raise CheckpointMismatchError(f"cannot load into {type(model).__name__}: " + " | ".join(problems))

    with torch.no_grad():
        for key, tensor in ckpt.items():
            if key in expected:
                expected[key].copy_(tensor)
    model.newly_initialized_weights = fresh  # e.g. a new classifier, to be trained by fine-tuning
    model.tie_weights()


def write_state_dict(model: torch.nn.Module, model_dir: Path) -> None:
    """Save as model.safetensors, leaving out tied copies (safetensors stores each tensor once).

    Written to a temporary file and renamed, so an interrupted save never leaves half a file under the
    real name; safetensors creates its files readable by the owner only (0600), so the file gets the
    permissions of any other file the user creates (0644 under the usual umask)."""
    tied = set(getattr(model, "tied_weights", {}))
    state = {k: v.detach().contiguous().cpu() for k, v in model.state_dict().items() if k not in tied}
    path = Path(model_dir) / "model.safetensors"
    tmp = path.with_name(f".{path.name}.tmp-{os.getpid()}")
    try:
        save_file(state, str(tmp), metadata={"format": "pt"})
        os.chmod(tmp, ordinary_mode(0o666))
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)
