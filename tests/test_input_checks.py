"""The command lines check their arguments before any work, and a checkpoint is saved whole or not at all.

Each bad argument exits with status 2 and a message that names the option; the function that would do the
work is replaced by one that fails the test, so an argument checked only once training has begun is caught.
"""
import json
import os
import random
import signal
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest
import torch

from bertlib import BertConfig, BertForPreTraining, BertTokenizer
from bertlib.training import checkpoint, finetune, pretrain
from projects.pretraining_experiments import experiments
from bertlib.training.checkpoint import save_checkpoint
from bertlib.training.pretrain_config import PretrainConfig
from bertlib.training.pretraining_data import PretrainingData
from bertlib.training.run_control import TrainingInterrupted

ROOT = Path(__file__).resolve().parent.parent


def _no_work(*args, **kwargs):
    raise AssertionError("work started before the arguments were checked")


@pytest.fixture
def no_work(monkeypatch):
    """Whatever would read data or train fails the test."""
    for module, names in ((pretrain, ("pretrain", "load_pretraining_data")),
                          (finetune, ("finetune_task", "load_task", "load_model")),
                          (experiments, ("load_pretraining_data",))):
        for name in names:
            monkeypatch.setattr(module, name, _no_work)
    monkeypatch.setattr(experiments, "EXPERIMENTS", {k: _no_work for k in experiments.EXPERIMENTS})


def _rejected(main, argv, capsys) -> str:
    with pytest.raises(SystemExit) as e:
        main(argv)
    assert e.value.code == 2, f"{argv} exited with {e.value.code}"
    return capsys.readouterr().err


def _tiny_checkpoint(folder, max_positions=16, seed=0):
    """A small BertForPreTraining and its tokenizer, saved in ``folder``; returns the model."""
    words = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"] + [f"w{i}" for i in range(20)]
    tok = BertTokenizer({w: i for i, w in enumerate(words)})
    torch.manual_seed(seed)
    model = BertForPreTraining(BertConfig(vocab_size=len(words), hidden_size=8, num_hidden_layers=1,
                                          num_attention_heads=2, intermediate_size=16,
                                          max_position_embeddings=max_positions))
    save_checkpoint(model, tok, folder)
    return model, tok


def _same_weights(a, b):
    sa, sb = a.state_dict(), b.state_dict()
    return sa.keys() == sb.keys() and all(torch.equal(sa[k], sb[k]) for k in sa)


# ----------------------------------------------------------------------------- pretrain: one value at a time
@pytest.mark.parametrize("argv, message", [
    (["--steps", "0"], "argument --steps: must be a positive integer, got 0"),
    (["--steps", "-5"], "argument --steps: must be a positive integer, got -5"),
    (["--steps", "many"], "argument --steps: expected an integer"),
    (["--batch-size", "0"], "argument --batch-size: must be a positive integer"),
    (["--seq-len", "4"], "argument --seq-len: must be at least 5"),
    (["--long-seq-len", "-1"], "argument --long-seq-len: must be 0 or more"),
    (["--long-seq-len", "3"], "--long-seq-len must be 0 (no long phase) or at least 5"),
    (["--long-fraction", "1.5"], "argument --long-fraction: must be between 0 and 1, got 1.5"),
    (["--warmup", "1.2"], "argument --warmup: must be between 0 and 1, got 1.2"),
    (["--warmup", "-0.1"], "argument --warmup: must be between 0 and 1"),
    (["--lr", "0"], "argument --lr: must be a positive number"),
    (["--lr", "nan"], "argument --lr: expected a finite number"),
    (["--threads", "-1"], "argument --threads: must be 0 or more"),
    (["--hidden-size", "0"], "argument --hidden-size: must be a positive integer"),
    (["--layers", "0"], "argument --layers: must be a positive integer"),
    (["--heads", "0"], "argument --heads: must be a positive integer"),
    (["--heads", "3"], "--hidden-size 128 must be divisible by --heads 3"),
    (["--intermediate-size", "-4"], "argument --intermediate-size: must be a positive integer"),
    (["--dropout", "1.5"], "argument --dropout: must be between 0 and 1"),
    (["--init-range", "-0.1"], "argument --init-range: must be 0 or more"),
    (["--max-grad-norm", "0"], "argument --max-grad-norm: must be a positive number"),
    (["--weight-decay", "-0.01"], "argument --weight-decay: must be 0 or more"),
    (["--mask-prob", "0"], "--mask-prob must be above 0"),
    (["--mask-prob", "1.5"], "argument --mask-prob: must be between 0 and 1"),
    (["--mask-replace-prob", "-0.2"], "argument --mask-replace-prob: must be between 0 and 1"),
    (["--random-replace-prob", "2"], "argument --random-replace-prob: must be between 0 and 1"),
    (["--mask-replace-prob", "0.9", "--random-replace-prob", "0.2"], "--random-replace-prob 0.2 are shares"),
    (["--eval-every", "-1"], "argument --eval-every: must be 0 or more"),
], ids=lambda x: " ".join(x) if isinstance(x, list) else "")
def test_pretrain_rejects_bad_values_before_any_work(argv, message, no_work, capsys):
    assert message in _rejected(pretrain.main, argv, capsys)


