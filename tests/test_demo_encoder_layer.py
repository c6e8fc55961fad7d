"""The encoder-layer chapter's demo module: the worked numbers, the real-checkpoint callbacks, the widgets
and the static demos' states (course/demos/encoder_layer.py)."""
from __future__ import annotations

import math

import pytest
import torch
import torch.nn.functional as F

from course.demos import encoder_layer as demo
from demo_checks import check_editions, live_panel, live_shows


@pytest.fixture(scope="module")
def minilm(minilm_model, minilm_tokenizer):
    """The conftest's shared MiniLM and its tokenizer, as the pair this chapter's demo takes."""
    return minilm_model, minilm_tokenizer


def test_three_token_example_matches_the_formula_and_the_source():
    ex = demo.three_token_example()
    X = torch.tensor(demo.X_3)
    expected = torch.softmax(X @ X.T / math.sqrt(2), dim=-1)  # (3, 3)
    assert torch.allclose(ex["weights"], expected)
    assert torch.allclose(ex["context"], expected @ X)
    # the source's hand-rounded row of 爱
    assert torch.allclose(ex["weights"][1], torch.tensor([0.20, 0.40, 0.40]), atol=0.005)
    assert torch.allclose(ex["context"][1], torch.tensor([0.60, 0.80]), atol=0.005)


def test_identity_self_attention_is_the_bare_formula():
    ex = demo.three_token_example()
    with torch.no_grad():
        out, probs = demo.identity_self_attention()(ex["X"][None], output_attentions=True)
    assert torch.allclose(out[0], ex["context"]) and torch.allclose(probs[0, 0], ex["weights"])


def test_gelu_forms_gap_is_small_and_where_expected():
    forms = demo.gelu_forms()
    gap = (forms["tanh"] - forms["erf"]).abs()
    assert forms["max_gap"] == pytest.approx(gap.max().item())
    assert 1e-4 < forms["max_gap"] < 1e-3
    assert torch.allclose(forms["erf"], forms["x"] * 0.5 * (1 + torch.erf(forms["x"] / math.sqrt(2))))


def test_post_ln_keeps_the_norm_pre_ln_grows_it():
    post, pre = demo.residual_norms("post", num_layers=6), demo.residual_norms("pre", num_layers=6)
    assert len(post) == len(pre) == 7
    assert all(abs(v - math.sqrt(64)) < 1e-3 for v in post[1:])  # a fresh LayerNorm: norm sqrt(H)
    assert all(b > a for a, b in zip(pre, pre[1:]))
    with pytest.raises(ValueError, match="post"):
        demo.residual_norms("middle")


def test_bank_sits_at_one_position_and_the_senses_separate(minilm):
    model, tok = minilm
    positions = {demo.word_position(tok, s)[1] for s in demo.SENTENCES.values()}
    assert len(positions) == 1
    vectors = demo.all_word_vectors(model, tok)
    names = list(vectors)
    sims = {(a, b): demo.layer_similarity(vectors[a], vectors[b]) for a in names for b in names if a < b}
    assert all(len(s) == model.config.num_hidden_layers + 1 for s in sims.values())
    assert all(s[0] == pytest.approx(1.0, abs=1e-6) for s in sims.values())  # identical embeddings
    same = [s[-1] for (a, b), s in sims.items() if demo.SENSE[a] == demo.SENSE[b]]
    cross = [s[-1] for (a, b), s in sims.items() if demo.SENSE[a] != demo.SENSE[b]]
    assert min(same) > max(cross)
    a, b = vectors["river 1"][-1], vectors["money 1"][-1]
    assert sims[("money 1", "river 1")][-1] == pytest.approx(F.cosine_similarity(a, b, dim=0).item())


def test_word_position_refuses_a_missing_word(minilm):
    _, tok = minilm
    with pytest.raises(ValueError, match="bank"):
        demo.word_position(tok, "no such word here")


