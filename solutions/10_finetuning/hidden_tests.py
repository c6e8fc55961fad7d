"""Hidden tests of assignment 10 (fine-tuning heads), run by the grader outside the student's kernel.

Each function grades the graded cell of the same name. The student's model is built in their kernel
(``student.SequenceClassifier(wire.Config(...))``), given the weights of bertlib's model built here, and
called; its output comes back as data and is compared with bertlib's model run here, on the visible
tests' inputs and on new ones. See bertgrader/checks.py.
"""
import torch
import torch.nn.functional as F

import bertlib
from inputs import finetuning_tiny_batch as tiny_batch  # inputs.py, beside the notebook: the visible tests' inputs too
from bertgrader.kernel import wire
from bertgrader.checks import case, check, same_gradients, tensor

# While the notebook is graded its kernel has these as stubs. BertModel (the students' self.bert) and
# BertPooler stay real: the given __init__s build them.
SWITCHED_OFF = [
    "bertlib.heads.BertForSequenceClassification", "bertlib.heads.BertForTokenClassification",
    "bertlib.heads.BertForQuestionAnswering", "bertlib.heads.decode_span",
]

TINY = dict(vocab_size=80, hidden_size=16, num_hidden_layers=2, num_attention_heads=2, intermediate_size=32,
            max_position_embeddings=64, num_labels=3)  # the notebook's tiny_config()
DROPOUT_SEED = 1234


def _twin(student, class_name, reference_class, seed, **changes):
    """bertlib's reference (head weights made large, so that a wrong input vector shows) and the student's
    model, built in their kernel, with the reference's weights loaded by transformers' parameter names.
    Both in eval mode: no dropout."""
    fields = {**TINY, **changes}
    torch.manual_seed(seed)
    reference = reference_class(bertlib.BertConfig(**fields))
    with torch.no_grad():
        for name, p in reference.named_parameters():
            if name.startswith(("classifier", "qa_outputs", "bert.pooler")):
                p.normal_(0, 0.5, generator=torch.Generator().manual_seed(len(name)))
    mine = getattr(student, class_name)(wire.Config(fields))
    keys = mine.load_state_dict({k: v.detach().clone() for k, v in reference.state_dict().items()}, strict=False)
    check(isinstance(keys, (tuple, list)) and len(keys) == 2,
          "load_state_dict of your model did not report missing and unexpected keys: keep the given __init__ "
          "(an nn.Module with transformers' attribute names)")
    missing = [k for k in keys[0] if not k.startswith("bert.pooler.")]  # a pooler it does not use is fine
    unexpected = list(keys[1])
    check(not missing and not unexpected,
          f"your model's parameter names differ from transformers': missing {missing[:3]}, unexpected "
          f"{unexpected[:3]}; keep the given __init__")
    mine.eval()
    return reference.eval(), mine


def _reading(reference, read):
    """``reference`` with its forward returning ``read(output)``: what the student's forward returns (a tensor, or
    the pair of QA logits), so that one cotangent fits both (same_gradients)."""
    forward = type(reference).forward
    reference.forward = lambda *args, **kwargs: read(forward(reference, *args, **kwargs))
    return reference


def _gradient_case(student, class_name, reference_class, seed, read, output=None, **changes):
    """Fine-tuning trains everything together: one random cotangent backpropagated through the student's model
    and through bertlib's (eval mode, same weights); every parameter's gradient, BERT's included, must agree."""
    reference, mine = _twin(student, class_name, reference_class, seed, **changes)
    ids, mask, types = tiny_batch(seed, 2, 8)
    same_gradients(mine, _reading(reference, read), ids, mask, types, output=output, seed=seed)


def _full_train_mode(student, class_name, reference_class, seed, shape, out_shape, **changes):
    """The model in train() mode, BERT's own dropout included: one call (the grader's rules check that it leaves
    every module's mode, weights and requires_grad as they were), an output of the right shape, finite."""
    _, mine = _twin(student, class_name, reference_class, seed, hidden_dropout_prob=0.2, **changes)
    mine.train()
    try:
        student.torch.manual_seed(seed)
        got = mine(*tiny_batch(seed, shape[0], shape[1]))
    finally:
        mine.eval()
    for value in (got if isinstance(got, (tuple, list)) else [got]):
        value = tensor(value, "the output")
        check(tuple(value.shape) == out_shape and bool(torch.isfinite(value).all()),
              f"in train() mode: expected a finite output of shape {out_shape}, got {tuple(value.shape)}")


