"""Hidden tests of assignment 9 (next sentence prediction), run by the grader outside the student's kernel.

Each function grades the graded cell of the same name: it calls the student's functions through
``student`` (their kernel, sandboxed), on the visible tests' inputs and on new ones, and checks the data
that comes back against bertlib, here. See bertgrader/checks.py.
"""
import math

import torch
import torch.nn.functional as F

import bertlib
from bertgrader.kernel import wire
from inputs import nsp_documents as _documents  # inputs.py, beside the notebook: the visible tests' inputs too
from inputs import nsp_pretraining_case as _pretraining_case
from bertgrader.checks import case, check, check_like, same_gradients, tensor
from bertgrader.remote import KernelGone, StudentError

# While the notebook is graded its kernel has these as stubs: calling them, however, earns nothing.
SWITCHED_OFF = [
    "bertlib.nsp.create_nsp_examples", "bertlib.nsp._examples_from_document",
    "bertlib.encoder.BertPooler", "bertlib.heads.BertPreTrainingHeads", "bertlib.heads.BertOnlyNSPHead",
    "bertlib.heads.BertForPreTraining", "bertlib.heads.BertForNextSentencePrediction",
    "bertlib.heads.nsp_loss",
]

IS_NEXT, NOT_NEXT = 0, 1  # the task's convention (and transformers', and bertlib.nsp's)


# ------------------------------------------------------------------------------------------------ part 1
def _even_documents(n_docs, n_sentences, n_tokens=3):
    """Documents of equal length (integer tokens): any fair draw of B's document is then uniform."""
    return [[[1_000_000 * d + 1000 * s + k for k in range(n_tokens)] for s in range(n_sentences)]
            for d in range(n_docs)]


def _tol(p, n):
    return 6 * math.sqrt(p * (1 - p) / max(n, 1))  # six standard deviations of a share of n draws


def _traced_pairs(pairs, documents):
    """Every rule of Part 1, with a message that says which pair breaks which rule.
    Returns [(document of A, sentence of A, document of B, sentence of B, label)]."""
    where = {tuple(sentence): (d, s) for d, doc in enumerate(documents) for s, sentence in enumerate(doc)}
    expected_a = [(d, s) for d, doc in enumerate(documents) for s in range(len(doc) - 1)]
    check(isinstance(pairs, list), f"expected a list of (tokens_a, tokens_b, label), got {type(pairs).__name__}")
    check(len(pairs) == len(expected_a),
          f"expected {len(expected_a)} pairs, one for every sentence that has a next sentence; got {len(pairs)}")
    traced = []
    for n, (pair, (da, sa)) in enumerate(zip(pairs, expected_a)):
        check(isinstance(pair, (tuple, list)) and len(pair) == 3,
              f"pair {n}: expected a tuple (tokens_a, tokens_b, label), got {str(pair)[:60]}")
        tokens_a, tokens_b, label = pair
        check(isinstance(tokens_a, (list, tuple)) and where.get(tuple(tokens_a)) == (da, sa),
              f"pair {n}: A should be sentence {sa} of document {da} (pairs in document order), "
              f"got {str(tokens_a)[:60]}")
        check(isinstance(tokens_b, (list, tuple)) and tuple(tokens_b) in where,
              f"pair {n}: B {str(tokens_b)[:60]} is not one sentence of the documents")
        db, sb = where[tuple(tokens_b)]
        is_next = (db, sb) == (da, sa + 1)
        check(not isinstance(label, (torch.Tensor, float)) and label in (IS_NEXT, NOT_NEXT),
              f"pair {n}: the label must be the int 0 or 1, got {label!r}")
        if label == IS_NEXT:
            check(is_next, f"pair {n} is labelled 0 (IsNext) but B is sentence {sb} of document {db}, not the one "
                           f"after A (sentence {sa + 1} of document {da}); the labels are 0 = IsNext, 1 = NotNext")
        else:
            check(db != da, f"pair {n} is labelled 1 (NotNext) but B is "
                  + ("the sentence right after A" if is_next else f"sentence {sb} of A's own document {da}")
                  + ": a NotNext B comes from a different document (a sentence of the same document is "
                    "still on topic), and the labels are 0 = IsNext, 1 = NotNext")
        traced.append((da, sa, db, sb, int(label)))
    return traced


