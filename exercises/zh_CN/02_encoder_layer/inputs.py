"""The inputs the tests of assignment 2 (the encoder layer) are built from, written once for both: the notebook's
setup cell imports them (this file is handed out beside the notebook, and put beside each submission when it
is graded) and so do the hidden tests, so the visible and the hidden tests never drift apart. Everything
random comes from the seed passed in; torch's global generator is left as it was.
"""
from __future__ import annotations

import torch

import bertlib


def tiny_bert_module(seed: int, module=None, **overrides):
    """(fields, module): a small bertlib module (``module``: BertLayer, the default, or BertSelfAttention) of
    ``BertConfig(**fields)``, random weights, LayerNorms included (weight about 1, bias about 0, not exactly:
    every term of the layer matters), in eval mode."""
    module = module or bertlib.encoder.BertLayer
    fields = dict(vocab_size=30, hidden_size=8, num_attention_heads=2, intermediate_size=16) | overrides
    with torch.random.fork_rng():
        torch.manual_seed(seed)
        m = module(bertlib.BertConfig(**fields))
        with torch.no_grad():
            for sub in m.modules():
                if isinstance(sub, torch.nn.LayerNorm):
                    sub.weight.normal_(1.0, 0.2)
                    sub.bias.normal_(0.0, 0.2)
    return fields, m.eval()


def padding_mask(lengths, T: int) -> torch.Tensor:
    """The additive mask bertlib's model gives every layer: (B, 1, 1, T), 0 for the first ``lengths[b]``
    keys of row b, very negative for the [PAD] after them."""
    attention_mask = (torch.arange(T)[None, :] < torch.tensor(lengths)[:, None]).long()  # (B, T)
    return bertlib.build_attention_mask(attention_mask, T, is_causal=False, dtype=torch.float32, device="cpu")