@pytest.mark.parametrize("layer, head", [(1, None), (3, 0), (6, 11)])
def test_attention_row_is_the_models_row(minilm, layer, head):
    model, tok = minilm
    s = demo.SENTENCES["money 1"]
    row = demo.attention_row(model, tok, s, layer, head)
    assert sum(row["weights"]) == pytest.approx(1.0, abs=1e-5)
    enc = tok(s, return_tensors="pt")
    with torch.no_grad():
        probs = model(**enc, output_attentions=True).attentions[layer - 1][0]  # (nh, T, T)
    expected = probs[:, row["query"]].mean(0) if head is None else probs[head, row["query"]]
    assert torch.allclose(torch.tensor(row["weights"]), expected, atol=1e-6)
    assert row["tokens"][row["query"]] == demo.WORD
    assert row["top_token"] in demo.describe_row(row)


def test_attention_row_refuses_bad_layer_and_head(minilm):
    model, tok = minilm
    with pytest.raises(ValueError, match="layer"):
        demo.attention_row(model, tok, demo.SENTENCES["river 1"], 0, None)
    with pytest.raises(ValueError, match="head"):
        demo.attention_row(model, tok, demo.SENTENCES["river 1"], 1, 12)


def test_figures_draw(minilm):
    model, tok = minilm
    demo.plot_similarity(demo.all_word_vectors(model, tok))
    demo.plot_gelu(demo.gelu_forms())
    ax = demo.model_diagram(model.config)
    assert any(str(model.config.intermediate_size) in t.get_text() for t in ax.texts)


def test_make_demo_follows_its_controls(minilm):
    model, tok = minilm
    tabs = demo.make_demo(model, tok)
    (a, b), sim_line, sim_figure, sim_table = live_panel(tabs.children[0])
    before = sim_line.value
    b.value = "river 2"
    assert sim_line.value != before
    expected = demo.layer_similarity(*(demo.word_vectors(model, tok, demo.SENTENCES[n]) for n in (a.value, b.value)))
    assert f"{expected[-1]:.3f}" in sim_line.value
    (sentence, layer, head), att_line, att_figure, _ = live_panel(tabs.children[1])
    layer.value, head.value = 4, 2
    row = demo.attention_row(model, tok, demo.SENTENCES[sentence.value], 4, 2)
    assert demo.describe_row(row) in att_line.value
    # the live figures and table are the page's, for the same control values
    assert live_shows(att_figure, demo.attention_state(model, tok, sentence.value, 4, 2)["figure"])
    similarity = demo.similarity_state(demo.all_word_vectors(model, tok), a.value, b.value)
    assert live_shows(sim_figure, similarity["figure"]) and sim_table.value == similarity["html"]


def test_static_demos_states_match_the_callbacks(minilm):
    model, tok = minilm
    similarity, picker = demo.static_demos(model=model, tokenizer=tok)
    assert (similarity.demo_id, picker.demo_id) == ("bank-similarity", "attention-picker")  # named by topic
    vectors = demo.all_word_vectors(model, tok)
    sims = demo.layer_similarity(vectors["river 1"], vectors["money 2"])
    assert similarity.caption(a="river 1", b="money 2") == demo.similarity_caption("river 1", "money 2", sims)
    row = demo.attention_row(model, tok, demo.SENTENCES["money 1"], 5, 3)
    assert picker.caption(sentence="money 1", layer=5, head=3) == demo.describe_row(row)
    row = demo.attention_row(model, tok, demo.SENTENCES["river 2"], 2, None)
    assert picker.caption(sentence="river 2", layer=2, head="mean") == demo.describe_row(row)
    assert 'data-demo="attention-picker"' in picker.to_html()
    assert picker.caption("zh_CN", sentence="river 2", layer=2, head="mean") == demo.describe_row(row, "zh_CN")
    assert demo.describe_row(row, "zh_CN").startswith("第 2 层，各头平均：'bank' 把最多的注意力给了 ")
    assert similarity.caption("zh_CN", a="river 1", b="money 2").startswith("河岸 1 / 银行 2：嵌入处余弦为 ")
    check_editions(similarity)
    check_editions(picker)


def test_projected_example_is_the_formula_and_bertlibs_module():
    ex = demo.projected_example()
    X = torch.tensor(demo.X_3)
    Q, K, V = (X @ torch.tensor(w) for w in (demo.W_Q, demo.W_K, demo.W_V))
    weights = torch.softmax(Q @ K.T / math.sqrt(2), dim=-1)  # (3, 3)
    assert torch.equal(ex["Q"], Q) and torch.equal(ex["K"], K) and torch.equal(ex["V"], V)
    assert torch.allclose(ex["weights"], weights) and torch.allclose(ex["context"], weights @ V)
    assert torch.allclose(ex["module_weights"], weights, atol=1e-6)
    assert torch.allclose(ex["module_context"], weights @ V, atol=1e-6)
    assert ex["weights"][1].argmax() == 0  # the chapter: with projections 爱 looks mostly at 我