def _check_share(traced):
    share = sum(t[4] == NOT_NEXT for t in traced) / len(traced)
    check(abs(share - 0.5) < 6 * 0.5 / math.sqrt(len(traced)),  # six standard deviations of a fair coin's share
          f"{share:.0%} of your {len(traced)} pairs are NotNext; BERT makes half of them (rng.random() < 0.5)")


def _reseed_kernel(student, seed):
    """random.seed(seed) in the student's kernel, as the visible test does; harmless if it cannot."""
    try:
        student.random.seed(seed)
    except KernelGone:
        raise
    except StudentError:
        pass


def test_pairs(student):
    make = student.make_nsp_pairs
    documents = _documents(20, seed=8)
    with case("on the visible test's 20 documents with random.Random(0)"):
        traced = _traced_pairs(make(documents, wire.Random(0)), documents)
        _check_share(traced)
    with case("called twice with random.Random(5), the global random module seeded differently in between"):
        _reseed_kernel(student, 1)
        first = make(documents, wire.Random(5))
        _reseed_kernel(student, 2)
        second = make(documents, wire.Random(5))
        check(first == second, "two calls with random.Random(5) gave different pairs: draw every random number "
                               "from `rng` (rng.random(), rng.randrange(...), rng.choice(...))")
    with case("called with random.Random(5) and with random.Random(6)"):
        other = make(documents, wire.Random(6))
        check(other != first, "random.Random(5) and random.Random(6) gave the very same pairs: draw every random "
                              "number from the argument `rng` (not from a generator of your own, nor a fixed "
                              "seed), so that another rng gives other pairs")

    other = _documents(20, seed=18)  # as many documents as the visible test's, other sentences
    with case("with another 20 documents and random.Random(0)"):
        _check_share(_traced_pairs(make(other, wire.Random(0)), other))

    for n_docs, seed in [(2, 81), (7, 82), (30, 83)]:
        documents = _documents(n_docs, seed, word=lambda d, s, k: 1_000_000 * d + 1000 * s + k)
        with case(f"with {n_docs} documents of integer tokens and random.Random({seed})"):
            pairs = make(documents, wire.Random(seed))
            traced = _traced_pairs(pairs, documents)
            check(make(documents, wire.Random(seed)) == pairs,
                  "two calls with the same seed gave different pairs: draw every random number from `rng`")
            _check_share(traced)

    # Ten documents of 100 sentences each: every fair way of drawing B then makes each other document, and
    # each of its sentences, equally likely, so the draws themselves can be checked.
    n_docs, length = 10, 100
    documents = _even_documents(n_docs, length)
    with case(f"with {n_docs} documents of {length} sentences each and random.Random(84)"):
        traced = _traced_pairs(make(documents, wire.Random(84)), documents)
        _check_share(traced)
        follows = [(t[0], t[1]) == (u[0], u[1] - 1) for t, u in zip(traced, traced[1:])]
        agree = [t[4] == u[4] for t, u, f in zip(traced, traced[1:], follows) if f]
        share = sum(agree) / len(agree)
        check(abs(share - 0.5) < _tol(0.5, len(agree)),
              f"consecutive pairs of a document have the same label {share:.0%} of the time, expected about "
              "50%: toss the coin afresh for every pair (rng.random() < 0.5 each time), independently of the "
              "pairs before it, not in a fixed pattern nor once per document")
        nn = [t for t in traced if t[4] == NOT_NEXT]
        n = len(nn)
        for k in range(1, n_docs):
            share = sum((db - da) % n_docs == k for da, _, db, _, _ in nn) / n
            check(abs(share - 1 / (n_docs - 1)) < _tol(1 / (n_docs - 1), n),
                  f"{share:.0%} of the NotNext pairs take B from document d + {k} (A's document d, counting round), "
                  f"expected about 1/{n_docs - 1} = {1 / (n_docs - 1):.0%}: draw B's document at random among "
                  "all the other documents, each equally likely, not a fixed neighbour")
        for d in range(n_docs):
            share = sum(db == d for _, _, db, _, _ in nn) / n
            check(abs(share - 1 / n_docs) < _tol(1 / n_docs, n),
                  f"{share:.0%} of the NotNext pairs take B from document {d}, expected about 1/{n_docs} = "
                  f"{1 / n_docs:.0%} (documents of equal length): draw B's document at random among the other "
                  "documents, not a fixed one")
        for q in range(4):
            share = sum(q * length // 4 <= sb < (q + 1) * length // 4 for _, _, _, sb, _ in nn) / n
            check(abs(share - 0.25) < _tol(0.25, n),
                  f"{share:.0%} of the NotNext Bs are sentences {q * length // 4} to {(q + 1) * length // 4 - 1} "
                  f"of their {length}-sentence document, expected about 25%: B is a sentence drawn at random "
                  "from the other document, any of its sentences equally likely (e.g. rng.choice), not "
                  "always its first or last")
        for what, offset in [("A's own index i", 0), ("index i + 1, that of the sentence after A", 1)]:
            share = sum(sb == sa + offset for _, sa, _, sb, _ in nn) / n
            check(share < 1 / length + _tol(1 / length, n),
                  f"{share:.0%} of the NotNext Bs are the sentence at {what}, in the other document; by chance "
                  f"about 1/{length}: draw B's sentence at random, not from A's position")

    # Documents of unequal length, 200, 2 and 200 sentences: a NotNext B of a long document's A comes from the
    # 2-sentence document half the time (documents equally likely, not sentences), and is then its last
    # sentence half the time (any sentence of it equally likely, the last one included).
    documents = [[[1_000_000 * d + 1000 * s] for s in range(n)] for d, n in enumerate([200, 2, 200])]
    with case("with 3 documents of unequal lengths (a short one between two long ones) and random.Random(85)"):
        traced = _traced_pairs(make(documents, wire.Random(85)), documents)
        nn = [t for t in traced if t[4] == NOT_NEXT and t[0] != 1]
        n = len(nn)
        short = [sb for _, _, db, sb, _ in nn if db == 1]
        share = len(short) / n
        check(abs(share - 0.5) < _tol(0.5, n),
              f"{share:.0%} of the NotNext Bs of the long documents' pairs come from the short document, expected "
              "about 50% (it is one of their two other documents): draw B's document first, each other document "
              "equally likely whatever its length, then a sentence of it")
        last = sum(sb == 1 for sb in short) / max(len(short), 1)
        check(abs(last - 0.5) < _tol(0.5, len(short)),
              f"{last:.0%} of the Bs drawn from the 2-sentence document are its last sentence, expected about 50%: "
              "every sentence of the other document equally likely, its last one included (rng.choice(document), "
              "or rng.randrange(len(document)): randrange excludes its end)")


# ------------------------------------------------------------------------------------------------ part 2
def test_nsp_logits(student):
    cases = [("on the visible test's model and batch (B=3, T=12, H=16)", 0, 3, 12, 16)]
    cases += [(f"with B={B}, T={T}, H={H}", seed, B, T, H) for seed, B, T, H in [(81, 1, 5, 8), (82, 4, 20, 32),
                                                                                 (83, 6, 9, 24), (84, 3, 12, 16)]]
    for description, seed, B, T, H in cases:
        model, ids, mask, types = _pretraining_case(seed, B=B, T=T, hidden_size=H)
        with torch.no_grad():
            out = model.bert(ids, mask, types)
            h = out.last_hidden_state  # (B, T, H)
            expected = model(ids, mask, types).seq_relationship_logits  # (B, 2): bertlib's NSP logits
            dense, head = model.bert.pooler.dense, model.cls.seq_relationship
            real = mask[:, :, None].float()
            wrong = {
                "the mean of all the vectors": head(torch.tanh(dense(h.mean(dim=1)))),
                "the mean of the real tokens' vectors": head(torch.tanh(dense((h * real).sum(1) / real.sum(1)))),
                "the last position (the final [SEP] or a [PAD])": head(torch.tanh(dense(h[:, -1]))),
                "the [CLS] vector without the pooler (no dense layer, no tanh)": head(h[:, 0]),
                "the [CLS] vector through the dense layer but without the tanh": head(dense(h[:, 0])),
                "the pooled vector itself: it still has to go through seq_relationship": torch.tanh(dense(h[:, 0])),
            }
        with case(description):
            got = tensor(student.nsp_logits(h, wire.Module.of(dense, H, H), wire.Module.of(head, H, 2)), "the logits")
            check(tuple(got.shape) == (B, 2), f"expected logits of shape (B, 2) = ({B}, 2), got {tuple(got.shape)}")
            diff = (got.double() - expected.double()).abs().max().item()
            hint = next((why for why, w in wrong.items() if w.shape == got.shape and torch.allclose(got, w, atol=1e-5)),
                        None)
            check(diff < 1e-5, f"your NSP logits differ from BERT's by up to {diff:.3g}"
                  + (f"; they are the logits of {hint}" if hint else "")
                  + ". BERT reads the pooled [CLS] vector: tanh(pooler_dense(sequence_output[:, 0]))")


    # The pooler and the classifier train: one random cotangent backpropagated through your function and through
    # the reference; the gradients of the hidden states, pooler_dense and seq_relationship must agree.
    for seed, B, T, H in [(0, 3, 12, 16), (85, 2, 7, 8)]:
        model, ids, mask, types = _pretraining_case(seed, B=B, T=T, hidden_size=H)
        with torch.no_grad():
            h = model.bert(ids, mask, types).last_hidden_state  # (B, T, H)
        dense, head = model.bert.pooler.dense, model.cls.seq_relationship
        with case(f"with B={B}, T={T}, H={H}, the gradients of a random cotangent"):
            same_gradients(student.nsp_logits, _reference_nsp_logits, h, wire.Module.of(dense, H, H),
                           wire.Module.of(head, H, 2), seed=seed)


def _reference_nsp_logits(sequence_output, pooler_dense, seq_relationship):
    return seq_relationship(torch.tanh(pooler_dense(sequence_output[:, 0])))  # (B, 2)


# ------------------------------------------------------------------------------------------------ part 3
def _reference_loss(prediction_logits, seq_relationship_logits, labels, next_sentence_label):
    return (bertlib.heads.mlm_loss(prediction_logits, labels)
            + F.cross_entropy(seq_relationship_logits, next_sentence_label))
def test_pretraining_loss(student):
    loss = student.pretraining_loss
    # Worked by hand: uniform scores over 5 words give MLM = log 5; the NSP logits are confident and right,
    # NSP = log(1 + e^-6) = 0.0025 per pair.
    prediction_logits = torch.zeros(2, 3, 5)  # (B=2, T=3, V=5)
    labels = torch.tensor([[-100, 4, -100], [2, -100, -100]])
    seq_relationship_logits = torch.tensor([[3.0, -3.0], [-3.0, 3.0]])  # says IsNext, then NotNext
    next_sentence_label = torch.tensor([0, 1])  # and they are: IsNext, NotNext
    with case("on the visible test's worked example (uniform MLM scores, confident and right NSP logits)"):
        got = loss(prediction_logits, seq_relationship_logits, labels, next_sentence_label)
        check(isinstance(got, torch.Tensor) and got.dim() == 0,
              f"expected a scalar tensor, got {type(got).__name__} of shape {tuple(getattr(got, 'shape', ()))}")
        mlm, nsp = math.log(5), math.log1p(math.exp(-6))
        hints = {
            mlm + 6 + nsp: "the NSP labels read backwards: 0 = IsNext is class 0 of the logits",
            (mlm + nsp) / 2: "the average of the two losses; BERT adds them",
            mlm + 2 * nsp: "the NSP loss summed over the pairs; BERT takes its mean",
            mlm: "the MLM loss alone", nsp: "the NSP loss alone",
        }
        hint = next((h for v, h in hints.items() if abs(float(got) - v) < 1e-3), "")
        check(abs(float(got) - (mlm + nsp)) < 1e-4,
              f"expected MLM + NSP = {mlm:.4f} + {nsp:.4f} = {mlm + nsp:.4f}, got {float(got):.4f}"
              + (f": that is {hint}" if hint else ""))

    model, ids, mask, types = _pretraining_case(seed=1)
    mlm_labels = torch.where(torch.rand(ids.shape, generator=torch.Generator().manual_seed(1)) < 0.3, ids, -100)
    mlm_labels[:, 0] = ids[:, 0]  # at least one labelled position per row
    nsp_labels = torch.tensor([0, 1, 1])
    with torch.no_grad():
        out = model(ids, mask, types, labels=mlm_labels, next_sentence_label=nsp_labels)
    with case("on the visible test's small BertForPreTraining"):
        got = tensor(loss(out.prediction_logits, out.seq_relationship_logits, mlm_labels, nsp_labels), "the loss")
        check(got.dim() == 0, f"expected a scalar tensor, got shape {tuple(got.shape)}")
        check(abs(float(got) - out.loss.item()) < 1e-4,
              f"BertForPreTraining's loss is {out.loss.item():.4f} (MLM {out.mlm_loss.item():.4f} + NSP "
              f"{out.nsp_loss.item():.4f}); yours is {float(got):.4f}")

    gen = torch.Generator().manual_seed(88)
    for B, T, V in [(1, 4, 7), (5, 16, 40), (8, 32, 300)]:
        logits = torch.randn(B, T, V, generator=gen) * 2
        labels = torch.where(torch.rand(B, T, generator=gen) < 0.2, torch.randint(V, (B, T), generator=gen), -100)
        labels[:, 1] = 3
        nsp_logit = torch.randn(B, 2, generator=gen) * 2
        nsp_label = torch.randint(2, (B,), generator=gen)
        mlm, nsp = bertlib.heads.mlm_loss(logits, labels).item(), bertlib.heads.nsp_loss(nsp_logit, nsp_label).item()
        with case(f"with B={B}, T={T}, V={V} and random logits"):
            got = tensor(loss(logits, nsp_logit, labels, nsp_label), "the loss")
            check(got.dim() == 0, f"expected a scalar tensor, got shape {tuple(got.shape)}")
            check(abs(float(got) - (mlm + nsp)) < 1e-4,
                  f"expected MLM + NSP = {mlm:.5f} + {nsp:.5f} = {mlm + nsp:.5f}, got {float(got):.5f}")

    # The visible test's shapes again, other numbers; then the loss's gradient (it trains both heads)
    logits = torch.randn(2, 3, 5, generator=gen) * 2
    labels = torch.tensor([[3, -100, 0], [-100, 1, -100]])
    nsp_logit, nsp_label = torch.randn(2, 2, generator=gen) * 2, torch.tensor([1, 0])
    expected = _reference_loss(logits, nsp_logit, labels, nsp_label)
    with case("with another 2 x 3 batch (V=5) and random logits"):
        got = tensor(loss(logits, nsp_logit, labels, nsp_label), "the loss")
        check(got.dim() == 0, f"expected a scalar tensor, got shape {tuple(got.shape)}")
        check(abs(float(got) - expected.item()) < 1e-4, f"expected {expected.item():.5f}, got {float(got):.5f}")
    with case("with a 2 x 3 batch (V=5), the gradients of the loss"):
        same_gradients(loss, _reference_loss, logits, nsp_logit, labels, nsp_label, seed=89)

    # float64 logits: a float64 loss, to float64 precision
    logits = torch.randn(4, 6, 20, generator=gen, dtype=torch.float64) * 2
    labels = torch.where(torch.rand(4, 6, generator=gen) < 0.3, torch.randint(20, (4, 6), generator=gen), -100)
    labels[:, 0] = 7
    nsp_logit, nsp_label = torch.randn(4, 2, generator=gen, dtype=torch.float64) * 2, torch.tensor([0, 1, 1, 0])
    expected = _reference_loss(logits, nsp_logit, labels, nsp_label)
    with case("with float64 logits (B=4, T=6, V=20)"):
        got = check_like(loss(logits, nsp_logit, labels, nsp_label), expected, "the loss")
        check(abs(got.item() - expected.item()) < 1e-12,
              f"expected {expected.item():.14f}, got {got.item():.14f}: compute both terms in the logits' dtype")

    # A large NSP logit gap: confidently wrong about every pair. The NSP term is large and finite (about 1e4);
    # log(softmax(x)) gives log(0) = -inf there.
    logits = torch.randn(2, 4, 6, generator=gen)
    labels = torch.tensor([[2, -100, -100, 5], [-100, 0, -100, -100]])
    nsp_logit, nsp_label = torch.tensor([[1e4, 0.0], [0.0, 1e4]]), torch.tensor([1, 0])
    expected = _reference_loss(logits, nsp_logit, labels, nsp_label)
    with case("with NSP logits that favour the wrong class by 1e4 (a confidently wrong model)"):
        got = tensor(loss(logits, nsp_logit, labels, nsp_label), "the loss")
        check(bool(torch.isfinite(got)),
              f"your loss is {got.item()}, expected about {expected.item():.1f}: softmax underflows to 0 at such a gap "
              "and log(0) = -inf; compute the NSP term with F.cross_entropy or log_softmax (log-sum-exp), never "
              "log(softmax(x))")
        check(abs(got.item() - expected.item()) < 1e-3 * expected.item(),
              f"expected {expected.item():.4f}, got {got.item():.4f}")
