"""bertlib.training.corpus and bertlib.training.pretrain on small budgets: the loss goes down, the checkpoint round-trips through
transformers, the same seed gives the same run, and two processes under DDP take the step one process takes."""
import dataclasses
import json
import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from bertlib.training.corpus import Document, load_documents, split_documents, split_sentences
from bertlib.training.loop import linear_schedule
from projects.pretraining_experiments.synthetic import cloze_sentences
from bertlib.training.pretrain import pretrain
from bertlib.training.pretrain_config import PretrainConfig
from bertlib.training.pretraining_data import load_pretraining_data

ROOT = Path(__file__).resolve().parent.parent
os.environ.setdefault("HF_HUB_OFFLINE", "1")

# A model small enough that a step takes milliseconds: what is tested is the machinery, not the result.
TINY = PretrainConfig(steps=30, batch_size=16, seq_len=32, hidden_size=32, num_hidden_layers=1,
                      num_attention_heads=2, intermediate_size=64, lr=3e-3, eval_every=0, threads=1)


@pytest.fixture(scope="module")
def data():
    return load_pretraining_data()


# ----------------------------------------------------------------------------- corpus
def test_sentences_are_split_at_sentence_ends_and_tables_dropped():
    text = "The first one. The second one!\nStill the second? Third.\n\n+-----+-----+\n| a | b |\n\nNew paragraph"
    assert split_sentences(text) == ["The first one.", "The second one!", "Still the second?", "Third.",
                                     "New paragraph"]


def test_corpus_is_real_documentation_split_by_group():
    docs = load_documents()
    assert len(docs) > 400 and sum(len(d.sentences) for d in docs) > 20_000
    names = {d.name for d in docs}
    assert "topic:assert" in names and "module:email.parser" in names
    train, heldout = split_documents(docs, 0.1, seed=0)
    assert {d.group for d in train}.isdisjoint({d.group for d in heldout})
    share = sum(len(d.sentences) for d in heldout) / sum(len(d.sentences) for d in docs)
    assert 0.1 <= share < 0.15, share
    assert split_documents(docs, 0.1, seed=0) == (train, heldout)


def test_split_keeps_a_package_together():
    docs = [Document(f"module:{m}", f"module:{m.split('.')[0]}", ("x.",) * 10)
            for m in ["email.a", "email.b", "os", "json", "re", "io", "csv", "ssl", "abc", "ast"]]
    for seed in range(10):
        train, heldout = split_documents(docs, 0.2, seed=seed)
        sides = {d.name: d in heldout for d in docs}
        assert sides["module:email.a"] == sides["module:email.b"]


def test_compact_vocabulary_tokenizes_the_corpus_exactly_as_minilm(data):
    from bertlib.training.pretraining_data import minilm_tokenizer

    base = minilm_tokenizer()
    assert data.tokenizer.vocab_size < base.vocab_size / 3
    train, heldout = split_documents(load_documents(), 0.1, seed=0)
    for doc in train[::10]:
        for s in doc.sentences[:5]:
            assert data.tokenizer.tokenize(s) == base.tokenize(s)
    # a held-out word may need a piece the training text never used: it is spelt with shorter pieces, never
    # [UNK]. Which words those are depends on the interpreter's standard library (the corpus is its docstrings:
    # a Debian Python without tkinter gives another one), so they are found, not named.
    vocab = data.tokenizer.vocab
    words = {w for doc in heldout for s in doc.sentences for w in base.basic_tokenizer.tokenize(s)}
    respelt = sorted(w for w in words if any(p not in vocab for p in base.tokenize(w)))
    assert respelt, "no held-out word needs a piece the training text never used"
    for w in respelt[:50]:
        pieces = data.tokenizer.tokenize(w)
        assert pieces != base.tokenize(w) and "[UNK]" not in pieces, (w, pieces)
        assert "".join(p.removeprefix("##") for p in pieces) == w, (w, pieces)


def test_cloze_generator_is_seeded():
    import random

    assert cloze_sentences(5, random.Random(1)) == cloze_sentences(5, random.Random(1))


# ----------------------------------------------------------------------------- training
def test_schedule_warms_up_then_decays_to_zero():
    values = [linear_schedule(s, 100, 10) for s in range(101)]
    assert values[0] == pytest.approx(0.1) and values[9] == pytest.approx(1.0)
    assert all(a >= b for a, b in zip(values[9:], values[10:])) and values[100] == 0.0


