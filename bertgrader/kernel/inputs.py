"""The inputs an assignment's tests are built from: one definition for its visible tests (the notebook's
setup cell imports them; the student's kernel sees bertgrader/kernel/) and for its hidden tests (the
grader), so the two never drift apart. They had: 09's two copies of its batch builder padded the rows
differently. Everything random comes from the seed passed in; torch's global generator is left as it was.
"""
from __future__ import annotations

import random

import torch

__all__ = ["tiny_bert_module", "padding_mask", "tiny_embeddings", "mlm_random_head", "masking_pairs_batch",
           "masking_selection_case", "nsp_documents", "nsp_pretraining_case", "finetuning_tiny_batch"]


# ------------------------------------------------------------------------------ 02_encoder_layer
def tiny_bert_module(seed: int, module=None, **overrides):
    """(fields, module): a small bertlib module (``module``: BertLayer, the default, or BertSelfAttention) of
    ``BertConfig(**fields)``, random weights, LayerNorms included (weight about 1, bias about 0, not exactly:
    every term of the layer matters), in eval mode."""
    import bertlib

    module = module or bertlib.encoder.BertLayer
    fields = dict(vocab_size=30, hidden_size=8, num_attention_heads=2, intermediate_size=16) | overrides
    with torch.random.fork_rng():
        torch.manual_seed(seed)
        m = module(bertlib.BertConfig(**fields))
        with torch.no_grad():
            for sub in m.modules():
                if isinstance(sub, torch.nn.LayerNorm):
                    sub.weight.normal_(1.0, 0.2)
                    sub.bias.normal_(0.0, 0.2)
    return fields, m.eval()


def padding_mask(lengths, T: int) -> torch.Tensor:
    """The additive mask bertlib's model gives every layer: (B, 1, 1, T), 0 for the first ``lengths[b]``
    keys of row b, very negative for the [PAD] after them."""
    import bertlib

    attention_mask = (torch.arange(T)[None, :] < torch.tensor(lengths)[:, None]).long()  # (B, T)
    return bertlib.build_attention_mask(attention_mask, T, is_causal=False, dtype=torch.float32, device="cpu")


# ---------------------------------------------------------------------------------- 04_embeddings
def tiny_embeddings(seed: int, p: float = 0.1, **overrides):
    """(fields, emb): a small bertlib BertEmbeddings of ``BertConfig(**fields)`` (dropout ``p``), its LayerNorm
    weight and bias random (not 1 and 0), in eval mode."""
    import bertlib

    fields = dict(vocab_size=50, hidden_size=8, num_attention_heads=2, max_position_embeddings=16,
                  type_vocab_size=2, hidden_dropout_prob=p) | overrides
    with torch.random.fork_rng():
        torch.manual_seed(seed)
        emb = bertlib.BertEmbeddings(bertlib.BertConfig(**fields))
        with torch.no_grad():
            emb.LayerNorm.weight.normal_(1.0, 0.1)
            emb.LayerNorm.bias.normal_(0.0, 0.1)
    return fields, emb.eval()


# ------------------------------------------------------------------------------------------ 07_mlm
def mlm_random_head(V: int, H: int, seed: int, eps: float | None = None):
    """(head, emb, x, cfg): BERT's MLM head (bertlib's BertLMPredictionHead) with every parameter random,
    its decoder tied to a random V x H embedding table ``emb``, and hidden states ``x`` (2, 3, H); ``eps``:
    the config's layer_norm_eps (BERT's 1e-12 when None)."""
    import bertlib

    gen = torch.Generator().manual_seed(seed)
    cfg = bertlib.BertConfig(vocab_size=V, hidden_size=H, num_hidden_layers=1, num_attention_heads=1,
                             intermediate_size=H, **({} if eps is None else {"layer_norm_eps": eps}))
    head = bertlib.heads.BertLMPredictionHead(cfg)
    emb = torch.nn.Embedding(V, H)
    with torch.no_grad():
        for p in [*head.parameters(), emb.weight]:
            p.copy_(torch.randn(p.shape, generator=gen))
    head.decoder.weight = emb.weight  # tied, as in BertForMaskedLM
    x = torch.randn(2, 3, H, generator=gen)  # (B, T, H)
    return head, emb, x, cfg


