"""The input layer: token + position + segment embeddings, added (chapter 4, "Three embeddings added").

Each of the three is a learned lookup table of width ``hidden_size``. They are summed, not concatenated,
so the width stays ``hidden_size`` and every later layer sees one vector per token. Positions are learned
(not sinusoidal), which is why BERT cannot read past ``max_position_embeddings`` (512) tokens.
"""
from __future__ import annotations

import torch
from torch import nn

from .config import BertConfig


class BertEmbeddings(nn.Module):
    def __init__(self, config: BertConfig):
        super().__init__()
        self.word_embeddings = nn.Embedding(config.vocab_size, config.hidden_size, padding_idx=config.pad_token_id)
        self.position_embeddings = nn.Embedding(config.max_position_embeddings, config.hidden_size)
        self.token_type_embeddings = nn.Embedding(config.type_vocab_size, config.hidden_size)
        self.LayerNorm = nn.LayerNorm(config.hidden_size, eps=config.layer_norm_eps)
        self.dropout = nn.Dropout(config.hidden_dropout_prob)

    def forward(
        self,
        input_ids: torch.Tensor,  # (B, T)
        token_type_ids: torch.Tensor | None = None,  # (B, T), 0 for sentence A, 1 for sentence B
        position_ids: torch.Tensor | None = None,  # (B, T) or (1, T)
    ) -> torch.Tensor:
        B, T = input_ids.shape
        if position_ids is None:
            position_ids = torch.arange(T, device=input_ids.device).unsqueeze(0)  # (1, T)
        if token_type_ids is None:
            token_type_ids = torch.zeros_like(input_ids)  # (B, T): everything is sentence A
        words = self.word_embeddings(input_ids)  # (B, T, H)
        segments = self.token_type_embeddings(token_type_ids)  # (B, T, H)
        positions = self.position_embeddings(position_ids)  # (1 or B, T, H), broadcast over the batch
        embeddings = words + segments + positions  # (B, T, H): added, so the width stays H
        embeddings = self.LayerNorm(embeddings)
        return self.dropout(embeddings)
