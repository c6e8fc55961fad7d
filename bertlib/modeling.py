"""``BertModel``: embeddings, encoder and pooler, with checks that turn bad input into clear errors.

Also the shared base class (weight initialisation, ``from_pretrained`` / ``save_pretrained``) and the
output records, whose field names are transformers' (``last_hidden_state``, ``pooler_output``, ...).
"""
from __future__ import annotations

from dataclasses import dataclass, fields
from pathlib import Path

import torch
from torch import nn

from . import weights
from .attention import build_attention_mask
from .config import BertConfig
from .embeddings import BertEmbeddings
from .encoder import BertEncoder, BertPooler


class ModelOutput:
    """A dataclass that can also be read like transformers' outputs: ``out.loss``, ``out["loss"]``, ``out[0]``
    (positional indexing skips fields that are None)."""

    def to_tuple(self) -> tuple:
        return tuple(getattr(self, f.name) for f in fields(self) if getattr(self, f.name) is not None)

    def __getitem__(self, key):
        return getattr(self, key) if isinstance(key, str) else self.to_tuple()[key]


@dataclass
class BaseModelOutputWithPooling(ModelOutput):
    last_hidden_state: torch.Tensor  # (B, T, H)
    pooler_output: torch.Tensor | None = None  # (B, H)
    hidden_states: tuple[torch.Tensor, ...] | None = None  # L + 1 of (B, T, H)
    attentions: tuple[torch.Tensor, ...] | None = None  # L of (B, nh, T, T)


class BertPreTrainedModel(nn.Module):
    """What every bertlib model shares: the config, the initialisation, and loading/saving weights."""

    base_model_prefix = "bert"
    # Parameters that are copies of others: not saved, not required when loading.
    tied_weights: dict[str, str] = {}

    def __init__(self, config: BertConfig):
        super().__init__()
        if not isinstance(config, BertConfig):
            raise TypeError(f"config must be a BertConfig, got {type(config).__name__}")
        self.config = config

    @torch.no_grad()
    def _init_weights(self, module: nn.Module) -> None:
        """BERT's initialisation: N(0, 0.02) weights, zero biases, LayerNorm at identity, [PAD] row zero."""
        std = self.config.initializer_range
        if isinstance(module, nn.Linear):
            module.weight.normal_(0.0, std)
            if module.bias is not None:
                module.bias.zero_()
        elif isinstance(module, nn.Embedding):
            module.weight.normal_(0.0, std)
            if module.padding_idx is not None:
                module.weight[module.padding_idx].zero_()
        elif isinstance(module, nn.LayerNorm):
            module.weight.fill_(1.0)
            module.bias.zero_()

    def post_init(self) -> None:
        self.apply(self._init_weights)
        self.tie_weights()

    def tie_weights(self) -> None:
        """Models with an MLM head share the decoder's weight with the word embeddings."""

    @property
    def device(self) -> torch.device:
        return next(self.parameters()).device

    @classmethod
    def from_pretrained(cls, model_dir: str | Path, config: BertConfig | None = None, strict: bool = False,
                        **config_overrides):
        """Load a directory saved by transformers or by ``save_pretrained``: config.json plus
        model.safetensors or pytorch_model.bin. Missing, unexpected or wrongly shaped weights raise a
        ``CheckpointMismatchError`` (a ValueError) naming them; only a task head that the checkpoint does not
        have (e.g. a new classifier) is left freshly initialised, unless ``strict=True``. No weight file is a
        ``MissingWeightsError``, one that cannot be read an ``UnreadableWeightsError`` (``bertlib.weights``)."""
        model_dir = Path(model_dir)
        if not model_dir.is_dir():
            raise FileNotFoundError(f"{model_dir} is not a directory with a BERT checkpoint")
        if config is None:
            config = BertConfig.from_json_file(model_dir / "config.json")
        if config_overrides:
            config = config.replace(**config_overrides)
        model = cls(config)
        state_dict = weights.read_state_dict(model_dir)
        weights.load_into(model, state_dict, strict=strict)
        return model.eval()

    def save_pretrained(self, model_dir: str | Path) -> None:
        """Write config.json and model.safetensors in the layout ``transformers`` loads."""
        model_dir = Path(model_dir)
        model_dir.mkdir(parents=True, exist_ok=True)
        self.config.to_json_file(model_dir / "config.json", architectures=[type(self).__name__])
        weights.write_state_dict(self, model_dir)


