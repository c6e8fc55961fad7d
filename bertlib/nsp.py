"""Next-sentence-prediction pairs: ``[CLS] A [SEP] B [SEP]``, half of them with B from another document.

Book: chapter 9 ("Next sentence prediction").

A readable port of ``create_instances_from_document`` in google-research/bert's
``create_pretraining_data.py``, without the masking (``bertlib.masking`` masks at batch time), the
``dupe_factor`` copies and the final shuffle (shuffle the list, or let the DataLoader do it).
What it keeps, rule for rule:

* ``max_num_tokens`` is the budget for A and B together, i.e. ``max_seq_length - 3`` for
  [CLS], [SEP], [SEP]. With probability ``short_seq_prob`` a document aims at a shorter random
  target length in [2, max_num_tokens] instead (drawn once per document, as in the original), so
  the model also sees the short inputs of fine-tuning.
* Consecutive sentences are gathered into a chunk until the chunk reaches the target length (or
  the document ends). A is the first ``a_end`` sentences of the chunk, ``a_end`` uniform in 1..n-1.
* With probability 0.5, and always when the chunk has a single sentence, B is taken from a random
  *other* document, starting at a random sentence, until it fills the rest of the target; the
  chunk's unused sentences are put back and start the next chunk. Otherwise B is the rest of the
  chunk, the true continuation of A.
* ``truncate_seq_pair`` then cuts the pair to the budget, from the longer side, at the front or
  the back at random (so a truncated IsNext pair may have a small gap between A and B).

One deliberate difference: the original tries ten times to draw a document other than the current
one and silently keeps the current one if it fails; here the random document is drawn uniformly
from the others, so a NotNext B never comes from A's document. That needs at least two documents.

Labels follow transformers: ``next_sentence_label`` 0 = IsNext, 1 = NotNext.
"""
from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass
from numbers import Integral

from .tokenizer import BertTokenizer

IS_NEXT = 0
NOT_NEXT = 1


@dataclass(frozen=True)
class NspExample:
    """One sentence pair. Tokens are whatever the documents held (strings or ids)."""

    tokens_a: list
    tokens_b: list
    is_random_next: bool

    @property
    def label(self) -> int:
        """0 = IsNext, 1 = NotNext (transformers' ``next_sentence_label``)."""
        return NOT_NEXT if self.is_random_next else IS_NEXT


def truncate_seq_pair(tokens_a: list, tokens_b: list, max_num_tokens: int, rng: random.Random | None = None) -> None:
    """Cut ``tokens_a`` and ``tokens_b`` in place until together they hold at most ``max_num_tokens``.

    One token at a time from the longer list, from ``tokens_b`` on a tie (the original rule).
    With ``rng=None`` the token is popped from the end; with an ``rng`` it is removed from the front
    or the end with probability 1/2 each, as the original does to avoid always losing the same side.
    Which list loses a token never depends on ``rng``, so the final lengths are the same either way.
    """
    if max_num_tokens < 0:
        raise ValueError(f"max_num_tokens must be >= 0, got {max_num_tokens}")
    while len(tokens_a) + len(tokens_b) > max_num_tokens:
        longer = tokens_a if len(tokens_a) > len(tokens_b) else tokens_b
        if rng is not None and rng.random() < 0.5:
            del longer[0]
        else:
            longer.pop()


def create_nsp_examples(
    documents: Sequence[Sequence[Sequence]],
    max_num_tokens: int,
    rng: random.Random,
    short_seq_prob: float = 0.1,
) -> list[NspExample]:
    """Build NSP pairs from ``documents``: a list of documents, each a list of sentences, each a list of tokens.

    Every example has ``1 <= len(tokens_a)``, ``1 <= len(tokens_b)`` and
    ``len(tokens_a) + len(tokens_b) <= max_num_tokens``. Empty sentences and documents are skipped;
    fewer than two non-empty documents is a ValueError. All randomness comes from ``rng``, so the
    same seed gives the same list. Examples come in document order.
    """
    if not isinstance(rng, random.Random):
        raise TypeError(f"rng must be a random.Random, got {type(rng).__name__}")
    if max_num_tokens < 2:
        raise ValueError(f"max_num_tokens must be >= 2 (one token for A, one for B), got {max_num_tokens}")
    if not 0.0 <= short_seq_prob <= 1.0:
        raise ValueError(f"short_seq_prob must be in [0, 1], got {short_seq_prob}")
    docs = _non_empty_documents(documents)
    if len(docs) < 2:
        raise ValueError(f"NSP needs at least 2 non-empty documents to draw random next sentences, got {len(docs)}")

    examples = []
    for doc_index in range(len(docs)):
        examples.extend(_examples_from_document(docs, doc_index, max_num_tokens, rng, short_seq_prob))
    return examples


