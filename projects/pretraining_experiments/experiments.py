"""Five experiments that test, by training, what the BERT paper (or later work) asserts, and ``compare``: how sure
a difference over seeds is. The small defaults are short enough for the book to run them at build time (each
result's ``seconds`` says how long it took), each over several seeds so that a difference comes with its
interval; ``--full`` runs a larger version.

Book: chapter 12, and the chapters each one illustrates (1, 8, 9, 10).

    python -m projects.pretraining_experiments bidirectional   # 1. a cloze whose answer is on the right: BERT vs GPT mask
    python -m projects.pretraining_experiments mask_mismatch   # 2. 80/10/10 against 100% [MASK]: probes, transfer
    python -m projects.pretraining_experiments mask_rate       # 3. masking 5%, 15%, 25%, 40% of the tokens, same budget
    python -m projects.pretraining_experiments nsp             # 4. with and without NSP, then two sentence-pair tasks
    python -m projects.pretraining_experiments few_labels --model runs/tiny   # 5. pretrained against from scratch

Each prints a JSON object (last line) with the table the book shows, a row per seed. Experiments 1 and 4 run
on small seeded synthetic data built so that the effect is visible in seconds (``synthetic``:
``cloze_sentences``, ``topical_documents``); 2 and 3 pretrain on the real corpus with a reduced budget; 5
fine-tunes on the shipped ``docstring_topics`` data. All of them train with ``bertlib.training.loop``.
"""
from __future__ import annotations

import argparse
import dataclasses
import json
import math
import random
import time
from functools import partial

import torch

from bertlib.collate import collate
from bertlib.heads import BertForPreTraining, BertForSequenceClassification
from bertlib.masking import IGNORE_INDEX, mask_batch
from bertlib.nsp import NspExample
from bertlib.tokenizer import DEFAULT_SPECIAL_TOKENS, BertTokenizer
from bertlib.training import cli
from bertlib.training.checkpoint import model_dir_problem
from bertlib.training.finetune import finetune_task, train_epochs
from bertlib.training.loop import make_optimizer, make_scheduler, progress_bar, train_step
from bertlib.training.objective import evaluate, pretraining_forward
from bertlib.training.pretrain import pretrain
from bertlib.training.pretrain_config import PretrainConfig
from bertlib.training.pretraining_data import NspBatches, encode_examples, heldout_pairs, load_pretraining_data
from .synthetic import CLOZE_LEXICON, cloze_sentences, cloze_vocabulary, topical_documents

# ----------------------------------------------------------------------------- how sure: seeds, an interval
def _t_quantile(p: float, df: int) -> float:
    """Student's t quantile (``p`` in (0.5, 1)): bisection on the CDF, the density integrated by Simpson's rule."""
    log_norm = math.lgamma((df + 1) / 2) - math.lgamma(df / 2) - 0.5 * math.log(df * math.pi)

    def cdf(t: float, n: int = 2000) -> float:
        h = t / n
        f = [math.exp(log_norm - (df + 1) / 2 * math.log1p((i * h) ** 2 / df)) for i in range(n + 1)]
        return 0.5 + h / 3 * (f[0] + f[-1] + 4 * sum(f[1:-1:2]) + 2 * sum(f[2:-1:2]))

    low, high = 0.0, 1.0
    while cdf(high) < p:
        high *= 2
    for _ in range(60):
        mid = (low + high) / 2
        low, high = (mid, high) if cdf(mid) < p else (low, mid)
    return (low + high) / 2


