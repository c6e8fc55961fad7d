"""Named wrong answers to 06_attention_masks, each losing the points of its part only (tests/test_exercises.py).

One `# %%` cell per mistake: the solution cell it rewrites, the graded cells it loses, why, and its
code (docs/exercises.md); `python -m bertgrader.assignment --lint` checks each in its notebook."""


# %% minus_infinity cell=padding loses=test_padding
# why: -inf turns a row that sees nothing into NaN: use the most negative finite value
def additive_padding_mask(attention_mask, dtype=torch.float32):
    mask = torch.zeros(attention_mask.shape, dtype=dtype)
    return mask.masked_fill(attention_mask == 0, float("-inf"))[:, None, None, :]


# %% mask_on_queries cell=padding loses=test_padding
# why: padding is hidden as a key: shape (B, 1, 1, T), not (B, 1, T, 1)
def additive_padding_mask(attention_mask, dtype=torch.float32):
    mask = torch.zeros(attention_mask.shape, dtype=dtype)
    return mask.masked_fill(attention_mask == 0, torch.finfo(dtype).min)[:, None, :, None]


# %% padding_not_masked cell=softmax loses=test_softmax
# why: without the mask, padding takes attention weight
def masked_softmax(scores, attention_mask):
    return scores.softmax(dim=-1)


# %% mask_added_after_softmax cell=softmax loses=test_softmax
# why: the mask is added to the scores, before the softmax
def masked_softmax(scores, attention_mask):
    return scores.softmax(dim=-1) + additive_padding_mask(attention_mask, scores.dtype)


# %% mask_multiplied cell=softmax loses=test_softmax
# why: multiplying scores by 0 gives exp(0) = 1, not 0: padding still gets weight
def masked_softmax(scores, attention_mask):
    return (scores * attention_mask[:, None, None, :]).softmax(dim=-1)


# %% additive_mask_multiplied cell=softmax loses=test_softmax
# why: the additive mask is added to the scores; multiplied, a score times finfo.min overflows to +/-inf (NaN rows) and a score of 0 times it stays 0 (the padding keeps its weight)
def masked_softmax(scores, attention_mask):
    return (scores * additive_padding_mask(attention_mask, scores.dtype)).softmax(dim=-1)


# %% causal_mask_in_bert cell=softmax loses=test_softmax
# why: BERT's attention is bidirectional: only padding is hidden
def masked_softmax(scores, attention_mask):
    T = scores.shape[-1]
    future = torch.ones(T, T, dtype=torch.bool).triu(1)
    scores = scores.masked_fill(future, torch.finfo(scores.dtype).min)
    return (scores + additive_padding_mask(attention_mask, scores.dtype)).softmax(dim=-1)


# %% padding_ignores_dtype cell=padding loses=test_padding
# why: the mask is built in the dtype asked for: finfo(float32).min is -inf in float16
def additive_padding_mask(attention_mask, dtype=torch.float32):
    mask = torch.zeros(attention_mask.shape)
    return mask.masked_fill(attention_mask == 0, torch.finfo(torch.float32).min)[:, None, None, :]


# %% softmax_fills_minus_inf cell=softmax loses=test_softmax
# why: -inf instead of finfo.min: a sequence that is all padding gets NaN weights
def masked_softmax(scores, attention_mask):
    return scores.masked_fill(attention_mask[:, None, None, :] == 0, float("-inf")).softmax(dim=-1)


# %% softmax_mask_in_float32 cell=softmax loses=test_softmax
# why: the mask must be in the scores' dtype: a float32 mask turns float16 scores into float32 weights
def masked_softmax(scores, attention_mask):
    return (scores + additive_padding_mask(attention_mask)).softmax(dim=-1)


# %% causal_mask_transposed cell=causal loses=test_causal
# why: the query (row) i must not see keys (columns) j > i
def causal_additive_mask(T, dtype=torch.float32):
    past = torch.ones(T, T, dtype=torch.bool).tril(-1)
    return torch.zeros(T, T, dtype=dtype).masked_fill(past, torch.finfo(dtype).min)[None, None]


# %% calls_bertlib cell=causal loses=test_causal
# why: calling bertlib's masks is not building one
def causal_additive_mask(T, dtype=torch.float32):
    return bertlib.additive_mask(bertlib.causal_visibility(T), dtype)[None, None]


# %% padding_from_lengths cell=padding loses=test_padding
# why: counts each row's real tokens and hides the positions after them: wrong when padding comes first
def additive_padding_mask(attention_mask, dtype=torch.float32):
    lengths = attention_mask.sum(dim=1)  # (B,)
    real = torch.arange(attention_mask.shape[1])[None, :] < lengths[:, None]  # (B, T)
    mask = torch.zeros(attention_mask.shape, dtype=dtype).masked_fill(~real, torch.finfo(dtype).min)
    return mask[:, None, None, :]


# %% softmax_mask_from_lengths cell=softmax loses=test_softmax
# why: rebuilds the mask from each row's length, as if the real tokens always came first
def masked_softmax(scores, attention_mask):
    lengths = attention_mask.sum(dim=1)  # (B,)
    real = (torch.arange(scores.shape[-1])[None, :] < lengths[:, None]).long()  # (B, T)
    return (scores + additive_padding_mask(real, scores.dtype)).softmax(dim=-1)


# %% padding_mask_unsqueezed_in_place cell=padding loses=test_padding
# why: unsqueeze_ reshapes the caller's own mask to (B, 1, 1, T): the next use of attention_mask breaks
def additive_padding_mask(attention_mask, dtype=torch.float32):
    visible = attention_mask.unsqueeze_(1).unsqueeze_(1)  # (B, 1, 1, T)
    return torch.zeros(visible.shape, dtype=dtype).masked_fill(visible == 0, torch.finfo(dtype).min)


# %% padding_mask_from_one_minus cell=padding loses=test_padding
# why: 1 - mask assumes a number mask: a bool mask (True = real token), as real callers pass, raises
def additive_padding_mask(attention_mask, dtype=torch.float32):
    hidden = (1 - attention_mask[:, None, None, :]).to(dtype)  # (B, 1, 1, T): 1 on padding
    return hidden * torch.finfo(dtype).min


# %% padding_mask_cached_by_shape cell=padding loses=test_padding
# why: a mask kept per shape is the first batch's padding, not this batch's: batches of one shape differ
_masks = {}


def additive_padding_mask(attention_mask, dtype=torch.float32):
    key = (tuple(attention_mask.shape), dtype)
    if key not in _masks:  # built once per shape and dtype
        visible = attention_mask.bool()[:, None, None, :]  # (B, 1, 1, T)
        _masks[key] = torch.zeros(visible.shape, dtype=dtype).masked_fill(~visible, torch.finfo(dtype).min)
    return _masks[key]


# %% softmax_adds_into_given_scores cell=softmax loses=test_softmax
# why: += writes the mask into the caller's scores: whoever reads them after the call sees finfo.min there
def masked_softmax(scores, attention_mask):
    scores += additive_padding_mask(attention_mask, scores.dtype)  # saves a copy
    return scores.softmax(dim=-1)


# %% causal_mask_cached_by_length cell=causal loses=test_causal
# why: a cache keyed by T alone gives back the mask of the first dtype asked for at that length
_causal = {}


def causal_additive_mask(T, dtype=torch.float32):
    if T not in _causal:
        future = torch.ones(T, T, dtype=torch.bool).triu(1)  # (T, T)
        _causal[T] = torch.zeros(T, T, dtype=dtype).masked_fill(future, torch.finfo(dtype).min)[None, None]
    return _causal[T]
