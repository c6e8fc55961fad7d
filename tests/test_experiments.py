"""The five experiments of chapter 11 (bertlib.training.experiments) on small budgets: each returns the table the book
plots, the same seed gives the same table (also in a worker process of the book's build), and the
cheapest one shows its effect."""
from __future__ import annotations

import pytest
import torch

from bertlib.training import experiments as E
from course.build import worker_pool
from bertlib.training.pretrain import PretrainConfig, pretrain


@pytest.mark.full  # a minute of training: make check runs it, make test does not
def test_bidirectional_sees_the_cue_on_the_right_and_causal_does_not():
    r = E.bidirectional(steps=250, seeds=(0,))
    rows = {row["attention"]: row for row in r["rows"]}
    right, left = "animal (cue on the right)", "verb (cue on the left)"
    chance = r["chance"][right]
    assert rows["bidirectional"][right] > 0.8, rows
    assert rows["causal"][right] < chance + 0.1, rows  # it cannot see the verb that names the animal
    assert rows["causal"][left] > 0.8 and rows["bidirectional"][left] > 0.8, rows


def test_same_seed_same_table_also_in_a_build_worker():
    here = E.bidirectional(steps=20, batch_size=16, seeds=(1,))
    with worker_pool(1) as pool:
        there = pool.submit(E.bidirectional, steps=20, batch_size=16, seeds=(1,)).result()
        assert pool.submit(torch.get_num_threads).result() == 1
    # accuracies equal; the loss to float32 rounding (the test process may use more threads)
    for a, b in zip(here["rows"], there["rows"], strict=True):
        assert a["final_loss"] == pytest.approx(b.pop("final_loss"), rel=1e-6)
        assert {k: v for k, v in a.items() if k != "final_loss"} == b


def test_mask_mismatch_scores_both_recipes_fine_tuned_feature_based_and_without_mask():
    r = E.mask_mismatch(steps=4, batch_size=16, match_every=2, train_size=32)
    assert [(row["masking"], row["steps"]) for row in r["rows"]] == [
        ("80/10/10", 4), ("80/10/10", r["matched_step"]), ("100% [MASK]", 4)]
    assert r["matched_step"] in (2, 4)
    for row in r["rows"]:
        assert all(0.0 <= row[k] <= 1.0 for k in ("copy", "repair", "masked", "fine_tuned", "feature_based")), row
    assert 0.0 < r["baseline"] < 1.0


def test_feature_based_fine_tuning_trains_only_the_head(monkeypatch):
    """feature_based=True: the encoder's weights come out unchanged and its dropout is off; the head learns."""
    import bertlib.training.finetune as F

    seen = {}
    real_train_epochs = F.train_epochs

    def spy(model, tensors, **kw):
        seen["before"] = {k: v.clone() for k, v in model.state_dict().items()}
        seen["dropout"] = [m.p for m in model.bert.modules() if isinstance(m, torch.nn.Dropout)]
        out = real_train_epochs(model, tensors, **kw)
        seen["after"] = model.state_dict()
        return out

    monkeypatch.setattr(F, "train_epochs", spy)
    r = F.finetune_task("code_spans", "scratch", train_size=32, epochs=1, baselines=False, feature_based=True, lr=1e-2)
    assert r["feature_based"] is True
    changed = {k for k in seen["before"] if not torch.equal(seen["before"][k], seen["after"][k])}
    assert changed and all(not k.startswith("bert.") for k in changed), changed
    assert seen["dropout"] and set(seen["dropout"]) == {0.0}


def test_mask_rate_defaults_are_the_rates_the_chapters_name():
    import inspect
    # chapters 8 and 11 say the experiment compares 5%, 15%, 25% (the default run's rate) and 40%
    assert inspect.signature(E.mask_rate).parameters["rates"].default == (0.05, 0.15, 0.25, 0.40)


def test_mask_rate_trains_each_rate_and_evaluates_at_15_percent():
    r = E.mask_rate(rates=(0.05, 0.4), steps=3, batch_size=16)
    assert [row["mask_prob"] for row in r["rows"]] == [0.05, 0.4]
    assert r["rows"][1]["predictions_per_step"] == pytest.approx(8 * r["rows"][0]["predictions_per_step"])
    assert 0.0 < r["baseline"] < 1.0


def test_nsp_experiment_fine_tunes_both_pretrainings_on_the_pair_task():
    r = E.nsp(steps=3, batch_size=16, train_pairs=16, seeds=(0,))
    assert [row["pretraining"] for row in r["rows"]] == ["MLM + NSP", "MLM only"]
    assert all(0.0 <= row["pair_task_accuracy"] <= 1.0 for row in r["rows"])


def test_few_labels_compares_a_checkpoint_with_scratch(tmp_path):
    pretrain(PretrainConfig(steps=2, batch_size=8, long_seq_len=None, eval_every=0), progress=False, out=tmp_path)
    r = E.few_labels(str(tmp_path), sizes=(25,), seeds=(0,), epochs=1)
    assert sorted(row["init"] for row in r["rows"]) == ["from scratch", "pretrained"]
    assert all(row["train_examples"] == 25 and 0.0 <= row["accuracy"] <= 1.0 for row in r["rows"])