def test_pretrain_batch_must_split_over_the_processes(no_work, capsys, monkeypatch):
    monkeypatch.setenv("WORLD_SIZE", "3")
    assert "--batch-size (64) must be divisible by the number of processes (3)" in _rejected(pretrain.main, [], capsys)


def test_pretrain_reports_every_problem_at_once(no_work, capsys):
    err = _rejected(pretrain.main, ["--heads", "3", "--mask-prob", "0", "--device", "gpu"], capsys)
    assert "--heads 3" in err and "--mask-prob" in err and "--device 'gpu'" in err


def test_pretrain_defaults_pass_the_checks(tmp_path):
    cfg, args = pretrain.parse_args(["--out", str(tmp_path / "run")])
    assert cfg == PretrainConfig() and not args.overwrite  # the book's run, unchanged


# ----------------------------------------------------------------------------- pretrain: --device
def test_unknown_device_name_is_explained(no_work, capsys):
    err = _rejected(pretrain.main, ["--device", "gpu"], capsys)
    assert "--device 'gpu' is not a device name torch knows" in err
    assert "torch says: Expected one of cpu, cuda" in err and "this machine has cpu" in err


def test_device_this_machine_lacks_is_explained(no_work, capsys):
    err = _rejected(pretrain.main, ["--device", "cuda:99"], capsys)
    assert "--device 'cuda:99' cannot be used on this machine (torch says:" in err
    assert "this machine has cpu" in err


# ----------------------------------------------------------------------------- pretrain: --out
def test_out_that_is_empty_is_refused(no_work, capsys):
    assert "--out '' is empty" in _rejected(pretrain.main, ["--out", ""], capsys)


def test_out_that_is_a_file_is_refused(no_work, capsys, tmp_path):
    (tmp_path / "notes.txt").write_text("mine")
    assert f"--out {tmp_path / 'notes.txt'} is a file, not a folder" in _rejected(
        pretrain.main, ["--out", str(tmp_path / "notes.txt")], capsys)
    assert "cannot be created" in _rejected(pretrain.main, ["--out", str(tmp_path / "notes.txt" / "run")], capsys)


def test_out_that_cannot_be_written_is_refused(no_work, capsys, tmp_path, monkeypatch):
    def refuse(*args, **kwargs):
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(checkpoint.tempfile, "mkdtemp", refuse)  # as if the folder were read-only, even for root
    err = _rejected(pretrain.main, ["--out", str(tmp_path / "runs" / "tiny")], capsys)
    assert f"--out {tmp_path / 'runs' / 'tiny'} cannot be written" in err and "Permission denied" in err


@pytest.mark.skipif(os.name != "posix" or os.geteuid() == 0, reason="root writes into read-only folders")
def test_out_in_a_read_only_folder_is_refused(no_work, capsys, tmp_path):
    locked = tmp_path / "locked"
    locked.mkdir(mode=0o500)
    try:
        assert "cannot be written" in _rejected(pretrain.main, ["--out", str(locked / "run")], capsys)
    finally:
        locked.chmod(0o700)


def test_out_holding_a_checkpoint_needs_overwrite(no_work, capsys, tmp_path):
    _tiny_checkpoint(tmp_path / "run")
    err = _rejected(pretrain.main, ["--out", str(tmp_path / "run")], capsys)
    assert "holds a checkpoint already" in err and "--overwrite" in err
    cfg, args = pretrain.parse_args(["--out", str(tmp_path / "run"), "--overwrite"])
    assert args.overwrite


def test_out_holding_other_files_is_never_replaced(no_work, capsys, tmp_path):
    (tmp_path / "thesis.tex").write_text("years of work")
    err = _rejected(pretrain.main, ["--out", str(tmp_path), "--overwrite"], capsys)
    assert "holds files that are not a checkpoint's (thesis.tex)" in err
    assert (tmp_path / "thesis.tex").read_text() == "years of work"


def test_library_pretrain_checks_out_before_training(tmp_path):
    (tmp_path / "file").write_text("")
    with pytest.raises(ValueError, match="is a file"):
        pretrain.pretrain(PretrainConfig(steps=1), out=tmp_path / "file", data=_NO_DATA)