# ------------------------------------------------------------------------------------- 08_masking
def masking_pairs_batch(B: int, T: int, seed: int, vocab_size: int = 30522, cls: int = 101, sep: int = 102,
                        pad: int = 0) -> torch.Tensor:
    """(B, T) ids laid out as [CLS] A [SEP] B [SEP] [PAD] ..., of random lengths between T/2 and T, the
    words drawn from [1000, vocab_size)."""
    gen = torch.Generator().manual_seed(seed)
    ids = torch.randint(1000, vocab_size, (B, T), generator=gen)  # (B, T) ordinary words
    for b in range(B):
        n = int(torch.randint(T // 2, T + 1, (1,), generator=gen))
        a = int(torch.randint(2, n - 2, (1,), generator=gen))
        ids[b, 0], ids[b, a], ids[b, n - 1] = cls, sep, sep
        ids[b, n:] = pad
    return ids


def masking_selection_case(B: int, T: int, seed: int, vocab_size: int = 30522, density: float = 0.5):
    """(ids, selected): (B, T) ids drawn from [min(1000, V/2), V) and a given (B, T) selection, each position
    selected with probability ``density``."""
    gen = torch.Generator().manual_seed(seed)
    ids = torch.randint(min(1000, vocab_size // 2), vocab_size, (B, T), generator=gen)  # (B, T)
    selected = torch.rand(B, T, generator=gen) < density  # (B, T), given
    return ids, selected


# ------------------------------------------------------------------------------------------ 09_nsp
def nsp_documents(n_docs: int, seed: int, word=lambda d, s, k: f"d{d}s{s}w{k}") -> list:
    """Documents (lists of sentences, each a list of tokens) whose every token names its document d and
    sentence s, so a test can trace where a sentence came from: 2 to 60 sentences of 1 to 6 tokens."""
    r = random.Random(seed)
    return [[[word(d, s, k) for k in range(r.randint(1, 6))] for s in range(r.randint(2, 60))]
            for d in range(n_docs)]


def nsp_pretraining_case(seed: int, B: int = 3, T: int = 12, vocab_size: int = 60, hidden_size: int = 16):
    """A small random bertlib BertForPreTraining (eval mode; its pooler and NSP head with larger weights and
    non-zero biases, so that a wrong vector shows) and a batch of sentence pairs: (model, ids, mask, types),
    row b holding max(3, T - 3b) real tokens `[CLS] A [SEP] B [SEP]`, then [PAD] (ids 1, 2, 0)."""
    import bertlib  # here, not at import: the setup cell imports this module before anything else

    with torch.random.fork_rng():
        torch.manual_seed(seed)
        cfg = bertlib.BertConfig(vocab_size=vocab_size, hidden_size=hidden_size, num_hidden_layers=2,
                                 num_attention_heads=2, intermediate_size=2 * hidden_size)
        model = bertlib.BertForPreTraining(cfg).eval()
        with torch.no_grad():
            for p in [*model.bert.pooler.dense.parameters(), *model.cls.seq_relationship.parameters()]:
                p.normal_(0, 0.5)
    gen = torch.Generator().manual_seed(seed)
    ids = torch.randint(5, vocab_size, (B, T), generator=gen)  # (B, T)
    mask = torch.ones(B, T, dtype=torch.long)  # (B, T)
    types = torch.zeros(B, T, dtype=torch.long)  # (B, T)
    for b in range(B):
        n = max(3, T - 3 * b)  # real length: the later rows are padded
        a = n // 2
        ids[b, 0], ids[b, a], ids[b, n - 1] = 1, 2, 2  # 1 = [CLS], 2 = [SEP]
        ids[b, n:], mask[b, n:] = 0, 0  # 0 = [PAD]
        types[b, a + 1:n] = 1
    return model, ids, mask, types


# ----------------------------------------------------------------------------------- 10_finetuning
def finetuning_tiny_batch(seed: int, B: int = 3, T: int = 10, vocab_size: int = 80):
    """(ids, mask, types), each (B, T): [CLS] A [SEP] B [SEP] [PAD]..., row b holding max(4, T - 2b) real
    tokens (ids 1, 2, 0 for [CLS], [SEP], [PAD]), the words drawn from [5, vocab_size)."""
    gen = torch.Generator().manual_seed(seed)
    ids = torch.randint(5, vocab_size, (B, T), generator=gen)  # (B, T)
    mask = torch.ones(B, T, dtype=torch.long)  # (B, T)
    types = torch.zeros(B, T, dtype=torch.long)  # (B, T)
    for b in range(B):
        n = max(4, T - 2 * b)  # real length
        a = n // 2  # the [SEP] after sentence A
        ids[b, 0], ids[b, a], ids[b, n - 1] = 1, 2, 2  # 1 = [CLS], 2 = [SEP]
        ids[b, n:], mask[b, n:] = 0, 0  # 0 = [PAD]
        types[b, a + 1:n] = 1
    return ids, mask, types
