"""The activation functions a BERT config may name (``hidden_act``), by transformers' names: the one table,
read by the encoder's feed-forward layer, the MLM head's transform and the config's check."""
from __future__ import annotations

import torch
import torch.nn.functional as F

ACT2FN = {
    "gelu": F.gelu,  # exact, with erf: what BERT was trained with
    "gelu_new": lambda x: F.gelu(x, approximate="tanh"),
    "gelu_pytorch_tanh": lambda x: F.gelu(x, approximate="tanh"),
    "relu": F.relu,
    "silu": F.silu,
    "tanh": torch.tanh,
}
