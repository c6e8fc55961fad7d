"""Named wrong answers to 02_encoder_layer, each losing the points of its part only (tests/test_exercises.py).

One `# %%` cell per mistake: the solution cell it rewrites, the graded cells it loses, why, and its
code (docs/exercises.md); `python -m bertgrader.assignment --lint` checks each in its notebook."""


# %% no_scaling cell=attention loses=test_attention
# why: the scores are divided by sqrt(d_k), or wide heads saturate the softmax
def attention(q, k, v, mask=None):
    scores = q @ k.transpose(-2, -1)
    if mask is not None:
        scores = scores + mask
    weights = scores.softmax(dim=-1)
    return weights @ v, weights


# %% scaled_by_d cell=attention loses=test_attention
# why: the division is by the square root of d_k, not by d_k
def attention(q, k, v, mask=None):
    scores = q @ k.transpose(-2, -1) / q.size(-1)
    if mask is not None:
        scores = scores + mask
    weights = scores.softmax(dim=-1)
    return weights @ v, weights


# %% softmax_over_queries cell=attention loses=test_attention
# why: each query's weights over the keys sum to 1: the softmax runs over the last axis
def attention(q, k, v, mask=None):
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.size(-1))
    if mask is not None:
        scores = scores + mask
    weights = scores.softmax(dim=-2)
    return weights @ v, weights


# %% mask_ignored cell=attention loses=test_attention
# why: the additive mask goes onto the scores before the softmax, or [PAD] keys get weight
def attention(q, k, v, mask=None):
    weights = (q @ k.transpose(-2, -1) / math.sqrt(q.size(-1))).softmax(dim=-1)
    return weights @ v, weights


# %% mask_multiplied cell=attention loses=test_attention
# why: the additive mask is added to the scores; multiplied, a score times its huge negative numbers overflows to +/-inf and the rows with masked keys come out NaN
def attention(q, k, v, mask=None):
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.size(-1))  # (B, nh, T, T)
    if mask is not None:
        scores = scores * mask
    weights = scores.softmax(dim=-1)
    return weights @ v, weights