def _non_empty_documents(documents) -> list[list]:
    """The documents without their empty sentences, empty documents dropped. A str where a list belongs is a
    TypeError: iterating it would quietly make each character a document, a sentence or a token."""
    layout = "documents must be a list of documents, each a list of sentences, each a list of tokens"
    if isinstance(documents, (str, bytes)):
        raise TypeError(f"{layout}; got one {type(documents).__name__} (split and tokenize the text first)")
    docs = []
    for doc in documents:
        if isinstance(doc, (str, bytes)):
            raise TypeError(f"{layout}; got a document that is a {type(doc).__name__}: {doc[:40]!r}")
        sentences = []
        for sentence in doc:
            if isinstance(sentence, (str, bytes)):
                raise TypeError(f"{layout}; got a sentence that is a {type(sentence).__name__}, not tokens: "
                                f"{sentence[:40]!r} (tokenize it first)")
            if len(sentence) > 0:
                sentences.append(sentence)
        if sentences:
            docs.append(sentences)
    return docs


def _examples_from_document(docs, doc_index, max_num_tokens, rng, short_seq_prob) -> list[NspExample]:
    document = docs[doc_index]
    target_length = max_num_tokens
    if rng.random() < short_seq_prob:
        target_length = rng.randint(2, max_num_tokens)

    examples = []
    chunk, chunk_length = [], 0  # consecutive sentences not used yet
    i = 0
    while i < len(document):
        chunk.append(document[i])
        chunk_length += len(document[i])
        if i == len(document) - 1 or chunk_length >= target_length:
            a_end = rng.randint(1, len(chunk) - 1) if len(chunk) >= 2 else 1
            tokens_a = [token for sentence in chunk[:a_end] for token in sentence]

            if len(chunk) == 1 or rng.random() < 0.5:
                is_random_next = True
                # Any document but this one, uniformly: draw among n - 1 and skip over doc_index.
                other_index = rng.randrange(len(docs) - 1)
                if other_index >= doc_index:
                    other_index += 1
                other = docs[other_index]
                tokens_b = []
                for sentence in other[rng.randrange(len(other)):]:
                    tokens_b.extend(sentence)
                    if len(tokens_b) >= target_length - len(tokens_a):
                        break
                i -= len(chunk) - a_end  # put the unused sentences back: they start the next chunk
            else:
                is_random_next = False
                tokens_b = [token for sentence in chunk[a_end:] for token in sentence]

            truncate_seq_pair(tokens_a, tokens_b, max_num_tokens, rng)
            examples.append(NspExample(tokens_a, tokens_b, is_random_next))
            chunk, chunk_length = [], 0
        i += 1
    return examples


def encode_nsp_example(example: NspExample, tokenizer, max_length: int) -> dict:
    """Lay out ``[CLS] A [SEP] B [SEP]`` and pad it to ``max_length`` (``BertTokenizer.prepare_for_model``).

    Returns lists ``input_ids``, ``token_type_ids`` (0 for [CLS] A [SEP], 1 for B [SEP], 0 on padding)
    and ``attention_mask`` (1 on tokens, 0 on padding), all of length ``max_length``, and the int
    ``next_sentence_label``. String tokens go through ``tokenizer.convert_tokens_to_ids``; integer
    tokens are taken as ids. Uses ``tokenizer.cls_token_id``, ``sep_token_id`` and ``pad_token_id``.
    """
    ids_a = _token_ids(example.tokens_a, tokenizer)
    ids_b = _token_ids(example.tokens_b, tokenizer)
    if len(ids_a) + len(ids_b) + 3 > max_length:  # never truncated here: create_nsp_examples already cut the pair
        raise ValueError(
            f"example needs {len(ids_a) + len(ids_b) + 3} positions but max_length is {max_length}; "
            f"create examples with max_num_tokens = max_length - 3"
        )
    # the layout is the tokenizer's (a stand-in with the three ids will do, hence the unbound call)
    encoded = BertTokenizer.prepare_for_model(tokenizer, ids_a, ids_b, padding="max_length", truncation=False,
                                              max_length=max_length)
    return {**encoded, "next_sentence_label": example.label}


def _token_ids(tokens: Sequence, tokenizer) -> list[int]:
    if all(isinstance(token, Integral) for token in tokens):
        return [int(token) for token in tokens]
    if all(isinstance(token, str) for token in tokens):
        return list(tokenizer.convert_tokens_to_ids(list(tokens)))
    raise TypeError("tokens must be all strings or all integer ids")
