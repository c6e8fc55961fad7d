"""The Transformer encoder stack and the pooler (chapter 3 counts its parameters; chapter 5 uses the pooler).

One ``BertLayer`` is attention, then a position-wise feed-forward network of width ``intermediate_size``
(4H), each followed by residual + LayerNorm. BERT-Base stacks 12 of them, BERT-Large 24.
"""
from __future__ import annotations

import torch
from torch import nn

from .activations import ACT2FN
from .attention import BertAttention
from .config import BertConfig


class BertIntermediate(nn.Module):
    def __init__(self, config: BertConfig):
        super().__init__()
        self.dense = nn.Linear(config.hidden_size, config.intermediate_size)
        self.intermediate_act_fn = ACT2FN[config.hidden_act]

    def forward(self, hidden_states: torch.Tensor) -> torch.Tensor:
        return self.intermediate_act_fn(self.dense(hidden_states))  # (B, T, 4H)


class BertOutput(nn.Module):
    def __init__(self, config: BertConfig):
        super().__init__()
        self.dense = nn.Linear(config.intermediate_size, config.hidden_size)
        self.LayerNorm = nn.LayerNorm(config.hidden_size, eps=config.layer_norm_eps)
        self.dropout = nn.Dropout(config.hidden_dropout_prob)

    def forward(self, hidden_states: torch.Tensor, input_tensor: torch.Tensor) -> torch.Tensor:
        hidden_states = self.dropout(self.dense(hidden_states))  # (B, T, H)
        return self.LayerNorm(hidden_states + input_tensor)  # (B, T, H)


class BertLayer(nn.Module):
    def __init__(self, config: BertConfig):
        super().__init__()
        self.attention = BertAttention(config)
        self.intermediate = BertIntermediate(config)
        self.output = BertOutput(config)

    def forward(self, hidden_states, mask=None, output_attentions=False):
        attended, probs = self.attention(hidden_states, mask, output_attentions)  # (B, T, H)
        out = self.output(self.intermediate(attended), attended)  # (B, T, H)
        return out, probs


class BertEncoder(nn.Module):
    def __init__(self, config: BertConfig):
        super().__init__()
        self.layer = nn.ModuleList(BertLayer(config) for _ in range(config.num_hidden_layers))

    def forward(self, hidden_states, mask=None, output_attentions=False, output_hidden_states=False):
        all_hidden = [hidden_states] if output_hidden_states else None
        all_attn = [] if output_attentions else None
        for layer in self.layer:
            hidden_states, probs = layer(hidden_states, mask, output_attentions)
            if output_hidden_states:
                all_hidden.append(hidden_states)
            if output_attentions:
                all_attn.append(probs)
        return hidden_states, all_hidden, all_attn


class BertPooler(nn.Module):
    """The [CLS] vector through a dense layer and tanh: the input of NSP and sentence classification."""

    def __init__(self, config: BertConfig):
        super().__init__()
        self.dense = nn.Linear(config.hidden_size, config.hidden_size)
        self.activation = nn.Tanh()

    def forward(self, hidden_states: torch.Tensor) -> torch.Tensor:
        cls = hidden_states[:, 0]  # (B, H): position 0 is always [CLS]
        return self.activation(self.dense(cls))  # (B, H)
