"""The inputs the tests of assignment 10 (fine-tuning) are built from, written once for both: the notebook's
setup cell imports them (this file is handed out beside the notebook, and put beside each submission when it
is graded) and so do the hidden tests, so the visible and the hidden tests never drift apart. Everything
random comes from the seed passed in; torch's global generator is left as it was.
"""
from __future__ import annotations

import torch


def finetuning_tiny_batch(seed: int, B: int = 3, T: int = 10, vocab_size: int = 80):
    """(ids, mask, types), each (B, T): [CLS] A [SEP] B [SEP] [PAD]..., row b holding max(4, T - 2b) real
    tokens (ids 1, 2, 0 for [CLS], [SEP], [PAD]), the words drawn from [5, vocab_size)."""
    gen = torch.Generator().manual_seed(seed)
    ids = torch.randint(5, vocab_size, (B, T), generator=gen)  # (B, T)
    mask = torch.ones(B, T, dtype=torch.long)  # (B, T)
    types = torch.zeros(B, T, dtype=torch.long)  # (B, T)
    for b in range(B):
        n = max(4, T - 2 * b)  # real length
        a = n // 2  # the [SEP] after sentence A
        ids[b, 0], ids[b, a], ids[b, n - 1] = 1, 2, 2  # 1 = [CLS], 2 = [SEP]
        ids[b, n:], mask[b, n:] = 0, 0  # 0 = [PAD]
        types[b, a + 1:n] = 1
    return ids, mask, types
