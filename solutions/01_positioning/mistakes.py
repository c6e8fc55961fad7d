"""Named wrong answers to 01_positioning, each losing the points of its part only (tests/test_exercises.py)."""
MISTAKES = {
    "causal_mask_in_bert": {
        "why": "BERT is bidirectional: a token sees its right context too",
        "cells": {"bidirectional": '''
def bidirectional_visibility(attention_mask):
    keys = attention_mask.bool()
    T = keys.shape[1]
    return keys[:, None, :] & torch.ones(T, T, dtype=torch.bool).tril()
'''},
        "loses": ["test_bidirectional"],
    },
    "padding_not_masked": {
        "why": "padding keys must be hidden",
        "cells": {"bidirectional": '''
def bidirectional_visibility(attention_mask):
    B, T = attention_mask.shape
    return torch.ones(B, T, T, dtype=torch.bool)
'''},
        "loses": ["test_bidirectional"],
    },
    "padding_masks_queries": {
        "why": "the mask hides padding as a key (a column), not as a query (a row)",
        "cells": {"bidirectional": '''
def bidirectional_visibility(attention_mask):
    B, T = attention_mask.shape
    return attention_mask.bool()[:, :, None].expand(B, T, T)
'''},
        "loses": ["test_bidirectional"],
    },
    "causal_sees_future": {
        "why": "upper instead of lower triangle: each token sees its right, not its left",
        "cells": {"causal": '''
def causal_visibility(T):
    return torch.ones(T, T, dtype=torch.bool).triu()
'''},
        "loses": ["test_causal"],
    },
    "causal_excludes_itself": {
        "why": "a token attends to itself too (the diagonal is visible)",
        "cells": {"causal": '''
def causal_visibility(T):
    return torch.ones(T, T, dtype=torch.bool).tril(-1)
'''},
        "loses": ["test_causal"],
    },
    "calls_bertlib": {
        "why": "calling bertlib's own function is not writing it",
        "cells": {"causal": '''
def causal_visibility(T):
    return bertlib.causal_visibility(T)
'''},
        "loses": ["test_causal"],
    },
    "gpt_ignores_padding": {
        "why": "a padded causal batch must hide padding as well as the future",
        "cells": {"causal_padded": '''
def causal_padded_visibility(attention_mask):
    B, T = attention_mask.shape
    return torch.ones(T, T, dtype=torch.bool).tril().expand(B, T, T)
'''},
        "loses": ["test_causal_padded"],
    },
    "keys_from_lengths": {
        "why": "the mask says which keys are real; counting them and assuming they come first breaks on left padding",
        "cells": {"bidirectional": '''
def bidirectional_visibility(attention_mask):
    B, T = attention_mask.shape
    lengths = attention_mask.sum(dim=1)  # real tokens per row
    keys = torch.arange(T)[None, :] < lengths[:, None]  # (B, T)
    return keys[:, None, :].expand(B, T, T)
'''},
        "loses": ["test_bidirectional"],
    },
    "causal_padded_from_lengths": {
        "why": "a causal batch hides the padding the mask marks, wherever it is, not the last T - length keys",
        "cells": {"causal_padded": '''
def causal_padded_visibility(attention_mask):
    B, T = attention_mask.shape
    lengths = attention_mask.sum(dim=1)
    keys = torch.arange(T)[None, :] < lengths[:, None]  # (B, T)
    return keys[:, None, :] & torch.ones(T, T, dtype=torch.bool).tril()
'''},
        "loses": ["test_causal_padded"],
    },
}
