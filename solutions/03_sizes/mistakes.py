"""Named wrong answers to 03_sizes, each losing the points of its part only (tests/test_exercises.py).

One `# %%` cell per mistake: the solution cell it rewrites, the graded cells it loses, why, and its
code (docs/exercises.md); `python -m bertgrader.assignment --lint` checks each in its notebook."""


# %% embeddings_without_layernorm cell=embeddings loses=test_embeddings
# why: the embeddings end with a LayerNorm: 2H more
def embeddings_params(cfg):
    return (cfg.vocab_size + cfg.max_position_embeddings + cfg.type_vocab_size) * cfg.hidden_size


# %% no_segment_embeddings cell=embeddings loses=test_embeddings
# why: the segment (token type) table is a third embedding
def embeddings_params(cfg):
    H = cfg.hidden_size
    return (cfg.vocab_size + cfg.max_position_embeddings) * H + 2 * H


# %% layer_without_biases cell=layer loses=test_layer
# why: every nn.Linear has a bias
def layer_params(cfg):
    H, I = cfg.hidden_size, cfg.intermediate_size
    return 4 * H * H + 2 * H * I + 2 * (2 * H)


# %% layer_without_layernorms cell=layer loses=test_layer
# why: each sub-layer ends with residual + LayerNorm: 2 x 2H per layer
def layer_params(cfg):
    H, I = cfg.hidden_size, cfg.intermediate_size
    return 4 * (H * H + H) + (H * I + I) + (I * H + H)


# %% feed_forward_square cell=layer loses=test_layer
# why: the feed-forward network widens to I = intermediate_size, not H
def layer_params(cfg):
    H = cfg.hidden_size
    return 4 * (H * H + H) + 2 * (H * H + H) + 2 * (2 * H)


# %% no_pooler cell=model loses=test_model
# why: BertModel ends with the pooler, a dense H -> H on [CLS]
def bert_model_params(cfg):
    counts = {"embeddings": embeddings_params(cfg), "encoder": cfg.num_hidden_layers * layer_params(cfg),
              "pooler": 0}
    counts["total"] = sum(counts.values())
    return counts


# %% calls_bertlib cell=model loses=test_model
# why: calling bertlib's count_parameters is not counting
def bert_model_params(cfg):
    return bertlib.count_parameters(cfg)


# %% tied_decoder_counted_twice cell=heads loses=test_heads
# why: the MLM decoder's V x H weight is the word-embedding matrix: counted once, in the embeddings
def pretraining_heads_params(cfg):
    H, V = cfg.hidden_size, cfg.vocab_size
    return {"cls.predictions": (H * H + H) + 2 * H + V * H + V, "cls.seq_relationship": H * 2 + 2}


# %% total_as_tensor cell=model loses=test_model
# why: the counts are Python ints: a 0-d tensor compares equal but is not a count you can format or add up
def bert_model_params(cfg):
    H = cfg.hidden_size
    counts = {"embeddings": embeddings_params(cfg), "encoder": cfg.num_hidden_layers * layer_params(cfg),
              "pooler": H * H + H}
    counts["total"] = torch.tensor(list(counts.values())).sum()
    return counts


# %% inlines_the_parts cell=model loses=test_model
# why: part 3 uses your embeddings_params and layer_params (the task says so); it counts them again itself
def bert_model_params(cfg):
    H, I, L = cfg.hidden_size, cfg.intermediate_size, cfg.num_hidden_layers
    embeddings = (cfg.vocab_size + cfg.max_position_embeddings + cfg.type_vocab_size) * H + 2 * H
    layer = 4 * (H * H + H) + 2 * H + (H * I + I) + (I * H + H) + 2 * H
    counts = {"embeddings": embeddings, "encoder": L * layer, "pooler": H * H + H}
    counts["total"] = sum(counts.values())
    return counts


# %% layer_built_on_meta cell=layer loses=test_layer
# why: building the modules, even on the meta device, is not a closed form: it cannot count a model too big to build, and the task says not to build modules
def layer_params(cfg):
    H, I = cfg.hidden_size, cfg.intermediate_size
    with torch.device("meta"):  # no memory used: only the shapes
        modules = [torch.nn.Linear(H, H) for _ in range(4)] + [torch.nn.LayerNorm(H), torch.nn.Linear(H, I),
                                                               torch.nn.Linear(I, H), torch.nn.LayerNorm(H)]
    return sum(p.numel() for m in modules for p in m.parameters())


# %% embeddings_built_on_meta cell=embeddings loses=test_embeddings
# why: torch.nn modules on the meta device are still modules: their sizes overflow where a closed form in Python ints does not
def embeddings_params(cfg):
    H = cfg.hidden_size
    tables = [torch.nn.Embedding(n, H, device="meta")
              for n in (cfg.vocab_size, cfg.max_position_embeddings, cfg.type_vocab_size)]
    return sum(t.weight.numel() for t in tables) + 2 * H


# %% pooler_built_on_meta cell=model loses=test_model
# why: the pooler is a dense H -> H with its bias, H * H + H: count it, do not build it
def bert_model_params(cfg):
    pooler = torch.nn.Linear(cfg.hidden_size, cfg.hidden_size, device="meta")
    counts = {
        "embeddings": embeddings_params(cfg),
        "encoder": cfg.num_hidden_layers * layer_params(cfg),
        "pooler": sum(p.numel() for p in pooler.parameters()),
    }
    counts["total"] = sum(counts.values())
    return counts


# %% nsp_head_from_num_labels cell=heads loses=test_heads
# why: the NSP head always has two outputs (IsNext, NotNext); num_labels is the fine-tuning classifier's, and is 2 only by default
def pretraining_heads_params(cfg):
    H, V = cfg.hidden_size, cfg.vocab_size
    transform = (H * H + H) + 2 * H
    return {"cls.predictions": transform + V, "cls.seq_relationship": H * cfg.num_labels + cfg.num_labels}
