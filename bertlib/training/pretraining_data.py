"""What a pretraining run reads: the vocabulary, the documents as ids, the stream of NSP batches, the
held-out pairs.

Book: chapter 11 ("Pretraining a tiny BERT end to end").

* ``minilm_tokenizer`` and ``compact_vocabulary``: MiniLM's WordPiece vocabulary, and the share of it the
  corpus uses (the run's vocabulary, see ``bertlib.training.pretrain``);
* ``load_pretraining_data``: the corpus (``corpus.py``) as ids, split by document group into train and
  held-out, with the unigram counts the baseline needs (cached per process);
* ``NspBatches``: the endless, seeded stream of [CLS] A [SEP] B [SEP] batches every run trains on;
* ``heldout_pairs``: the pairs a run is scored on, masked once.
"""
from __future__ import annotations

import functools
import random
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import torch

from ..collate import collate
from ..masking import mask_batch
from ..nsp import create_nsp_examples, encode_nsp_example
from ..tokenizer import DEFAULT_SPECIAL_TOKENS, BertTokenizer
from .corpus import corpus_fingerprint, load_documents, split_documents
from .pretrain_config import PretrainConfig

# MiniLM's vocab.txt and tokenizer_config.json, shipped with bertlib (see its README.md)
MINILM_TOKENIZER_DIR = Path(__file__).resolve().parent / "minilm_tokenizer"


def minilm_tokenizer() -> BertTokenizer:
    """all-MiniLM-L6-v2's tokenizer (BERT-Base uncased's vocabulary), from the files shipped with bertlib."""
    return BertTokenizer.from_pretrained(MINILM_TOKENIZER_DIR)


def compact_vocabulary(base: BertTokenizer, documents) -> list[str]:
    """The pieces of ``base``'s vocabulary that ``documents`` use, in ``base``'s order, plus the special
    tokens and every printable ASCII character alone and as a ``##`` continuation (so that a new ASCII word
    is spelt out rather than becoming [UNK]).

    WordPiece takes the longest piece in the vocabulary at each step; every piece it took on these documents
    is kept and nothing is added that it could have preferred, so the documents tokenize exactly as before.
    """
    used = set(DEFAULT_SPECIAL_TOKENS.values())
    for doc in documents:
        for sentence in doc.sentences:
            used.update(base.tokenize(sentence))
    for code in range(33, 127):
        ch = chr(code).lower()
        used.update((ch, "##" + ch))
    return [token for token, _ in sorted(base.vocab.items(), key=lambda kv: kv[1]) if token in used]


@dataclass
class PretrainingData:
    tokenizer: BertTokenizer
    train_docs: list  # documents as lists of sentences as lists of ids
    heldout_docs: list
    unigram_counts: Counter  # training token frequencies (special tokens excluded)
    fingerprint: dict
    train_names: list = field(default_factory=list)
    heldout_names: list = field(default_factory=list)

    @property
    def most_frequent_id(self) -> int:
        return self.unigram_counts.most_common(1)[0][0]


def load_pretraining_data(vocab: str = "compact", heldout_fraction: float = 0.1, split_seed: int = 0,
                          max_sentence_tokens: int | None = 24) -> PretrainingData:
    """Documents -> ids, split by document group into train and held-out (cached per process).

    Sentences longer than ``max_sentence_tokens`` pieces are cut into consecutive parts of at most that
    many. NSP gives a chunk of one sentence a random next segment every time, so with documentation's long
    sentences (and code listings) short training sequences would be two thirds NotNext; with the cut, half
    of the pairs are IsNext at any length, and an IsNext B may continue A's sentence, which is still the
    text that follows A.
    """
    return _load_pretraining_data(vocab, heldout_fraction, split_seed, max_sentence_tokens)


@functools.lru_cache(maxsize=3)
def _load_pretraining_data(vocab, heldout_fraction, split_seed, max_sentence_tokens) -> PretrainingData:
    docs = load_documents()
    train, heldout = split_documents(docs, heldout_fraction, seed=split_seed)
    base = minilm_tokenizer()
    if vocab == "compact":
        tokenizer = BertTokenizer({t: i for i, t in enumerate(compact_vocabulary(base, train))})
    elif vocab == "minilm":
        tokenizer = base
    else:
        raise ValueError(f"vocab must be 'compact' or 'minilm', got {vocab!r}")

    def ids(documents):
        out = []
        for d in documents:
            doc = []
            for sentence in d.sentences:
                piece_ids = tokenizer.encode(sentence, add_special_tokens=False)
                step = max_sentence_tokens or len(piece_ids) or 1
                doc += [piece_ids[i:i + step] for i in range(0, len(piece_ids), step)]
            out.append(doc)
        return out

    train_ids, heldout_ids = ids(train), ids(heldout)
    special = set(tokenizer.all_special_ids)
    counts = Counter(i for d in train_ids for s in d for i in s if i not in special)
    return PretrainingData(tokenizer, train_ids, heldout_ids, counts, corpus_fingerprint(docs),
                           [d.name for d in train], [d.name for d in heldout])


def encode_examples(examples, tokenizer, seq_len: int) -> dict[str, torch.Tensor]:
    """NSP examples -> [CLS] A [SEP] B [SEP] tensors of length ``seq_len``, with their ``next_sentence_label``."""
    return collate([encode_nsp_example(e, tokenizer, seq_len) for e in examples])  # each (N, T) or (N,)


class NspBatches:
    """An endless stream of (B, T) batches of [CLS] A [SEP] B [SEP] pairs: every pass over the documents
    draws new pairs (new cut points, new random B) with its own ``random.Random``, then shuffles them."""

    def __init__(self, docs, tokenizer, seq_len: int, batch_size: int, rng: random.Random, short_seq_prob: float):
        self.docs, self.tokenizer, self.seq_len, self.batch_size = docs, tokenizer, seq_len, batch_size
        self.rng, self.short_seq_prob = rng, short_seq_prob
        self.epoch, self._data, self._pos = 0, None, 0

    def _new_epoch(self) -> None:
        examples = create_nsp_examples(self.docs, self.seq_len - 3, self.rng, self.short_seq_prob)
        self.rng.shuffle(examples)
        self._data, self._pos = encode_examples(examples, self.tokenizer, self.seq_len), 0
        self.epoch += 1

    def __next__(self) -> dict[str, torch.Tensor]:
        if self._data is None or self._pos + self.batch_size > len(self._data["input_ids"]):
            self._new_epoch()  # the ragged end of a pass is dropped: every batch is full
        sl = slice(self._pos, self._pos + self.batch_size)
        self._pos += self.batch_size
        return {k: v[sl] for k, v in self._data.items()}

    def __iter__(self):
        return self


def heldout_pairs(data: PretrainingData, cfg: PretrainConfig, seed: int = 1234, seq_len: int | None = None
                  ) -> dict[str, torch.Tensor]:
    """All held-out pairs of ``seq_len`` (default ``cfg.seq_len``), masked once with a fixed generator at
    ``eval_mask_prob`` with 80/10/10: the same evaluation data for every run and every variant (a variant's
    own masking only changes training)."""
    seq_len = cfg.seq_len if seq_len is None else seq_len
    rng = random.Random(seed)
    examples = create_nsp_examples(data.heldout_docs, seq_len - 3, rng, short_seq_prob=0.0)
    batch = encode_examples(examples, data.tokenizer, seq_len)
    return mask_batch(batch, data.tokenizer, torch.Generator().manual_seed(seed), mlm_probability=cfg.eval_mask_prob)
