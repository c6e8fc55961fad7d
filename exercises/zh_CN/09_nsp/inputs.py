"""The inputs the tests of assignment 9 (next sentence prediction) are built from, written once for both: the notebook's
setup cell imports them (this file is handed out beside the notebook, and put beside each submission when it
is graded) and so do the hidden tests, so the visible and the hidden tests never drift apart. Everything
random comes from the seed passed in; torch's global generator is left as it was.
"""
from __future__ import annotations

import random

import torch

import bertlib


def nsp_documents(n_docs: int, seed: int, word=lambda d, s, k: f"d{d}s{s}w{k}") -> list:
    """Documents (lists of sentences, each a list of tokens) whose every token names its document d and
    sentence s, so a test can trace where a sentence came from: 2 to 60 sentences of 1 to 6 tokens."""
    r = random.Random(seed)
    return [[[word(d, s, k) for k in range(r.randint(1, 6))] for s in range(r.randint(2, 60))]
            for d in range(n_docs)]


def nsp_pretraining_case(seed: int, B: int = 3, T: int = 12, vocab_size: int = 60, hidden_size: int = 16):
    """A small random bertlib BertForPreTraining (eval mode; its pooler and NSP head with larger weights and
    non-zero biases, so that a wrong vector shows) and a batch of sentence pairs: (model, ids, mask, types),
    row b holding max(3, T - 3b) real tokens `[CLS] A [SEP] B [SEP]`, then [PAD] (ids 1, 2, 0)."""
    with torch.random.fork_rng():
        torch.manual_seed(seed)
        cfg = bertlib.BertConfig(vocab_size=vocab_size, hidden_size=hidden_size, num_hidden_layers=2,
                                 num_attention_heads=2, intermediate_size=2 * hidden_size)
        model = bertlib.BertForPreTraining(cfg).eval()
        with torch.no_grad():
            for p in [*model.bert.pooler.dense.parameters(), *model.cls.seq_relationship.parameters()]:
                p.normal_(0, 0.5)
    gen = torch.Generator().manual_seed(seed)
    ids = torch.randint(5, vocab_size, (B, T), generator=gen)  # (B, T)
    mask = torch.ones(B, T, dtype=torch.long)  # (B, T)
    types = torch.zeros(B, T, dtype=torch.long)  # (B, T)
    for b in range(B):
        n = max(3, T - 3 * b)  # real length: the later rows are padded
        a = n // 2
        ids[b, 0], ids[b, a], ids[b, n - 1] = 1, 2, 2  # 1 = [CLS], 2 = [SEP]
        ids[b, n:], mask[b, n:] = 0, 0  # 0 = [PAD]
        types[b, a + 1:n] = 1
    return model, ids, mask, types
