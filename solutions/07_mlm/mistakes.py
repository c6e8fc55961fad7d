"""Named wrong answers to 07_mlm, each losing the points of its part only (tests/test_exercises.py).

One `# %%` cell per mistake: the solution cell it rewrites, the graded cells it loses, why, and its
code (docs/exercises.md); `python -m bertgrader.assignment --lint` checks each in its notebook."""


# %% loss_averaged_over_all_positions cell=mlm_loss loses=test_mlm_loss
# why: the ignored positions count as 0 but still enter the denominator of the mean
def masked_lm_loss(logits, labels):
    V = logits.size(-1)
    per_token = F.cross_entropy(logits.reshape(-1, V), labels.reshape(-1), reduction="none")
    return per_token.mean()


# %% mean_loss_times_mask cell=mlm_loss loses=test_mlm_loss
# why: a mean-reduced loss is a scalar: multiplying it by the 0/1 mask does not remove anything
def masked_lm_loss(logits, labels):
    V = logits.size(-1)
    mask = (labels != -100).float().reshape(-1)
    loss = F.cross_entropy(logits.reshape(-1, V), labels.clamp(min=0).reshape(-1))
    return (loss * mask).sum() / mask.sum()


# %% labels_shifted_like_gpt cell=mlm_loss loses=test_mlm_loss
# why: next-token shift: in MLM a position predicts its own token
def masked_lm_loss(logits, labels):
    V = logits.size(-1)
    return F.cross_entropy(logits[:, :-1].reshape(-1, V), labels[:, 1:].reshape(-1), ignore_index=-100)


# %% calls_bertlib_mlm_loss cell=mlm_loss loses=test_mlm_loss
# why: calling bertlib's own function is not writing it
def masked_lm_loss(logits, labels):
    return bertlib.mlm_loss(logits, labels)


# %% head_without_bias cell=mlm_head loses=test_mlm_head
# why: the decoder adds one learned bias per word (cls.predictions.bias)
def mlm_head_logits(sequence_output, dense, layer_norm, word_embeddings, bias):
    h = layer_norm(F.gelu(dense(sequence_output)))
    return h @ word_embeddings.weight.T


# %% softmax_over_positions cell=top_k loses=test_top_k
# why: the probabilities of a [MASK] are a softmax over the vocabulary, not over the sequence
def top_k_at_masks(logits, input_ids, mask_token_id, k=5):
    positions = (input_ids == mask_token_id).nonzero()
    probs = logits.softmax(dim=1)[positions[:, 0], positions[:, 1]]
    top = probs.topk(k, dim=-1)
    return positions, top.indices, top.values


# %% loss_not_differentiable cell=mlm_loss loses=test_mlm_loss
# why: the loss is turned into a number and back: right value, no gradient, so nothing can train on it
def masked_lm_loss(logits, labels):
    V = logits.size(-1)
    loss = F.cross_entropy(logits.reshape(-1, V), labels.reshape(-1), ignore_index=-100)
    return torch.tensor(loss.item())


# %% layer_norm_eps_ignored cell=mlm_head loses=test_mlm_head
# why: the layer_norm passed in is applied with its own eps: F.layer_norm's default 1e-5 is not it
def mlm_head_logits(sequence_output, dense, layer_norm, word_embeddings, bias):
    h = F.gelu(dense(sequence_output))
    h = F.layer_norm(h, h.shape[-1:], layer_norm.weight, layer_norm.bias)
    return h @ word_embeddings.weight.T + bias


# %% mask_id_hardcoded cell=top_k loses=test_top_k
# why: the [MASK] id is the mask_token_id argument, not BERT's 103: another vocabulary has another id
def top_k_at_masks(logits, input_ids, mask_token_id, k=5):
    positions = (input_ids == 103).nonzero()
    probs = logits[positions[:, 0], positions[:, 1]].softmax(dim=-1)
    top = probs.topk(k, dim=-1)
    return positions, top.indices, top.values


# %% positions_as_python_list cell=top_k loses=test_top_k
# why: positions is an (N, 2) long tensor, as the task says, not a Python list of pairs
def top_k_at_masks(logits, input_ids, mask_token_id, k=5):
    positions = [[b, t] for b in range(input_ids.shape[0]) for t in range(input_ids.shape[1])
                 if input_ids[b, t] == mask_token_id]
    rows, cols = [p[0] for p in positions], [p[1] for p in positions]
    probs = logits[rows, cols].softmax(dim=-1)
    top = probs.topk(k, dim=-1)
    return positions, top.indices, top.values


