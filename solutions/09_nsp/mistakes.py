"""Named wrong answers to 09_nsp, each losing the points of its part only (tests/test_exercises.py).

One `# %%` cell per mistake: the solution cell it rewrites, the graded cells it loses, why, and its
code (docs/exercises.md); `python -m bertgrader.assignment --lint` checks each in its notebook.
Several mistakes repeat one pair maker and differ in one line: how a NotNext pair draws B and
labels it, or how the coin and the draw are made."""


# %% nsp_labels_inverted cell=pairs loses=test_pairs
# why: 0 = IsNext and 1 = NotNext; the reverse trains the opposite question
def make_nsp_pairs(documents, rng):
    pairs = []
    for d, document in enumerate(documents):
        for i in range(len(document) - 1):
            if rng.random() < 0.5:
                pairs.append((document[i], document[i + 1], 1))
            else:
                other = rng.choice([k for k in range(len(documents)) if k != d]); tokens_b = rng.choice(documents[other])
                pairs.append((document[i], tokens_b, 0))
    return pairs


# %% b_from_same_document cell=pairs loses=test_pairs
# why: a NotNext B must come from another document, not a random sentence of A's own
def make_nsp_pairs(documents, rng):
    pairs = []
    for d, document in enumerate(documents):
        for i in range(len(document) - 1):
            if rng.random() < 0.5:
                pairs.append((document[i], document[i + 1], 0))
            else:
                tokens_b = rng.choice(document)
                pairs.append((document[i], tokens_b, 1))
    return pairs


# %% b_from_any_document cell=pairs loses=test_pairs
# why: drawing the NotNext document among all of them sometimes picks A's own
def make_nsp_pairs(documents, rng):
    pairs = []
    for d, document in enumerate(documents):
        for i in range(len(document) - 1):
            if rng.random() < 0.5:
                pairs.append((document[i], document[i + 1], 0))
            else:
                tokens_b = rng.choice(rng.choice(documents))
                pairs.append((document[i], tokens_b, 1))
    return pairs


# %% nsp_on_mean_vector cell=nsp_logits loses=test_nsp_logits
# why: NSP reads the pooled [CLS] vector, not the mean of all positions
def nsp_logits(sequence_output, pooler_dense, seq_relationship):
    return seq_relationship(torch.tanh(pooler_dense(sequence_output.mean(dim=1))))


# %% nsp_on_sep_vector cell=nsp_logits loses=test_nsp_logits
# why: NSP reads the pooled [CLS] vector, not the final [SEP] (the last position)
def nsp_logits(sequence_output, pooler_dense, seq_relationship):
    return seq_relationship(torch.tanh(pooler_dense(sequence_output[:, -1])))


# %% nsp_loss_labels_inverted cell=pretraining_loss loses=test_pretraining_loss
# why: class 0 of the logits is IsNext; 1 - label scores the opposite class
def pretraining_loss(prediction_logits, seq_relationship_logits, labels, next_sentence_label):
    mlm = bertlib.mlm_loss(prediction_logits, labels)
    return mlm + F.cross_entropy(seq_relationship_logits, 1 - next_sentence_label)


# %% calls_bertlib_nsp_loss cell=pretraining_loss loses=test_pretraining_loss
# why: calling bertlib's own NSP loss is not writing it
def pretraining_loss(prediction_logits, seq_relationship_logits, labels, next_sentence_label):
    return bertlib.mlm_loss(prediction_logits, labels) + bertlib.nsp_loss(seq_relationship_logits, next_sentence_label)


# %% ignores_rng_argument cell=pairs loses=test_pairs
# why: a generator of its own, seeded with a constant: every rng gives the same pairs
def make_nsp_pairs(documents, rng):
    rng = random.Random(0)
    pairs = []
    for d, document in enumerate(documents):
        for i in range(len(document) - 1):
            if rng.random() < 0.5:
                pairs.append((document[i], document[i + 1], IS_NEXT))
            else:
                other = rng.choice([k for k in range(len(documents)) if k != d])
                pairs.append((document[i], rng.choice(documents[other]), NOT_NEXT))
    return pairs


# %% labels_alternate cell=pairs loses=test_pairs
# why: IsNext, NotNext, IsNext, ...: half of each, but no coin is tossed for a pair
def make_nsp_pairs(documents, rng):
    pass
    pairs = []
    for d, document in enumerate(documents):
        for i in range(len(document) - 1):
            if len(pairs) % 2 == 0:
                pairs.append((document[i], document[i + 1], IS_NEXT))
            else:
                other = rng.choice([k for k in range(len(documents)) if k != d])
                pairs.append((document[i], rng.choice(documents[other]), NOT_NEXT))
    return pairs


# %% b_from_next_document cell=pairs loses=test_pairs
# why: B's document is always the one after A's, not a random other document
def make_nsp_pairs(documents, rng):
    pass
    pairs = []
    for d, document in enumerate(documents):
        for i in range(len(document) - 1):
            if rng.random() < 0.5:
                pairs.append((document[i], document[i + 1], IS_NEXT))
            else:
                other = (d + 1) % len(documents)
                pairs.append((document[i], rng.choice(documents[other]), NOT_NEXT))
    return pairs


# %% b_first_sentence cell=pairs loses=test_pairs
# why: B is always the first sentence of the other document, not a random one of its sentences
def make_nsp_pairs(documents, rng):
    pass
    pairs = []
    for d, document in enumerate(documents):
        for i in range(len(document) - 1):
            if rng.random() < 0.5:
                pairs.append((document[i], document[i + 1], IS_NEXT))
            else:
                other = rng.choice([k for k in range(len(documents)) if k != d])
                pairs.append((document[i], documents[other][0], NOT_NEXT))
    return pairs


