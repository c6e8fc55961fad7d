"""The five experiments of chapter 11 (projects/pretraining_experiments) on small budgets: each returns the table
the book plots, the same seed gives the same table (also in a worker process of the book's build), and the
cheapest one shows its effect; ``compare``, the interval over seeds the chapter's wording follows."""
from __future__ import annotations

import pytest
import torch

from bertlib.training.pretrain import pretrain
from bertlib.training.pretrain_config import PretrainConfig
from course.build import worker_pool
from projects.pretraining_experiments import experiments as E


@pytest.mark.parametrize("df, quantile", [(1, 12.7062047), (2, 4.3026527), (4, 2.7764451), (9, 2.2621572),
                                          (30, 2.0422725)])
def test_t_quantile_is_students(df, quantile):
    """The 97.5% quantiles of Student's t, as printed in every table (scipy.stats.t.ppf(0.975, df))."""
    assert E._t_quantile(0.975, df) == pytest.approx(quantile, abs=1e-6)


def test_compare_says_larger_only_when_the_interval_excludes_zero():
    sure = E.compare([0.90, 0.80, 0.85], [0.10, 0.20, 0.15])  # differences 0.8, 0.6, 0.7: sd 0.1
    assert sure["difference"] == pytest.approx(0.7) and sure["spread"] == pytest.approx(0.1)
    assert sure["half_width"] == pytest.approx(4.3026527 * 0.1 / 3 ** 0.5, rel=1e-6)
    assert sure["low"] > 0 and sure["verdict"] == "larger"
    assert E.compare([0.10, 0.20, 0.15], [0.90, 0.80, 0.85])["verdict"] == "smaller"
    # the same mean gap, but the seeds disagree: the interval spans zero
    unsure = E.compare([0.60, 0.50, 0.70], [0.50, 0.55, 0.45])
    assert unsure["difference"] > 0 and unsure["low"] < 0 < unsure["high"] and unsure["verdict"] == "no difference"
    # two seeds: the t quantile of one degree of freedom makes a small gap unreadable
    assert E.compare([0.55, 0.56], [0.53, 0.52])["verdict"] == "no difference"


def test_compare_against_a_number_and_its_errors():
    r = E.compare([0.12, 0.14, 0.13], 0.125)  # against chance
    assert r["mean_b"] == 0.125 and r["verdict"] == "no difference"
    assert E.compare([0.5, 0.5], [0.4, 0.4])["half_width"] == 0.0  # no spread: the difference itself
    with pytest.raises(ValueError, match="pair them"):
        E.compare([0.1, 0.2], [0.1])
    with pytest.raises(ValueError, match="at least 2"):
        E.compare([0.1], [0.2])
    with pytest.raises(ValueError, match="confidence"):
        E.compare([0.1, 0.2], [0.2, 0.3], confidence=1.5)


@pytest.mark.book
def test_bidirectional_sees_the_cue_on_the_right_and_causal_does_not():
    """On the book's own run of experiment 1 (``E.bidirectional()``, its default steps and seeds, stored by make book
    under a key of the code that computes it, so never stale), every seed shows the effect chapter 12 describes.
    Training it again here took 266 s of make check for one seed; the function's other path, a fresh run in a
    build worker, is trained by the next test."""
    from course import runs

    if not runs.is_cached("experiment 1"):
        pytest.fail("experiment 1 is not stored: run `make book` first (`make check` does)")
    r = runs.result("experiment 1")
    seeds = sorted({row["seed"] for row in r["rows"]})
    assert len(seeds) >= 3 and len(r["rows"]) == 2 * len(seeds), r  # each seed under both masks
    right, left = "animal (cue on the right)", "verb (cue on the left)"
    chance = r["chance"][right]
    for seed in seeds:
        rows = {row["attention"]: row for row in r["rows"] if row["seed"] == seed}
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