def test_projected_self_attention_loads_the_matrices_the_formula_way():
    """nn.Linear computes x W^T: a non-symmetric W must come out as X @ W, not X @ W^T."""
    w = [[1.0, 2.0], [3.0, 4.0]]
    attn = demo.projected_self_attention(w, w, w)
    X = torch.tensor(demo.X_3)
    with torch.no_grad():
        assert torch.allclose(attn.query(X), X @ torch.tensor(w))
        assert not torch.allclose(attn.query(X), X @ torch.tensor(w).T)


def test_layer_costs_and_their_crossings():
    from bertlib import BertConfig

    base = BertConfig.base()
    H, I, A = base.hidden_size, base.intermediate_size, base.num_attention_heads  # noqa: E741
    c = demo.layer_costs(base, 512)
    assert c == {"projections": 4 * 512 * H * H, "ffn": 2 * 512 * H * I, "attention": 2 * 512 * 512 * H,
                 "attention_weights": A * 512 * 512, "ffn_activations": 512 * I}
    first = lambda cond: next(T for T in range(1, 10_000) if cond(demo.layer_costs(base, T)))  # noqa: E731
    assert first(lambda c: c["attention"] >= c["ffn"]) == I
    assert first(lambda c: c["attention"] >= c["ffn"] + c["projections"]) == 2 * H + I
    assert first(lambda c: c["attention_weights"] >= c["ffn_activations"]) == I // A
    with pytest.raises(ValueError, match="T"):
        demo.layer_costs(base, 0)
    demo.plot_costs(base, [16, 128, 512, 4096], marks=(128, 512))


def test_special_token_shares_are_the_models_attention(minilm):
    model, tok = minilm
    s = demo.SENTENCES["money 1"]
    shares = demo.special_token_shares(model, tok, [s])
    L = model.config.num_hidden_layers
    assert all(len(v) == L for v in shares.values())
    with torch.no_grad():
        att = model(**tok(s, return_tensors="pt"), output_attentions=True).attentions
    for i in range(L):  # [CLS] is position 0 and [SEP] the last: the weight in those columns
        assert shares["cls"][i] == pytest.approx(att[i][0, :, :, 0].mean().item(), abs=1e-6)
        assert shares["sep"][i] == pytest.approx(att[i][0, :, :, -1].mean().item(), abs=1e-6)
        assert 0 <= shares["added"][i] <= 1 and shares["cls_norm"][i] > 0
    # the chapter's story: in the middle layers [CLS] takes most of the weight but adds much less
    assert max(shares["cls"]) > 0.5
    mid = [i for i in range(L) if shares["cls"][i] > 0.5]
    assert all(shares["added"][i] < shares["cls"][i] for i in mid)
    demo.plot_special_shares(shares)


def test_the_picker_opens_on_a_word_not_on_cls(minilm):
    model, tok = minilm
    _, picker = demo.static_demos(model=model, tokenizer=tok)
    view = demo.DEFAULT_VIEW
    row = demo.attention_row(model, tok, demo.SENTENCES[view["sentence"]], view["layer"], view["head"])
    assert row["top_token"] not in ("[CLS]", "[SEP]", demo.WORD)
    assert picker.caption(**view) == demo.describe_row(row)
    payload = picker.payload()  # the state the page shows first is this one
    assert payload["states"][picker.index_of(payload["default"])]["caption"] == demo.describe_row(row)
    special = sum(w for t, w in zip(row["tokens"], row["weights"]) if t in ("[CLS]", "[SEP]"))
    assert row["special"] == pytest.approx(special) and f"{special:.2f}" in demo.describe_row(row)


