"""The inputs the tests of assignment 8 (15%, then 80/10/10) are built from, written once for both: the notebook's
setup cell imports them (this file is handed out beside the notebook, and put beside each submission when it
is graded) and so do the hidden tests, so the visible and the hidden tests never drift apart. Everything
random comes from the seed passed in; torch's global generator is left as it was.
"""
from __future__ import annotations

import torch


def masking_pairs_batch(B: int, T: int, seed: int, vocab_size: int = 30522, cls: int = 101, sep: int = 102,
                        pad: int = 0) -> torch.Tensor:
    """(B, T) ids laid out as [CLS] A [SEP] B [SEP] [PAD] ..., of random lengths between T/2 and T, the
    words drawn from [1000, vocab_size)."""
    gen = torch.Generator().manual_seed(seed)
    ids = torch.randint(1000, vocab_size, (B, T), generator=gen)  # (B, T) ordinary words
    for b in range(B):
        n = int(torch.randint(T // 2, T + 1, (1,), generator=gen))
        a = int(torch.randint(2, n - 2, (1,), generator=gen))
        ids[b, 0], ids[b, a], ids[b, n - 1] = cls, sep, sep
        ids[b, n:] = pad
    return ids


def masking_selection_case(B: int, T: int, seed: int, vocab_size: int = 30522, density: float = 0.5):
    """(ids, selected): (B, T) ids drawn from [min(1000, V/2), V) and a given (B, T) selection, each position
    selected with probability ``density``."""
    gen = torch.Generator().manual_seed(seed)
    ids = torch.randint(min(1000, vocab_size // 2), vocab_size, (B, T), generator=gen)  # (B, T)
    selected = torch.rand(B, T, generator=gen) < density  # (B, T), given
    return ids, selected