_NO_DATA = object()  # never looked at: the check comes first


# ----------------------------------------------------------------------------- finetune and experiments
@pytest.mark.parametrize("argv, message", [
    (["--epochs", "0"], "argument --epochs: must be a positive integer, got 0"),
    (["--epochs", "-2"], "argument --epochs: must be a positive integer"),
    (["--batch-size", "0"], "argument --batch-size: must be a positive integer"),
    (["--train-size", "0"], "argument --train-size: must be a positive integer"),
    (["--train-size", "-16"], "argument --train-size: must be a positive integer"),
    (["--lr=-1e-3"], "argument --lr: must be a positive number"),
    (["--max-length", "0"], "argument --max-length: must be at least 3"),
    (["--max-length", "10000"], "--max-length 10000 is more than the 512 positions of --model scratch"),
    (["--max-length", "513", "--model", "minilm"], "--max-length 513 is more than the 512 positions of --model minilm"),
    (["--threads", "-1"], "argument --threads: must be 0 or more"),
    (["--model", "nowhere"], "--model nowhere is not a folder"),
], ids=lambda x: " ".join(x) if isinstance(x, list) else "")
def test_finetune_rejects_bad_values_before_any_work(argv, message, no_work, capsys):
    assert message in _rejected(finetune.main, ["--task", "docstring_topics", *argv], capsys)


def test_finetune_max_length_must_fit_the_checkpoint(no_work, capsys, tmp_path):
    _tiny_checkpoint(tmp_path, max_positions=16)
    err = _rejected(finetune.main, ["--task", "code_spans", "--model", str(tmp_path), "--max-length", "17"], capsys)
    assert f"--max-length 17 is more than the 16 positions of --model {tmp_path}" in err


def test_finetune_library_refuses_a_length_the_model_lacks():
    with pytest.raises(ValueError, match="max_length=10000 is more than the 512 positions of 'scratch'"):
        finetune.finetune_task("docstring_topics", "scratch", max_length=10_000)


def test_finetune_model_folder_must_be_a_checkpoint(no_work, capsys, tmp_path):
    err = _rejected(finetune.main, ["--task", "docstring_topics", "--model", str(tmp_path)], capsys)
    assert f"--model {tmp_path} is not a checkpoint: it has no config.json, vocab.txt, model.safetensors" in err
    _tiny_checkpoint(tmp_path)
    (tmp_path / "config.json").write_text('{"hidden_size": ')
    err = _rejected(finetune.main, ["--task", "docstring_topics", "--model", str(tmp_path)], capsys)
    assert "config.json is not valid JSON" in err


@pytest.mark.parametrize("argv, message", [
    (["few_labels"], "few_labels needs --model DIR"),
    (["few_labels", "--model", "nowhere"], "--model nowhere is not a folder"),
    (["few_labels", "--model", "scratch"], "few_labels needs the folder of a checkpoint"),
    (["nsp", "--model", "runs/tiny"], "--model is for few_labels only"),
    (["nsp", "--threads", "-2"], "argument --threads: must be 0 or more"),
], ids=lambda x: " ".join(x) if isinstance(x, list) else "")
def test_experiments_reject_bad_values_before_any_work(argv, message, no_work, capsys):
    assert message in _rejected(experiments.main, argv, capsys)


def test_baselines_take_a_sample_that_lacks_a_test_label():
    """`finetune --train-size 16 --task docstring_topics` crashed in the baselines after training."""
    train, test = finetune.load_task("docstring_topics")
    sample = finetune.seeded_sample(train, 16, 0)
    assert set(finetune.label_names(test)) - set(finetune.label_names(sample))  # the case that crashed
    base = finetune.classification_baselines(sample, test)
    assert 0 <= base["bag_of_words"]["accuracy"] <= 1 and 0 <= base["majority"]["accuracy"] <= 1
    # with every label in the sample, the numbers are those of before (the book's 0.170 and 0.775)
    full = finetune.classification_baselines(train, test)
    assert round(full["majority"]["accuracy"], 3) == 0.170 and round(full["bag_of_words"]["accuracy"], 3) == 0.775


def test_finetune_train_size_16_runs_to_the_end():
    r = finetune.finetune_task("docstring_topics", "scratch", train_size=16, epochs=1)
    assert r["train_examples"] == 16 and r["baselines"]["bag_of_words"]["accuracy"] > 0