# %% b_at_a_position cell=pairs loses=test_pairs
# why: B is the sentence at A's own position in the other document, not a random one
def make_nsp_pairs(documents, rng):
    pass
    pairs = []
    for d, document in enumerate(documents):
        for i in range(len(document) - 1):
            if rng.random() < 0.5:
                pairs.append((document[i], document[i + 1], IS_NEXT))
            else:
                other = rng.choice([k for k in range(len(documents)) if k != d])
                pairs.append((document[i], documents[other][min(i, len(documents[other]) - 1)], NOT_NEXT))
    return pairs


# %% b_never_last_sentence cell=pairs loses=test_pairs
# why: rng.randrange(len(doc) - 1) never draws the other document's last sentence (randrange excludes its end)
def make_nsp_pairs(documents, rng):
    pairs = []
    for d, document in enumerate(documents):
        for i in range(len(document) - 1):
            if rng.random() < 0.5:
                pairs.append((document[i], document[i + 1], IS_NEXT))
            else:
                other = documents[rng.choice([k for k in range(len(documents)) if k != d])]
                pairs.append((document[i], other[rng.randrange(len(other) - 1)], NOT_NEXT))
    return pairs


# %% b_from_all_other_sentences cell=pairs loses=test_pairs
# why: B drawn among all the sentences of the other documents: a long document is likelier than a short one
def make_nsp_pairs(documents, rng):
    pairs = []
    for d, document in enumerate(documents):
        elsewhere = [s for k, doc in enumerate(documents) if k != d for s in doc]
        for i in range(len(document) - 1):
            if rng.random() < 0.5:
                pairs.append((document[i], document[i + 1], IS_NEXT))
            else:
                pairs.append((document[i], rng.choice(elsewhere), NOT_NEXT))
    return pairs


# %% pairs_reseed_global_random cell=pairs loses=test_pairs
# why: random.seed resets the random numbers of every other user of the random module (shuffles, dropout seeds)
def make_nsp_pairs(documents, rng):
    random.seed(rng.random())  # one number from rng seeds the module's functions below
    pairs = []
    for d, document in enumerate(documents):
        for i in range(len(document) - 1):
            if random.random() < 0.5:
                pairs.append((document[i], document[i + 1], IS_NEXT))
            else:
                other = random.choice([o for o in range(len(documents)) if o != d])
                pairs.append((document[i], random.choice(documents[other]), NOT_NEXT))
    return pairs


# %% pairs_copy_the_rng cell=pairs loses=test_pairs
# why: drawing from a copy leaves rng where it was: the next call with the same rng makes the very same pairs
def make_nsp_pairs(documents, rng):
    own = random.Random()
    own.setstate(rng.getstate())  # the same numbers, rng itself untouched
    pairs = []
    for d, document in enumerate(documents):
        for i in range(len(document) - 1):
            if own.random() < 0.5:
                pairs.append((document[i], document[i + 1], IS_NEXT))
            else:
                other = own.randrange(len(documents) - 1)
                other += other >= d
                pairs.append((document[i], own.choice(documents[other]), NOT_NEXT))
    return pairs


# %% pooler_weights_through_data cell=nsp_logits loses=test_nsp_logits
# why: .data gives the pooler's numbers without their gradient: the pooler never learns from the NSP loss
def nsp_logits(sequence_output, pooler_dense, seq_relationship):
    W, b = pooler_dense.weight.data, pooler_dense.bias.data  # (H, H), (H,)
    pooled = torch.tanh(sequence_output[:, 0] @ W.T + b)  # (B, H)
    return seq_relationship(pooled)  # (B, 2)


# %% nsp_term_log_of_softmax cell=pretraining_loss loses=test_pretraining_loss
# why: softmax underflows to 0 at a large logit gap and log(0) = -inf: cross_entropy (log-sum-exp) stays finite
def pretraining_loss(prediction_logits, seq_relationship_logits, labels, next_sentence_label):
    p = seq_relationship_logits.softmax(dim=-1)  # (B, 2)
    nsp = -p.gather(1, next_sentence_label[:, None]).log().mean()
    return bertlib.mlm_loss(prediction_logits, labels) + nsp


# %% nsp_term_in_float32 cell=pretraining_loss loses=test_pretraining_loss
# why: float64 logits get a float32 NSP term: the cast throws away the precision the caller asked for
def pretraining_loss(prediction_logits, seq_relationship_logits, labels, next_sentence_label):
    nsp = F.cross_entropy(seq_relationship_logits.float(), next_sentence_label)
    return bertlib.mlm_loss(prediction_logits, labels) + nsp


# %% nsp_term_from_python_floats cell=pretraining_loss loses=test_pretraining_loss
# why: .item() turns each pair's loss into a number: the value is right, but no gradient reaches the NSP head
def pretraining_loss(prediction_logits, seq_relationship_logits, labels, next_sentence_label):
    log_p = F.log_softmax(seq_relationship_logits, dim=-1)  # (B, 2)
    nsp = 0.0
    for b in range(len(next_sentence_label)):
        nsp -= log_p[b, next_sentence_label[b]].item()
    return bertlib.mlm_loss(prediction_logits, labels) + nsp / len(next_sentence_label)
