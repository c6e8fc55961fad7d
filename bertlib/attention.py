"""Multi-head self-attention and its masks (chapter 6, "Attention masks"; chapter 1 for the causal mask).

BERT's attention is bidirectional: every token may look at every other real token. Padding positions are
hidden before the softmax, so they receive exactly zero weight: the eager path adds a very negative number
to their scores (an additive mask), the fused ``sdpa`` path passes torch a boolean mask (True = may attend),
which it applies itself. GPT-style causal attention additionally hides every position to the right; bertlib
offers it only to contrast the two (``BertConfig(is_causal=True)``).
"""
from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import nn

from .config import BertConfig


def padding_visibility(attention_mask: torch.Tensor) -> torch.Tensor:
    """(B, T) of 1 = real token, 0 = padding  ->  (B, 1, 1, T) bool: which keys each query may see."""
    return attention_mask.bool()[:, None, None, :]


def causal_visibility(T: int, device: torch.device | str | None = None) -> torch.Tensor:
    """(T, T) bool, lower-triangular: query i may see keys 0..i (GPT). BERT's is all True."""
    return torch.ones(T, T, dtype=torch.bool, device=device).tril()


def additive_mask(visible: torch.Tensor, dtype: torch.dtype = torch.float32) -> torch.Tensor:
    """Turn a boolean visibility mask into the numbers added to the scores: 0 where visible,
    the most negative finite value of ``dtype`` where hidden (finite, so a row that sees nothing
    still gives a finite softmax instead of NaN)."""
    zero = torch.zeros((), dtype=dtype, device=visible.device)
    hidden = torch.full((), torch.finfo(dtype).min, dtype=dtype, device=visible.device)
    return torch.where(visible, zero, hidden)


def build_attention_mask(
    attention_mask: torch.Tensor | None, T: int, *, is_causal: bool, dtype: torch.dtype, device, as_bool: bool = False
) -> torch.Tensor | None:
    """The mask all layers share: (B or 1, 1, T, T) or (B, 1, 1, T), or None if nothing is hidden.

    Additive floats for the eager path; with ``as_bool`` the boolean form, which torch's fused kernel
    runs faster. A row that may see nothing (a sequence that is all padding) is opened fully in the
    boolean form: that is what adding the same huge negative number to every score does (a uniform
    softmax), where a boolean row of all False would give NaN.
    """
    visible = None
    if attention_mask is not None:
        visible = padding_visibility(attention_mask)  # (B, 1, 1, T)
    if is_causal:
        causal = causal_visibility(T, device)[None, None]  # (1, 1, T, T)
        visible = causal if visible is None else visible & causal  # (B, 1, T, T)
    if visible is None:
        return None
    if as_bool:
        return visible | ~visible.any(dim=-1, keepdim=True)
    return additive_mask(visible, dtype)


def eager_attention(
    q: torch.Tensor,  # (B, nh, T, hd)
    k: torch.Tensor,  # (B, nh, T, hd)
    v: torch.Tensor,  # (B, nh, T, hd)
    mask: torch.Tensor | None,  # additive, broadcastable to (B, nh, T, T)
    dropout_p: float = 0.0,
    training: bool = False,
) -> tuple[torch.Tensor, torch.Tensor]:
    """Scaled dot-product attention written out; returns the context and the attention weights."""
    scores = (q @ k.transpose(-2, -1)) / math.sqrt(q.size(-1))  # (B, nh, T, T)
    if mask is not None:
        scores = scores + mask  # hidden keys get about -3.4e38, so exp() makes them 0
    probs = scores.softmax(dim=-1)  # (B, nh, T, T), each row sums to 1
    probs = F.dropout(probs, p=dropout_p, training=training)
    return probs @ v, probs  # (B, nh, T, hd), (B, nh, T, T)


class BertSelfAttention(nn.Module):
    def __init__(self, config: BertConfig):
        super().__init__()
        self.num_attention_heads = config.num_attention_heads
        self.attention_head_size = config.head_dim
        self.all_head_size = config.hidden_size
        self.query = nn.Linear(config.hidden_size, self.all_head_size)
        self.key = nn.Linear(config.hidden_size, self.all_head_size)
        self.value = nn.Linear(config.hidden_size, self.all_head_size)
        self.dropout_p = config.attention_probs_dropout_prob
        self.attn_implementation = config.attn_implementation

    def _split_heads(self, x: torch.Tensor) -> torch.Tensor:
        B, T, _ = x.shape
        return x.view(B, T, self.num_attention_heads, self.attention_head_size).transpose(1, 2)  # (B, nh, T, hd)

    def forward(
        self,
        hidden_states: torch.Tensor,  # (B, T, H)
        mask: torch.Tensor | None = None,  # from build_attention_mask: boolean for sdpa, additive for eager
        output_attentions: bool = False,
    ) -> tuple[torch.Tensor, torch.Tensor | None]:
        B, T, H = hidden_states.shape
        dropout_p = self.dropout_p if self.training else 0.0
        if self.attn_implementation == "sdpa" and not output_attentions:
            # Fast path, same numbers: one matrix product for Q, K and V together, and torch's fused kernel
            # for softmax(QK^T / sqrt(d)) V over the keys the boolean mask lets through (True = attend), which
            # never stores the T x T weights.
            weight = torch.cat([self.query.weight, self.key.weight, self.value.weight])  # (3H, H)
            bias = torch.cat([self.query.bias, self.key.bias, self.value.bias])  # (3H,)
            q, k, v = F.linear(hidden_states, weight, bias).split(H, dim=-1)  # 3 x (B, T, H)
            q, k, v = self._split_heads(q), self._split_heads(k), self._split_heads(v)  # (B, nh, T, hd)
            context = F.scaled_dot_product_attention(q, k, v, attn_mask=mask, dropout_p=dropout_p)
            probs = None
        else:
            q = self._split_heads(self.query(hidden_states))  # (B, nh, T, hd)
            k = self._split_heads(self.key(hidden_states))  # (B, nh, T, hd)
            v = self._split_heads(self.value(hidden_states))  # (B, nh, T, hd)
            context, probs = eager_attention(q, k, v, mask, dropout_p, self.training)
        context = context.transpose(1, 2).reshape(B, T, H)  # (B, T, H): heads side by side again
        return context, probs


class BertSelfOutput(nn.Module):
    """Project the heads' concatenation back to H, then residual + LayerNorm (post-LN, as in BERT)."""

    def __init__(self, config: BertConfig):
        super().__init__()
        self.dense = nn.Linear(config.hidden_size, config.hidden_size)
        self.LayerNorm = nn.LayerNorm(config.hidden_size, eps=config.layer_norm_eps)
        self.dropout = nn.Dropout(config.hidden_dropout_prob)

    def forward(self, hidden_states: torch.Tensor, input_tensor: torch.Tensor) -> torch.Tensor:
        hidden_states = self.dropout(self.dense(hidden_states))  # (B, T, H)
        return self.LayerNorm(hidden_states + input_tensor)  # (B, T, H)


class BertAttention(nn.Module):
    def __init__(self, config: BertConfig):
        super().__init__()
        self.self = BertSelfAttention(config)
        self.output = BertSelfOutput(config)

    def forward(self, hidden_states, mask=None, output_attentions=False):
        context, probs = self.self(hidden_states, mask, output_attentions)
        return self.output(context, hidden_states), probs