# ----------------------------------------------------------------------------- saving, whole or not at all
def test_checkpoint_files_have_ordinary_permissions(tmp_path):
    old = os.umask(0o022)
    try:
        _tiny_checkpoint(tmp_path / "run")
    finally:
        os.umask(old)
    modes = {p.name: p.stat().st_mode & 0o777 for p in (tmp_path / "run").iterdir()}
    assert modes == {name: 0o644 for name in ("config.json", "model.safetensors", "vocab.txt",
                                              "tokenizer_config.json")}, modes
    assert (tmp_path / "run").stat().st_mode & 0o777 == 0o755
    assert sorted(p.name for p in tmp_path.iterdir()) == ["run"]  # no temporary folder left


def test_a_save_that_fails_midway_leaves_the_previous_checkpoint(tmp_path, monkeypatch):
    out = tmp_path / "run"
    first, tok = _tiny_checkpoint(out, seed=0)
    before = {p.name: p.read_bytes() for p in out.iterdir()}
    second = BertForPreTraining(first.config)
    torch.manual_seed(1)
    second.post_init()
    assert not _same_weights(first, second)

    import bertlib.weights

    def half_then_killed(state, path, metadata=None):
        Path(path).write_bytes(b"\x00" * 100)  # half a file...
        raise KeyboardInterrupt  # ...and the process is stopped

    monkeypatch.setattr(bertlib.weights, "save_file", half_then_killed)
    with pytest.raises(KeyboardInterrupt):
        save_checkpoint(second, tok, out, {"steps": 1}, [])
    assert {p.name: p.read_bytes() for p in out.iterdir()} == before
    assert _same_weights(BertForPreTraining.from_pretrained(out), first)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["run"]  # the temporary folder is cleaned up

    monkeypatch.undo()
    save_checkpoint(second, tok, out, {"steps": 1}, [])  # a save that completes replaces it
    assert _same_weights(BertForPreTraining.from_pretrained(out), second)
    assert json.loads((out / "metrics.json").read_text())["metrics"] == {"steps": 1}
    assert sorted(p.name for p in tmp_path.iterdir()) == ["run"]


_KILLED_SAVE = """
import os, signal, sys
from pathlib import Path
import torch
import bertlib.weights
from bertlib import BertForPreTraining
from bertlib.training.checkpoint import save_checkpoint
from bertlib.tokenizer import BertTokenizer

out = Path(sys.argv[1])
model = BertForPreTraining.from_pretrained(out)
with torch.no_grad():
    for p in model.parameters():
        p.add_(1.0)

def killed(state, path, metadata=None):
    Path(path).write_bytes(b"\\x00" * 100)
    os.kill(os.getpid(), signal.SIGKILL)  # no except, no finally: a real kill

bertlib.weights.save_file = killed
save_checkpoint(model, BertTokenizer.from_pretrained(out), out)
"""


@pytest.mark.skipif(os.name != "posix", reason="SIGKILL")
def test_a_killed_save_leaves_the_previous_checkpoint_loadable(tmp_path):
    out = tmp_path / "run"
    first, _ = _tiny_checkpoint(out)
    proc = subprocess.run([sys.executable, "-c", _KILLED_SAVE, str(out)], cwd=ROOT, capture_output=True, text=True,
                          timeout=120, env={**os.environ, "OMP_NUM_THREADS": "1"})
    assert proc.returncode == -signal.SIGKILL, proc.stderr[-2000:]
    assert _same_weights(BertForPreTraining.from_pretrained(out), first)
    assert BertTokenizer.from_pretrained(out).vocab_size == first.config.vocab_size
    # what the kill left: the half-written copy, in a hidden folder beside the checkpoint
    assert [p.name.startswith(".run.tmp-") for p in tmp_path.iterdir() if p.name != "run"] == [True]