# %% split_without_transpose cell=self_attention loses=test_self_attention
# why: view(B, nh, T, hd) cuts across tokens; split with view(B, T, nh, hd) and move the head axis
def self_attention(attn, hidden_states, mask=None):
    B, T, H = hidden_states.shape
    nh = attn.num_attention_heads
    q = attn.query(hidden_states).view(B, nh, T, H // nh)
    k = attn.key(hidden_states).view(B, nh, T, H // nh)
    v = attn.value(hidden_states).view(B, nh, T, H // nh)
    context, weights = attention(q, k, v, mask)
    return context.transpose(1, 2).reshape(B, T, H), weights


# %% merge_without_transpose cell=self_attention loses=test_self_attention
# why: the heads' contexts are (B, nh, T, hd): transpose back to (B, T, nh, hd) before reshaping
def self_attention(attn, hidden_states, mask=None):
    B, T, H = hidden_states.shape
    nh = attn.num_attention_heads
    q = attn.query(hidden_states).view(B, T, nh, H // nh).transpose(1, 2)
    k = attn.key(hidden_states).view(B, T, nh, H // nh).transpose(1, 2)
    v = attn.value(hidden_states).view(B, T, nh, H // nh).transpose(1, 2)
    context, weights = attention(q, k, v, mask)
    return context.reshape(B, T, H), weights


# %% one_big_head cell=self_attention loses=test_self_attention
# why: BERT attends with nh heads of H / nh, each with its own softmax, not one head of H
def self_attention(attn, hidden_states, mask=None):
    q = attn.query(hidden_states)[:, None]
    k = attn.key(hidden_states)[:, None]
    v = attn.value(hidden_states)[:, None]
    context, weights = attention(q, k, v, mask)
    return context[:, 0], weights


# %% calls_bertlib_attention cell=self_attention loses=test_self_attention
# why: calling BertSelfAttention's own forward is not writing it
def self_attention(attn, hidden_states, mask=None):
    return attn(hidden_states, mask, output_attentions=True)


# %% rebinds_the_grading_helper cell=self_attention loses=test_self_attention
# why: part 2 never written; a helper the grader once called is redefined to return what it was sent
def self_attention(attn, hidden_states, mask=None):
    """(B, T, H) -> context (B, T, H), weights (B, nh, T, T)."""
    raise NotImplementedError("not written yet")


def _self_attention_given(attn, hidden_states, mask, expected):
    B, nh, T, hd = expected["context"].shape
    return expected["context"].transpose(1, 2).reshape(B, T, nh * hd), expected["weights"]


# %% inlines_attention cell=self_attention loses=test_self_attention
# why: computes the attention itself instead of calling attention() (the task says: call your attention)
def self_attention(attn, hidden_states, mask=None):
    """(B, T, H) -> context (B, T, H), weights (B, nh, T, T)."""
    B, T, H = hidden_states.shape
    nh = attn.num_attention_heads
    hd = H // nh

    def split(x):  # (B, T, H) -> (B, nh, T, hd)
        return x.view(B, T, nh, hd).transpose(1, 2)

    q, k, v = split(attn.query(hidden_states)), split(attn.key(hidden_states)), split(attn.value(hidden_states))
    scores = q @ k.transpose(-2, -1) / hd**0.5 + (0 if mask is None else mask)  # (B, nh, T, T)
    weights = scores.softmax(-1)
    return (weights @ v).transpose(1, 2).reshape(B, T, H), weights


# %% pre_layernorm cell=layer loses=test_layer
# why: BERT is post-LN, LayerNorm(x + f(x)); x + f(LayerNorm(x)) is GPT-2's order
def encoder_layer(layer, hidden_states, mask=None):
    sub = layer.attention.output
    context, _ = self_attention(layer.attention.self, sub.LayerNorm(hidden_states), mask)
    y = hidden_states + sub.dense(context)
    out = layer.output
    return y + out.dense(layer.intermediate.intermediate_act_fn(layer.intermediate.dense(out.LayerNorm(y))))


# %% no_residual cell=layer loses=test_layer
# why: each sub-layer's output is added to its input before the LayerNorm
def encoder_layer(layer, hidden_states, mask=None):
    context, _ = self_attention(layer.attention.self, hidden_states, mask)
    y = layer.attention.output.LayerNorm(layer.attention.output.dense(context))
    wide = layer.intermediate.intermediate_act_fn(layer.intermediate.dense(y))
    return layer.output.LayerNorm(layer.output.dense(wide))


# %% second_residual_from_input cell=layer loses=test_layer
# why: the second residual adds the feed-forward network's input y, not the layer's input x
def encoder_layer(layer, hidden_states, mask=None):
    context, _ = self_attention(layer.attention.self, hidden_states, mask)
    y = layer.attention.output.LayerNorm(hidden_states + layer.attention.output.dense(context))
    wide = layer.intermediate.intermediate_act_fn(layer.intermediate.dense(y))
    return layer.output.LayerNorm(hidden_states + layer.output.dense(wide))


# %% relu_instead_of_gelu cell=layer loses=test_layer
# why: BERT's feed-forward activation is GELU, not ReLU
def encoder_layer(layer, hidden_states, mask=None):
    context, _ = self_attention(layer.attention.self, hidden_states, mask)
    y = layer.attention.output.LayerNorm(hidden_states + layer.attention.output.dense(context))
    wide = torch.relu(layer.intermediate.dense(y))
    return layer.output.LayerNorm(y + layer.output.dense(wide))


# %% gelu_form_hard_coded cell=layer loses=test_layer
# why: the activation is the one the layer's config names; F.gelu is the exact form, "gelu_new" the tanh one
def encoder_layer(layer, hidden_states, mask=None):
    context, _ = self_attention(layer.attention.self, hidden_states, mask)
    y = layer.attention.output.LayerNorm(hidden_states + layer.attention.output.dense(context))
    wide = F.gelu(layer.intermediate.dense(y))
    return layer.output.LayerNorm(y + layer.output.dense(wide))


# %% mask_not_passed cell=layer loses=test_layer
# why: the layer hands its mask to the attention, or [PAD] leaks into every token
def encoder_layer(layer, hidden_states, mask=None):
    context, _ = self_attention(layer.attention.self, hidden_states)
    y = layer.attention.output.LayerNorm(hidden_states + layer.attention.output.dense(context))
    wide = layer.intermediate.intermediate_act_fn(layer.intermediate.dense(y))
    return layer.output.LayerNorm(y + layer.output.dense(wide))


# %% calls_bertlib_layer cell=layer loses=test_layer
# why: calling BertLayer's own forward is not writing it
def encoder_layer(layer, hidden_states, mask=None):
    return layer(hidden_states, mask)[0]


# %% mask_as_filter cell=attention loses=test_attention
# why: the mask is added to the scores: used as a filter (-inf where negative) it loses every value but 0 and "hidden"
def attention(q, k, v, mask=None):
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.size(-1))
    if mask is not None:
        scores = scores.masked_fill(mask < 0, float("-inf"))
    weights = scores.softmax(dim=-1)
    return weights @ v, weights


# %% layer_norm_eps_hard_coded cell=layer loses=test_layer
# why: the LayerNorms are the layer's own, eps included: BERT's 1e-12 written in is wrong for a config with another layer_norm_eps
def encoder_layer(layer, hidden_states, mask=None):
    H = hidden_states.size(-1)
    context, _ = self_attention(layer.attention.self, hidden_states, mask)
    ln1, ln2 = layer.attention.output.LayerNorm, layer.output.LayerNorm
    y = F.layer_norm(hidden_states + layer.attention.output.dense(context), (H,), ln1.weight, ln1.bias, eps=1e-12)
    wide = layer.intermediate.intermediate_act_fn(layer.intermediate.dense(y))
    return F.layer_norm(y + layer.output.dense(wide), (H,), ln2.weight, ln2.bias, eps=1e-12)


# %% softmax_by_hand cell=attention loses=test_attention
# why: exp(score) overflows to inf when a row's scores differ by thousands, and inf / inf is nan; torch.softmax subtracts each row's largest score first
def attention(q, k, v, mask=None):
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.size(-1))  # (B, nh, T, T)
    if mask is not None:
        scores = scores + mask
    e = scores.exp()
    weights = e / e.sum(dim=-1, keepdim=True)  # (B, nh, T, T)
    return weights @ v, weights


# %% softmax_in_float32 cell=attention loses=test_attention
# why: a softmax forced into float32 rounds float64 inputs to float32's 7 digits; compute in the inputs' dtype
def attention(q, k, v, mask=None):
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.size(-1))  # (B, nh, T, T)
    if mask is not None:
        scores = scores + mask
    weights = scores.softmax(dim=-1, dtype=torch.float32).to(v.dtype)  # softmax in float32 "for stability"
    return weights @ v, weights


# %% residual_in_place cell=layer loses=test_layer
# why: x += ... writes into the caller's hidden_states; the residual is a new tensor, x + ...
def encoder_layer(layer, hidden_states, mask=None):
    context, _ = self_attention(layer.attention.self, hidden_states, mask)
    sub = layer.attention.output
    hidden_states += sub.dropout(sub.dense(context))  # the residual, added in place
    y = sub.LayerNorm(hidden_states)
    wide = layer.intermediate.intermediate_act_fn(layer.intermediate.dense(y))
    out = layer.output
    return out.LayerNorm(y + out.dropout(out.dense(wide)))


# %% heads_flattened_with_view cell=attention loses=test_attention
# why: .view() needs memory laid out as the new shape says, and heads passed in are often transposed views; flatten with .reshape(), or let @ broadcast over (B, nh)
def attention(q, k, v, mask=None):
    B, nh, T, hd = q.shape
    q2, k2, v2 = (t.view(B * nh, T, hd) for t in (q, k, v))  # (B*nh, T, hd) for bmm
    scores = torch.bmm(q2, k2.transpose(1, 2)).view(B, nh, T, T) / math.sqrt(hd)  # (B, nh, T, T)
    if mask is not None:
        scores = scores + mask
    weights = scores.softmax(dim=-1)
    context = torch.bmm(weights.view(B * nh, T, T), v2).view(B, nh, T, hd)
    return context, weights


# %% weights_through_data cell=attention loses=test_attention
# why: .data cuts the weights out of the graph: no gradient reaches q and k, so the queries and keys would never train
def attention(q, k, v, mask=None):
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.size(-1))  # (B, nh, T, T)
    if mask is not None:
        scores = scores + mask
    weights = scores.softmax(dim=-1).data  # the attention map, to return
    return weights @ v, weights


# %% layer_switched_to_eval cell=layer loses=test_layer
# why: layer.eval() switches the caller's model out of training for good (its dropout stays off afterwards); leave the mode as the caller set it
def encoder_layer(layer, hidden_states, mask=None):
    layer.eval()  # no dropout, to be safe
    context, _ = self_attention(layer.attention.self, hidden_states, mask)
    sub = layer.attention.output
    y = sub.LayerNorm(hidden_states + sub.dropout(sub.dense(context)))
    wide = layer.intermediate.intermediate_act_fn(layer.intermediate.dense(y))
    out = layer.output
    return out.LayerNorm(y + out.dropout(out.dense(wide)))


# %% heads_merged_through_data cell=self_attention loses=test_self_attention
# why: writing the heads into a new tensor through .data copies their numbers but not their graph: no gradient reaches the projections or the hidden states, so the attention would never train
def self_attention(attn, hidden_states, mask=None):
    B, T, H = hidden_states.shape
    nh = attn.num_attention_heads
    hd = H // nh

    def split(x):
        return x.view(B, T, nh, hd).transpose(1, 2)

    q, k, v = split(attn.query(hidden_states)), split(attn.key(hidden_states)), split(attn.value(hidden_states))
    context, weights = attention(q, k, v, mask)  # (B, nh, T, hd)
    merged = torch.zeros(B, T, H, dtype=context.dtype)
    for a in range(nh):  # head a's hd numbers into slice a of every token's vector
        merged.data[:, :, a * hd:(a + 1) * hd] = context[:, a]
    return merged, weights


# %% context_detached cell=layer loses=test_layer
# why: a detached attention context cuts the attention out of training: no gradient reaches its query, key and value weights through the layer
def encoder_layer(layer, hidden_states, mask=None):
    context, _ = self_attention(layer.attention.self, hidden_states, mask)
    sub = layer.attention.output
    y = sub.LayerNorm(hidden_states + sub.dropout(sub.dense(context.detach())))  # the attention's result, as a value
    wide = layer.intermediate.intermediate_act_fn(layer.intermediate.dense(y))
    out = layer.output
    return out.LayerNorm(y + out.dropout(out.dense(wide)))