def compare(a, b, confidence: float = 0.95) -> dict:
    """Is ``a`` larger than ``b``? ``a`` and ``b``: one score per seed, paired (the same seed's runs), or ``b``
    one number (chance, a baseline). The mean difference a - b with its ``confidence`` interval (Student's t over
    the seeds' differences), and the verdict a sentence may follow: ``"larger"`` only when the whole interval is
    above zero, ``"smaller"`` when it is below, else ``"no difference"`` (none we can see with these seeds).

    >>> compare([0.9, 0.8, 0.85], [0.1, 0.2, 0.15])["verdict"]
    'larger'
    """
    a = [float(x) for x in a]
    b = [float(b)] * len(a) if isinstance(b, (int, float)) else [float(x) for x in b]
    if len(a) != len(b):
        raise ValueError(f"compare: {len(a)} scores against {len(b)}: pair them seed by seed")
    if len(a) < 2:
        raise ValueError(f"compare: {len(a)} seed gives no spread; run at least 2")
    if not 0 < confidence < 1:
        raise ValueError(f"compare: confidence must be in (0, 1), not {confidence}")
    d = [x - y for x, y in zip(a, b)]
    n, mean = len(d), sum(d) / len(d)
    sd = math.sqrt(sum((x - mean) ** 2 for x in d) / (n - 1))
    half = _t_quantile((1 + confidence) / 2, n - 1) * sd / math.sqrt(n)
    low, high = mean - half, mean + half
    verdict = "larger" if low > 0 else "smaller" if high < 0 else "no difference"
    return {"n": n, "mean_a": sum(a) / n, "mean_b": sum(b) / n, "difference": mean, "low": low, "high": high,
            "half_width": half, "spread": sd, "confidence": confidence, "verdict": verdict}


# The architecture of the small synthetic experiments: the book's model at half the width.
SMALL = dict(hidden_size=64, num_hidden_layers=2, num_attention_heads=2, intermediate_size=256, dropout=0.0)


def word_tokenizer(words: list[str]) -> BertTokenizer:
    """A tokenizer whose vocabulary is exactly ``words`` (special tokens first): one id per word."""
    return BertTokenizer({w: i for i, w in enumerate(words)})


def _pretrain_steps(model, make_batch, steps: int, lr: float, nsp: bool, seed: int, progress: str = "") -> list[float]:
    """The pretraining update (the toolkit's AdamW, 10% warm-up, linear decay) on batches from
    ``make_batch(step)``; returns the loss of each step. ``progress``: the label of a progress bar on stderr
    (none if empty)."""
    torch.manual_seed(seed)
    optimizer = make_optimizer(model, lr, 0.01)
    scheduler = make_scheduler(optimizer, steps, 0.1)
    model.train()
    losses = []
    with progress_bar(steps, progress) as bar:
        for step in range(steps):
            out, _ = train_step(model, make_batch(step), optimizer, scheduler, forward=partial(pretraining_forward, nsp=nsp))
            losses.append(float(out.loss.detach()))
            bar.update()
    model.eval()
    return losses


# ----------------------------------------------------------------------------- 1. bidirectional vs causal
def _cloze_tensors(sentences, tok):
    """[CLS] sentence [SEP] for each word list (all of one length, so no padding)."""
    rows = [tok.prepare_for_model(tok.convert_tokens_to_ids(s)) for s in sentences]
    out = collate(rows, ("input_ids", "token_type_ids", "attention_mask"))  # (N, T) each
    return {**out, "next_sentence_label": torch.zeros(len(rows), dtype=torch.long)}


@torch.no_grad()
def _cloze_accuracy(model, tok, sentences, position: int, correct) -> float:
    """Mask the word at ``position`` (1-based after [CLS]) of every sentence; the share of top-1 predictions
    that ``correct(prediction, sentence)`` accepts."""
    batch = _cloze_tensors(sentences, tok)
    batch["input_ids"][:, position] = tok.mask_token_id
    logits = model(batch["input_ids"], batch["attention_mask"], batch["token_type_ids"]).prediction_logits
    pred = tok.convert_ids_to_tokens(logits[:, position].argmax(-1).tolist())  # (N,)
    return sum(correct(p, s) for p, s in zip(pred, sentences)) / len(sentences)


