"""The encoder-layer chapter's demo module: the worked numbers, the real-checkpoint callbacks, the widgets
and the static demos' states (course/demos/ch02_encoder_layer.py)."""
from __future__ import annotations

import math

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import pytest
import torch
import torch.nn.functional as F

from bertlib import BertModel, BertTokenizer
from course.demos import ch02_encoder_layer as demo


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    plt.close("all")


@pytest.fixture(scope="module")
def minilm(minilm_dir):
    return BertModel.from_pretrained(minilm_dir).eval(), BertTokenizer.from_pretrained(minilm_dir)


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
    demo.plot_attention_row(demo.attention_row(model, tok, demo.SENTENCES["river 2"], 2, 1))
    demo.plot_gelu(demo.gelu_forms())
    ax = demo.model_diagram(model.config)
    assert any(str(model.config.intermediate_size) in t.get_text() for t in ax.texts)


def test_make_demo_follows_its_controls(minilm):
    model, tok = minilm
    tabs = demo.make_demo(model, tok)
    sim_box, att_box = tabs.children
    a, b = sim_box.children[0].children
    before = sim_box.children[1].value
    b.value = "river 2"
    assert sim_box.children[1].value != before
    expected = demo.layer_similarity(*(demo.word_vectors(model, tok, demo.SENTENCES[n]) for n in (a.value, b.value)))
    assert f"{expected[-1]:.3f}" in sim_box.children[1].value
    sentence, layer, head = att_box.children[0].children
    layer.value, head.value = 4, 2
    row = demo.attention_row(model, tok, demo.SENTENCES[sentence.value], 4, 2)
    assert demo.describe_row(row) in att_box.children[1].value
    assert bytes(att_box.children[2].value).startswith(b"\x89PNG")


def test_static_demos_states_match_the_callbacks(minilm):
    model, tok = minilm
    similarity, picker = demo.static_demos(model=model, tokenizer=tok)
    assert similarity.demo_id.startswith("ch02-") and picker.demo_id.startswith("ch02-")
    vectors = demo.all_word_vectors(model, tok)
    sims = demo.layer_similarity(vectors["river 1"], vectors["money 2"])
    assert similarity.caption(a="river 1", b="money 2") == demo.similarity_caption("river 1", "money 2", sims)
    row = demo.attention_row(model, tok, demo.SENTENCES["money 1"], 5, 3)
    assert picker.caption(sentence="money 1", layer=5, head=3) == demo.describe_row(row)
    row = demo.attention_row(model, tok, demo.SENTENCES["river 2"], 2, None)
    assert picker.caption(sentence="river 2", layer=2, head="mean") == demo.describe_row(row)
    assert 'data-demo="ch02-attention-picker"' in picker.to_html()
