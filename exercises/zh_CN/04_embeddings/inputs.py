"""The inputs the tests of assignment 4 (three embeddings, added) are built from, written once for both: the notebook's
setup cell imports them (this file is handed out beside the notebook, and put beside each submission when it
is graded) and so do the hidden tests, so the visible and the hidden tests never drift apart. Everything
random comes from the seed passed in; torch's global generator is left as it was.
"""
from __future__ import annotations

import torch

import bertlib


def tiny_embeddings(seed: int, p: float = 0.1, **overrides):
    """(fields, emb): a small bertlib BertEmbeddings of ``BertConfig(**fields)`` (dropout ``p``), its LayerNorm
    weight and bias random (not 1 and 0), in eval mode."""
    fields = dict(vocab_size=50, hidden_size=8, num_attention_heads=2, max_position_embeddings=16,
                  type_vocab_size=2, hidden_dropout_prob=p) | overrides
    with torch.random.fork_rng():
        torch.manual_seed(seed)
        emb = bertlib.BertEmbeddings(bertlib.BertConfig(**fields))
        with torch.no_grad():
            emb.LayerNorm.weight.normal_(1.0, 0.1)
            emb.LayerNorm.bias.normal_(0.0, 0.1)
    return fields, emb.eval()
