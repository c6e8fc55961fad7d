"""Masked-language-model inputs: pick 15% of the tokens, then 80/10/10.

Book: chapter 7 ("Masked language modelling") calls it; chapter 8 ("15% and 80/10/10") explains it.

BERT masking comes in two variants, and this module implements the second one:

* google-research/bert, ``create_pretraining_data.py`` (the paper's code), picks an *exact count* per
  sequence, ``min(max_predictions_per_seq, max(1, round(0.15 * len(tokens))))`` positions out of the
  shuffled non-special ones. It does this once, offline, when the training files are written, so a
  sequence keeps its mask for the whole run (``dupe_factor`` copies give it a few different ones).
* transformers' ``DataCollatorForLanguageModeling`` draws *every eligible position independently*
  with probability ``mlm_probability``; the count per sequence is Binomial(n, 0.15) instead of fixed,
  and a fresh mask is drawn for every batch ("dynamic" masking, as RoBERTa later recommended).

We follow transformers: the whole thing is a few vectorised tensor operations with no loop over
sequences, every position is treated alike, masks are redrawn every step for free, and our batches
are statistically the same as the collator's, so losses can be compared with ``transformers``.
On average the two variants mask the same 15% of eligible tokens.

Of the selected positions a fraction ``mask_replace_prob`` (80%) becomes [MASK], a fraction
``random_replace_prob`` (10%) becomes an id drawn uniformly from the whole vocabulary (special ids
included, as in both references), and the rest (10%) keeps its token. All selected positions are
predicted: their label is the original id. Every other label is -100, which
``torch.nn.functional.cross_entropy`` ignores by default.
"""
from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass

import torch

# The label of a position that is not predicted: torch.nn.functional.cross_entropy's default ignore_index,
# so the losses (heads.py) skip it. Defined here, where the labels are made; fine-tuning's tagging labels use it too.
IGNORE_INDEX = -100


def special_tokens_mask(input_ids: torch.Tensor, special_ids: Iterable[int]) -> torch.Tensor:
    """True where ``input_ids`` holds one of ``special_ids``; same shape as ``input_ids``."""
    special = torch.tensor([int(i) for i in special_ids], dtype=input_ids.dtype, device=input_ids.device)  # (S,)
    return torch.isin(input_ids, special)