@pytest.mark.book
def test_mask_mismatch_probes_both_recipes_over_seeds_and_transfers_with_references():
    """On the book's own run of experiment 2 (``E.mask_mismatch()`` at its defaults, stored by make book under a key
    of the code that computes it). Training a small one again here took 60 s of make check; a fresh run of the
    function (without the transfer) is trained by the next test."""
    import inspect

    from course import runs

    if not runs.is_cached("experiment 2"):
        pytest.fail("experiment 2 is not stored: run `make book` first (`make check` does)")
    r = runs.result("experiment 2")
    match_every = inspect.signature(E.mask_mismatch).parameters["match_every"].default
    seeds = sorted({row["seed"] for row in r["rows"]})
    kinds = [("80/10/10", "same step"), ("80/10/10", "matched skill"), ("100% [MASK]", "same step")]
    assert len(seeds) >= 2
    assert [(row["seed"], row["masking"], row["at"]) for row in r["rows"]] == [(s, *k) for s in seeds for k in kinds]
    for row in r["rows"]:
        assert row["steps"] == r["steps"] or (
            row["at"] == "matched skill" and 0 < row["steps"] <= r["steps"] and row["steps"] % match_every == 0), row
        keys = ("copy", "repair", "masked") + (("fine_tuned", "feature_based") if row["at"] == "same step" else ())
        assert all(0.0 <= row[k] <= 1.0 for k in keys), row
        assert row["at"] == "same step" or "fine_tuned" not in row  # the transfer: at the end of both runs only
    assert [ref["seed"] for ref in r["references"]] == seeds
    assert all(0.0 <= ref[k] <= 1.0 for ref in r["references"] for k in ("untrained", "word_lookup", "all_O"))
    assert 0.0 < r["baseline"] < 1.0 and r["train_size"] > 0


def test_mask_mismatch_without_transfer_only_probes():
    r = E.mask_mismatch(steps=2, batch_size=8, match_every=1, match_pairs=16, seeds=(3,), transfer=False)
    assert r["references"] == [] and not any("fine_tuned" in row for row in r["rows"])


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


def test_mask_rate_trains_each_rate_and_seed_and_evaluates_at_15_percent():
    r = E.mask_rate(rates=(0.05, 0.4), steps=3, batch_size=16, seeds=(0, 1))
    assert [(row["seed"], row["mask_prob"]) for row in r["rows"]] == [(0, 0.05), (0, 0.4), (1, 0.05), (1, 0.4)]
    assert r["rows"][1]["predictions_per_step"] == pytest.approx(8 * r["rows"][0]["predictions_per_step"])
    assert r["rows"][0]["heldout_mlm_loss"] != r["rows"][2]["heldout_mlm_loss"]  # another seed, another run
    assert 0.0 < r["baseline"] < 1.0


def test_nsp_experiment_fine_tunes_both_pretrainings_on_the_pair_task():
    r = E.nsp(steps=3, batch_size=16, train_pairs=16, control_pairs=24, seeds=(0,))
    assert [row["pretraining"] for row in r["rows"]] == ["MLM + NSP", "MLM only"]
    assert all(0.0 <= row["pair_task_accuracy"] <= 1.0 for row in r["rows"])
    # the control: each recipe fine-tuned again from the same fresh pooler and classifier
    assert all(0.0 <= row["pair_task_accuracy_fresh_pooler"] <= 1.0 for row in r["rows"])
    # the control task, a pair task NSP's topic shortcut cannot answer, on its own number of labels
    assert all(0.0 <= row["restate_task_accuracy"] <= 1.0 for row in r["rows"]) and r["control_pairs"] == 24


def test_few_labels_compares_a_checkpoint_with_scratch(tmp_path):
    pretrain(PretrainConfig(steps=2, batch_size=8, long_seq_len=None, eval_every=0), progress=False, out=tmp_path)
    r = E.few_labels(str(tmp_path), sizes=(25,), seeds=(0,), epochs=1)
    assert sorted(row["init"] for row in r["rows"]) == ["from scratch", "pretrained"]
    assert all(row["train_examples"] == 25 and 0.0 <= row["accuracy"] <= 1.0 for row in r["rows"])
