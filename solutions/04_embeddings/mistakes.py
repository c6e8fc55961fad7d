"""Named wrong answers to 04_embeddings, each losing the points of its part only (tests/test_exercises.py).

One `# %%` cell per mistake: the solution cell it rewrites, the graded cells it loses, why, and its
code (docs/exercises.md); `python -m bertgrader.assignment --lint` checks each in its notebook."""


# %% concatenate_instead_of_add cell=sum loses=test_sum
# why: the three embeddings are added: the width stays H
def embedding_sum(emb, input_ids, token_type_ids=None):
    if token_type_ids is None:
        token_type_ids = torch.zeros_like(input_ids)
    positions = torch.arange(input_ids.shape[1]).expand_as(input_ids)
    return torch.cat([emb.word_embeddings(input_ids), emb.position_embeddings(positions),
                      emb.token_type_embeddings(token_type_ids)], dim=-1)


# %% sinusoidal_positions cell=sum loses=test_sum
# why: BERT's positions are a learned table, not the Transformer's sinusoids
def embedding_sum(emb, input_ids, token_type_ids=None):
    B, T = input_ids.shape
    H = emb.word_embeddings.embedding_dim
    if token_type_ids is None:
        token_type_ids = torch.zeros_like(input_ids)
    angle = torch.arange(T)[:, None] / 10000 ** (torch.arange(0, H, 2) / H)
    pe = torch.zeros(T, H)
    pe[:, 0::2], pe[:, 1::2] = torch.sin(angle), torch.cos(angle)
    return emb.word_embeddings(input_ids) + pe + emb.token_type_embeddings(token_type_ids)


# %% forgot_segment_embeddings cell=sum loses=test_sum
# why: the segment (token type) embedding is the third term
def embedding_sum(emb, input_ids, token_type_ids=None):
    positions = torch.arange(input_ids.shape[1])[None, :]
    return emb.word_embeddings(input_ids) + emb.position_embeddings(positions)


# %% no_layernorm cell=forward loses=test_layernorm
# why: the sum is normalised before anything else sees it
def embeddings_forward(emb, input_ids, token_type_ids=None):
    return emb.dropout(embedding_sum(emb, input_ids, token_type_ids))


# %% dropout_before_layernorm cell=forward loses=test_dropout
# why: dropout comes last, on the normalised vectors
def embeddings_forward(emb, input_ids, token_type_ids=None):
    return emb.LayerNorm(emb.dropout(embedding_sum(emb, input_ids, token_type_ids)))


# %% calls_bertlib cell=forward loses=test_layernorm,test_dropout
# why: calling BertEmbeddings' own forward is not writing it
def embeddings_forward(emb, input_ids, token_type_ids=None):
    return emb(input_ids, token_type_ids)


# %% shape_of_concatenation cell=shape loses=test_shape
# why: added, not concatenated: H wide, not 3H
def embeddings_output_shape(cfg, batch_size, seq_len):
    if seq_len > cfg.max_position_embeddings:
        raise ValueError("too long")
    return (batch_size, seq_len, 3 * cfg.hidden_size)


# %% no_length_limit cell=shape loses=test_shape
# why: learned positions end at max_position_embeddings
def embeddings_output_shape(cfg, batch_size, seq_len):
    return (batch_size, seq_len, cfg.hidden_size)


# %% dropout_in_eval cell=forward loses=test_layernorm,test_dropout
# why: dropout is active in training only: F.dropout drops whatever the module's mode, emb.dropout does not
def embeddings_forward(emb, input_ids, token_type_ids=None):
    normalised = emb.LayerNorm(embedding_sum(emb, input_ids, token_type_ids))
    return torch.nn.functional.dropout(normalised, emb.dropout.p)


# %% layer_norm_without_its_weights cell=forward loses=test_layernorm
# why: emb.LayerNorm has a learned weight and bias: a bare F.layer_norm drops them
def embeddings_forward(emb, input_ids, token_type_ids=None):
    summed = embedding_sum(emb, input_ids, token_type_ids)
    return emb.dropout(torch.nn.functional.layer_norm(summed, summed.shape[-1:], eps=emb.LayerNorm.eps))


# %% limit_off_by_one cell=shape loses=test_shape
# why: a table of P learned positions holds positions 0..P-1: a sequence of exactly P tokens fits
def embeddings_output_shape(cfg, batch_size, seq_len):
    if seq_len >= cfg.max_position_embeddings:
        raise ValueError("too long")
    return (batch_size, seq_len, cfg.hidden_size)