@pytest.mark.parametrize("language", ["en", "zh_CN"])
@pytest.mark.parametrize("narrow", [False, True])
def test_model_diagram_words_stay_in_their_boxes_and_the_figure(narrow, language):
    """Both drawings of the model diagram (the page's, the phone's), in both editions' words: every box's words
    inside its box, every text inside the figure, no two texts on top of each other."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.patches import Rectangle

    from bertlib import BertConfig
    from course.plots import Edition

    ax = demo.model_diagram(BertConfig.base(), narrow=narrow, edition=Edition(language))
    renderer = FigureCanvasAgg(ax.figure).get_renderer()
    figure_box = ax.figure.bbox
    texts = [(t, t.get_window_extent(renderer)) for t in ax.texts if t.get_text().strip()]
    boxes = [p.get_window_extent(renderer) for p in ax.patches if isinstance(p, Rectangle) and p.get_fill()]
    assert len(boxes) == len(demo._diagram_boxes(BertConfig.base()))
    for t, e in texts:
        assert figure_box.x0 <= e.x0 and e.x1 <= figure_box.x1 and figure_box.y0 <= e.y0 and e.y1 <= figure_box.y1, \
            f"{t.get_text()!r} leaves the figure"
    for box in boxes:
        inside = [(t, e) for t, e in texts if box.contains(*e.get_points().mean(0))]
        assert len(inside) == 1, [t.get_text() for t, _ in inside]
        t, e = inside[0]
        assert box.x0 < e.x0 and e.x1 < box.x1 and box.y0 < e.y0 and e.y1 < box.y1, f"{t.get_text()!r} leaves its box"
    for i, (a, ea) in enumerate(texts):
        for b, eb in texts[i + 1:]:
            assert not ea.overlaps(eb), f"{a.get_text()!r} runs into {b.get_text()!r}"


def test_model_diagram_picture_carries_a_readable_phone_drawing():
    """The page's PNG carries the phone's (course/plots.py's format): a caption, alt text that says the boxes and the
    shapes, and a phone drawing whose smallest text reads at a phone's width, which the page's does not."""
    from bertlib import BertConfig
    from course.plots import PHONE_COLUMN_PX, READABLE_PX, png_size, png_text, split_narrow

    cfg = BertConfig.base()
    page, phone = split_narrow(demo.model_diagram_picture(cfg).data)
    assert phone is not None, "no phone drawing in the PNG"
    text = png_text(page)
    assert "Diagram" not in text  # a figure with a phone version: the page test checks its text at 390 px
    assert str(cfg.hidden_size) in text["Title"] and f"(B, T, {cfg.intermediate_size})" in text["Description"]
    shown = lambda png: float(png_text(png)["Text size"]) * min(1.0, PHONE_COLUMN_PX / png_size(png)[0])  # noqa: E731
    assert shown(phone) >= READABLE_PX * 1.05 > shown(page), (shown(phone), shown(page))


def test_model_diagram_picture_carries_its_chinese_drawing():
    """Inside the English PNG, as every figure's (course/plots.py's chunk): the Chinese edition's drawing, page and
    phone, every word of it from figures.po (none left English, no glyph missing from the font), its caption and alt
    text Chinese with the English one's numbers; the English drawing keeps no Chinese."""
    import json
    import re

    from bertlib import BertConfig
    from course.plots import png_text, split_edition, split_narrow

    cfg = BertConfig.base()
    english, chinese = split_edition(demo.model_diagram_picture(cfg).data)
    assert chinese is not None, "no Chinese drawing in the PNG"
    en, zh = png_text(split_narrow(english)[0]), png_text(split_narrow(chinese)[0])
    assert split_narrow(chinese)[1] is not None, "the Chinese drawing has no phone version"
    assert "Language" not in en and not re.search(r"[\u4e00-\u9fff]", en["Title"] + en["Description"])
    assert zh["Language"] == "zh_CN"
    assert "Untranslated" not in zh and "Missing glyphs" not in zh, (zh.get("Untranslated"), zh.get("Missing glyphs"))
    assert "多头自注意力" in zh["Description"] and "前馈" in zh["Title"] and zh["Title"].endswith("。")
    assert zh["Description"].startswith(zh["Title"])
    numbers = lambda text: sorted(re.findall(r"\d+(?:,\d{3})*", text))  # noqa: E731
    assert numbers(zh["Title"]) == numbers(en["Title"])
    assert numbers(zh["Description"]) == numbers(en["Description"])
    used = set(json.loads(zh["Catalogue"]))
    assert {"× {L} layers", "× {L} layers (BertLayer)", "residual"} <= used  # the phone's label and the page's