# %% softmax_over_top_k_only cell=top_k loses=test_top_k
# why: the probabilities are a softmax over the whole vocabulary, not renormalized over the k best words
def top_k_at_masks(logits, input_ids, mask_token_id, k=5):
    positions = (input_ids == mask_token_id).nonzero()
    top = logits[positions[:, 0], positions[:, 1]].topk(k, dim=-1)
    return positions, top.indices, top.values.softmax(dim=-1)


# %% positions_from_a_python_loop cell=top_k loses=test_top_k
# why: torch.tensor of an empty list is a float tensor of shape (0,): a batch without [MASK] breaks it
def top_k_at_masks(logits, input_ids, mask_token_id, k=5):
    B, T = input_ids.shape
    positions = torch.tensor([[b, t] for b in range(B) for t in range(T) if input_ids[b, t] == mask_token_id])
    probs = logits[positions[:, 0], positions[:, 1]].softmax(dim=-1)
    top = probs.topk(k, dim=-1)
    return positions, top.indices, top.values


# %% loss_from_log_of_softmax cell=mlm_loss loses=test_mlm_loss
# why: softmax underflows to 0 at a large logit gap and log(0) = -inf: log_softmax (log-sum-exp) stays finite
def masked_lm_loss(logits, labels):
    V = logits.size(-1)
    log_p = logits.reshape(-1, V).softmax(dim=-1).log()  # (B*T, V)
    return F.nll_loss(log_p, labels.reshape(-1), ignore_index=-100)


# %% loss_in_float32 cell=mlm_loss loses=test_mlm_loss
# why: a float64 caller gets a float32 loss: the cast throws away the precision it asked for
def masked_lm_loss(logits, labels):
    V = logits.size(-1)
    return F.cross_entropy(logits.float().reshape(-1, V), labels.reshape(-1), ignore_index=-100)


# %% decoder_built_once_per_shape cell=mlm_head loses=test_mlm_head
# why: a decoder built on the first call keeps that call's embedding table and bias: the next model's are ignored
_decoders = {}


def mlm_head_logits(sequence_output, dense, layer_norm, word_embeddings, bias):
    V, H = word_embeddings.weight.shape
    if (V, H) not in _decoders:  # one tied decoder per vocabulary
        decoder = nn.Linear(H, V)
        decoder.weight = word_embeddings.weight
        decoder.bias = nn.Parameter(bias)
        _decoders[(V, H)] = decoder
    return _decoders[(V, H)](layer_norm(F.gelu(dense(sequence_output))))


# %% top_k_writes_into_logits cell=top_k loses=test_top_k
# why: writing -inf into the caller's logits destroys the scores they will read next
def top_k_at_masks(logits, input_ids, mask_token_id, k=5):
    logits[input_ids != mask_token_id] = float("-inf")  # only the [MASK] positions matter
    positions = (input_ids == mask_token_id).nonzero()  # (N, 2)
    probs = logits[positions[:, 0], positions[:, 1]].softmax(dim=-1)  # (N, V)
    top = probs.topk(k, dim=-1)
    return positions, top.indices, top.values


# %% decoder_weight_copied cell=mlm_head loses=test_mlm_head
# why: tying shares the parameter itself: a decoder given the table's .data trains a copy, never the embeddings
def mlm_head_logits(sequence_output, dense, layer_norm, word_embeddings, bias):
    V, H = word_embeddings.weight.shape
    decoder = nn.Linear(H, V, bias=False)
    decoder.weight.data = word_embeddings.weight.data  # tied: the same numbers
    return decoder(layer_norm(F.gelu(dense(sequence_output)))) + bias  # (B, T, V)


# %% loss_viewed cell=mlm_loss loses=test_mlm_loss
# why: .view needs a contiguous tensor: a caller's slice of the logits raises; reshape copies where it must
def masked_lm_loss(logits, labels):
    V = logits.size(-1)
    return F.cross_entropy(logits.view(-1, V), labels.view(-1), ignore_index=-100)