def _describe_token(ids, mask, b, t):
    if not mask[b, t]:
        return "[PAD]"
    return {1: "[CLS]", 2: "[SEP]"}.get(int(ids[b, t]), "a word")


def _where(got, expected, ids, mask, what="logits", atol=1e-5):
    """Where a (B, T, ...) output differs from the reference: a sentence for the student, or None."""
    bad = ~torch.isclose(got.double(), expected.double(), atol=atol, rtol=0)
    if bad.dim() > 2:
        bad = bad.flatten(2).any(-1)  # (B, T): positions with any wrong number
    if not bad.any():
        return None
    pad = mask == 0
    positions = [tuple(map(int, p)) for p in bad.nonzero()]
    b, t = positions[0]
    diff = (got.double() - expected.double()).abs().max().item()
    if not (bad & ~pad).any():
        at = got[bad]
        shown = ("they are 0 there" if bool((at == 0).all())
                 else f"there yours are e.g. {float(at.flatten()[0]):.4g}, BERT's {float(expected[bad].flatten()[0]):.4g}")
        return (f"your {what} equal BERT's at every real token but differ at the padding positions "
                f"(attention_mask == 0: {len(positions)} of the {int(pad.sum())}, e.g. row {b}, position {t}); "
                f"{shown}. BERT's head scores every position's vector, padding included, and leaves it so: "
                "the loss and the decoding skip padding (labels of -100, the context mask), so return the "
                "head's output as it is, without zeroing or masking it")
    if not (bad & pad).any() and pad.any():
        return (f"your {what} differ from BERT's by up to {diff:.3g} at {len(positions)} real tokens (e.g. row "
                f"{b}, position {t}, {_describe_token(ids, mask, b, t)}); the padding positions match")
    return (f"your {what} differ from BERT's by up to {diff:.3g}, at {len(positions)} of the {bad.numel()} "
            f"positions (e.g. row {b}, position {t}, {_describe_token(ids, mask, b, t)})")


def _not_passed_on(reference, ids, mask, types, read):
    """What the reference would give if the inputs were not all passed on to self.bert: {why: output}."""
    return {
        "the output of an input without its attention mask and segment ids: pass them on to self.bert":
            read(reference.bert(ids)),
        "the output of an input without its attention mask: pass attention_mask on to self.bert":
            read(reference.bert(ids, None, types)),
        "the output of an input without its segment ids: pass token_type_ids on to self.bert":
            read(reference.bert(ids, mask)),
    }


def _hint(got, wrong):
    return next((why for why, w in wrong.items() if w.shape == got.shape and torch.allclose(got, w, atol=1e-5)), None)


def _mismatch(got, expected, wrong, ids, mask, what, oracle):
    """None if ``got`` is BERT's output, else the message: a named wrong input if one fits, else where."""
    where = _where(got, expected, ids, mask, what=what)
    if where is None:
        return None
    hint = _hint(got, wrong)
    return f"your {what} are {hint}" if hint else f"{where} ({oracle})"