class BertModel(BertPreTrainedModel):
    """The encoder without a task head: ids in, one contextual vector per token out."""

    base_model_prefix = ""

    def __init__(self, config: BertConfig, add_pooling_layer: bool = True):
        super().__init__(config)
        self.embeddings = BertEmbeddings(config)
        self.encoder = BertEncoder(config)
        self.pooler = BertPooler(config) if add_pooling_layer else None
        self.post_init()

    def check_inputs(self, input_ids, attention_mask, token_type_ids, position_ids) -> None:
        """Bad input gets a ValueError that names the problem, not an index error from deep inside torch."""
        cfg = self.config
        if not isinstance(input_ids, torch.Tensor) or input_ids.dim() != 2:
            raise ValueError("input_ids must be a 2-D tensor of token ids, shape (batch, seq_len)")
        if input_ids.dtype not in (torch.int64, torch.int32):
            raise ValueError(f"input_ids must hold integers, not {input_ids.dtype}")
        B, T = input_ids.shape
        if T == 0:
            raise ValueError(f"input_ids is an empty sequence, shape {tuple(input_ids.shape)}: BERT needs at least "
                             "one token (in practice [CLS] ... [SEP])")
        if T > cfg.max_position_embeddings:
            raise ValueError(
                f"sequence length {T} exceeds max_position_embeddings={cfg.max_position_embeddings}: "
                "BERT's positions are learned, so it has no embedding for position "
                f"{cfg.max_position_embeddings} or later; truncate the input"
            )
        if input_ids.numel() and (input_ids.min() < 0 or input_ids.max() >= cfg.vocab_size):
            bad = input_ids[(input_ids < 0) | (input_ids >= cfg.vocab_size)].unique()[:5].tolist()
            raise ValueError(f"token ids {bad} are outside the vocabulary [0, {cfg.vocab_size})")
        for name, t in (("attention_mask", attention_mask), ("token_type_ids", token_type_ids)):
            if t is not None and not isinstance(t, torch.Tensor):
                raise ValueError(f"{name} must be a tensor, got {type(t).__name__}")
            if t is not None and tuple(t.shape) != tuple(input_ids.shape):
                raise ValueError(f"{name} has shape {tuple(t.shape)} but input_ids has {tuple(input_ids.shape)}")
        if token_type_ids is not None:
            if token_type_ids.dtype not in (torch.int64, torch.int32):
                raise ValueError(f"token_type_ids must hold integers (A = 0, B = 1), not {token_type_ids.dtype}")
            if token_type_ids.numel() and (token_type_ids.min() < 0 or token_type_ids.max() >= cfg.type_vocab_size):
                raise ValueError(
                    f"token_type_ids must be in [0, {cfg.type_vocab_size}) (segment A = 0, B = 1), "
                    f"got values {token_type_ids.unique()[:5].tolist()}"
                )
        if position_ids is not None:
            if not isinstance(position_ids, torch.Tensor) or position_ids.dtype not in (torch.int64, torch.int32):
                raise ValueError("position_ids must be a tensor of integers, shape (batch, seq_len) or (1, seq_len)")
            shape = tuple(position_ids.shape)
            if shape not in ((B, T), (1, T), (T,)):
                raise ValueError(f"position_ids has shape {shape} but input_ids has {(B, T)}: "
                                 f"expected ({B}, {T}) or (1, {T})")
            if position_ids.numel() and (position_ids.min() < 0 or position_ids.max() >= cfg.max_position_embeddings):
                raise ValueError(f"position_ids must be in [0, max_position_embeddings={cfg.max_position_embeddings}), "
                                 f"got values from {int(position_ids.min())} to {int(position_ids.max())}")

    def forward(
        self,
        input_ids: torch.Tensor,  # (B, T)
        attention_mask: torch.Tensor | None = None,  # (B, T), 1 = real token, 0 = padding
        token_type_ids: torch.Tensor | None = None,  # (B, T)
        position_ids: torch.Tensor | None = None,
        output_attentions: bool = False,
        output_hidden_states: bool = False,
    ) -> BaseModelOutputWithPooling:
        self.check_inputs(input_ids, attention_mask, token_type_ids, position_ids)
        hidden = self.embeddings(input_ids, token_type_ids, position_ids)  # (B, T, H)
        fused = self.config.attn_implementation == "sdpa" and not output_attentions
        mask = build_attention_mask(attention_mask, input_ids.size(1), is_causal=self.config.is_causal,
                                    dtype=hidden.dtype, device=hidden.device, as_bool=fused)
        hidden, all_hidden, all_attn = self.encoder(hidden, mask, output_attentions, output_hidden_states)
        pooled = self.pooler(hidden) if self.pooler is not None else None  # (B, H)
        return BaseModelOutputWithPooling(
            last_hidden_state=hidden,
            pooler_output=pooled,
            hidden_states=tuple(all_hidden) if all_hidden is not None else None,
            attentions=tuple(all_attn) if all_attn is not None else None,
        )
