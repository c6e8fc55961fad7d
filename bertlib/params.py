"""Counting BERT's parameters in closed form, component by component (chapter 3, "BERT-Base and BERT-Large").

With V = vocab_size, P = max_position_embeddings, S = type_vocab_size, H = hidden_size,
I = intermediate_size, L = num_hidden_layers (a Linear(a, b) has a*b weights and b biases, a LayerNorm
over H has 2H):

    embeddings = (V + P + S) H + 2H
    one layer  = 3 (H H + H)        query, key, value
               + (H H + H) + 2H     attention output dense + LayerNorm
               + (H I + I)          intermediate dense
               + (I H + H) + 2H     output dense + LayerNorm
    pooler     = H H + H
    BertModel  = embeddings + L * layer + pooler
    pretraining heads add the MLM transform (H H + H + 2H), one output bias per word (V; the V x H
    decoder weight is the word-embedding matrix again, so it adds nothing) and NSP (2H + 2).
"""
from __future__ import annotations

from torch import nn

from .config import BertConfig


def _linear(n_in: int, n_out: int) -> int:
    return n_in * n_out + n_out


def _layer_norm(h: int) -> int:
    return 2 * h


def layer_breakdown(cfg: BertConfig) -> dict[str, int]:
    """Parameters of one encoder layer, by sub-module (transformers' names)."""
    H, I = cfg.hidden_size, cfg.intermediate_size  # noqa: E741 (I: the paper's feed-forward width)
    parts = {
        "attention.self": 3 * _linear(H, H),
        "attention.output.dense": _linear(H, H),
        "attention.output.LayerNorm": _layer_norm(H),
        "intermediate.dense": _linear(H, I),
        "output.dense": _linear(I, H),
        "output.LayerNorm": _layer_norm(H),
    }
    return parts | {"total": sum(parts.values())}


def embeddings_breakdown(cfg: BertConfig) -> dict[str, int]:
    H = cfg.hidden_size
    parts = {
        "word_embeddings": cfg.vocab_size * H,
        "position_embeddings": cfg.max_position_embeddings * H,
        "token_type_embeddings": cfg.type_vocab_size * H,
        "LayerNorm": _layer_norm(H),
    }
    return parts | {"total": sum(parts.values())}


def count_parameters(cfg: BertConfig, with_pretraining_heads: bool = False) -> dict[str, int]:
    """Closed-form parameter count of ``BertModel`` (or ``BertForPreTraining``) by component, with a "total".

    >>> count_parameters(BertConfig.base())["total"]
    109482240
    """
    H = cfg.hidden_size
    counts = {
        "embeddings": embeddings_breakdown(cfg)["total"],
        "encoder": cfg.num_hidden_layers * layer_breakdown(cfg)["total"],
        "pooler": _linear(H, H),
    }
    if with_pretraining_heads:
        counts["cls.predictions"] = _linear(H, H) + _layer_norm(H) + cfg.vocab_size  # decoder weight is tied
        counts["cls.seq_relationship"] = _linear(H, 2)
    return counts | {"total": sum(counts.values())}


def count_module_parameters(module: nn.Module) -> dict[str, int]:
    """The same breakdown counted from a built module, each shared (tied) tensor counted once.
    Keys are the top-level component names, so it lines up with ``count_parameters``."""
    counts: dict[str, int] = {}
    seen: set[int] = set()
    for name, p in module.named_parameters():  # named_parameters() already skips tied duplicates
        if id(p) in seen:
            continue
        seen.add(id(p))
        name = name.removeprefix("bert.")
        parts = name.split(".")
        key = ".".join(parts[:2]) if parts[0] == "cls" else parts[0]
        counts[key] = counts.get(key, 0) + p.numel()
    return counts | {"total": sum(counts.values())}