# %% two_segments_only cell=sum loses=test_sum
# why: a segment id is a row of emb.token_type_embeddings, whatever its size (type_vocab_size), not a switch between two rows
def embedding_sum(emb, input_ids, token_type_ids=None):
    B, T = input_ids.shape
    segments = torch.zeros_like(input_ids) if token_type_ids is None else token_type_ids
    table = emb.token_type_embeddings.weight  # (S, H)
    segment = torch.where(segments[..., None] == 1, table[1], table[0])  # (B, T, H): A or B
    return emb.word_embeddings(input_ids) + emb.position_embeddings(torch.arange(T))[None] + segment


# %% layer_norm_default_eps cell=forward loses=test_layernorm
# why: emb.LayerNorm holds the config's eps too: F.layer_norm's default eps is 1e-5, not layer_norm_eps
def embeddings_forward(emb, input_ids, token_type_ids=None):
    summed = embedding_sum(emb, input_ids, token_type_ids)
    ln = emb.LayerNorm
    return emb.dropout(torch.nn.functional.layer_norm(summed, summed.shape[-1:], ln.weight, ln.bias))


# %% dropout_with_private_seed cell=forward loses=test_dropout
# why: dropout draws from torch's random numbers (emb.dropout does): a fixed private seed drops the same values every call
def embeddings_forward(emb, input_ids, token_type_ids=None):
    normed = emb.LayerNorm(embedding_sum(emb, input_ids, token_type_ids))
    if not emb.training:
        return normed
    p = emb.dropout.p
    keep = torch.rand(normed.shape, generator=torch.Generator().manual_seed(0)) >= p
    return normed * keep / (1 - p)


# %% one_hot_lookup cell=sum loses=test_sum
# why: one_hot takes int64 indices only, and int32 ids are ids too: an nn.Embedding looks up either, and without a V-wide one-hot matrix
def embedding_sum(emb, input_ids, token_type_ids=None):
    V = emb.word_embeddings.num_embeddings
    if token_type_ids is None:
        token_type_ids = torch.zeros_like(input_ids)
    words = torch.nn.functional.one_hot(input_ids, V).float() @ emb.word_embeddings.weight  # (B, T, H)
    positions = emb.position_embeddings(torch.arange(input_ids.shape[1]))[None]  # (1, T, H)
    return words + positions + emb.token_type_embeddings(token_type_ids)


# %% ids_flattened_with_view cell=sum loses=test_sum
# why: .view() cannot flatten ids that are a slice of a bigger batch; embeddings take (B, T) ids as they are (or use .reshape())
def embedding_sum(emb, input_ids, token_type_ids=None):
    B, T = input_ids.shape
    if token_type_ids is None:
        token_type_ids = torch.zeros_like(input_ids)
    words = emb.word_embeddings(input_ids.view(-1)).view(B, T, -1)  # one lookup for the whole batch
    types = emb.token_type_embeddings(token_type_ids.view(-1)).view(B, T, -1)
    return words + emb.position_embeddings(torch.arange(T))[None] + types


# %% word_table_through_data cell=sum loses=test_sum
# why: .data takes the word table out of the graph: no gradient reaches word_embeddings.weight, so the words would never train
def embedding_sum(emb, input_ids, token_type_ids=None):
    if token_type_ids is None:
        token_type_ids = torch.zeros_like(input_ids)
    words = emb.word_embeddings.weight.data[input_ids]  # (B, T, H): rows of the table
    positions = emb.position_embeddings(torch.arange(input_ids.shape[1]))[None]
    return words + positions + emb.token_type_embeddings(token_type_ids)


# %% no_graph_in_eval cell=forward loses=test_layernorm
# why: eval() switches dropout off, not gradients: a model fine-tuned or probed in eval mode still backpropagates through its embeddings, and under torch.no_grad() nothing reaches the tables or the LayerNorm
def embeddings_forward(emb, input_ids, token_type_ids=None):
    summed = embedding_sum(emb, input_ids, token_type_ids)
    if not emb.training:  # nothing learns in eval mode: skip building the graph
        with torch.no_grad():
            return emb.LayerNorm(summed)
    return emb.dropout(emb.LayerNorm(summed))


# %% dropout_on_a_detached_copy cell=forward loses=test_dropout
# why: dropout written on a detached copy zeroes the right values but cuts the graph: in training no gradient reaches the tables or the LayerNorm
def embeddings_forward(emb, input_ids, token_type_ids=None):
    normed = emb.LayerNorm(embedding_sum(emb, input_ids, token_type_ids))
    if not emb.training:
        return normed
    p = emb.dropout.p
    out = normed.detach().clone()  # a copy to zero values in
    out[torch.rand(out.shape) < p] = 0.0
    return out / (1 - p)
