"""BERT-Base's values for the chapters' term tables, computed in one place from bertlib.

Every formula in the book has a term table with a "value in BERT-Base" column. Those values are numbers in
prose, so they come from code: a chapter calls ``glue_bert_base()`` in a hidden cell and writes
``{glue:text}`bb_H``` in the table. The names are ``bb_`` + the paper's symbol.
"""
from __future__ import annotations

import inspect


def bert_base_values() -> dict[str, str]:
    """Symbol -> its BERT-Base value as the tables show it (thousands separated)."""
    from bertlib import BertConfig, count_parameters, mask_tokens

    cfg = BertConfig.base()
    mlm_p = inspect.signature(mask_tokens).parameters["mlm_probability"].default
    return {
        "bb_L": f"{cfg.num_hidden_layers}",
        "bb_H": f"{cfg.hidden_size:,}",
        "bb_A": f"{cfg.num_attention_heads}",
        "bb_I": f"{cfg.intermediate_size:,}",
        "bb_V": f"{cfg.vocab_size:,}",
        "bb_P": f"{cfg.max_position_embeddings:,}",
        "bb_S": f"{cfg.type_vocab_size}",
        "bb_dk": f"{cfg.head_dim}",
        "bb_sqrt_dk": f"{cfg.head_dim ** 0.5:g}",
        "bb_dropout": f"{cfg.hidden_dropout_prob:g}",
        "bb_eps": f"{cfg.layer_norm_eps:g}",
        "bb_total": f"{count_parameters(cfg)['total']:,}",
        "bb_mlm_p": f"{mlm_p:g}",
        "bb_max_masked": f"{round(mlm_p * cfg.max_position_embeddings)}",  # selected positions in a full sequence
    }


def glue_bert_base() -> dict[str, str]:
    """Glue every BERT-Base value for the page (no output); returns them for the chapter's own use."""
    from myst_nb import glue

    values = bert_base_values()
    for name, value in values.items():
        glue(name, value, display=False)
    return values