def _dropout_case(student, reference, mine, ids, mask, types, expected_fn, eval_out, what, vector):
    """In train() mode, with self.bert in eval() mode, the head's own dropout is the only random step: seeded
    alike here and in the kernel, the student's output must equal BERT's, dropout mask included."""
    reference.train()
    reference.bert.eval()
    mine.train()
    mine.bert.eval()
    try:
        student.torch.manual_seed(DROPOUT_SEED)
        got = tensor(mine(ids, mask, types), what)
    finally:
        mine.eval()
    with torch.no_grad():
        torch.manual_seed(DROPOUT_SEED)
        expected = expected_fn()
        torch.manual_seed(DROPOUT_SEED)
        on_output = F.dropout(eval_out, reference.dropout.p, True)
    reference.eval()
    check(got.shape == expected.shape, f"in train() mode: expected {what} of shape {tuple(expected.shape)}, got "
                                       f"{tuple(got.shape)}")
    if torch.allclose(got, expected, atol=1e-5):
        return
    if torch.allclose(got, eval_out, atol=1e-5):
        check(False, f"in train() mode your model gives the same {what} as in eval() mode: it applies no dropout. "
                     f"Apply self.dropout to {vector} where it enters the classifier")
    if torch.allclose(got, on_output, atol=1e-5):
        check(False, f"in train() mode you apply dropout to the {what}, after the classifier: apply self.dropout "
                     f"to {vector}, where it enters the classifier")
    diff = (got - expected).abs().max().item()
    check(False, f"in train() mode (self.bert in eval() mode, so the head's dropout is the only random step, seeded "
                 f"alike) your {what} differ from BERT's by up to {diff:.3g}: apply self.dropout once, to {vector}, "
                 "just before self.classifier, and draw nothing else at random")


# ------------------------------------------------------------------------------------------------ part 1
def test_sequence(student):
    cases = [("on the visible test's model and batch (num_labels=3, B=3, T=10)", 0, 3, 1, 3, 10),
             ("with num_labels=2, B=1, T=6", 91, 2, 91, 1, 6), ("with num_labels=5, B=4, T=17", 92, 5, 92, 4, 17)]
    for description, seed, labels, batch_seed, B, T in cases:
        with case(description):
            reference, mine = _twin(student, "SequenceClassifier", bertlib.BertForSequenceClassification, seed,
                                    num_labels=labels)
            ids, mask, types = tiny_batch(batch_seed, B, T)
            with torch.no_grad():
                expected = reference(ids, mask, types).logits  # (B, num_labels)
                h = reference.bert(ids, mask, types).last_hidden_state  # (B, T, H)
                real = mask[:, :, None].float()
                head = reference.classifier
                wrong = {
                    "the raw [CLS] vector: BERT's classifier reads the pooled one, outputs.pooler_output": head(h[:, 0]),
                    "the mean of all the vectors": head(h.mean(dim=1)),
                    "the mean of the real tokens' vectors": head((h * real).sum(1) / real.sum(1)),
                    "the last position (the final [SEP] or a [PAD])": head(h[:, -1]),
                    **_not_passed_on(reference, ids, mask, types, lambda out: head(out.pooler_output)),
                }
            got = tensor(mine(ids, mask, types), "the logits")
            check(tuple(got.shape) == (B, labels),
                  f"expected logits of shape (B, num_labels) = ({B}, {labels}), got {tuple(got.shape)}")
            diff = (got.double() - expected.double()).abs().max().item()
            hint = _hint(got, wrong)
            check(diff < 1e-5, f"your logits differ from BERT's sequence classifier by up to {diff:.3g}"
                  + (f"; they are the logits of {hint}" if hint else ""))
    with case("in train() mode, hidden_dropout_prob=0.5 (dropout active in the head only)"):
        reference, mine = _twin(student, "SequenceClassifier", bertlib.BertForSequenceClassification, 93,
                                hidden_dropout_prob=0.5)
        ids, mask, types = tiny_batch(93, 4, 12)
        with torch.no_grad():
            eval_out = reference(ids, mask, types).logits
        _dropout_case(student, reference, mine, ids, mask, types,
                      lambda: reference(ids, mask, types).logits, eval_out, "logits", "the pooled vector (pooler_output)")
    with case("in train() mode, BERT's dropout active too (B=2, T=9)"):
        _full_train_mode(student, "SequenceClassifier", bertlib.BertForSequenceClassification, 94, (2, 9), (2, 3))
    with case("with B=2, T=8, the gradients of a random cotangent (BERT and the classifier train together)"):
        _gradient_case(student, "SequenceClassifier", bertlib.BertForSequenceClassification, 95, lambda o: o.logits)