def mask_tokens(
    input_ids: torch.Tensor,
    *,
    mask_token_id: int | None = None,
    vocab_size: int | None = None,
    special_ids: Iterable[int] | None = None,
    attention_mask: torch.Tensor | None = None,
    mlm_probability: float = 0.15,
    mask_replace_prob: float = 0.8,
    random_replace_prob: float = 0.1,
    generator: torch.Generator | None = None,
    tokenizer=None,
) -> tuple[torch.Tensor, torch.Tensor]:
    """Return ``(inputs, labels)`` for masked language modelling; ``input_ids`` is left untouched.

    input_ids: integer tensor, (B, T) or (T,).
    mask_token_id, vocab_size, special_ids: the [MASK] id, the range [0, vocab_size) of random
        replacements, and the ids never selected ([CLS], [SEP], [PAD], [MASK], [UNK] typically).
        ``tokenizer=`` fills whichever of the three is not given from its ``mask_token_id``,
        ``vocab_size`` and ``all_special_ids`` (a bertlib or a transformers BERT tokenizer).
    attention_mask: same shape as ``input_ids``; positions where it is 0 are never selected.
    mlm_probability: chance that an eligible position is selected (independently per position).
    mask_replace_prob, random_replace_prob: fractions *of the selected positions* that become
        [MASK] and a random id; the remaining ``1 - mask_replace_prob - random_replace_prob`` keep
        their token (transformers' argument names and meaning).
    generator: the source of all randomness; on the device of ``input_ids``. Passing a seeded one
        makes the result reproducible; ``None`` uses torch's default generator for that device.

    Returns ``inputs`` (same shape and dtype, with the replacements) and ``labels`` (the original id
    at selected positions, -100 elsewhere). Ids outside [0, vocab_size) are a ValueError; that check
    reads one min and one max back from the device.
    """
    if tokenizer is not None:
        mask_token_id = tokenizer.mask_token_id if mask_token_id is None else mask_token_id
        vocab_size = tokenizer.vocab_size if vocab_size is None else vocab_size
        special_ids = tokenizer.all_special_ids if special_ids is None else special_ids
    if mask_token_id is None or vocab_size is None or special_ids is None:
        raise ValueError("mask_tokens needs mask_token_id, vocab_size and special_ids, or tokenizer=")
    _check_probabilities(mlm_probability, mask_replace_prob, random_replace_prob)
    _check_tensors(input_ids, attention_mask, generator)
    if not 0 <= mask_token_id < vocab_size:
        raise ValueError(f"mask_token_id {mask_token_id} is outside the vocabulary [0, {vocab_size})")
    if input_ids.numel() > 0:
        lowest, highest = torch.aminmax(input_ids)
        if lowest < 0 or highest >= vocab_size:
            raise ValueError(
                f"input_ids must lie in [0, {vocab_size}); found values from {int(lowest)} to {int(highest)}"
            )

    shape, device = input_ids.shape, input_ids.device
    eligible = ~special_tokens_mask(input_ids, special_ids)  # (B, T)
    if attention_mask is not None:
        eligible &= attention_mask.bool()

    # Two uniforms per position: one decides "selected?", the other "[MASK], random or unchanged?".
    # u < p has probability p, and the second uniform splits [0, 1) into [0, m) [m, m + r) [m + r, 1).
    u = torch.rand((2, *shape), generator=generator, device=device)  # (2, B, T)
    selected = eligible & (u[0] < mlm_probability)  # (B, T)
    to_mask = selected & (u[1] < mask_replace_prob)  # (B, T)
    to_random = selected & ~to_mask & (u[1] < mask_replace_prob + random_replace_prob)  # (B, T)
    random_ids = torch.randint(vocab_size, shape, generator=generator, device=device, dtype=input_ids.dtype)

    labels = torch.where(selected, input_ids, IGNORE_INDEX)  # (B, T)
    inputs = torch.where(to_random, random_ids, input_ids)  # (B, T), a new tensor: input_ids is not mutated
    inputs = torch.where(to_mask, mask_token_id, inputs)  # (B, T)
    return inputs, labels


def mask_batch(
    batch: dict[str, torch.Tensor],
    tokenizer,
    generator: torch.Generator | None = None,
    *,
    mlm_probability: float = 0.15,
    mask_replace_prob: float = 0.8,
    random_replace_prob: float = 0.1,
) -> dict[str, torch.Tensor]:
    """``batch`` ready for masked language modelling: its ``input_ids`` masked by ``mask_tokens`` (never at
    a position its ``attention_mask`` hides) and its ``labels`` added; every other entry (segment ids, the
    attention mask, NSP labels) is kept. The ids come from ``tokenizer`` ([MASK], the vocabulary size, the
    special tokens). Every training batch of bertlib is masked here: pretraining, its held-out pairs, the
    experiments."""
    inputs, labels = mask_tokens(
        batch["input_ids"], tokenizer=tokenizer, attention_mask=batch.get("attention_mask"),
        mlm_probability=mlm_probability, mask_replace_prob=mask_replace_prob,
        random_replace_prob=random_replace_prob, generator=generator,
    )
    return {**batch, "input_ids": inputs, "labels": labels}


def _check_probabilities(mlm_probability: float, mask_replace_prob: float, random_replace_prob: float) -> None:
    for name, p in [
        ("mlm_probability", mlm_probability),
        ("mask_replace_prob", mask_replace_prob),
        ("random_replace_prob", random_replace_prob),
    ]:
        if not 0.0 <= p <= 1.0:  # also rejects NaN
            raise ValueError(f"{name} must be in [0, 1], got {p}")
    if mask_replace_prob + random_replace_prob > 1.0 + 1e-12:
        raise ValueError(
            f"mask_replace_prob + random_replace_prob must not exceed 1, got {mask_replace_prob} + {random_replace_prob}"
        )