def bidirectional(steps: int = 300, batch_size: int = 64, seeds=(0, 1, 2), lr: float = 3e-3, progress: bool = False) -> dict:
    """The same model and data, trained with MLM under a bidirectional and under a causal (GPT) mask.

    In "the <animal> <verb> in the <place> <adverb> ." only the verb (to the right) tells the animal, and
    only the animal (to the left) tells which verbs are possible. Scored: the masked animal (answer fixed
    by its right) and the masked verb (counted right if it is one of that animal's verbs: fixed by its left).
    """
    t0 = time.perf_counter()
    tok = word_tokenizer(cloze_vocabulary())
    test = cloze_sentences(2000, random.Random(10_000))
    rows = []
    for causal in (False, True):
        for seed in seeds:
            rng = random.Random(seed)
            gen = torch.Generator().manual_seed(seed)
            cfg = PretrainConfig(seq_len=16, causal=causal, **SMALL)
            torch.manual_seed(seed)
            model = BertForPreTraining(cfg.model_config(tok.vocab_size))

            def make_batch(step):
                return mask_batch(_cloze_tensors(cloze_sentences(batch_size, rng), tok), tok, gen, mlm_probability=0.15)

            losses = _pretrain_steps(model, make_batch, steps, lr, nsp=False, seed=seed,
                                  progress=progress and f"{'causal' if causal else 'bidirectional'}, seed {seed}")
            rows.append({
                "attention": "causal" if causal else "bidirectional", "seed": seed,
                "animal (cue on the right)": _cloze_accuracy(model, tok, test, 2, lambda p, s: p == s[1]),
                "verb (cue on the left)": _cloze_accuracy(model, tok, test, 3, lambda p, s: p in CLOZE_LEXICON[s[1]]),
                "final_loss": sum(losses[-20:]) / 20,
            })
    chance = {"animal (cue on the right)": 1 / len(CLOZE_LEXICON)}
    return {"experiment": "bidirectional", "rows": rows, "chance": chance, "steps": steps,
            "seconds": time.perf_counter() - t0}


# ----------------------------------------------------------------------------- 2. the [MASK] mismatch
@torch.no_grad()
def no_mask_scores(model, batch: dict, tok: BertTokenizer, seed: int = 7, share: float = 0.15) -> dict:
    """How a model reads input that holds no [MASK], as at fine-tuning time, on held-out pairs.

    ``copy``: at 15% of the positions of clean input, is the top prediction the token that is there?
    ``repair``: 15% of the positions replaced by random pieces (no [MASK] anywhere): is the top prediction
    at those positions the original token?
    ``masked``: the usual MLM accuracy (80/10/10 input) for reference.
    """
    g = torch.Generator().manual_seed(seed)
    clean = batch["input_ids"].clone()
    clean[batch["labels"] != IGNORE_INDEX] = batch["labels"][batch["labels"] != IGNORE_INDEX]  # undo the masking
    eligible = batch["attention_mask"].bool() & ~torch.isin(clean, torch.tensor(tok.all_special_ids))
    pick = eligible & (torch.rand(clean.shape, generator=g) < share)  # (B, T)
    randoms = torch.randint(len(tok.all_special_ids), tok.vocab_size, clean.shape, generator=g)
    corrupted = torch.where(pick, randoms, clean)

    def accuracy(inputs) -> float:
        right = total = 0
        for s in range(0, len(inputs), 256):
            sl = slice(s, s + 256)
            h = model.bert(inputs[sl], batch["attention_mask"][sl], batch["token_type_ids"][sl]).last_hidden_state
            logits = model.cls.predictions(h[pick[sl]])  # (N, V) at the picked positions only
            right += int((logits.argmax(-1) == clean[sl][pick[sl]]).sum())
            total += int(pick[sl].sum())
        return right / total

    return {"copy": accuracy(clean), "repair": accuracy(corrupted),
            "masked": evaluate(model, batch)["mlm_accuracy"]}


class _Snapshots:
    """An ``on_step`` hook for ``pretrain``: the weights after every ``every``-th update, kept in memory (small
    models only). It reads the weights and changes nothing, so the run is the run without it."""

    def __init__(self, every: int):
        self.every, self.states = every, {}

    def __call__(self, step: int, model, batch=None) -> None:
        if step and step % self.every == 0:  # called before update ``step``: the model has taken ``step`` updates
            self.states[step] = {k: v.detach().clone() for k, v in model.state_dict().items()}


# A linear head trained alone on fixed features takes larger steps than a whole model being fine-tuned
# (at the fine-tuning rate, 1e-3, it barely leaves "all O" in the budget).
FEATURE_LR = 3e-2