# ------------------------------------------------------------------------------------------------ part 2
def test_token(student):
    cases = [("on the visible test's model and batch (num_labels=3, B=3, T=10)", 2, 3, 2, 3, 10),
             ("with num_labels=9, B=2, T=7", 93, 9, 93, 2, 7), ("with num_labels=2, B=5, T=20", 94, 2, 94, 5, 20)]
    for description, seed, labels, batch_seed, B, T in cases:
        with case(description):
            reference, mine = _twin(student, "TokenClassifier", bertlib.BertForTokenClassification, seed,
                                    num_labels=labels)
            ids, mask, types = tiny_batch(batch_seed, B, T)
            with torch.no_grad():
                expected = reference(ids, mask, types).logits  # (B, T, num_labels)
                head = reference.classifier
                wrong = _not_passed_on(reference, ids, mask, types, lambda out: head(out.last_hidden_state))
            got = tensor(mine(ids, mask, types), "the logits")
            check(tuple(got.shape) == (B, T, labels),
                  f"expected logits of shape (B, T, num_labels) = ({B}, {T}, {labels}), got {tuple(got.shape)}")
            check(not torch.allclose(got, got[:, :1].expand_as(got), atol=1e-6),
                  "every token of a sequence got the same logits: each token must be classified from its own "
                  "final vector (last_hidden_state), not from the [CLS] vector")
            message = _mismatch(got, expected, wrong, ids, mask, "logits",
                                "BERT's token classifier: self.classifier(last_hidden_state)")
            check(message is None, message)
    with case("in train() mode, hidden_dropout_prob=0.5 (dropout active in the head only)"):
        reference, mine = _twin(student, "TokenClassifier", bertlib.BertForTokenClassification, 95,
                                hidden_dropout_prob=0.5)
        ids, mask, types = tiny_batch(95, 4, 12)
        with torch.no_grad():
            eval_out = reference(ids, mask, types).logits
        _dropout_case(student, reference, mine, ids, mask, types,
                      lambda: reference(ids, mask, types).logits, eval_out, "logits",
                      "every token's final vector (last_hidden_state)")
    with case("in train() mode, BERT's dropout active too (B=2, T=9)"):
        _full_train_mode(student, "TokenClassifier", bertlib.BertForTokenClassification, 96, (2, 9), (2, 9, 3))
    with case("with B=2, T=8, the gradients of a random cotangent (BERT and the classifier train together)"):
        _gradient_case(student, "TokenClassifier", bertlib.BertForTokenClassification, 97, lambda o: o.logits)


# ------------------------------------------------------------------------------------------------ part 3
def test_qa(student):
    cases = [("on the visible test's model and batch (B=3, T=10)", 3, 3, 3, 10),
             ("with B=1, T=5", 95, 95, 1, 5), ("with B=4, T=24", 96, 96, 4, 24)]
    for description, seed, batch_seed, B, T in cases:
        with case(description):
            reference, mine = _twin(student, "QuestionAnswering", bertlib.BertForQuestionAnswering, seed,
                                    num_labels=2)
            ids, mask, types = tiny_batch(batch_seed, B, T)
            with torch.no_grad():
                out = reference(ids, mask, types)
            got = mine(ids, mask, types)
            check(isinstance(got, (tuple, list)) and len(got) == 2, "return a pair (start_logits, end_logits)")
            start, end = tensor(got[0], "start_logits"), tensor(got[1], "end_logits")
            check(tuple(start.shape) == (B, T) and tuple(end.shape) == (B, T),
                  f"expected start and end logits of shape (B, T) = ({B}, {T}) each, got {tuple(start.shape)} and "
                  f"{tuple(end.shape)} (squeeze the last axis: unbind(dim=-1) does)")
            swapped = (torch.allclose(start, out.end_logits, atol=1e-5)
                       and torch.allclose(end, out.start_logits, atol=1e-5))
            check(not swapped, "start and end are swapped: column 0 of qa_outputs is the start score, column 1 the end")
            for name, mine_, theirs in [("start logits", start, out.start_logits), ("end logits", end, out.end_logits)]:
                with torch.no_grad():
                    column = 0 if name == "start logits" else 1
                    wrong = _not_passed_on(reference, ids, mask, types,
                                           lambda o: reference.qa_outputs(o.last_hidden_state)[..., column])
                message = _mismatch(mine_, theirs, wrong, ids, mask, name,
                                    f"BERT's QA head: column {column} of qa_outputs(last_hidden_state)")
                check(message is None, message)
    with case("in train() mode, BERT's dropout active (B=2, T=9)"):
        _full_train_mode(student, "QuestionAnswering", bertlib.BertForQuestionAnswering, 98, (2, 9), (2, 9),
                         num_labels=2)
    for output, name in [(0, "start"), (1, "end")]:
        with case(f"with B=2, T=8, the gradients of a random cotangent on the {name} logits"):
            _gradient_case(student, "QuestionAnswering", bertlib.BertForQuestionAnswering, 99 + output,
                           lambda o: (o.start_logits, o.end_logits), output=output, num_labels=2)


