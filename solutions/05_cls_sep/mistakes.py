"""Named wrong answers to 05_cls_sep, each losing the points of its part only (tests/test_exercises.py).

One `# %%` cell per mistake: the solution cell it rewrites, the graded cells it loses, why, and its
code (docs/exercises.md); `python -m bertgrader.assignment --lint` checks each in its notebook."""


# %% truncate_from_the_wrong_side cell=single loses=test_single
# why: BERT keeps the beginning of a sentence, not its end
def encode_single(ids, max_length):
    ids = list(ids)
    ids = ids[max(0, len(ids) - (max_length - 2)):]
    input_ids = [CLS_ID] + ids + [SEP_ID]
    n_pad = max_length - len(input_ids)
    return {"input_ids": input_ids + [PAD_ID] * n_pad, "token_type_ids": [0] * max_length,
            "attention_mask": [1] * len(input_ids) + [0] * n_pad}


# %% special_tokens_masked_out cell=single loses=test_single
# why: [CLS] and [SEP] are real tokens: attention_mask 1
def encode_single(ids, max_length):
    ids = list(ids)[: max_length - 2]
    input_ids = [CLS_ID] + ids + [SEP_ID]
    n_pad = max_length - len(input_ids)
    return {"input_ids": input_ids + [PAD_ID] * n_pad, "token_type_ids": [0] * max_length,
            "attention_mask": [0] + [1] * len(ids) + [0] + [0] * n_pad}


# %% segment_ids_wrong cell=pair loses=test_pair
# why: the [SEP] that closes B belongs to segment 1
def encode_pair(ids_a, ids_b, max_length):
    a, b = list(ids_a), list(ids_b)
    while len(a) + len(b) > max_length - 3:
        (a if len(a) > len(b) else b).pop()
    input_ids = [CLS_ID] + a + [SEP_ID] + b + [SEP_ID]
    n_pad = max_length - len(input_ids)
    return {"input_ids": input_ids + [PAD_ID] * n_pad,
            "token_type_ids": [0] * (len(a) + 2) + [1] * len(b) + [0] + [0] * n_pad,
            "attention_mask": [1] * len(input_ids) + [0] * n_pad}


# %% pair_truncates_only_b cell=pair loses=test_pair
# why: the original rule cuts the longer of the two, not always B
def encode_pair(ids_a, ids_b, max_length):
    a, b = list(ids_a), list(ids_b)
    while len(a) + len(b) > max_length - 3:
        (b if b else a).pop()
    input_ids = [CLS_ID] + a + [SEP_ID] + b + [SEP_ID]
    n_pad = max_length - len(input_ids)
    return {"input_ids": input_ids + [PAD_ID] * n_pad,
            "token_type_ids": [0] * (len(a) + 2) + [1] * (len(b) + 1) + [0] * n_pad,
            "attention_mask": [1] * len(input_ids) + [0] * n_pad}


# %% sep_vector_instead_of_cls cell=head loses=test_head
# why: the classifier reads the [CLS] vector, not the final [SEP]
def cls_logits(last_hidden_state, pooler_dense, classifier):
    return classifier(torch.tanh(pooler_dense(last_hidden_state[:, -1])))


# %% mean_vector_instead_of_cls cell=head loses=test_head
# why: BERT's sentence vector is [CLS]'s, not a mean (which would also average in the padding)
def cls_logits(last_hidden_state, pooler_dense, classifier):
    return classifier(torch.tanh(pooler_dense(last_hidden_state.mean(dim=1))))


# %% cls_of_first_row_only cell=head loses=test_head
# why: every sequence of the batch is classified from its own [CLS] vector, not from the first row's
def cls_logits(last_hidden_state, pooler_dense, classifier):
    cls = last_hidden_state[0, 0].expand(last_hidden_state.shape[0], -1)
    return classifier(torch.tanh(pooler_dense(cls)))


# %% dropout_at_inference cell=head loses=test_head
# why: dropout is left out at inference: F.dropout's default training=True makes the logits random
def cls_logits(last_hidden_state, pooler_dense, classifier):
    pooled = torch.tanh(pooler_dense(last_hidden_state[:, 0]))
    return classifier(torch.nn.functional.dropout(pooled, p=0.1))