# ----------------------------------------------------------------------------- Ctrl-C
def _small_data() -> PretrainingData:
    words = [f"w{i}" for i in range(30)]
    tok = BertTokenizer({w: i for i, w in enumerate(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"] + words)})
    rng = random.Random(0)

    def docs(n):
        return [[[tok.vocab[rng.choice(words)] for _ in range(rng.randint(3, 8))] for _ in range(6)] for _ in range(n)]

    train = docs(20)
    counts = Counter(i for d in train for s in d for i in s)
    return PretrainingData(tok, train, docs(4), counts, {"source": "test"})


SMALL = PretrainConfig(steps=10, batch_size=8, seq_len=16, long_seq_len=None, hidden_size=16, num_hidden_layers=1,
                       num_attention_heads=2, intermediate_size=32, eval_every=0)


def _ctrl_c_at(step_to_stop, models):
    def on_step(step, model, batch):
        models.append(model)
        if step == step_to_stop:
            os.kill(os.getpid(), signal.SIGINT)
    return on_step


@pytest.mark.skipif(os.name != "posix", reason="SIGINT")
def test_ctrl_c_stops_after_the_step_and_saves_what_was_trained(tmp_path, capsys):
    models, handler = [], signal.getsignal(signal.SIGINT)
    with pytest.raises(TrainingInterrupted) as e:
        pretrain.pretrain(SMALL, progress=False, out=tmp_path / "run", data=_small_data(),
                          on_step=_ctrl_c_at(2, models))
    assert (e.value.steps_done, e.value.steps, e.value.saved_to) == (3, 10, str(tmp_path / "run"))
    assert isinstance(e.value, KeyboardInterrupt)  # a caller that does not know it stops too
    err = capsys.readouterr().err
    assert f"interrupted after step 3 of 10: saved the model trained so far to {tmp_path / 'run'}" in err
    saved = json.loads((tmp_path / "run" / "metrics.json").read_text())
    assert saved["metrics"]["interrupted"] is True and saved["metrics"]["steps_done"] == 3
    assert len(saved["history"]) == 3
    assert _same_weights(BertForPreTraining.from_pretrained(tmp_path / "run"), models[-1])
    assert signal.getsignal(signal.SIGINT) is handler  # Ctrl-C works as before afterwards


@pytest.mark.skipif(os.name != "posix", reason="SIGINT")
def test_ctrl_c_without_out_says_nothing_was_saved(tmp_path, capsys):
    with pytest.raises(TrainingInterrupted) as e:
        pretrain.pretrain(SMALL, progress=False, data=_small_data(), on_step=_ctrl_c_at(0, []))
    assert e.value.saved_to is None and e.value.steps_done == 1
    assert "interrupted after step 1 of 10: nothing saved (no output folder given)" in capsys.readouterr().err


def test_the_ctrl_c_handler_does_not_change_a_run():
    """In a thread no signal handler can be set: the same run there and in the main thread (with the handler)."""
    import threading

    results = []
    thread = threading.Thread(target=lambda: results.append(pretrain.pretrain(SMALL, progress=False,
                                                                             data=_small_data())))
    thread.start()
    thread.join()
    with_handler = pretrain.pretrain(SMALL, progress=False, data=_small_data())
    assert _same_weights(results[0].model, with_handler.model) and len(with_handler.history) == 10
    assert results[0].metrics["mlm_accuracy"] == with_handler.metrics["mlm_accuracy"]


def test_interrupted_command_line_exits_130_with_json_last(monkeypatch, capsys, tmp_path):
    def interrupted(cfg, **kwargs):
        raise TrainingInterrupted(3, cfg.steps, kwargs["out"])

    monkeypatch.setattr(pretrain, "pretrain", interrupted)
    with pytest.raises(SystemExit) as e:
        pretrain.main(["--out", str(tmp_path / "run"), "--steps", "10"])
    assert e.value.code == 130
    last = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert last == {"interrupted": True, "steps_done": 3, "steps": 10, "out": str(tmp_path / "run")}


@pytest.mark.slow
@pytest.mark.skipif(os.name != "posix", reason="SIGINT")
def test_ctrl_c_on_the_command_line_saves_and_says_so(tmp_path):
    import time

    err_file = tmp_path / "stderr"
    args = ["--steps", "1000000", "--batch-size", "8", "--hidden-size", "32", "--layers", "1", "--heads", "2",
            "--intermediate-size", "64", "--eval-every", "0", "--threads", "1", "--out", str(tmp_path / "run")]
    with open(err_file, "w") as err:
        proc = subprocess.Popen([sys.executable, "-m", "bertlib.pretrain", *args], cwd=ROOT, stdout=subprocess.PIPE,
                                stderr=err, text=True, env={**os.environ, "HF_HUB_OFFLINE": "1"})
        deadline = time.monotonic() + 240
        while "pretraining:" not in err_file.read_text() and time.monotonic() < deadline and proc.poll() is None:
            time.sleep(0.2)
        time.sleep(0.5)  # some steps
        proc.send_signal(signal.SIGINT)
        out, _ = proc.communicate(timeout=120)
    assert proc.returncode == 130, err_file.read_text()[-2000:]
    last = json.loads(out.strip().splitlines()[-1])
    assert last["interrupted"] is True and last["out"] == str(tmp_path / "run") and last["steps_done"] > 0
    assert "saved the model trained so far to" in err_file.read_text()
    saved = json.loads((tmp_path / "run" / "metrics.json").read_text())
    assert saved["metrics"]["steps_done"] == last["steps_done"] == len(saved["history"])
    BertForPreTraining.from_pretrained(tmp_path / "run")
