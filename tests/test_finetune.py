"""bertlib.training.finetune and its datasets: the shipped datasets are consistent, the metrics are the standard
ones, and each head takes a training step on a batch that lowers its loss."""
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from bertlib.training.finetune import (
    TAGS,
    TASKS,
    classification_baselines,
    encode_classification,
    encode_qa,
    encode_tagging,
    evaluate_qa,
    DATA_DIR,
    finetune_task,
    label_names,
    load_model,
    load_task,
    pieces_with_offsets,
    qa_baselines,
    spans_of,
    span_f1,
    squad_scores,
    tagging_baselines,
)
from bertlib.training.tasks import get_task
from bertlib import BertForSequenceClassification

ROOT = Path(__file__).resolve().parent.parent
os.environ.setdefault("HF_HUB_OFFLINE", "1")


# ----------------------------------------------------------------------------- the shipped data
def test_datasets_are_package_data_inside_bertlib():
    """The library never reaches out of its package for data: the datasets ship inside it."""
    import bertlib

    assert DATA_DIR.is_relative_to(Path(bertlib.__file__).resolve().parent), DATA_DIR
    assert all((DATA_DIR / task / "train.jsonl").is_file() for task in TASKS)


@pytest.mark.parametrize("task", TASKS)
def test_dataset_ships_with_a_readme_and_disjoint_splits(task):
    train, test = load_task(task)
    assert len(train) >= 700 and len(test) >= 200
    assert task in (DATA_DIR / "README.md").read_text()
    key = {"docstring_topics": "text", "code_spans": "tokens", "function_qa": "question"}[task]
    train_keys = {json.dumps(r[key]) + json.dumps(r.get("context")) for r in train}
    assert not train_keys & {json.dumps(r[key]) + json.dumps(r.get("context")) for r in test}


def test_tagging_rows_are_aligned_bio():
    for row in sum(load_task("code_spans"), []):
        assert len(row["tokens"]) == len(row["tags"]) and set(row["tags"]) <= set(TAGS)
        assert "B-CODE" in row["tags"]


def test_qa_answers_are_spans_of_their_context():
    for row in sum(load_task("function_qa"), []):
        (text,), (start,) = row["answers"]["text"], row["answers"]["answer_start"]
        assert row["context"][start:start + len(text)] == text


def test_qa_test_modules_are_unseen_in_training():
    train, test = load_task("function_qa")
    assert not {r["module"] for r in train} & {r["module"] for r in test}


# ----------------------------------------------------------------------------- metrics and baselines
def test_bio_spans_and_span_f1():
    assert spans_of(["O", "B-CODE", "I-CODE", "O", "B-CODE"]) == {(1, 3), (4, 5)}
    assert spans_of(["I-CODE", "I-CODE", "B-CODE"]) == {(0, 2), (2, 3)}
    gold = [["B-CODE", "I-CODE", "O", "B-CODE"]]
    assert span_f1(gold, gold)["f1"] == 1.0
    half = span_f1([["B-CODE", "O", "O", "B-CODE"]], gold)  # one of two spans right, one wrong
    assert half["precision"] == 0.5 and half["recall"] == 0.5 and half["word_accuracy"] == 0.75


def test_squad_exact_match_and_f1():
    s = squad_scores(["The cat sat.", "a dog", "nothing"], ["cat sat", "the dog barked", "x"])
    assert s["exact_match"] == pytest.approx(1 / 3)
    assert s["f1"] == pytest.approx((1 + 2 * (1 * 0.5) / 1.5 + 0) / 3)


def test_baselines_are_computed_and_ordered():
    c = classification_baselines(*load_task("docstring_topics"))
    assert c["majority"]["accuracy"] < 0.25 < c["bag_of_words"]["accuracy"]
    t = tagging_baselines(*load_task("code_spans"))
    assert t["all_O"]["f1"] == 0.0 < t["word_lookup"]["f1"]
    q = qa_baselines(*load_task("function_qa"))
    assert q["first_entry"]["exact_match"] < q["word_overlap"]["exact_match"]


# ----------------------------------------------------------------------------- encoding
@pytest.fixture(scope="module")
def tokenizer():
    from bertlib.training.pretraining_data import load_pretraining_data

    return load_pretraining_data().tokenizer