# %% truncates_only_past_max_length cell=single loses=test_single
# why: compares the sentence, not the sentence with [CLS] and [SEP], to max_length: max_length - 1 tokens are not cut
def encode_single(ids, max_length):
    ids = list(ids)
    if len(ids) >= max_length:
        ids = ids[: max_length - 2]
    input_ids = [CLS_ID] + ids + [SEP_ID]
    n_pad = max_length - len(input_ids)
    return {"input_ids": input_ids + [PAD_ID] * n_pad, "token_type_ids": [0] * len(input_ids) + [0] * n_pad,
            "attention_mask": [1] * len(input_ids) + [0] * n_pad}


# %% pair_truncates_only_past_max_length cell=pair loses=test_pair
# why: counts two special tokens, not three, before cutting: A and B of max_length - 2 tokens are not cut
def encode_pair(ids_a, ids_b, max_length):
    a, b = list(ids_a), list(ids_b)
    if len(a) + len(b) + 2 > max_length:
        while len(a) + len(b) > max_length - 3:
            (a if len(a) > len(b) else b).pop()
    input_ids = [CLS_ID] + a + [SEP_ID] + b + [SEP_ID]
    n_pad = max_length - len(input_ids)
    return {"input_ids": input_ids + [PAD_ID] * n_pad,
            "token_type_ids": [0] * (len(a) + 2) + [1] * (len(b) + 1) + [0] * n_pad,
            "attention_mask": [1] * len(input_ids) + [0] * n_pad}


# %% head_without_biases cell=head loses=test_head
# why: multiplies by the layers' weights and leaves out their biases: pooler_dense and classifier are whole layers
def cls_logits(last_hidden_state, pooler_dense, classifier):
    pooled = torch.tanh(last_hidden_state[:, 0] @ pooler_dense.weight.T)
    return pooled @ classifier.weight.T


# %% pair_pops_callers_lists cell=pair loses=test_pair
# why: pop() on the caller's own lists truncates their data too: truncate copies, list(ids_a) and list(ids_b)
def encode_pair(ids_a, ids_b, max_length):
    a, b = ids_a, ids_b
    while len(a) + len(b) > max_length - 3:
        (a if len(a) > len(b) else b).pop()
    input_ids = [CLS_ID] + a + [SEP_ID] + b + [SEP_ID]
    n_pad = max_length - len(input_ids)
    return {"input_ids": input_ids + [PAD_ID] * n_pad,
            "token_type_ids": [0] * (len(a) + 2) + [1] * (len(b) + 1) + [0] * n_pad,
            "attention_mask": [1] * len(input_ids) + [0] * n_pad}


# %% single_deletes_from_callers_list cell=single loses=test_single
# why: del on the caller's list cuts their sentence for good: take a slice, which is a new list
def encode_single(ids, max_length):
    del ids[max_length - 2:]  # keep the beginning
    input_ids = [CLS_ID] + ids + [SEP_ID]
    n_pad = max_length - len(input_ids)
    return {"input_ids": input_ids + [PAD_ID] * n_pad, "token_type_ids": [0] * max_length,
            "attention_mask": [1] * len(input_ids) + [0] * n_pad}


# %% empty_b_drops_its_sep cell=pair loses=test_pair
# why: a pair always has two [SEP]: an empty B still closes its segment, [CLS] A [SEP] [SEP], segment 1 being that [SEP]
def encode_pair(ids_a, ids_b, max_length):
    a, b = list(ids_a), list(ids_b)
    while len(a) + len(b) > max_length - 3:
        (a if len(a) > len(b) else b).pop()
    second = b + [SEP_ID] if b else []  # no B: nothing to close
    input_ids = [CLS_ID] + a + [SEP_ID] + second
    n_pad = max_length - len(input_ids)
    return {"input_ids": input_ids + [PAD_ID] * n_pad,
            "token_type_ids": [0] * (len(a) + 2) + [1] * len(second) + [0] * n_pad,
            "attention_mask": [1] * len(input_ids) + [0] * n_pad}


# %% head_under_no_grad cell=head loses=test_head
# why: without dropout is not without gradients: fine-tuning trains the pooler and BERT through these logits, and torch.no_grad() cuts them off
def cls_logits(last_hidden_state, pooler_dense, classifier):
    with torch.no_grad():  # inference: no graph needed
        pooled = torch.tanh(pooler_dense(last_hidden_state[:, 0]))  # (B, H)
    return classifier(pooled)
