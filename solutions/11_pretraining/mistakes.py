"""Named wrong answers to 11_pretraining, each losing the points of its part only (tests/test_exercises.py).

One `# %%` cell per mistake: the solution cell it rewrites, the graded cells it loses, why, and its
code (docs/exercises.md); `python -m bertgrader.assignment --lint` checks each in its notebook."""


# %% mlm_mean_over_all_positions cell=loss loses=test_loss
# why: the -100 positions count as 0 but still enter the denominator: the MLM mean is over the labelled ones
def pretraining_loss(prediction_logits, labels, seq_relationship_logits, next_sentence_label,
                     num_items_in_batch=None):
    V = prediction_logits.size(-1)
    per_position = F.cross_entropy(prediction_logits.reshape(-1, V), labels.reshape(-1), reduction="none")
    count = per_position.numel() if num_items_in_batch is None else num_items_in_batch
    return per_position.sum() / count + F.cross_entropy(seq_relationship_logits, next_sentence_label)


# %% mlm_local_count_with_num_items cell=loss loses=test_loss
# why: with num_items_in_batch given, a slice's own mean is not its share of the batch's mean
def pretraining_loss(prediction_logits, labels, seq_relationship_logits, next_sentence_label,
                     num_items_in_batch=None):
    V = prediction_logits.size(-1)
    mlm = F.cross_entropy(prediction_logits.reshape(-1, V), labels.reshape(-1), ignore_index=-100)
    return mlm + F.cross_entropy(seq_relationship_logits, next_sentence_label)


# %% mlm_nan_on_slice_without_labels cell=loss loses=test_loss
# why: rescaling the slice's mean gives 0/0 = NaN for a slice without labels; its MLM term is 0
def pretraining_loss(prediction_logits, labels, seq_relationship_logits, next_sentence_label,
                     num_items_in_batch=None):
    V = prediction_logits.size(-1)
    mlm = F.cross_entropy(prediction_logits.reshape(-1, V), labels.reshape(-1), ignore_index=-100)
    if num_items_in_batch is not None:
        mlm = mlm * (labels != -100).sum() / num_items_in_batch
    return mlm + F.cross_entropy(seq_relationship_logits, next_sentence_label)


# %% forgets_nsp_term cell=loss loses=test_loss
# why: the pretraining loss is MLM + NSP; the MLM term alone trains no IsNext/NotNext classifier
def pretraining_loss(prediction_logits, labels, seq_relationship_logits, next_sentence_label,
                     num_items_in_batch=None):
    V = prediction_logits.size(-1)
    total = F.cross_entropy(prediction_logits.reshape(-1, V), labels.reshape(-1), reduction="sum")
    count = (labels != -100).sum() if num_items_in_batch is None else num_items_in_batch
    return total / count


# %% nsp_summed cell=loss loses=test_loss
# why: the NSP term is the mean over the B pairs, not their sum
def pretraining_loss(prediction_logits, labels, seq_relationship_logits, next_sentence_label,
                     num_items_in_batch=None):
    V = prediction_logits.size(-1)
    total = F.cross_entropy(prediction_logits.reshape(-1, V), labels.reshape(-1), reduction="sum")
    count = (labels != -100).sum() if num_items_in_batch is None else num_items_in_batch
    return total / count + F.cross_entropy(seq_relationship_logits, next_sentence_label, reduction="sum")


# %% nsp_divided_by_num_items cell=loss loses=test_loss
# why: num_items_in_batch counts masked pieces; the NSP term stays the mean over this slice's pairs
def pretraining_loss(prediction_logits, labels, seq_relationship_logits, next_sentence_label,
                     num_items_in_batch=None):
    V = prediction_logits.size(-1)
    mlm = F.cross_entropy(prediction_logits.reshape(-1, V), labels.reshape(-1), reduction="sum")
    nsp = F.cross_entropy(seq_relationship_logits, next_sentence_label, reduction="sum")
    if num_items_in_batch is None:
        return mlm / (labels != -100).sum() + nsp / len(next_sentence_label)
    return (mlm + nsp) / num_items_in_batch


# %% calls_bertlib_losses cell=loss loses=test_loss
# why: calling bertlib's own losses is not writing them
def pretraining_loss(prediction_logits, labels, seq_relationship_logits, next_sentence_label,
                     num_items_in_batch=None):
    return (bertlib.mlm_loss(prediction_logits, labels, num_items_in_batch)
            + bertlib.nsp_loss(seq_relationship_logits, next_sentence_label))


# %% loss_not_differentiable cell=loss loses=test_loss
# why: the loss is turned into a number and back: the right value, but no gradient to train on
def pretraining_loss(prediction_logits, labels, seq_relationship_logits, next_sentence_label,
                     num_items_in_batch=None):
    V = prediction_logits.size(-1)
    total = F.cross_entropy(prediction_logits.reshape(-1, V), labels.reshape(-1), reduction="sum")
    count = (labels != -100).sum() if num_items_in_batch is None else num_items_in_batch
    loss = total / count + F.cross_entropy(seq_relationship_logits, next_sentence_label)
    return torch.tensor(loss.item())


# %% log10_instead_of_ln cell=initial loses=test_initial
# why: a cross-entropy loss is in nats: the natural logarithm, not base 10
def expected_initial_loss(vocab_size):
    return math.log10(vocab_size) + math.log10(2)


# %% ln_v_only cell=initial loses=test_initial
# why: the NSP coin flip costs ln 2 on top of the MLM term's ln V
def expected_initial_loss(vocab_size):
    return math.log(vocab_size)