def test_offsets_reproduce_the_tokenizer(tokenizer):
    text = "get_bytes: Return a byte string representation or raise a KeyError."
    ids, offsets = pieces_with_offsets(text, tokenizer)
    assert ids == tokenizer.encode(text, add_special_tokens=False)
    assert [text[s:e].lower() for s, e in offsets][:3] == ["get", "_", "bytes"]


def test_qa_encoding_points_at_the_answer(tokenizer):
    rows = load_task("function_qa")[1][:50]
    feats = encode_qa(rows, tokenizer, 64, drop_unanswerable=False)
    for j, i in enumerate(feats.kept):
        s, e = int(feats.tensors["start_positions"][j]), int(feats.tensors["end_positions"][j])
        if s == 0:
            continue  # the answer fell outside the window
        assert feats.context_mask[j, s] and feats.context_mask[j, e]
        got = rows[i]["context"][feats.offsets[j][s][0]:feats.offsets[j][e][1]]
        assert got == rows[i]["answers"]["text"][0]


def test_tagging_labels_sit_on_first_pieces(tokenizer):
    rows = [{"tokens": ["call", "os.path.join", "now"], "tags": ["O", "B-CODE", "O"]}]
    tensors, starts = encode_tagging(rows, tokenizer, 16)
    labels = tensors["labels"][0]
    assert [int(labels[s]) for s in starts[0]] == [0, 1, 0]
    assert int((labels != -100).sum()) == 3  # one label per word, the other pieces are -100


# ----------------------------------------------------------------------------- a training step per head
def _tiny_head(task, num_labels, tokenizer):
    return load_model(get_task(task).head, "scratch", num_labels, seed=0, max_length=64)


def _steps_lower_loss(model, batch, steps=5, lr=3e-3):
    model.train()
    torch.manual_seed(0)
    opt = torch.optim.AdamW(model.parameters(), lr=lr)
    losses = []
    for _ in range(steps):
        loss = model(**batch).loss
        opt.zero_grad()
        loss.backward()
        assert all(p.grad is not None for n, p in model.named_parameters() if "pooler" not in n or
                   type(model).__name__ == "BertForSequenceClassification"), "a parameter got no gradient"
        opt.step()
        losses.append(float(loss.detach()))
    assert torch.isfinite(torch.tensor(losses)).all()
    assert losses[-1] < losses[0], losses
    return losses


def test_sequence_classification_step(tokenizer):
    rows = load_task("docstring_topics")[0][:16]
    labels = label_names(load_task("docstring_topics")[0])
    model, tok = _tiny_head("docstring_topics", len(labels), tokenizer)
    _steps_lower_loss(model, encode_classification(rows, tok, labels, 32))


def test_token_classification_step(tokenizer):
    rows = load_task("code_spans")[0][:16]
    model, tok = _tiny_head("code_spans", 3, tokenizer)
    _steps_lower_loss(model, encode_tagging(rows, tok, 48)[0])


def test_question_answering_step_and_decoding(tokenizer):
    rows = load_task("function_qa")[0][:16]
    model, tok = _tiny_head("function_qa", 2, tokenizer)
    feats = encode_qa(rows, tok, 64, drop_unanswerable=True)
    _steps_lower_loss(model, feats.tensors)
    scores, predictions = evaluate_qa(model, encode_qa(rows, tok, 64, drop_unanswerable=False), rows)
    assert 0.0 <= scores["exact_match"] <= 1.0 and all(isinstance(p, str) for p in predictions)
    assert all(p in r["context"] for p, r in zip(predictions, rows))


def test_minilm_head_is_fresh_and_encoder_loaded():
    model, tok = load_model(BertForSequenceClassification, "minilm", 6)
    assert set(model.newly_initialized_weights) == {"classifier.weight", "classifier.bias"}
    assert tok.vocab_size == 30522


def test_command_line_prints_json_last():
    proc = subprocess.run([sys.executable, "-m", "bertlib.finetune", "--task", "docstring_topics", "--model", "scratch",
                           "--epochs", "1", "--train-size", "64", "--threads", "1"],
                          cwd=ROOT, capture_output=True, text=True, timeout=300,
                          env={**os.environ, "HF_HUB_OFFLINE": "1"})
    assert proc.returncode == 0, proc.stderr[-2000:]
    result = json.loads(proc.stdout.strip().splitlines()[-1])
    assert result["train_examples"] == 64 and 0 <= result["scores"]["accuracy"] <= 1
    assert result["baselines"]["majority"]["accuracy"] < result["baselines"]["bag_of_words"]["accuracy"]


