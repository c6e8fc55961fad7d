"""Named wrong answers to 03_embeddings, each losing the points of its part only (tests/test_exercises.py)."""
MISTAKES = {
    "concatenate_instead_of_add": {
        "why": "the three embeddings are added: the width stays H",
        "cells": {"sum": '''
def embedding_sum(emb, input_ids, token_type_ids=None):
    if token_type_ids is None:
        token_type_ids = torch.zeros_like(input_ids)
    positions = torch.arange(input_ids.shape[1]).expand_as(input_ids)
    return torch.cat([emb.word_embeddings(input_ids), emb.position_embeddings(positions),
                      emb.token_type_embeddings(token_type_ids)], dim=-1)
'''},
        "loses": ["test_sum"],
    },
    "sinusoidal_positions": {
        "why": "BERT's positions are a learned table, not the Transformer's sinusoids",
        "cells": {"sum": '''
def embedding_sum(emb, input_ids, token_type_ids=None):
    B, T = input_ids.shape
    H = emb.word_embeddings.embedding_dim
    if token_type_ids is None:
        token_type_ids = torch.zeros_like(input_ids)
    angle = torch.arange(T)[:, None] / 10000 ** (torch.arange(0, H, 2) / H)
    pe = torch.zeros(T, H)
    pe[:, 0::2], pe[:, 1::2] = torch.sin(angle), torch.cos(angle)
    return emb.word_embeddings(input_ids) + pe + emb.token_type_embeddings(token_type_ids)
'''},
        "loses": ["test_sum"],
    },
    "forgot_segment_embeddings": {
        "why": "the segment (token type) embedding is the third term",
        "cells": {"sum": '''
def embedding_sum(emb, input_ids, token_type_ids=None):
    positions = torch.arange(input_ids.shape[1])[None, :]
    return emb.word_embeddings(input_ids) + emb.position_embeddings(positions)
'''},
        "loses": ["test_sum"],
    },
    "no_layernorm": {
        "why": "the sum is normalised before anything else sees it",
        "cells": {"forward": '''
def embeddings_forward(emb, input_ids, token_type_ids=None):
    return emb.dropout(embedding_sum(emb, input_ids, token_type_ids))
'''},
        "loses": ["test_layernorm"],
    },
    "dropout_before_layernorm": {
        "why": "dropout comes last, on the normalised vectors",
        "cells": {"forward": '''
def embeddings_forward(emb, input_ids, token_type_ids=None):
    return emb.LayerNorm(emb.dropout(embedding_sum(emb, input_ids, token_type_ids)))
'''},
        "loses": ["test_dropout"],
    },
    "calls_bertlib": {
        "why": "calling BertEmbeddings' own forward is not writing it",
        "cells": {"forward": '''
def embeddings_forward(emb, input_ids, token_type_ids=None):
    return emb(input_ids, token_type_ids)
'''},
        "loses": ["test_layernorm", "test_dropout"],
    },
    "shape_of_concatenation": {
        "why": "added, not concatenated: H wide, not 3H",
        "cells": {"shape": '''
def embeddings_output_shape(cfg, batch_size, seq_len):
    if seq_len > cfg.max_position_embeddings:
        raise ValueError("too long")
    return (batch_size, seq_len, 3 * cfg.hidden_size)
'''},
        "loses": ["test_shape"],
    },
    "no_length_limit": {
        "why": "learned positions end at max_position_embeddings",
        "cells": {"shape": '''
def embeddings_output_shape(cfg, batch_size, seq_len):
    return (batch_size, seq_len, cfg.hidden_size)
'''},
        "loses": ["test_shape"],
    },
    "dropout_in_eval": {
        "why": "dropout is active in training only: F.dropout drops whatever the module's mode, emb.dropout does not",
        "cells": {"forward": '''
def embeddings_forward(emb, input_ids, token_type_ids=None):
    normalised = emb.LayerNorm(embedding_sum(emb, input_ids, token_type_ids))
    return torch.nn.functional.dropout(normalised, emb.dropout.p)
'''},
        "loses": ["test_layernorm", "test_dropout"],
    },
    "layer_norm_without_its_weights": {
        "why": "emb.LayerNorm has a learned weight and bias: a bare F.layer_norm drops them",
        "cells": {"forward": '''
def embeddings_forward(emb, input_ids, token_type_ids=None):
    summed = embedding_sum(emb, input_ids, token_type_ids)
    return emb.dropout(torch.nn.functional.layer_norm(summed, summed.shape[-1:], eps=emb.LayerNorm.eps))
'''},
        "loses": ["test_layernorm"],
    },
    "limit_off_by_one": {
        "why": "a table of P learned positions holds positions 0..P-1: a sequence of exactly P tokens fits",
        "cells": {"shape": '''
def embeddings_output_shape(cfg, batch_size, seq_len):
    if seq_len >= cfg.max_position_embeddings:
        raise ValueError("too long")
    return (batch_size, seq_len, cfg.hidden_size)
'''},
        "loses": ["test_shape"],
    },
}
