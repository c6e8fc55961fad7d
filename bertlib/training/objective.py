"""The pretraining objective and its scores: one model call that gives a batch's MLM + NSP loss
(``pretraining_forward``, the same in training and evaluation), the held-out scores (``evaluate``), and the
scores a finished run reports for each held-out length (``heldout_scores``).

Book: chapter 11 (the learning curve, the final scores and their baselines).
"""
from __future__ import annotations

import torch

from ..heads import nsp_loss
from ..masking import IGNORE_INDEX

# The held-out pairs a run is scored on, and the prefix of their scores in the learning curve (``history``):
# the final training length (the headline numbers) and, with a long phase, also the short length.
HELDOUT_AT = {"final_length": "heldout_", "short_length": "heldout_short_"}
# The learning curve is scored every ``eval_every`` steps on the first CURVE_PAIRS held-out pairs of each length
# (cheap, hence a little noisy); the final metrics on all of them.
CURVE_PAIRS = 256

def pretraining_forward(model, batch, *, nsp: bool, num_items_in_batch: float | None = None):
    """The model's output on a masked batch, its ``.loss`` MLM + NSP (MLM only if not ``nsp``), with logits
    only at the masked positions.

    ``num_items_in_batch``: the MLM loss is the sum over this batch's labels divided by it (``mlm_loss``);
    by default this batch's number of labels (a batch without any has loss 0, not NaN). Under DDP each
    process has a slice of the global batch and DDP averages the gradients over the processes, so each passes
    (masked tokens in the global batch / world size); the NSP loss, a mean over the slice's pairs, needs
    nothing since the slices are the same size. The result equals one process on the whole batch exactly,
    even though the slices hold different numbers of masked tokens.
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


def heldout_scores(model, pairs: dict[str, torch.Tensor], *, nsp: bool, most_frequent_id: int,
                   device: torch.device) -> dict:
    """A finished run's scores on all the held-out ``pairs`` of one length, with the two baselines: always the
    most frequent training piece (MLM), always the more common NSP label. NSP's are None when the run did
    not train NSP (``nsp=False``)."""
    scores = evaluate(model, {k: v.to(device) for k, v in pairs.items()}, most_frequent_id=most_frequent_id)
    is_next = float(pairs["next_sentence_label"].float().mean())
    return {
        "seq_len": pairs["input_ids"].size(1),
        "mlm_accuracy": scores["mlm_accuracy"],
        "nsp_accuracy": scores["nsp_accuracy"] if nsp else None,
        "mlm_unigram_baseline": scores["mlm_unigram_baseline"],
        "nsp_majority_baseline": max(is_next, 1 - is_next),
        "heldout_mlm_loss": scores["mlm_loss"],
        "heldout_nsp_loss": scores["nsp_loss"] if nsp else None,
        "heldout_mlm_predictions": scores["mlm_predictions"],
        "heldout_nsp_pairs": scores["nsp_pairs"],
    }