def test_minilm_gets_the_bert_paper_recipe_unless_told_otherwise():
    # the tiny models' 1e-3 would wreck a real checkpoint: "minilm" defaults to lr 5e-5, batch 16, 3 epochs
    r = finetune_task("docstring_topics", "minilm", train_size=16, epochs=1, baselines=False)
    assert (r["lr"], r["batch_size"], r["steps"]) == (5e-5, 16, 1)
    tiny = finetune_task("docstring_topics", "scratch", train_size=16, epochs=1, baselines=False)
    assert (tiny["lr"], tiny["batch_size"]) == (1e-3, 32)
    assert finetune_task("docstring_topics", "minilm", train_size=16, epochs=1, lr=2e-5, baselines=False)["lr"] == 2e-5


# ----------------------------------------------------------------------------- what makes fine-tuning cheaper
def test_a_batch_cut_to_its_longest_row_gives_the_same_loss(tokenizer):
    """epoch_batches drops the padding columns every row of a batch shares (trim_padding): fewer positions to
    compute, the same loss and the same gradients for the tagging head, whose labels sit on those columns."""
    from bertlib.training.loop import epoch_batches, trim_padding

    model, tok = _tiny_head("code_spans", 3, tokenizer)
    full, _ = encode_tagging(load_task("code_spans")[0][:8], tok, 64)  # (8, 64), padded to 64
    cut = trim_padding(full)
    longest = int(full["attention_mask"].sum(1).max())
    assert longest < 64 and cut["input_ids"].shape == (8, longest)
    assert cut["labels"].shape == (8, longest) and (full["labels"][:, longest:] == -100).all()
    model.eval()
    results = []
    for batch in (full, cut):
        model.zero_grad()
        loss = model(**batch).loss
        loss.backward()
        results.append((loss.detach(), [p.grad.clone() for p in model.parameters() if p.grad is not None]))
    (loss_full, grads_full), (loss_cut, grads_cut) = results
    assert torch.allclose(loss_full, loss_cut, atol=1e-6)
    assert len(grads_full) == len(grads_cut) and all(torch.allclose(a, b, atol=1e-6) for a, b in zip(grads_full, grads_cut))
    # a label per row (classification) is kept whole; a batch with no shared padding is unchanged
    topics = load_task("docstring_topics")[0]
    one = encode_classification(topics[:4], tok, label_names(topics), 48)
    assert trim_padding(one)["labels"].shape == (4,)
    assert trim_padding(cut)["input_ids"].shape == cut["input_ids"].shape
    assert next(epoch_batches(full, 8, 1, torch.Generator().manual_seed(0)))["input_ids"].shape == (8, longest)


def test_the_optimizer_steps_exactly_as_adamw_s_plain_loop(tokenizer):
    """make_optimizer takes AdamW's foreach path for speed: the same arithmetic as the one-tensor-at-a-time
    loop, so a run is the same to the last bit with either."""
    from bertlib.training.loop import make_optimizer

    topics = load_task("docstring_topics")[0]
    labels = label_names(topics)
    (first, tok), (second, _) = (_tiny_head("docstring_topics", len(labels), tokenizer) for _ in range(2))
    models = [first, second]
    models[1].load_state_dict(models[0].state_dict())
    batch = encode_classification(topics[:8], tok, labels, 32)
    fast = make_optimizer(models[0], 1e-3, 0.01)
    params = list(models[1].parameters())
    plain = torch.optim.AdamW([{"params": [p for p in params if p.dim() >= 2], "weight_decay": 0.01},
                               {"params": [p for p in params if p.dim() < 2], "weight_decay": 0.0}],
                              lr=1e-3, betas=(0.9, 0.98), eps=1e-6, foreach=False)
    assert fast.defaults["foreach"] is True
    for _ in range(3):
        for model, opt in zip(models, (fast, plain)):
            torch.manual_seed(0)  # the same dropout masks on both sides
            opt.zero_grad()
            model.train()(**batch).loss.backward()
            opt.step()
    for (name, a), b in zip(models[0].named_parameters(), models[1].parameters()):
        assert torch.equal(a, b), name
