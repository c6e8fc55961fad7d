"""``PretrainConfig``: one pretraining run, and the options of ``python -m bertlib.pretrain``.

Book: chapter 11 (the defaults are its run; it says why each differs from BERT's).

A field made with ``cli.option`` is also a command-line option: its flag, checking type and help are written
once, here; ``pretrain.parse_args`` generates the options from the fields.
"""
from __future__ import annotations

from dataclasses import dataclass

from ..config import BertConfig
from . import cli

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

    @property
    def masking(self) -> dict:
        """``masking.mask_batch``'s arguments for the training batches: ``mask_batch(batch, tok, g, **cfg.masking)``."""
        return dict(mlm_probability=self.mask_prob, mask_replace_prob=self.mask_replace_prob,
                    random_replace_prob=self.random_replace_prob)

    def model_config(self, vocab_size: int) -> BertConfig:
        return BertConfig(
            vocab_size=vocab_size, hidden_size=self.hidden_size, num_hidden_layers=self.num_hidden_layers,
            num_attention_heads=self.num_attention_heads, intermediate_size=self.intermediate_size,
            hidden_dropout_prob=self.dropout, attention_probs_dropout_prob=self.dropout,
            max_position_embeddings=self.max_len, is_causal=self.causal, initializer_range=self.initializer_range,
        )
