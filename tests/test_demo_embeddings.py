"""Chapter 4's demo (course/demos/embeddings.py): the three embeddings of a token and their sum.

Live callbacks (what a slider calls in Jupyter) are called with several values; each static demo state's caption
is checked against an independent computation with bertlib. The page test (tests/test_pages.py) checks the
same captions in the built book."""
from __future__ import annotations

import re

import numpy as np
import pytest
import torch

from bertlib import (
    BertConfig, BertEmbeddings,
)
from course.demos import embeddings as embeddings_demo
from course.demos._live import caption_html
from demo_checks import check_editions, live_panel, live_shows


@pytest.fixture(scope="module")
def pair_inputs(minilm_tokenizer):
    enc = minilm_tokenizer("my dog is cute", "he likes playing", return_tensors="pt")
    return enc["input_ids"], enc["token_type_ids"], minilm_tokenizer.convert_ids_to_tokens(enc["input_ids"][0])


@pytest.mark.parametrize("index", [0, 4, 7, 9])
def test_embedding_parts_add_up_to_the_module(minilm_model, pair_inputs, index):
    ids, seg, tokens = pair_inputs
    emb = minilm_model.embeddings
    parts = embeddings_demo.embedding_parts(emb, ids, seg, index)
    assert set(parts) == set(embeddings_demo.PARTS)
    H = minilm_model.config.hidden_size
    assert all(v.shape == (H,) for v in parts.values())
    np.testing.assert_allclose(parts["sum"], parts["token"] + parts["position"] + parts["segment"], atol=1e-6)
    with torch.no_grad():
        expected = emb(ids, seg)[0, index].numpy()
    np.testing.assert_allclose(parts["layernorm"], expected, atol=1e-5)
    np.testing.assert_allclose(parts["segment"],
                               emb.token_type_embeddings.weight[int(seg[0, index])].detach().numpy())
    np.testing.assert_allclose(parts["position"], emb.position_embeddings.weight[index].detach().numpy())


def test_embedding_parts_worked_example():
    """The source's 4-dimensional example, through the demo's callback."""
    emb = BertEmbeddings(BertConfig(vocab_size=10, hidden_size=4, num_attention_heads=1, intermediate_size=8,
                                    max_position_embeddings=8)).eval()
    with torch.no_grad():
        emb.word_embeddings.weight[7] = torch.tensor([0.6, -0.2, 0.3, 0.5])
        emb.position_embeddings.weight[5] = torch.tensor([0.25, -0.15, 0.20, 0.10])
        emb.token_type_embeddings.weight[1] = -0.1
    parts = embeddings_demo.embedding_parts(emb, torch.tensor([[0, 0, 0, 0, 0, 7]]),
                                            torch.tensor([[0, 0, 0, 1, 1, 1]]), 5)
    np.testing.assert_allclose(parts["sum"], [0.75, -0.45, 0.40, 0.50], atol=1e-6)
    assert abs(parts["layernorm"].mean()) < 1e-6 and abs(parts["layernorm"].std() - 1) < 1e-4


def test_embedding_parts_bad_input(minilm_model, pair_inputs):
    ids, seg, _ = pair_inputs
    with pytest.raises(IndexError):
        embeddings_demo.embedding_parts(minilm_model.embeddings, ids, seg, ids.size(1))
    with pytest.raises(ValueError):
        embeddings_demo.embedding_parts(minilm_model.embeddings, ids[0], seg[0], 0)


@pytest.mark.parametrize("dims", [4, 16])
def test_parts_figure(minilm_model, pair_inputs, dims):
    ids, seg, tokens = pair_inputs
    parts = embeddings_demo.embedding_parts(minilm_model.embeddings, ids, seg, 4)
    fig = embeddings_demo.parts_plotly(parts, dims=dims)
    assert len(fig.data) == len(embeddings_demo.PARTS)
    for bars, key in zip(fig.data, embeddings_demo.PARTS):
        np.testing.assert_allclose(bars.y, parts[key][:dims], atol=1e-4)  # the page's 4 decimals


def test_token_labels(pair_inputs):
    ids, seg, tokens = pair_inputs
    labels = embeddings_demo.token_labels(tokens, seg)
    assert labels[0] == "0: [CLS] (A)" and labels[4] == "4: cute (A)" and labels[7] == "7: likes (B)"


def test_make_demo_follows_the_dropdown(minilm_model, pair_inputs):
    ids, seg, tokens = pair_inputs
    w = embeddings_demo.make_demo(minilm_model.embeddings, tokens, ids, seg, index=4)
    (pick,), label, figure, _ = live_panel(w)
    first = embeddings_demo.parts_plotly(embeddings_demo.embedding_parts(minilm_model.embeddings, ids, seg, 4))
    assert label.value.startswith("<code>4: cute (A), dimension 0: ") and live_shows(figure, first)
    pick.value = 7
    assert "7: likes (B)" in label.value and not live_shows(figure, first)


def test_static_embeddings(minilm_dir, minilm_tokenizer):
    import numpy as np
    import torch

    from bertlib import BertModel
    from course.demos import embeddings as ch

    emb = BertModel.from_pretrained(minilm_dir).embeddings
    (d,) = ch.static_demos(emb, minilm_tokenizer)
    enc = minilm_tokenizer(*ch.PAIR, return_tensors="pt")
    with torch.no_grad():
        out = emb(enc["input_ids"], enc["token_type_ids"])[0]  # (T, H)
    tokens = minilm_tokenizer.convert_ids_to_tokens(enc["input_ids"][0])
    assert d.controls[0].default == tokens.index("cute")
    for i in range(len(tokens)):
        state = d.state_at([i])
        token, position, segment, total, normed = (np.array(t.y) for t in state["figure"].data)
        assert np.allclose(token + position + segment, total, atol=2e-4)
        assert np.allclose(normed, out[i, :16].numpy(), atol=1e-4)  # the module's own output
        t, p, s, tot = (float(x) for x in re.findall(r"-?\d+\.\d+", state["caption"].split("dimension 0: ")[1]))
        assert abs(t + p + s - tot) <= 0.0015 and abs(tot - float(total[0])) < 6e-4
        zh = d.state_at([i], "zh_CN")
        assert zh["caption"] == state["caption"].replace(", dimension 0: ", "，第 0 维：")
        assert [t.y for t in zh["figure"].data] == [t.y for t in state["figure"].data]
    check_editions(d)
    # the live demo on the same embeddings shows the page's figure and caption for each token
    live = ch.make_demo(emb, tokens, enc["input_ids"], enc["token_type_ids"], index=0)
    (pick,), label, figure, _ = live_panel(live)
    for i in (0, tokens.index("cute"), len(tokens) - 1):
        pick.value = i
        state = d.state_at([i])
        assert live_shows(figure, state["figure"]) and label.value == caption_html(state["caption"])
