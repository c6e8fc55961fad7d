"""Pretraining: a training step of bertlib against transformers, and the default run across seeds.

Run: python benchmarks/bench_pretrain.py [--repeats 5] [--steps 10] [--seeds 0 1 2] [--mask-probs 0.15 0.4]

1. Step time, side by side, alternating, one torch thread, the default run's model (2 layers, width 128)
   and batch (64 pairs of 32 pieces, 25% masked), the same weights and batches on both sides:

   * transformers ``BertForPreTraining`` with MiniLM's 30,522-piece vocabulary, logits at every position
     (the straightforward run the issue describes as the reference);
   * bertlib, the same model and the same work (vocabulary and logits at every position): the ratio says
     whether bertlib's model is as fast as the reference;
   * bertlib as ``python -m bertlib.pretrain`` trains: the compact vocabulary of the corpus and logits only
     at the masked positions: the ratio says what the recipe buys.

   A step is the one step of every bertlib run (``bertlib.training.loop.train_step``: forward, backward,
   gradient clipping, AdamW update, schedule step), on both sides, timed as chapter 11 times it
   (``bertlib.training.loop.seconds_per_step``): each side warmed up, then timed ``--repeats`` times over
   ``--steps`` steps, the sides taking turns, and the best repeat counts.

2. The default run (``PretrainConfig()``, what the book executes) for each of ``--seeds``: held-out MLM and
   NSP accuracy against their baselines, and the wall time (data preparation and evaluation included,
   printed for each seed); ``--seeds`` with no value skips it.

3. The default run (seed 0) masking each of ``--mask-probs`` instead of its 25%: the masking rate measured at
   the default run's own scale (chapter 12's experiment 3 compares rates on a smaller model); the default,
   or no value, skips it.

The last line printed is a JSON object with the figures.
"""
import argparse
import itertools
import json
import os
import random
from functools import partial

import torch

os.environ.setdefault("HF_HUB_OFFLINE", "1")

import transformers

from bertlib.heads import BertForPreTraining
from bertlib.masking import mask_batch
from bertlib.training.loop import make_optimizer, make_scheduler, seconds_per_step, train_step
from bertlib.training.objective import pretraining_forward
from bertlib.training.pretrain import pretrain
from bertlib.training.pretrain_config import PretrainConfig
from bertlib.training.pretraining_data import load_pretraining_data, NspBatches


def step_functions(cfg: PretrainConfig, vocab: str, n_batches: int = 8):
    """{name: fn} where each call of fn is one training step on the next of ``n_batches`` fixed batches."""
    data = load_pretraining_data(vocab)
    model_cfg = cfg.model_config(data.tokenizer.vocab_size)
    stream = NspBatches(data.train_docs, data.tokenizer, cfg.seq_len, cfg.batch_size, random.Random(0),
                        cfg.short_seq_prob)
    g = torch.Generator().manual_seed(0)
    batches = [mask_batch(next(stream), data.tokenizer, g, **cfg.masking) for _ in range(n_batches)]
    torch.manual_seed(0)
    ours = BertForPreTraining(model_cfg)
    fns = {}
    if vocab == "minilm":
        hf_cfg = transformers.BertConfig(**{k: v for k, v in model_cfg.to_dict().items() if k != "is_causal"})
        theirs = transformers.BertForPreTraining(hf_cfg)
        keys = theirs.load_state_dict(ours.state_dict(), strict=False)
        # transformers ties cls.predictions.decoder.bias to cls.predictions.bias: the one key it reports
        assert set(keys.missing_keys) <= {"cls.predictions.decoder.bias"} and not keys.unexpected_keys, keys
        theirs.train()
        fns["transformers, full vocabulary, every position"] = _stepper(
            theirs, batches, lambda m, b: m(input_ids=b["input_ids"], attention_mask=b["attention_mask"],
                                            token_type_ids=b["token_type_ids"], labels=b["labels"],
                                            next_sentence_label=b["next_sentence_label"]))
        fns["bertlib, full vocabulary, every position"] = _stepper(
            ours, batches, lambda m, b: m(b["input_ids"], b["attention_mask"], b["token_type_ids"],
                                          labels=b["labels"], next_sentence_label=b["next_sentence_label"]))
    else:
        fns["bertlib recipe: compact vocabulary, masked positions only"] = _stepper(
            ours, batches, partial(pretraining_forward, nsp=True))
    return fns


def _stepper(model, batches, forward):
    """One call: one training step of ``model`` on the next of ``batches`` (``forward(model, batch)`` gives an
    output with a ``.loss``)."""
    model.train()
    opt = make_optimizer(model, 1e-4, 0.01)
    scheduler = make_scheduler(opt, 10**9, 0.0)  # a constant rate, for as many steps as the timing takes
    cycle = itertools.cycle(batches)
    return lambda: train_step(model, next(cycle), opt, scheduler, forward=forward)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--steps", type=int, default=10)
    parser.add_argument("--seeds", type=int, nargs="*", default=[0, 1, 2])
    parser.add_argument("--mask-probs", type=float, nargs="*", default=[],
                        help="also run the default recipe (seed 0) masking each of these shares")
    args = parser.parse_args()
    torch.set_num_threads(1)
    cfg = PretrainConfig()

    fns = {**step_functions(cfg, "minilm"), **step_functions(cfg, "compact")}
    best = seconds_per_step(fns, args.steps, repeats=args.repeats, warmup=2)
    ref = best["transformers, full vocabulary, every position"]
    print(f"one training step, batch {cfg.batch_size} x {cfg.seq_len}, 1 thread, load {os.getloadavg()[0]:.1f}, "
          f"best of {args.repeats} x {args.steps} steps")
    for name, s in best.items():
        print(f"  {name:58s} {s * 1e3:7.1f} ms/step   {ref / s:5.2f}x transformers")
    result = {"step_ms": {k: round(v * 1e3, 1) for k, v in best.items()},
              "ratio_bertlib_same_work": round(ref / best["bertlib, full vocabulary, every position"], 2),
              "ratio_bertlib_recipe": round(ref / best["bertlib recipe: compact vocabulary, masked positions only"], 2),
              "runs": []}

    for seed in args.seeds:
        load_before = os.getloadavg()[0]
        m = pretrain(PretrainConfig(seed=seed), progress=False).metrics
        run = {k: round(m[k], 3) for k in ("mlm_accuracy", "nsp_accuracy", "mlm_unigram_baseline",
                                            "nsp_majority_baseline", "seconds")}
        run.update(seed=seed, load=round(max(load_before, os.getloadavg()[0]), 1))
        result["runs"].append(run)
        print(f"default run, seed {seed}: held-out MLM {run['mlm_accuracy']:.3f} (baseline "
              f"{run['mlm_unigram_baseline']:.3f}), NSP {run['nsp_accuracy']:.3f} (baseline "
              f"{run['nsp_majority_baseline']:.3f}), {run['seconds']:.0f} s, load {run['load']}", flush=True)
    result["mask_probs"] = []
    for p in args.mask_probs:
        m = pretrain(PretrainConfig(mask_prob=p), progress=False).metrics
        run = {"mask_prob": p, **{k: round(m[k], 3) for k in ("mlm_accuracy", "nsp_accuracy", "seconds")}}
        result["mask_probs"].append(run)
        print(f"default run masking {p:.0%}: held-out MLM {run['mlm_accuracy']:.3f}, NSP {run['nsp_accuracy']:.3f} "
              f"(evaluated at 15% as always), {run['seconds']:.0f} s", flush=True)
    print(json.dumps(result))


if __name__ == "__main__":
    main()
