"""Named wrong answers to 02_sizes, each losing the points of its part only (tests/test_exercises.py)."""
MISTAKES = {
    "embeddings_without_layernorm": {
        "why": "the embeddings end with a LayerNorm: 2H more",
        "cells": {"embeddings": '''
def embeddings_params(cfg):
    return (cfg.vocab_size + cfg.max_position_embeddings + cfg.type_vocab_size) * cfg.hidden_size
'''},
        "loses": ["test_embeddings"],
    },
    "no_segment_embeddings": {
        "why": "the segment (token type) table is a third embedding",
        "cells": {"embeddings": '''
def embeddings_params(cfg):
    H = cfg.hidden_size
    return (cfg.vocab_size + cfg.max_position_embeddings) * H + 2 * H
'''},
        "loses": ["test_embeddings"],
    },
    "layer_without_biases": {
        "why": "every nn.Linear has a bias",
        "cells": {"layer": '''
def layer_params(cfg):
    H, I = cfg.hidden_size, cfg.intermediate_size
    return 4 * H * H + 2 * H * I + 2 * (2 * H)
'''},
        "loses": ["test_layer"],
    },
    "layer_without_layernorms": {
        "why": "each sub-layer ends with residual + LayerNorm: 2 x 2H per layer",
        "cells": {"layer": '''
def layer_params(cfg):
    H, I = cfg.hidden_size, cfg.intermediate_size
    return 4 * (H * H + H) + (H * I + I) + (I * H + H)
'''},
        "loses": ["test_layer"],
    },
    "feed_forward_square": {
        "why": "the feed-forward network widens to I = intermediate_size, not H",
        "cells": {"layer": '''
def layer_params(cfg):
    H = cfg.hidden_size
    return 4 * (H * H + H) + 2 * (H * H + H) + 2 * (2 * H)
'''},
        "loses": ["test_layer"],
    },
    "no_pooler": {
        "why": "BertModel ends with the pooler, a dense H -> H on [CLS]",
        "cells": {"model": '''
def bert_model_params(cfg):
    counts = {"embeddings": embeddings_params(cfg), "encoder": cfg.num_hidden_layers * layer_params(cfg),
              "pooler": 0}
    counts["total"] = sum(counts.values())
    return counts
'''},
        "loses": ["test_model"],
    },
    "calls_bertlib": {
        "why": "calling bertlib's count_parameters is not counting",
        "cells": {"model": '''
def bert_model_params(cfg):
    return bertlib.count_parameters(cfg)
'''},
        "loses": ["test_model"],
    },
    "tied_decoder_counted_twice": {
        "why": "the MLM decoder's V x H weight is the word-embedding matrix: counted once, in the embeddings",
        "cells": {"heads": '''
def pretraining_heads_params(cfg):
    H, V = cfg.hidden_size, cfg.vocab_size
    return {"cls.predictions": (H * H + H) + 2 * H + V * H + V, "cls.seq_relationship": H * 2 + 2}
'''},
        "loses": ["test_heads"],
    },
    "total_as_tensor": {
        "why": "the counts are Python ints: a 0-d tensor compares equal but is not a count you can format or add up",
        "cells": {"model": '''
def bert_model_params(cfg):
    H = cfg.hidden_size
    counts = {"embeddings": embeddings_params(cfg), "encoder": cfg.num_hidden_layers * layer_params(cfg),
              "pooler": H * H + H}
    counts["total"] = torch.tensor(list(counts.values())).sum()
    return counts
'''},
        "loses": ["test_model"],
    },
}