def test_learning_rates_are_what_the_scheduler_gives_and_transformers_one_update_later():
    """Chapter 10 plots learning_rates: exactly the rates make_scheduler sets; transformers'
    get_linear_schedule_with_warmup is the same curve, one update later during the warm-up."""
    from bertlib.training.loop import learning_rates, make_optimizer, make_scheduler, warmup_steps

    total, peak = 47, 5e-5
    warmup = warmup_steps(total, 0.1)
    model = torch.nn.Linear(2, 2)
    optimizer = make_optimizer(model, peak, 0.01)
    scheduler = make_scheduler(optimizer, total, 0.1)
    given = []
    for _ in range(total):
        given.append(optimizer.param_groups[0]["lr"])
        optimizer.step()
        scheduler.step()
    ours = learning_rates(peak, total, 0.1)
    assert given == ours and warmup == 5 and ours[0] == peak / warmup and ours[warmup - 1] == peak
    transformers = pytest.importorskip("transformers")
    sgd = torch.optim.SGD([torch.zeros(1, requires_grad=True)], lr=peak)
    theirs_schedule = transformers.get_linear_schedule_with_warmup(sgd, warmup, total)
    theirs = []
    for _ in range(total + 1):
        theirs.append(sgd.param_groups[0]["lr"])
        sgd.step()
        theirs_schedule.step()
    assert theirs[0] == 0.0 and ours[:warmup] == pytest.approx(theirs[1:warmup + 1], rel=1e-12)
    assert ours[warmup:] == pytest.approx(theirs[warmup:total], rel=1e-12)


def test_seconds_per_step_warms_up_then_times_every_step_in_turns():
    """The one step timer (chapter 11's step timings, the benchmark): each function's warm-up calls first, then
    ``repeats`` turns in which each function is called ``n`` times in a row; a best time for each."""
    from bertlib.training.loop import seconds_per_step

    calls = []
    best = seconds_per_step({"a": lambda: calls.append("a"), "b": lambda: calls.append("b")}, 2, repeats=3, warmup=1)
    assert calls == ["a", "b"] + ["a", "a", "b", "b"] * 3
    assert set(best) == {"a", "b"} and all(0 <= s < float("inf") for s in best.values())


def test_one_pretraining_step_is_train_step_on_the_batch_the_hook_saw(data):
    """on_step gets the batch the step trains on, before the update: the same update again from the hook's
    weights, with the toolkit's train_step and pretraining_forward (its own count of masked tokens), gives
    the run's weights."""
    from functools import partial

    from bertlib import BertForPreTraining
    from bertlib.training.loop import make_optimizer, make_scheduler, train_step
    from bertlib.training.objective import pretraining_forward

    cfg = dataclasses.replace(TINY, steps=1)
    seen = {}

    def hook(step, model, batch):
        seen.update(state={k: v.clone() for k, v in model.state_dict().items()},
                    batch={k: v.clone() for k, v in batch.items()})

    trained = pretrain(cfg, progress=False, data=data, on_step=hook).model
    model = BertForPreTraining(cfg.model_config(data.tokenizer.vocab_size))
    model.load_state_dict(seen["state"])
    optimizer = make_optimizer(model, cfg.lr, cfg.weight_decay)
    scheduler = make_scheduler(optimizer, cfg.steps, cfg.warmup_fraction)
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        train_step(model, seen["batch"], optimizer, scheduler, forward=partial(pretraining_forward, nsp=cfg.nsp),
                   max_grad_norm=cfg.max_grad_norm)
    finally:
        torch.set_num_threads(threads)
    moved = 0
    for (name, ours), theirs in zip(trained.state_dict().items(), model.state_dict().values()):
        torch.testing.assert_close(ours, theirs, msg=name)
        moved += not torch.equal(ours, seen["state"][name])
    assert moved > len(seen["state"]) // 2  # the step did change the weights


def test_loss_goes_down(data):
    result = pretrain(dataclasses.replace(TINY, steps=60), progress=False, data=data)
    losses = [h["mlm_loss"] for h in result.history]
    assert losses[-1] < losses[0] - 0.5, (losses[0], losses[-1])
    assert result.metrics["mlm_accuracy"] >= result.metrics["mlm_unigram_baseline"] - 0.02