def _check_tensors(input_ids, attention_mask, generator) -> None:
    if not isinstance(input_ids, torch.Tensor):
        raise TypeError(f"input_ids must be a torch.Tensor, got {type(input_ids).__name__}")
    if input_ids.dtype not in (torch.int64, torch.int32, torch.int16):
        raise TypeError(f"input_ids must be an integer tensor (int64 or int32), got {input_ids.dtype}")
    if input_ids.dim() not in (1, 2):
        raise ValueError(f"input_ids must have shape (B, T) or (T,), got {tuple(input_ids.shape)}")
    if attention_mask is not None:
        if not isinstance(attention_mask, torch.Tensor):
            raise TypeError(f"attention_mask must be a torch.Tensor, got {type(attention_mask).__name__}")
        if attention_mask.shape != input_ids.shape:
            raise ValueError(
                f"attention_mask has shape {tuple(attention_mask.shape)}, input_ids {tuple(input_ids.shape)}"
            )
        if attention_mask.device != input_ids.device:
            raise ValueError(f"attention_mask is on {attention_mask.device}, input_ids on {input_ids.device}")
    if generator is not None and not _same_device(torch.device(generator.device), input_ids.device):
        raise ValueError(f"generator is on {generator.device} but input_ids on {input_ids.device}")


def _same_device(a: torch.device, b: torch.device) -> bool:
    return a.type == b.type and (a.type == "cpu" or (a.index or 0) == (b.index or 0))


@dataclass(frozen=True)
class MaskingStats:
    """What ``mask_tokens`` did to a batch, as the reader can observe it.

    selected: selected positions / eligible positions (expected ``mlm_probability``).
    masked, random, unchanged: fractions of the selected positions that now hold [MASK], another id,
    and their original id; they sum to 1. A random draw equals the original id with chance 1/V
    and [MASK] with chance 1/V, so the expected values are ``m + r/V``, ``r (1 - 2/V)`` and
    ``1 - m - r + r/V`` for ``m = mask_replace_prob``, ``r = random_replace_prob``, vocabulary size V.
    """

    num_eligible: int
    num_selected: int
    selected: float
    masked: float
    random: float
    unchanged: float


def masking_statistics(
    inputs: torch.Tensor,
    labels: torch.Tensor,
    original: torch.Tensor,
    *,
    mask_token_id: int,
    special_ids: Iterable[int] = (),
    attention_mask: torch.Tensor | None = None,
) -> MaskingStats:
    """Count what happened to ``original`` (the ids before masking) given ``mask_tokens``' output.

    Eligible positions are those not in ``special_ids`` and, if given, where ``attention_mask`` is 1;
    selected positions are those with a label other than -100. Fractions of an empty set are NaN.
    """
    eligible = ~special_tokens_mask(original, special_ids)  # (B, T)
    if attention_mask is not None:
        eligible &= attention_mask.bool()
    selected = labels != IGNORE_INDEX  # (B, T)
    is_mask = inputs == mask_token_id  # (B, T)
    is_same = inputs == original  # (B, T)

    num_eligible = int(eligible.sum())
    num_selected = int(selected.sum())
    num_masked = int((selected & is_mask).sum())
    num_same = int((selected & is_same & ~is_mask).sum())  # an original [MASK] counts as masked
    num_random = num_selected - num_masked - num_same

    def fraction(count: int, total: int) -> float:
        return count / total if total else math.nan

    return MaskingStats(
        num_eligible=num_eligible,
        num_selected=num_selected,
        selected=fraction(num_selected, num_eligible),
        masked=fraction(num_masked, num_selected),
        random=fraction(num_random, num_selected),
        unchanged=fraction(num_same, num_selected),
    )
