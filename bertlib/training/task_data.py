"""The fine-tuning tasks' data: the three datasets shipped in ``datasets/`` (package data: ``DATA_DIR``), read,
sampled, and encoded for their heads.

Book: chapter 10 (the heads) and chapter 11 (fine-tuning the pretrained model).

* ``docstring_topics``: a sentence and its label -> [CLS] text [SEP] and a label id;
* ``code_spans``: words and their B-CODE / I-CODE / O tags -> pieces, each word's tag on its first piece;
* ``function_qa``: a question, a context and an answer's characters -> [CLS] question [SEP] context [SEP] and
  the answer's first and last piece.

See datasets/README.md for where the data comes from.
"""
from __future__ import annotations

import json
import random
import re
from dataclasses import dataclass
from pathlib import Path

import torch

from ..collate import collate
from ..masking import IGNORE_INDEX
from ..tokenizer import BertTokenizer

# The shipped datasets: package data, installed with bertlib (``load_task(..., data_dir=)`` reads others).
DATA_DIR = Path(__file__).resolve().parent / "datasets"
TASKS = ("docstring_topics", "code_spans", "function_qa")
TAGS = ("O", "B-CODE", "I-CODE")


def load_jsonl(path) -> list[dict]:
    with open(path, encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def load_task(task: str, data_dir: str | Path | None = None) -> tuple[list[dict], list[dict]]:
    """(train, test) rows of a dataset: ``data_dir/task/{train,test}.jsonl``, by default the shipped one."""
    if task not in TASKS:
        raise ValueError(f"task must be one of {TASKS}, got {task!r}")
    folder = Path(data_dir or DATA_DIR) / task
    return load_jsonl(folder / "train.jsonl"), load_jsonl(folder / "test.jsonl")


def label_names(rows) -> list[str]:
    return sorted({r["label"] for r in rows})


def seeded_sample(rows: list[dict], n: int | None, seed: int) -> list[dict]:
    """The first ``n`` rows of a seeded shuffle (all rows if n is None): the "few labels" of experiment 5."""
    if n is None or n >= len(rows):
        return rows
    rows = list(rows)
    random.Random(seed).shuffle(rows)
    return rows[:n]


# ----------------------------------------------------------------------------- encoding
def encode_classification(rows, tokenizer, labels: list[str], max_length: int):
    enc = tokenizer([r["text"] for r in rows], padding="max_length", truncation=True, max_length=max_length,
                    return_tensors="pt")
    out = {k: enc[k] for k in ("input_ids", "token_type_ids", "attention_mask")}
    out["labels"] = torch.tensor([labels.index(r["label"]) for r in rows])  # (N,)
    return out


def encode_tagging(rows, tokenizer, max_length: int):
    """Word tags -> piece labels: a word's tag goes on its first piece, -100 on the rest (and on [CLS], [SEP],
    padding), as transformers' token-classification examples do. Words cut off by max_length are dropped."""
    rows_out, word_starts = [], []
    for r in rows:
        piece_ids, piece_labels, starts = [], [], []
        for word, tag in zip(r["tokens"], r["tags"]):
            pieces = tokenizer.encode(word, add_special_tokens=False) or [tokenizer.unk_token_id]
            if len(piece_ids) + len(pieces) > max_length - 2:  # room for [CLS] and [SEP]
                break
            starts.append(1 + len(piece_ids))  # after [CLS]
            piece_ids += pieces
            piece_labels += [TAGS.index(tag)] + [IGNORE_INDEX] * (len(pieces) - 1)
        row = tokenizer.prepare_for_model(piece_ids, padding="max_length", max_length=max_length)
        pad = max_length - len(piece_ids) - 2
        row["labels"] = [IGNORE_INDEX] + piece_labels + [IGNORE_INDEX] + [IGNORE_INDEX] * pad
        rows_out.append(row)
        word_starts.append(starts)
    return collate(rows_out, ("input_ids", "token_type_ids", "attention_mask", "labels")), word_starts  # each (N, T)


_BASIC_PIECE = re.compile(r"[^\W_]+|_|[^\w\s]")  # what BERT's basic tokenizer cuts ASCII text into


def pieces_with_offsets(text: str, tokenizer: BertTokenizer) -> tuple[list[int], list[tuple[int, int]]]:
    """Word-piece ids of ``text`` and each piece's (start, end) characters in it, for mapping answer spans.

    The basic tokenizer's cuts are found with a regular expression (letters and digits, or one punctuation
    character), then each is cut into word pieces; the result is checked against the tokenizer itself."""
    ids, offsets = [], []
    for m in _BASIC_PIECE.finditer(text):
        pos = m.start()
        for piece in tokenizer.wordpiece_tokenizer.tokenize_word(tokenizer.basic_tokenizer.split_word(m.group())[0]):
            n = len(piece) - 2 if piece.startswith("##") else len(piece)
            if piece == tokenizer.unk_token:
                n = m.end() - pos
            ids.append(tokenizer.vocab[piece])
            offsets.append((pos, pos + n))
            pos += n
    if ids != tokenizer.encode(text, add_special_tokens=False):
        raise ValueError(f"offset mapping does not reproduce the tokenizer on {text[:60]!r}")
    return ids, offsets


@dataclass
class QaFeatures:
    tensors: dict  # input_ids, token_type_ids, attention_mask, start_positions, end_positions: (N, T) / (N,)
    context_mask: torch.Tensor  # (N, T) True on context pieces
    offsets: list  # per example: the character span of each position (None outside the context)
    kept: list  # indices of the rows that fit (the answer inside the window)


def encode_qa(rows, tokenizer, max_length: int, drop_unanswerable: bool) -> QaFeatures:
    """[CLS] question [SEP] context [SEP], the context cut at ``max_length``; answer characters -> piece positions.

    An answer cut off by the window is dropped from training (``drop_unanswerable``) and counted as wrong in
    evaluation (its start/end point at [CLS], which decode_span never predicts)."""
    encoded, masks, all_offsets, kept = [], [], [], []
    for i, r in enumerate(rows):
        q = tokenizer.encode(r["question"], add_special_tokens=False)
        c_ids, c_off = pieces_with_offsets(r["context"], tokenizer)
        room = max_length - len(q) - 3
        if room < 0:
            raise ValueError(f"max_length={max_length} is too short for the question of example {i}: "
                             f"[CLS] question [SEP] [SEP] alone takes {len(q) + 3} pieces")
        c_ids, c_off = c_ids[:room], c_off[:room]
        a_start = r["answers"]["answer_start"][0]
        a_end = a_start + len(r["answers"]["text"][0])
        first = len(q) + 2  # position of the first context piece
        s = next((first + j for j, (cs, ce) in enumerate(c_off) if cs <= a_start < ce), None)
        e = next((first + j for j, (cs, ce) in enumerate(c_off) if cs < a_end <= ce), None)
        if s is None or e is None:
            if drop_unanswerable:
                continue
            s = e = 0  # [CLS]: outside the context, so never predicted and always wrong
        row = tokenizer.prepare_for_model(q, c_ids, padding="max_length", truncation=False,
                                          max_length=max_length)  # [CLS] q [SEP] c [SEP] [PAD]...
        encoded.append({**row, "start_positions": s, "end_positions": e})
        pad = max_length - len(q) - len(c_ids) - 3
        masks.append([False] * first + [True] * len(c_ids) + [False] * (pad + 1))
        all_offsets.append([None] * first + list(c_off) + [None] * (pad + 1))
        kept.append(i)
    keys = ("input_ids", "token_type_ids", "attention_mask", "start_positions", "end_positions")
    return QaFeatures(collate(encoded, keys), torch.tensor(masks), all_offsets, kept)