def _old_pretraining_loss(model, batch, mlm_count, nsp_count):
    """The loss pretraining used before the model took ``num_items_in_batch`` (issue 10, item 4): the model's
    own loss discarded and both cross-entropies recomputed from the logits, as sums over global counts."""
    import torch.nn.functional as F

    out = model(batch["input_ids"], batch["attention_mask"], batch["token_type_ids"], labels=batch["labels"],
                logits_only_at_labels=True)
    labels = batch["labels"][batch["labels"] != -100]  # (N,), the order of out.prediction_logits
    mlm = F.cross_entropy(out.prediction_logits, labels, reduction="sum") / max(1, mlm_count)
    ns = F.cross_entropy(out.seq_relationship_logits, batch["next_sentence_label"], reduction="sum") / nsp_count
    return mlm + ns


@pytest.mark.parametrize("world", [1, 2])
def test_the_models_loss_is_the_loss_pretraining_computed_before(data, world):
    """Pretraining now calls the model once and uses its loss (``num_items_in_batch``): the loss and every
    gradient are bit for bit those of the old recomputation, on the whole batch and on one process's half."""
    import random

    from bertlib import BertForPreTraining
    from bertlib.masking import mask_batch
    from bertlib.training.objective import pretraining_forward
    from bertlib.training.pretraining_data import NspBatches

    cfg = TINY
    stream = NspBatches(data.train_docs, data.tokenizer, cfg.seq_len, cfg.batch_size, random.Random(0), 0.1)
    batch = mask_batch(next(stream), data.tokenizer, torch.Generator().manual_seed(0), **cfg.masking)
    masked, B = int((batch["labels"] != -100).sum()), batch["input_ids"].size(0)
    local = {k: v[:B // world] for k, v in batch.items()}  # rank 0's rows
    torch.manual_seed(0)
    model = BertForPreTraining(cfg.model_config(data.tokenizer.vocab_size))
    grads = []
    for loss_of in (lambda: _old_pretraining_loss(model, local, masked / world, B / world),
                    lambda: pretraining_forward(model, local, nsp=True, num_items_in_batch=masked / world).loss):
        model.zero_grad()
        loss = loss_of()
        loss.backward()
        grads.append((loss.detach(), [p.grad.clone() for p in model.parameters()]))
    (old_loss, old_grads), (new_loss, new_grads) = grads
    assert torch.equal(old_loss, new_loss), (old_loss, new_loss)
    assert all(torch.equal(a, b) for a, b in zip(old_grads, new_grads))


def test_same_seed_same_run_other_seed_other_run(data):
    cfg = dataclasses.replace(TINY, steps=5, dropout=0.1)
    a = pretrain(cfg, progress=False, data=data)
    b = pretrain(cfg, progress=False, data=data)
    c = pretrain(dataclasses.replace(cfg, seed=1), progress=False, data=data)
    for (name, p), q in zip(a.model.named_parameters(), b.model.parameters()):
        assert torch.equal(p, q), name
    assert a.metrics["mlm_accuracy"] == b.metrics["mlm_accuracy"]
    assert [h["mlm_loss"] for h in a.history] == [h["mlm_loss"] for h in b.history]
    assert not torch.equal(a.model.cls.predictions.bias, c.model.cls.predictions.bias)


def test_checkpoint_round_trips_through_transformers(data, tmp_path):
    transformers = pytest.importorskip("transformers")
    result = pretrain(dataclasses.replace(TINY, steps=3), progress=False, data=data, out=tmp_path)
    assert {"config.json", "model.safetensors", "vocab.txt", "metrics.json"} <= {p.name for p in tmp_path.iterdir()}
    hf = transformers.BertForPreTraining.from_pretrained(tmp_path).eval()
    hf_tok = transformers.BertTokenizer.from_pretrained(tmp_path)
    texts = ["Return the absolute value of a number.", "The assert statement raises AssertionError."]
    ours = data.tokenizer(texts, padding=True, return_tensors="pt")
    theirs = hf_tok(texts, padding=True, return_tensors="pt")
    assert torch.equal(ours["input_ids"], theirs["input_ids"])
    with torch.no_grad():
        a = result.model.eval()(ours["input_ids"], ours["attention_mask"], ours["token_type_ids"])
        b = hf(**{k: theirs[k] for k in ("input_ids", "attention_mask", "token_type_ids")})
    torch.testing.assert_close(a.prediction_logits, b.prediction_logits, atol=1e-4, rtol=1e-4)
    torch.testing.assert_close(a.seq_relationship_logits, b.seq_relationship_logits, atol=1e-5, rtol=1e-5)


def test_causal_variant_cannot_do_nsp_from_cls(data):
    """[CLS] sits at position 0: under a causal mask it sees nothing else, so NSP stays at chance."""
    result = pretrain(dataclasses.replace(TINY, steps=40, causal=True), progress=False, data=data)
    assert result.metrics["nsp_accuracy"] <= result.metrics["nsp_majority_baseline"] + 1e-9


# ----------------------------------------------------------------------------- distributed
def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _one_step_worker(rank, world, port, cfg, out_dir):
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port), RANK=str(rank), WORLD_SIZE=str(world),
                      LOCAL_RANK=str(rank), BERTLIB_BACKEND="gloo")
    torch.set_num_threads(1)
    result = pretrain(cfg, progress=False)
    torch.save({k: v.detach().clone() for k, v in result.model.state_dict().items()}, f"{out_dir}/rank{rank}.pt")
    torch.distributed.destroy_process_group()


