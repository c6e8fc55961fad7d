"""BERT's hyper-parameters in one frozen dataclass (chapter 3, "BERT-Base and BERT-Large").

Field names and defaults are those of ``transformers.BertConfig``, so a ``config.json`` written by
transformers reads as it is, and one written here loads in transformers.
"""
from __future__ import annotations

import dataclasses
import json
import math
import numbers
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .io import read_json_object

# Keys transformers writes that say what produced the file, not what the model is.
_BOOKKEEPING_KEYS = {"transformers_version", "_name_or_path", "architectures", "model_type", "torch_dtype", "dtype"}


@dataclass(frozen=True)
class BertConfig:
    vocab_size: int = 30522
    hidden_size: int = 768
    num_hidden_layers: int = 12
    num_attention_heads: int = 12
    intermediate_size: int = 3072
    hidden_act: str = "gelu"  # the exact (erf) GELU, as transformers reads the checkpoints (see activations.py)
    hidden_dropout_prob: float = 0.1
    attention_probs_dropout_prob: float = 0.1
    max_position_embeddings: int = 512
    type_vocab_size: int = 2
    initializer_range: float = 0.02
    layer_norm_eps: float = 1e-12
    pad_token_id: int = 0
    classifier_dropout: float | None = None
    num_labels: int = 2
    # "eager" writes attention out in the open; "sdpa" uses torch's fused kernel (same numbers).
    attn_implementation: str = "sdpa"
    # Only to contrast BERT with GPT (chapter 1): every token then sees only its left context.
    is_causal: bool = False
    # Keys from a config.json that bertlib does not use, kept so that saving writes them back.
    extra: dict[str, Any] = field(default_factory=dict, compare=False, repr=False)

    def __post_init__(self) -> None:
        # Types first: "768" % 12 or a division by zero heads would fail with a message about something else.
        for name in _POSITIVE_INTS:
            value = getattr(self, name)
            if not _is_int(value) or value <= 0:
                raise ValueError(f"{name} must be a positive integer, got {value!r}")
        pad = self.pad_token_id
        if pad is not None and not (_is_int(pad) and 0 <= pad < self.vocab_size):
            raise ValueError(f"pad_token_id must be an id in [0, vocab_size={self.vocab_size}) or None, got {pad!r}")
        for name in ("hidden_dropout_prob", "attention_probs_dropout_prob", "classifier_dropout"):
            value = getattr(self, name)
            if value is None and name == "classifier_dropout":
                continue  # None: the classifier uses hidden_dropout_prob
            if not (_is_number(value) and 0 <= value <= 1):
                raise ValueError(f"{name} must be a probability in [0, 1], got {value!r}")
        if not _is_number(self.layer_norm_eps) or self.layer_norm_eps <= 0:
            raise ValueError(f"layer_norm_eps must be a positive number, got {self.layer_norm_eps!r}")
        if not _is_number(self.initializer_range) or self.initializer_range < 0:
            raise ValueError(f"initializer_range must be a number >= 0, got {self.initializer_range!r}")
        if self.hidden_size % self.num_attention_heads != 0:
            raise ValueError(
                f"hidden_size ({self.hidden_size}) must be divisible by num_attention_heads "
                f"({self.num_attention_heads}): each head gets hidden_size / num_attention_heads dimensions"
            )
        from .activations import ACT2FN  # here: reading a config.json alone (the tokenizer does) needs no torch

        if self.hidden_act not in ACT2FN:
            raise ValueError(f"hidden_act {self.hidden_act!r} is not one of {sorted(ACT2FN)}")
        if self.attn_implementation not in ("eager", "sdpa"):
            raise ValueError(f"attn_implementation must be 'eager' or 'sdpa', not {self.attn_implementation!r}")

    @property
    def head_dim(self) -> int:
        return self.hidden_size // self.num_attention_heads

    # --- presets from the paper (Devlin et al., 2019, table of model sizes) ---
    @classmethod
    def base(cls, **overrides: Any) -> "BertConfig":
        """BERT-Base: L=12, H=768, A=12, feed-forward 4H."""
        return cls(**overrides)

    @classmethod
    def large(cls, **overrides: Any) -> "BertConfig":
        """BERT-Large: L=24, H=1024, A=16, feed-forward 4H."""
        fields = dict(hidden_size=1024, num_hidden_layers=24, num_attention_heads=16, intermediate_size=4096)
        return cls(**{**fields, **overrides})

    def replace(self, **changes: Any) -> "BertConfig":
        return dataclasses.replace(self, **changes)

    # --- transformers' config.json ---
    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> "BertConfig":
        """Build from a transformers config dict; unknown keys are kept in ``extra``, never an error."""
        known = {f.name for f in dataclasses.fields(cls)} - {"extra"}
        kwargs = {k: v for k, v in d.items() if k in known}
        if "_attn_implementation" in d and d["_attn_implementation"] in ("eager", "sdpa"):
            kwargs.setdefault("attn_implementation", d["_attn_implementation"])
        if "id2label" in d and "num_labels" not in d:
            kwargs["num_labels"] = len(d["id2label"])
        if kwargs.get("pad_token_id") is None:
            kwargs.pop("pad_token_id", None)
        if d.get("is_decoder"):
            kwargs["is_causal"] = True
        extra = {k: v for k, v in d.items() if k not in known and k not in _BOOKKEEPING_KEYS}
        return cls(**kwargs, extra=extra)

    @classmethod
    def from_json_file(cls, path: str | Path) -> "BertConfig":
        """Read a config.json; a file that is not a JSON object, or a bad value in it, is a ValueError naming
        the file."""
        path = Path(path)
        if not path.is_file():
            raise FileNotFoundError(f"no config file at {path}")
        d = read_json_object(path)
        try:
            return cls.from_dict(d)
        except ValueError as e:
            raise ValueError(f"{path}: {e}") from e

    def to_dict(self) -> dict[str, Any]:
        """The transformers form: what ``transformers.BertConfig.from_dict`` expects."""
        d = dict(self.extra)
        for f in dataclasses.fields(self):
            if f.name in ("extra", "num_labels", "attn_implementation", "is_causal"):
                continue
            d[f.name] = getattr(self, f.name)
        d["model_type"] = "bert"
        d["is_decoder"] = self.is_causal
        # transformers derives num_labels from id2label, so that is how the count is written.
        if len(d.get("id2label", {})) != self.num_labels:
            d["id2label"] = {str(i): f"LABEL_{i}" for i in range(self.num_labels)}
            d["label2id"] = {f"LABEL_{i}": i for i in range(self.num_labels)}
        return d

    def to_json_file(self, path: str | Path, architectures: list[str] | None = None) -> None:
        d = self.to_dict()
        if architectures:
            d["architectures"] = architectures
        Path(path).write_text(json.dumps(d, indent=2, sort_keys=True) + "\n", encoding="utf-8")


_POSITIVE_INTS = ("vocab_size", "hidden_size", "num_hidden_layers", "num_attention_heads", "intermediate_size",
                  "max_position_embeddings", "type_vocab_size", "num_labels")


def _is_int(value) -> bool:
    return isinstance(value, numbers.Integral) and not isinstance(value, bool)


def _is_number(value) -> bool:
    return isinstance(value, numbers.Real) and not isinstance(value, bool) and math.isfinite(value)
