"""The inputs the tests of assignment 7 (the MLM loss) are built from, written once for both: the notebook's
setup cell imports them (this file is handed out beside the notebook, and put beside each submission when it
is graded) and so do the hidden tests, so the visible and the hidden tests never drift apart. Everything
random comes from the seed passed in; torch's global generator is left as it was.
"""
from __future__ import annotations

import torch

import bertlib


def mlm_random_head(V: int, H: int, seed: int, eps: float | None = None):
    """(head, emb, x, cfg): BERT's MLM head (bertlib's BertLMPredictionHead) with every parameter random,
    its decoder tied to a random V x H embedding table ``emb``, and hidden states ``x`` (2, 3, H); ``eps``:
    the config's layer_norm_eps (BERT's 1e-12 when None)."""
    gen = torch.Generator().manual_seed(seed)
    cfg = bertlib.BertConfig(vocab_size=V, hidden_size=H, num_hidden_layers=1, num_attention_heads=1,
                             intermediate_size=H, **({} if eps is None else {"layer_norm_eps": eps}))
    head = bertlib.heads.BertLMPredictionHead(cfg)
    emb = torch.nn.Embedding(V, H)
    with torch.no_grad():
        for p in [*head.parameters(), emb.weight]:
            p.copy_(torch.randn(p.shape, generator=gen))
    head.decoder.weight = emb.weight  # tied, as in BertForMaskedLM
    x = torch.randn(2, 3, H, generator=gen)  # (B, T, H)
    return head, emb, x, cfg