# ------------------------------------------------------------------------------------------------ part 4
def _span(got):
    check(isinstance(got, (tuple, list)) and len(got) >= 2, f"return (start, end), got {str(got)[:80]}")
    kinds = [type(v).__name__ for v in got[:2]]
    check(all(isinstance(v, int) and not isinstance(v, bool) for v in got[:2]),
          f"return two Python ints, got a {kinds[0]} and a {kinds[1]}: convert with int(...)")
    return int(got[0]), int(got[1])


def _why(span, context, max_len):
    start, end = span
    inside = [i for i in range(len(context)) if context[i]]
    if not (0 <= start < len(context) and 0 <= end < len(context)):
        return f"it is not a span of the {len(context)} positions"
    if end < start:
        return "it ends before it starts"
    if not (context[start] and context[end]):
        return f"it is not inside the context (positions {inside[0]} to {inside[-1]})"
    if end - start + 1 > max_len:
        return f"it is {end - start + 1} tokens long, more than max_answer_length={max_len}"
    return "a valid span, but not the best one"


def test_span(student):
    best_span = student.best_span
    # [CLS] q q q [SEP] c c c c c c [SEP]: the context is positions 5 to 10.
    context = torch.tensor([0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 0]).bool()
    cases = [  # (start scores {position: value}, end scores, max_answer_length, what it checks)
        ({8: 5.0, 5: 0.5}, {6: 6.0, 9: 2.0}, 30, "the start peaks at 8, the end at 6"),
        ({2: 9.0, 6: 3.0}, {3: 9.0, 7: 3.0}, 30, "both peak inside the question"),
        ({5: 4.0}, {10: 4.0, 6: 1.0}, 3, "the peaks are 6 tokens apart, max_answer_length=3"),
    ]
    for start_at, end_at, max_len, setting in cases:
        start_logits, end_logits = torch.zeros(12), torch.zeros(12)
        for i, v in start_at.items():
            start_logits[i] = v
        for i, v in end_at.items():
            end_logits[i] = v
        expected = bertlib.decode_span(start_logits, end_logits, context, max_len)[:2]
        with case(f"the visible case where {setting}"):
            got = _span(best_span(start_logits, end_logits, context, max_len))
            check(got == expected, f"expected the span {expected}, got {got}: {_why(got, context, max_len)}")

    gen = torch.Generator().manual_seed(97)
    for trial in range(40):
        T = int(torch.randint(4, 40, (1,), generator=gen))
        first = int(torch.randint(1, T - 1, (1,), generator=gen))
        last = int(torch.randint(first, T - 1, (1,), generator=gen))
        context = torch.zeros(T, dtype=torch.bool)
        context[first:last + 1] = True
        max_len = int(torch.randint(1, 12, (1,), generator=gen))
        start_logits, end_logits = torch.randn(T, generator=gen) * 3, torch.randn(T, generator=gen) * 3
        expected = bertlib.decode_span(start_logits, end_logits, context, max_len)[:2]
        with case(f"with random scores, T={T}, the context at positions {first} to {last}, "
                  f"max_answer_length={max_len}"):
            got = _span(best_span(start_logits, end_logits, context, max_len))
            check(got == expected, f"expected the span {expected}, got {got}: {_why(got, context, max_len)}")
