"""Assignment 2 (chapter 2, sizes): BERT's parameter count in closed form, component by component."""
from build_notebooks import md, code, setup, solution, tests

CELLS = [
    md("""
    # Assignment 2: how many parameters?

    "BERT-Base has 110M parameters" is a rounded number. You will count them exactly, for *any*
    configuration, without building the model: a closed form in the config's fields.

    | symbol | `BertConfig` field | Base |
    |---|---|---|
    | V | `vocab_size` | 30522 |
    | P | `max_position_embeddings` | 512 |
    | S | `type_vocab_size` | 2 |
    | H | `hidden_size` | 768 |
    | I | `intermediate_size` | 3072 |
    | L | `num_hidden_layers` | 12 |

    Two counting rules cover everything: `nn.Linear(a, b)` has `a * b` weights **and `b` biases**;
    `nn.LayerNorm(H)` has `H` weights (gamma) **and `H` biases** (beta). An embedding table of `n` rows is
    `n * H`. The number of attention heads does not appear anywhere: can you see why?

    Four parts, each graded on its own. Your functions return Python `int`s. Do not build modules or call
    bertlib's counting functions: the tests switch them off.
    """),
    setup("""
    import numbers

    import torch
    import bertlib
    from bertlib import BertConfig

    # What the tests switch off while your code runs: bertlib's own counting and its modules.
    _BERTLIB_COUNTING = (bertlib.params.count_parameters, bertlib.params.embeddings_breakdown,
                         bertlib.params.layer_breakdown, bertlib.params.count_module_parameters,
                         bertlib.params._linear, bertlib.params._layer_norm, bertlib.BertModel,
                         bertlib.BertForPreTraining, bertlib.BertEmbeddings, bertlib.encoder.BertLayer)


    def _random_configs(seed, n=6):
        # Fresh, valid configs of all shapes (H a multiple of the head count, as BertConfig demands).
        gen = torch.Generator().manual_seed(seed)
        pick = lambda lo, hi: int(torch.randint(lo, hi + 1, (1,), generator=gen))
        configs = []
        for _ in range(n):
            heads = pick(1, 16)
            configs.append(BertConfig(vocab_size=pick(50, 120_000), hidden_size=heads * pick(1, 96),
                                      num_attention_heads=heads, num_hidden_layers=pick(1, 48),
                                      intermediate_size=pick(1, 8192), max_position_embeddings=pick(1, 4096),
                                      type_vocab_size=pick(1, 4)))
        return configs
    """),
    md("""
    ## Part 1: the embeddings (2 points)

    Three lookup tables (words, positions, segments) and one LayerNorm.
    """),
    solution("embeddings", '''
    def embeddings_params(cfg):
        """Parameters of BertEmbeddings for config cfg."""
        ### BEGIN SOLUTION
        H = cfg.hidden_size
        tables = (cfg.vocab_size + cfg.max_position_embeddings + cfg.type_vocab_size) * H
        return tables + 2 * H  # LayerNorm: gamma and beta
        ### END SOLUTION
    '''),
    tests("test_embeddings", 2, '''
    got = embeddings_params(BertConfig.base())
    assert isinstance(got, numbers.Integral), f"return an int, got {type(got).__name__} {got!r}"
    H = 768
    assert got == 23_837_184, (
        f"counted {got:,} parameters in BERT-Base's embeddings; expected 23,837,184 "
        f"(you are off by {got - 23_837_184:,} = {(got - 23_837_184) / H:g} x H)")
    ### BEGIN HIDDEN TESTS
    for cfg in _random_configs(201):
        expected = bertlib.params.embeddings_breakdown(cfg)["total"]
        with bertlib_unavailable(*_BERTLIB_COUNTING):
            got = embeddings_params(cfg)
        assert got == expected, f"{cfg}: counted {got:,}, expected {expected:,}"
    ### END HIDDEN TESTS
    '''),
    md("""
    ## Part 2: one encoder layer (3 points)

    Self-attention (query, key, value), its output projection and LayerNorm; the feed-forward network
    (H -> I, I -> H) and its LayerNorm. Every `nn.Linear` here has a bias.
    """),
    solution("layer", '''
    def layer_params(cfg):
        """Parameters of one BertLayer."""
        ### BEGIN SOLUTION
        H, I = cfg.hidden_size, cfg.intermediate_size
        attention = 3 * (H * H + H) + (H * H + H) + 2 * H  # Q, K, V, output dense, LayerNorm
        feed_forward = (H * I + I) + (I * H + H) + 2 * H  # up, down, LayerNorm
        return attention + feed_forward
        ### END SOLUTION
    '''),
    tests("test_layer", 3, '''
    got = layer_params(BertConfig.base())
    assert isinstance(got, numbers.Integral), f"return an int, got {type(got).__name__} {got!r}"
    assert got == 7_087_872, (
        f"counted {got:,} parameters in one BERT-Base layer; expected 7,087,872 "
        f"(you are off by {got - 7_087_872:,} = {(got - 7_087_872) / 768:g} x H)")
    ### BEGIN HIDDEN TESTS
    for cfg in _random_configs(202):
        expected = bertlib.params.layer_breakdown(cfg)["total"]
        with bertlib_unavailable(*_BERTLIB_COUNTING):
            got = layer_params(cfg)
        assert got == expected, f"{cfg}: counted {got:,}, expected {expected:,}"
    ### END HIDDEN TESTS
    '''),
    md("""
    ## Part 3: the whole BertModel (2 points)

    Return a dict with the keys `"embeddings"`, `"encoder"` (all L layers), `"pooler"` (a dense H -> H on
    the [CLS] vector) and `"total"`. Use your `embeddings_params` and `layer_params`: while this part is
    tested they are replaced by correct versions, so a mistake in part 1 or 2 does not cost you twice.
    """),
    solution("model", '''
    def bert_model_params(cfg):
        """{"embeddings", "encoder", "pooler", "total"} for BertModel."""
        ### BEGIN SOLUTION
        H = cfg.hidden_size
        counts = {
            "embeddings": embeddings_params(cfg),
            "encoder": cfg.num_hidden_layers * layer_params(cfg),
            "pooler": H * H + H,
        }
        counts["total"] = sum(counts.values())
        return counts
        ### END SOLUTION
    '''),
    tests("test_model", 2, '''
    # Parts 1 and 2, correct, for the two configs of this visible test.
    _known = {BertConfig.base(): (23_837_184, 7_087_872), BertConfig.large(): (31_782_912, 12_596_224)}
    _yours = embeddings_params, layer_params
    embeddings_params, layer_params = (lambda c: _known[c][0]), (lambda c: _known[c][1])
    try:
        got_base, got_large = bert_model_params(BertConfig.base()), bert_model_params(BertConfig.large())
    finally:
        embeddings_params, layer_params = _yours
    assert isinstance(got_base, dict) and set(got_base) == {"embeddings", "encoder", "pooler", "total"}, (
        f"expected a dict with keys embeddings, encoder, pooler, total; got {got_base!r}")
    expected = {"embeddings": 23_837_184, "encoder": 85_054_464, "pooler": 590_592, "total": 109_482_240}
    for key in expected:
        assert got_base[key] == expected[key], f"BERT-Base {key}: counted {got_base[key]:,}, expected {expected[key]:,}"
    assert got_large["total"] == 335_141_888, f"BERT-Large: counted {got_large['total']:,}, expected 335,141,888"
    ### BEGIN HIDDEN TESTS
    configs = _random_configs(203) + [BertConfig(vocab_size=97, hidden_size=24, num_attention_heads=3,
                                                 num_hidden_layers=2, intermediate_size=40)]
    _ref = {c: (bertlib.params.embeddings_breakdown(c)["total"], bertlib.params.layer_breakdown(c)["total"])
            for c in configs}
    expected = {c: bertlib.count_parameters(c) for c in configs}
    # The small config is also counted on a real module: the closed form must equal what torch counts.
    small = configs[-1]
    assert bertlib.count_module_parameters(bertlib.BertModel(small))["total"] == expected[small]["total"]
    _yours = embeddings_params, layer_params
    embeddings_params, layer_params = (lambda c: _ref[c][0]), (lambda c: _ref[c][1])
    try:
        with bertlib_unavailable(*_BERTLIB_COUNTING):
            got = {c: bert_model_params(c) for c in configs}
    finally:
        embeddings_params, layer_params = _yours
    for c in configs:
        assert {k: got[c][k] for k in expected[c]} == expected[c], f"{c}: counted {got[c]}, expected {expected[c]}"
    ### END HIDDEN TESTS
    '''),
    md("""
    ## Part 4: the pretraining heads (2 points)

    `BertForPreTraining` adds two heads to BertModel. Return `{"cls.predictions": ..., "cls.seq_relationship": ...}`:

    - `cls.predictions` (MLM): a transform (dense H -> H, GELU, LayerNorm), then a projection H -> V to the
      vocabulary. Its V x H weight **is** the word-embedding matrix (tied: one tensor, already counted in
      the embeddings); it adds one bias per word.
    - `cls.seq_relationship` (NSP): a linear layer H -> 2 on the pooled [CLS] vector.
    """),
    solution("heads", '''
    def pretraining_heads_params(cfg):
        """{"cls.predictions", "cls.seq_relationship"} for BertForPreTraining's heads."""
        ### BEGIN SOLUTION
        H, V = cfg.hidden_size, cfg.vocab_size
        transform = (H * H + H) + 2 * H  # dense + LayerNorm (GELU has no parameters)
        return {"cls.predictions": transform + V,  # decoder weight tied: only its bias is new
                "cls.seq_relationship": H * 2 + 2}
        ### END SOLUTION
    '''),
    tests("test_heads", 2, '''
    got = pretraining_heads_params(BertConfig.base())
    assert isinstance(got, dict) and set(got) == {"cls.predictions", "cls.seq_relationship"}, (
        f"expected a dict with keys cls.predictions and cls.seq_relationship; got {got!r}")
    assert got["cls.seq_relationship"] == 1_538, f"NSP head: counted {got['cls.seq_relationship']:,}, expected 1,538"
    assert got["cls.predictions"] == 622_650, (
        f"MLM head: counted {got['cls.predictions']:,}, expected 622,650 (off by "
        f"{got['cls.predictions'] - 622_650:,}; V x H = 23,440,896 would mean the tied decoder is counted twice)")
    ### BEGIN HIDDEN TESTS
    for cfg in _random_configs(204):
        full = bertlib.count_parameters(cfg, with_pretraining_heads=True)
        expected = {k: full[k] for k in ("cls.predictions", "cls.seq_relationship")}
        with bertlib_unavailable(*_BERTLIB_COUNTING):
            got = pretraining_heads_params(cfg)
        assert {k: got[k] for k in expected} == expected, f"{cfg}: counted {got}, expected {expected}"
    ### END HIDDEN TESTS
    '''),
    md("""
    ## Where the parameters are

    Run this to see how BERT-Base's 110M parameters split. Almost a quarter sit in the word-embedding
    table; the twelve layers hold the rest.
    """),
    code("""
    counts = bert_model_params(BertConfig.base())
    for name, n in counts.items():
        print(f"{name:>10}: {n:>12,}  ({n / counts['total']:.1%})")
    """),
]
