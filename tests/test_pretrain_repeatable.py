"""Chapter 11 says that, on one thread, the same machine and versions repeat a run exactly; this checks it
on a short run (the losses of every step and the held-out scores, to the last bit)."""
import torch

from bertlib.training.pretrain import pretrain
from bertlib.training.pretrain_config import PretrainConfig


def test_a_one_thread_run_repeats_exactly():
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        runs = [pretrain(PretrainConfig(steps=6, eval_every=3), progress=False) for _ in range(2)]
    finally:
        torch.set_num_threads(threads)
    first, second = runs
    assert [r["mlm_loss"] for r in first.history] == [r["mlm_loss"] for r in second.history]
    assert [r["nsp_loss"] for r in first.history] == [r["nsp_loss"] for r in second.history]
    for key in ("mlm_accuracy", "nsp_accuracy", "steps"):
        assert first.metrics[key] == second.metrics[key], key
    for (name, a), (_, b) in zip(first.model.state_dict().items(), second.model.state_dict().items()):
        assert torch.equal(a, b), name