def _transfer_scores(model, tokenizer, task: str, seed: int, train_size: int | None = None,
                     feature_based: bool = True, baselines: bool = False) -> dict:
    """The paper's two uses of a pretrained model (Table 8's NER columns) on ``task``: fine-tuned, every weight
    trained; and (``feature_based``) the encoder frozen and only a linear head trained on its last layer (at
    ``FEATURE_LR``). ``baselines``: also the task's simple baselines on the same labelled sample."""
    import tempfile

    from bertlib.training.checkpoint import save_checkpoint

    with tempfile.TemporaryDirectory(prefix="bertlib-mask-recipe-") as tmp:
        save_checkpoint(model, tokenizer, f"{tmp}/model")
        tuned = finetune_task(task, f"{tmp}/model", seed=seed, baselines=baselines, train_size=train_size)
        out = {"fine_tuned": tuned["scores"]["f1"]}
        if baselines:
            out["baselines"] = {name: b["f1"] for name, b in tuned["baselines"].items()}
        if feature_based:
            out["feature_based"] = finetune_task(task, f"{tmp}/model", seed=seed, baselines=False, train_size=train_size,
                                                 feature_based=True, lr=FEATURE_LR)["scores"]["f1"]
    return out


def mask_mismatch(steps: int = 400, batch_size: int = 64, seeds=(0, 1, 2), width: int = 64, match_every: int = 25,
                  match_pairs: int = 512, task: str = "code_spans", train_size: int | None = 200,
                  transfer: bool = True, progress: bool = False) -> dict:
    """The paper's Table 8 at small scale: pretrain on the real corpus (the book's recipe, short sequences only,
    at ``width``), same steps, with 80% [MASK] / 10% random / 10% unchanged and with 100% [MASK]; probe each on
    input without [MASK] (``no_mask_scores``); then (``transfer``) use each as the paper did, fine-tuned and
    feature-based, on the token-tagging task ``task`` (span F1; the paper's NER; ``train_size`` labelled
    sentences, None for all), next to two references on the same sample: the same architecture fine-tuned from
    its initial weights (``"untrained"``, no pretraining at all) and the task's baselines. Once per seed of
    ``seeds``: the rows "80/10/10" and "100% [MASK]" at ``steps`` and "80/10/10" at matched skill.

    At this scale the 100%-[MASK] model learns MLM more slowly, so the two at the same step differ in how much
    they learned as well as in their recipe. The probes are therefore also taken at **matched skill**: the
    80/10/10 run at the earliest multiple of ``match_every`` steps at which its held-out MLM accuracy, on the
    first ``match_pairs`` held-out pairs, reached the 100%-[MASK] model's final one there. ``baseline``:
    always answering the most frequent training piece."""
    t0 = time.perf_counter()
    data = load_pretraining_data()
    rows, references = [], []
    for seed in seeds:
        base = dataclasses.replace(PretrainConfig(), steps=steps, batch_size=batch_size, seed=seed, long_seq_len=None,
                                   eval_every=0, hidden_size=width, num_attention_heads=max(2, width // 32),
                                   intermediate_size=4 * width)
        heldout = heldout_pairs(data, base)
        search = {k: v[:match_pairs] for k, v in heldout.items()}  # a cheaper yardstick for the search
        torch.manual_seed(seed)
        untrained = BertForPreTraining(base.model_config(data.tokenizer.vocab_size)).eval()  # as pretrain starts
        runs, snapshots = {}, _Snapshots(match_every)
        for name, m, r in (("80/10/10", 0.8, 0.1), ("100% [MASK]", 1.0, 0.0)):
            cfg = dataclasses.replace(base, mask_replace_prob=m, random_replace_prob=r)
            runs[name] = pretrain(cfg, progress=progress, data=data, on_step=snapshots if name == "80/10/10" else None)
        target = evaluate(runs["100% [MASK]"].model.eval(), search)["mlm_accuracy"]
        matched = BertForPreTraining(base.model_config(data.tokenizer.vocab_size)).eval()
        matched_step = steps
        for step in sorted(snapshots.states):
            matched.load_state_dict(snapshots.states[step])
            if evaluate(matched, search)["mlm_accuracy"] >= target:
                matched_step = step
                break
        else:
            matched = runs["80/10/10"].model
        models = [("80/10/10", "same step", steps, runs["80/10/10"].model),
                  ("80/10/10", "matched skill", matched_step, matched),
                  ("100% [MASK]", "same step", steps, runs["100% [MASK]"].model)]
        for name, at, step, model in models:
            model.eval()
            row = {"masking": name, "at": at, "steps": step, "seed": seed, **no_mask_scores(model, heldout, data.tokenizer)}
            if transfer and at == "same step":  # the transfer at the end of both runs (the paper's comparison)
                row.update(_transfer_scores(model, data.tokenizer, task, seed, train_size))
            rows.append(row)
        if transfer:
            ref = _transfer_scores(untrained, data.tokenizer, task, seed, train_size, feature_based=False, baselines=True)
            references.append({"seed": seed, "untrained": ref["fine_tuned"], **ref["baselines"]})
    return {"experiment": "mask_mismatch", "rows": rows, "references": references, "steps": steps, "task": task,
            "train_size": train_size, "seeds": list(seeds), "baseline": runs["80/10/10"].metrics["mlm_unigram_baseline"],
            "seconds": time.perf_counter() - t0}


# ----------------------------------------------------------------------------- 3. masking rate
def mask_rate(rates=(0.05, 0.15, 0.25, 0.40), steps: int = 200, batch_size: int = 64, seeds=(0, 1, 2),
              width: int = 64, progress: bool = False) -> dict:
    """Pretrain on the real corpus (the book's recipe, short sequences only; at ``width`` 64, half the book
    model's, so that a minute buys enough steps) with each masking rate, same steps, once per seed; score all on
    the same held-out data masked at 15% with 80/10/10."""
    t0 = time.perf_counter()
    data = load_pretraining_data()
    rows = []
    for seed in seeds:
        for rate in rates:
            cfg = dataclasses.replace(PretrainConfig(), steps=steps, batch_size=batch_size, seed=seed, mask_prob=rate,
                                      long_seq_len=None, eval_every=0, hidden_size=width, num_attention_heads=2,
                                      intermediate_size=4 * width)
            res = pretrain(cfg, progress=progress, data=data)
            m = res.metrics
            rows.append({"mask_prob": rate, "seed": seed, "mlm_accuracy": m["mlm_accuracy"],
                         "heldout_mlm_loss": m["heldout_mlm_loss"], "nsp_accuracy": m["nsp_accuracy"],
                         "predictions_per_step": rate * batch_size * cfg.seq_len, "seconds": m["seconds"]})
    return {"experiment": "mask_rate", "rows": rows, "steps": steps, "seeds": list(seeds),
            "baseline": res.metrics["mlm_unigram_baseline"], "seconds": time.perf_counter() - t0}


# ----------------------------------------------------------------------------- 4. NSP and two sentence-pair tasks
def _pair_batch(pairs, tok, seq_len):
    """[CLS] A [SEP] B [SEP] for (tokens_a, tokens_b, label) triples."""
    examples = [NspExample(list(a), list(b), bool(y)) for a, b, y in pairs]
    return encode_examples(examples, tok, seq_len)


def _pair_task(clf, train_set: dict, test_set: dict, seed: int) -> float:
    """Fine-tune ``clf`` on the pair task's labelled pairs; its accuracy on the held-out pairs."""
    train_epochs(clf, {**{k: train_set[k] for k in ("input_ids", "token_type_ids", "attention_mask")},
                       "labels": train_set["next_sentence_label"]}, epochs=20, lr=1e-3, batch_size=16, seed=seed)
    with torch.no_grad():
        logits = clf(test_set["input_ids"], test_set["attention_mask"], test_set["token_type_ids"]).logits
    return float((logits.argmax(-1) == test_set["next_sentence_label"]).float().mean())


def nsp(steps: int = 300, batch_size: int = 64, train_pairs: int = 64, seeds=(0, 1, 2), num_topics: int = 8,
        control_pairs: int = 256, progress: bool = False) -> dict:
    """Pretrain with MLM + NSP and with MLM only on synthetic topical documents, same budget; then fine-tune
    each, the same way, on two sentence-pair tasks from new documents. Do sentences A and B share a topic
    (``pair_task_accuracy``, ``train_pairs`` labels)? That is NSP's own shortcut: its NotNext segments come from
    another document, so mostly another topic. The control (``restate_task_accuracy``, ``control_pairs``
    labels: it is harder): is B sentence A's own words reordered, or another sentence of A's document? Both
    come from one document, so a topic tells nothing; a paraphrase question, as MRPC is in the paper's Table 5.
    Also the topic task fine-tuned from a fresh pooler (``pair_task_accuracy_fresh_pooler``): only NSP trains
    BERT's pooler."""
    t0 = time.perf_counter()
    seq_len = 32
    rows = []
    for seed in seeds:
        rng = random.Random(seed)
        docs, doc_topics, words = topical_documents(num_topics, 30, rng)
        tok = word_tokenizer(list(DEFAULT_SPECIAL_TOKENS.values()) + words)
        ids = [[tok.convert_tokens_to_ids(s) for s in d] for d in docs]
        # the pair task: its sentences come from fresh documents, half the pairs share a topic
        test_docs, test_topics, _ = topical_documents(num_topics, 10, random.Random(seed + 100))

        def pairs(n, r):
            out = []
            for _ in range(n):
                i = r.randrange(len(test_docs))
                same = r.random() < 0.5
                js = [j for j in range(len(test_docs)) if (test_topics[j] == test_topics[i]) == same and j != i]
                j = r.choice(js)
                a, b = r.choice(test_docs[i]), r.choice(test_docs[j])
                out.append((tok.convert_tokens_to_ids(a), tok.convert_tokens_to_ids(b), int(not same)))
            return out

        def restate_pairs(n, r):  # the control: A, then its own words reordered or another sentence of its document
            out = []
            for _ in range(n):
                doc = r.choice(test_docs)
                i, j = r.sample(range(len(doc)), 2)
                other = r.random() < 0.5
                b = list(doc[j]) if other else r.sample(doc[i], len(doc[i]))
                out.append((tok.convert_tokens_to_ids(doc[i]), tok.convert_tokens_to_ids(b), int(other)))
            return out

        train_set = _pair_batch(pairs(train_pairs, random.Random(seed + 200)), tok, seq_len)
        test_set = _pair_batch(pairs(1000, random.Random(seed + 300)), tok, seq_len)
        restate_train = _pair_batch(restate_pairs(control_pairs, random.Random(seed + 400)), tok, seq_len)
        restate_test = _pair_batch(restate_pairs(1000, random.Random(seed + 500)), tok, seq_len)
        for use_nsp in (True, False):
            cfg = PretrainConfig(seq_len=seq_len, **SMALL)
            torch.manual_seed(seed)
            model = BertForPreTraining(cfg.model_config(tok.vocab_size))
            pairs_stream = NspBatches(ids, tok, seq_len, batch_size, random.Random(seed), short_seq_prob=0.0)
            gen = torch.Generator().manual_seed(seed)

            def make_batch(step):
                return mask_batch(next(pairs_stream), tok, gen)

            _pretrain_steps(model, make_batch, steps, 3e-3, nsp=use_nsp, seed=seed,
                         progress=progress and f"{'MLM + NSP' if use_nsp else 'MLM only'}, seed {seed}")
            # fine-tune: the pretrained encoder and pooler, a new 2-way classifier
            clf = BertForSequenceClassification(model.config.replace(num_labels=2))
            clf.bert.load_state_dict(model.bert.state_dict())
            accuracy = _pair_task(clf, train_set, test_set, seed)
            # the control: only NSP trains BERT's pooler, so the MLM-only model brings an untrained one. Here
            # both recipes get the same fresh pooler and classifier (seeded alike), the pretrained rest kept.
            torch.manual_seed(seed + 1)
            fresh = BertForSequenceClassification(model.config.replace(num_labels=2))
            encoder = {k: v for k, v in model.bert.state_dict().items() if not k.startswith("pooler.")}
            missing, unexpected = fresh.bert.load_state_dict(encoder, strict=False)
            assert not unexpected and all(k.startswith("pooler.") for k in missing), (missing, unexpected)
            fresh_accuracy = _pair_task(fresh, train_set, test_set, seed)
            # the control task, fine-tuned as the topic task was: the pretrained encoder and pooler, a new classifier
            clf = BertForSequenceClassification(model.config.replace(num_labels=2))
            clf.bert.load_state_dict(model.bert.state_dict())
            rows.append({"pretraining": "MLM + NSP" if use_nsp else "MLM only", "seed": seed,
                         "pair_task_accuracy": accuracy, "pair_task_accuracy_fresh_pooler": fresh_accuracy,
                         "restate_task_accuracy": _pair_task(clf, restate_train, restate_test, seed)})
    return {"experiment": "nsp", "rows": rows, "train_pairs": train_pairs, "control_pairs": control_pairs,
            "steps": steps, "seconds": time.perf_counter() - t0}


# ----------------------------------------------------------------------------- 5. few labels
def few_labels(model: str, sizes=(25, 100, 400), seeds=(0, 1, 2), task: str = "docstring_topics",
               epochs: int = 10, progress: bool = False) -> dict:
    """Fine-tune the same architecture from a pretrained checkpoint and from scratch on ``sizes`` labelled
    examples (seeded samples), same recipe; held-out accuracy for each."""
    t0 = time.perf_counter()
    rows = []
    for n in sizes:
        for seed in seeds:
            for name, source in (("pretrained", model), ("from scratch", "scratch")):
                r = finetune_task(task, source, train_size=n, seed=seed, epochs=epochs, baselines=False,
                             tokenizer_dir=model if source == "scratch" else None, progress=progress)
                rows.append({"init": name, "train_examples": n, "seed": seed, **r["scores"], "seconds": r["seconds"]})
    return {"experiment": "few_labels", "task": task, "rows": rows, "seconds": time.perf_counter() - t0}


EXPERIMENTS = {"bidirectional": bidirectional, "mask_mismatch": mask_mismatch, "mask_rate": mask_rate, "nsp": nsp,
               "few_labels": few_labels}
FULL = {  # the larger versions, for readers with more time
    "bidirectional": dict(steps=2000, seeds=(0, 1, 2, 3, 4)),
    "mask_mismatch": dict(steps=1800, width=128, train_size=None),
    "mask_rate": dict(steps=2000, width=128),
    "nsp": dict(steps=2000, seeds=(0, 1, 2, 3, 4), train_pairs=128, control_pairs=512),
    "few_labels": dict(sizes=(25, 50, 100, 200, 400, 800, 1319), seeds=(0, 1, 2)),
}


def main(argv=None) -> None:
    """The command: one experiment, its table as the last line of stdout (JSON)."""
    p = argparse.ArgumentParser(prog="python -m projects.pretraining_experiments", description=__doc__.split("\n\n")[0])
    p.add_argument("name", choices=sorted(EXPERIMENTS), help="which experiment (chapter 12 shows each)")
    p.add_argument("--full", action="store_true", help="the larger version (minutes to tens of minutes)")
    p.add_argument("--model", help="few_labels: the pretrained checkpoint directory (python -m bertlib.pretrain --out)")
    p.add_argument("--threads", type=cli.non_negative_int, help="torch threads (default: torch's choice)")
    p.add_argument("--no-progress", action="store_true", help="no progress bars")
    a = p.parse_args(argv)
    if a.name == "few_labels":
        if not a.model:
            p.error("few_labels needs --model DIR, a checkpoint written by python -m bertlib.pretrain --out DIR")
        problem = model_dir_problem(a.model)
        if a.model in ("scratch", "minilm"):  # the checkpoint's vocabulary is also the from-scratch model's
            problem = f"{a.model}: few_labels needs the folder of a checkpoint, with its vocab.txt"
        if problem is not None:
            p.error(f"--model {problem}")
    elif a.model:
        p.error(f"--model is for few_labels only; {a.name} trains its own models")
    if a.threads:
        torch.set_num_threads(a.threads)
    kwargs = dict(FULL[a.name]) if a.full else {}
    kwargs["progress"] = not a.no_progress
    if a.name == "few_labels":
        kwargs["model"] = a.model
    result = EXPERIMENTS[a.name](**kwargs)
    print(json.dumps(result), flush=True)


if __name__ == "__main__":
    main()