# %% bits_instead_of_nats cell=initial loses=test_initial
# why: log2 counts bits; PyTorch's cross-entropy, and so the loss, is in nats
def expected_initial_loss(vocab_size):
    return math.log2(vocab_size) + 1.0


# %% warmup_starts_at_zero cell=schedule loses=test_schedule
# why: step / W gives the first update a learning rate of 0; it gets (step + 1) / W of the peak
def learning_rate(step, total_steps, peak_lr, warmup_fraction):
    warmup = max(1, round(warmup_fraction * total_steps))
    if step < warmup:
        return peak_lr * step / warmup
    return peak_lr * (total_steps - step) / max(1, total_steps - warmup)


# %% warmup_length_floored cell=schedule loses=test_schedule
# why: the warm-up is warmup_fraction of the run rounded to whole updates, not rounded down
def learning_rate(step, total_steps, peak_lr, warmup_fraction):
    warmup = max(1, int(warmup_fraction * total_steps))
    if step < warmup:
        return peak_lr * (step + 1) / warmup
    return peak_lr * (total_steps - step) / max(1, total_steps - warmup)



# %% warmup_rounded_half_up cell=schedule loses=test_schedule
# why: int(x + 0.5) rounds a half up; Python's round takes it to the even number: round(0.25 x 10) = round(2.5) = 2
def learning_rate(step, total_steps, peak_lr, warmup_fraction):
    warmup = max(1, int(warmup_fraction * total_steps + 0.5))
    if step < warmup:
        return peak_lr * (step + 1) / warmup
    return peak_lr * (total_steps - step) / max(1, total_steps - warmup)

# %% decays_to_ten_percent cell=schedule loses=test_schedule
# why: the decay ends at zero, not at a tenth of the peak
def learning_rate(step, total_steps, peak_lr, warmup_fraction):
    warmup = max(1, round(warmup_fraction * total_steps))
    if step < warmup:
        return peak_lr * (step + 1) / warmup
    return peak_lr * (0.1 + 0.9 * (total_steps - step) / max(1, total_steps - warmup))


# %% decay_over_whole_run cell=schedule loses=test_schedule
# why: the decay spans the updates after the warm-up, total_steps - W of them, not the whole run
def learning_rate(step, total_steps, peak_lr, warmup_fraction):
    warmup = max(1, round(warmup_fraction * total_steps))
    if step < warmup:
        return peak_lr * (step + 1) / warmup
    return peak_lr * (total_steps - step) / total_steps


# %% warmup_of_zero_updates cell=schedule loses=test_schedule
# why: the warm-up lasts at least one update, even when warmup_fraction * total_steps rounds to 0
def learning_rate(step, total_steps, peak_lr, warmup_fraction):
    warmup = round(warmup_fraction * total_steps)
    if step < warmup:
        return peak_lr * (step + 1) / warmup
    return peak_lr * (total_steps - step) / max(1, total_steps - warmup)


# %% calls_bertlib_schedule cell=schedule loses=test_schedule
# why: calling bertlib's own schedule is not writing it
def learning_rate(step, total_steps, peak_lr, warmup_fraction):
    return bertlib.training.loop.learning_rates(peak_lr, total_steps, warmup_fraction)[step]


# %% loss_in_float32 cell=loss loses=test_loss
# why: .float() casts float64 logits down: the caller's precision is lost (it upcasts only bfloat16 and float16)
def pretraining_loss(prediction_logits, labels, seq_relationship_logits, next_sentence_label,
                     num_items_in_batch=None):
    V = prediction_logits.size(-1)
    logits = prediction_logits.float().reshape(-1, V)  # a stable loss in float32
    mlm_sum = F.cross_entropy(logits, labels.reshape(-1), ignore_index=IGNORE_INDEX, reduction="sum")
    n = (labels != IGNORE_INDEX).sum() if num_items_in_batch is None else num_items_in_batch
    return mlm_sum / n + F.cross_entropy(seq_relationship_logits.float(), next_sentence_label)


# %% mlm_log_sum_exp_by_hand cell=loss loses=test_loss
# why: exp(logits) overflows to inf at large scores: log-sum-exp must subtract the largest score first
def pretraining_loss(prediction_logits, labels, seq_relationship_logits, next_sentence_label,
                     num_items_in_batch=None):
    V = prediction_logits.size(-1)
    logits, targets = prediction_logits.reshape(-1, V), labels.reshape(-1)  # (N, V), (N,)
    keep = targets != IGNORE_INDEX
    picked = logits[keep].gather(1, targets[keep][:, None])[:, 0]  # (M,) the label's score
    mlm_sum = (logits[keep].exp().sum(dim=-1).log() - picked).sum()  # -ln p = ln sum exp - score
    n = keep.sum() if num_items_in_batch is None else num_items_in_batch
    return mlm_sum / n + F.cross_entropy(seq_relationship_logits, next_sentence_label)


# %% mlm_logits_viewed cell=loss loses=test_loss
# why: .view needs a contiguous tensor: a caller's slice of the logits raises; reshape copies where it must
def pretraining_loss(prediction_logits, labels, seq_relationship_logits, next_sentence_label,
                     num_items_in_batch=None):
    V = prediction_logits.size(-1)
    logits, targets = prediction_logits.view(-1, V), labels.view(-1)  # (N, V), (N,)
    mlm_sum = F.cross_entropy(logits, targets, ignore_index=IGNORE_INDEX, reduction="sum")
    n = (targets != IGNORE_INDEX).sum() if num_items_in_batch is None else num_items_in_batch
    return mlm_sum / n + F.cross_entropy(seq_relationship_logits, next_sentence_label)
