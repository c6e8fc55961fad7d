"""Named wrong answers to 01_positioning, each losing the points of its part only (tests/test_exercises.py).

One `# %%` cell per mistake: the solution cell it rewrites, the graded cells it loses, why, and its
code (docs/exercises.md); `python -m bertgrader.assignment --lint` checks each in its notebook."""


# %% causal_mask_in_bert cell=bidirectional loses=test_bidirectional
# why: BERT is bidirectional: a token sees its right context too
def bidirectional_visibility(attention_mask):
    keys = attention_mask.bool()
    T = keys.shape[1]
    return keys[:, None, :] & torch.ones(T, T, dtype=torch.bool).tril()


# %% padding_not_masked cell=bidirectional loses=test_bidirectional
# why: padding keys must be hidden
def bidirectional_visibility(attention_mask):
    B, T = attention_mask.shape
    return torch.ones(B, T, T, dtype=torch.bool)


# %% padding_masks_queries cell=bidirectional loses=test_bidirectional
# why: the mask hides padding as a key (a column), not as a query (a row)
def bidirectional_visibility(attention_mask):
    B, T = attention_mask.shape
    return attention_mask.bool()[:, :, None].expand(B, T, T)


# %% causal_sees_future cell=causal loses=test_causal
# why: upper instead of lower triangle: each token sees its right, not its left
def causal_visibility(T):
    return torch.ones(T, T, dtype=torch.bool).triu()


# %% causal_excludes_itself cell=causal loses=test_causal
# why: a token attends to itself too (the diagonal is visible)
def causal_visibility(T):
    return torch.ones(T, T, dtype=torch.bool).tril(-1)


# %% calls_bertlib cell=causal loses=test_causal
# why: calling bertlib's own function is not writing it
def causal_visibility(T):
    return bertlib.causal_visibility(T)


# %% gpt_ignores_padding cell=causal_padded loses=test_causal_padded
# why: a padded causal batch must hide padding as well as the future
def causal_padded_visibility(attention_mask):
    B, T = attention_mask.shape
    return torch.ones(T, T, dtype=torch.bool).tril().expand(B, T, T)


# %% keys_from_lengths cell=bidirectional loses=test_bidirectional
# why: the mask says which keys are real; counting them and assuming they come first breaks on left padding
def bidirectional_visibility(attention_mask):
    B, T = attention_mask.shape
    lengths = attention_mask.sum(dim=1)  # real tokens per row
    keys = torch.arange(T)[None, :] < lengths[:, None]  # (B, T)
    return keys[:, None, :].expand(B, T, T)


# %% causal_padded_from_lengths cell=causal_padded loses=test_causal_padded
# why: a causal batch hides the padding the mask marks, wherever it is, not the last T - length keys
def causal_padded_visibility(attention_mask):
    B, T = attention_mask.shape
    lengths = attention_mask.sum(dim=1)
    keys = torch.arange(T)[None, :] < lengths[:, None]  # (B, T)
    return keys[:, None, :] & torch.ones(T, T, dtype=torch.bool).tril()


# %% caches_by_shape cell=bidirectional loses=test_bidirectional
# why: the answer depends on the mask's values, not only on its shape: a result kept from an earlier call of the same shape is wrong for the next mask
_by_shape = {}


def bidirectional_visibility(attention_mask):
    B, T = attention_mask.shape
    if (B, T) not in _by_shape:
        _by_shape[(B, T)] = attention_mask.bool()[:, None, :].expand(B, T, T)
    return _by_shape[(B, T)]


# %% mask_unsqueezed_in_place cell=causal_padded loses=test_causal_padded
# why: unsqueeze_ changes the caller's mask (its shape becomes (B, 1, T)); unsqueeze returns a new view and leaves it alone
def causal_padded_visibility(attention_mask):
    T = attention_mask.shape[1]
    keys = attention_mask.unsqueeze_(1).bool()  # (B, 1, T)
    return keys & torch.ones(T, T, dtype=torch.bool).tril()


# %% one_minus_mask cell=bidirectional loses=test_bidirectional
# why: a mask may be bool (True for a real token), and 1 - mask raises on a bool tensor: read any mask with .bool() or != 0
def bidirectional_visibility(attention_mask):
    B, T = attention_mask.shape
    padding = (1 - attention_mask).bool()  # (B, T): True at [PAD]
    return ~padding[:, None, :].expand(B, T, T)


# %% bitwise_and_on_the_mask cell=causal_padded loses=test_causal_padded
# why: & is defined for integers and bools, not floats: a float 1.0/0.0 mask raises; turn the mask into bool first
def causal_padded_visibility(attention_mask):
    T = attention_mask.shape[1]
    past = torch.ones(T, T, dtype=torch.bool).tril()  # (T, T)
    return (attention_mask[:, None, :] & past).bool()  # (B, T, T)