def test_two_processes_take_the_step_of_one_process_on_the_combined_batch(data, tmp_path):
    """DDP on the CPU (gloo): each process trains on half of the batch; after one step the parameters equal
    those of one process that saw the whole batch (the loss is normalised by the global count of masked
    tokens, so unequal halves do not matter)."""
    import torch.multiprocessing as mp

    cfg = dataclasses.replace(TINY, steps=1, batch_size=16, dropout=0.0)
    mp.spawn(_one_step_worker, args=(2, _free_port(), cfg, str(tmp_path)), nprocs=2, join=True)
    single = pretrain(cfg, progress=False, data=data).model.state_dict()
    initial = pretrain(dataclasses.replace(cfg, steps=0), progress=False, data=data).model.state_dict()
    for rank in (0, 1):
        ddp = torch.load(tmp_path / f"rank{rank}.pt")
        for name, value in single.items():
            torch.testing.assert_close(ddp[name], value, atol=1e-6, rtol=1e-5, msg=name)
    moved = sum(not torch.equal(initial[k], single[k]) for k in single)
    assert moved > len(single) // 2  # the step did change the parameters


# ----------------------------------------------------------------------------- command line
def _run(args, timeout=300):
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "OMP_NUM_THREADS": "1"}
    proc = subprocess.run(args, cwd=ROOT, env=env, capture_output=True, text=True, timeout=timeout)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return proc


SMALL_ARGS = ["--steps", "4", "--batch-size", "8", "--seq-len", "32", "--hidden-size", "32", "--layers", "1",
              "--heads", "2", "--intermediate-size", "64", "--eval-every", "2", "--threads", "1"]


def test_command_line_prints_json_last_and_saves(tmp_path):
    proc = _run([sys.executable, "-m", "bertlib.pretrain", *SMALL_ARGS, "--out", str(tmp_path)])
    summary = json.loads(proc.stdout.strip().splitlines()[-1])
    for key in ("mlm_accuracy", "nsp_accuracy", "mlm_unigram_baseline", "seconds"):
        assert isinstance(summary[key], float), key
    assert "pretraining" in proc.stderr  # the progress bar, with its running losses
    assert "mlm=" in proc.stderr and "nsp=" in proc.stderr
    assert json.loads((tmp_path / "metrics.json").read_text())["metrics"]["steps"] == 4


@pytest.mark.slow
def test_same_command_runs_under_torchrun(tmp_path):
    torchrun = Path(sys.executable).with_name("torchrun")
    proc = _run([str(torchrun), "--nproc-per-node", "2", "--master-port", str(_free_port()), "-m", "bertlib.pretrain",
                 *SMALL_ARGS, "--quiet", "--out", str(tmp_path)])
    lines = [line for line in proc.stdout.splitlines() if line.startswith("{")]
    assert len(lines) == 1  # only rank 0 reports
    assert json.loads(lines[0])["world_size"] == 2
    assert (tmp_path / "model.safetensors").is_file()
