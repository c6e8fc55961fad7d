"""The activation functions a BERT config may name (``hidden_act``), by transformers' names: the one table,
read by the encoder's feed-forward layer, the MLM head's transform and the config's check."""
from __future__ import annotations

import torch
import torch.nn.functional as F

ACT2FN = {
    # "gelu" is the exact, erf form: transformers' reading of the checkpoints' "gelu". google-research/bert's
    # first modeling.py used erf, its later one the tanh approximation; the two differ by under 5e-4
    # (the encoder-layer chapter computes it).
    "gelu": F.gelu,
    "gelu_new": lambda x: F.gelu(x, approximate="tanh"),  # the tanh approximation (GPT-2's name)
    "gelu_pytorch_tanh": lambda x: F.gelu(x, approximate="tanh"),
    "relu": F.relu,
    "silu": F.silu,
    "tanh": torch.tanh,
}
