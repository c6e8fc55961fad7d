"""Chapter 11's demo (course/demos/pretraining.py): fill-mask snapshots recorded during a run.

Live callbacks (what a slider calls in Jupyter) are called with several values; each static demo state's caption
is checked against an independent computation with bertlib. The page test (tests/test_pages.py) checks the
same captions in the built book."""
from __future__ import annotations


import pytest
import torch

from bertlib.training.pretrain import pretrain
from bertlib.training.pretrain_config import PretrainConfig
from bertlib.training.pretraining_data import load_pretraining_data
from course.demos import pretraining as pretraining_demo
from course.demos import pretraining_checkpoints
from demo_checks import check_editions, check_page_parts


TINY = PretrainConfig(steps=30, batch_size=16, seq_len=32, hidden_size=32, num_hidden_layers=1,
                      num_attention_heads=2, intermediate_size=64, lr=3e-3, eval_every=10, threads=1,
                      dropout=0.1)


@pytest.fixture(scope="module")
def tiny_run():
    data = load_pretraining_data()
    snapshots = pretraining_demo.FillMaskSnapshots(data.tokenizer, every=TINY.eval_every)
    with_hook = pretrain(TINY, progress=False, data=data, on_step=snapshots)
    snapshots.record(TINY.steps, with_hook.model)
    without = pretrain(TINY, progress=False, data=data)
    return data, snapshots, with_hook, without


def test_pretraining_snapshots_do_not_change_the_run(tiny_run):
    _, snapshots, a, b = tiny_run
    assert [r["mlm_loss"] for r in a.history] == [r["mlm_loss"] for r in b.history]
    assert a.metrics["mlm_accuracy"] == b.metrics["mlm_accuracy"]
    for (name, p), q in zip(a.model.named_parameters(), b.model.parameters()):
        assert torch.equal(p, q), name
    assert sorted(snapshots.snapshots) == [0, 10, 20, 30]


def test_pretraining_final_snapshot_is_the_trained_model_fill_mask(tiny_run):
    from bertlib import BertForMaskedLM

    data, snapshots, a, _ = tiny_run
    mlm = BertForMaskedLM(a.model.config)
    mlm.load_state_dict(a.model.state_dict(), strict=False)  # the same encoder and MLM head
    mlm.eval()
    tok = data.tokenizer
    for text, top in zip(pretraining_demo.PROMPTS, snapshots.snapshots[TINY.steps]):
        enc = tok(text, return_tensors="pt")
        position = enc["input_ids"][0].tolist().index(tok.mask_token_id)
        with torch.no_grad():
            probs = mlm(**enc).logits[0, position].softmax(-1)
        assert [piece for piece, _ in top] == tok.convert_ids_to_tokens(probs.topk(5).indices.tolist())
        assert [p for _, p in top] == pytest.approx(probs.topk(5).values.tolist(), abs=1e-5)


def test_static_states(tiny_run):
    _, snapshots, a, _ = tiny_run
    (demo,) = pretraining_demo.static_demos(a.history, snapshots, a.metrics["mlm_unigram_baseline"])
    assert demo.demo_id == "pretraining-checkpoints" and demo.n_states == 4
    check_page_parts(demo)
    for steps in (0, 10, 30):
        caption = demo.caption(steps_done=steps)
        record = a.history[max(steps, 1) - 1]
        assert f"training MLM loss {record['mlm_loss']:.2f}, NSP loss {record['nsp_loss']:.2f}" in caption
        assert caption.endswith(f"-> {snapshots.snapshots[steps][0][0][0]}")
        if steps:
            assert f"held-out MLM top-1 {record['heldout_mlm_accuracy']:.1%}" in caption
    assert demo.caption(steps_done=0).startswith("before training")
    with pytest.raises(ValueError, match="snapshots"):
        pretraining_demo.static_demos(a.history, {})


def test_pretraining_run_record_round_trips(tiny_run, tmp_path, monkeypatch):
    """The page test rebuilds chapter 11's demo from the record the chapter leaves: the same states."""
    _, snapshots, a, _ = tiny_run
    (direct,) = pretraining_demo.static_demos(a.history, snapshots, a.metrics["mlm_unigram_baseline"])
    path = pretraining_demo.save_run_record(a.history, snapshots, a.metrics["mlm_unigram_baseline"], tmp_path / "run.json")
    monkeypatch.setattr(pretraining_demo, "RUN_RECORD", path)
    (again,) = pretraining_demo.static_demos()
    assert again.payload() == direct.payload()
    with pytest.raises(FileNotFoundError, match="chapter 11"):
        pretraining_demo.load_run_record(tmp_path / "missing.json")
    with pytest.raises(ValueError, match="MASK"):
        pretraining_demo.FillMaskSnapshots(snapshots.tokenizer, every=10, prompts=["no mask here"])


def test_the_page_demo_in_both_editions(tiny_run):
    """Chapter 11 shows course.demos.pretraining_checkpoints' demo (the hook's module is in the runs' code
    version, so its words live there): in English the very states of the hook module's, in Chinese the same
    numbers in Chinese words (issue 31 §2)."""
    _, snapshots, a, _ = tiny_run
    (old,) = pretraining_demo.static_demos(a.history, snapshots, a.metrics["mlm_unigram_baseline"])
    (demo,) = pretraining_checkpoints.static_demos(a.history, snapshots, a.metrics["mlm_unigram_baseline"])
    assert demo.payload() == old.payload()
    check_editions(demo)
    assert demo.caption("zh_CN", steps_done=0).startswith("训练之前：训练 MLM 损失")
    with pytest.raises(ValueError, match="snapshots"):
        pretraining_checkpoints.static_demos(a.history, {})
