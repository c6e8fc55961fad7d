"""Rows -> a batch: the one place where encoded examples become tensors.

A row is one encoded example, a dict of equal-length id lists and per-example ints, as
``BertTokenizer.prepare_for_model`` and ``nsp.encode_nsp_example`` return it (plus whatever labels a task
adds). transformers' ``default_data_collator`` does the same for its ``Trainer``.
"""
from __future__ import annotations

from collections.abc import Iterable, Sequence

import torch


def collate(rows: Sequence[dict], keys: Iterable[str] | None = None) -> dict[str, torch.Tensor]:
    """One int64 tensor per key of ``rows`` (by default every key of the first row): (N, T) for the id
    lists, (N,) for a number per row. Rows must already be padded to one length."""
    keys = rows[0].keys() if keys is None else keys
    return {k: torch.tensor([r[k] for r in rows], dtype=torch.long) for k in keys}  # (N, T) or (N,)
