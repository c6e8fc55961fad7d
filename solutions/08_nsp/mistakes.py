"""Named wrong answers to 08_nsp, each losing the points of its part only (tests/test_exercises.py)."""

# A pair maker with one line left to fill: how a NotNext pair draws B and labels it.
_PAIRS = '''
def make_nsp_pairs(documents, rng):
    pairs = []
    for d, document in enumerate(documents):
        for i in range(len(document) - 1):
            if rng.random() < 0.5:
                pairs.append((document[i], document[i + 1], {is_next}))
            else:
                {draw}
                pairs.append((document[i], tokens_b, {not_next}))
    return pairs
'''
_OTHER_DOCUMENT = "other = rng.choice([k for k in range(len(documents)) if k != d]); tokens_b = rng.choice(documents[other])"

# A pair maker whose coin and NotNext draw are both spelled out, for the mistakes in how it draws.
_DRAWS = '''
def make_nsp_pairs(documents, rng):
    {setup}
    pairs = []
    for d, document in enumerate(documents):
        for i in range(len(document) - 1):
            if {coin}:
                pairs.append((document[i], document[i + 1], IS_NEXT))
            else:
                other = {other}
                pairs.append((document[i], {sentence}, NOT_NEXT))
    return pairs
'''
_FAIR = dict(setup="pass", coin="rng.random() < 0.5",
             other="rng.choice([k for k in range(len(documents)) if k != d])",
             sentence="rng.choice(documents[other])")

MISTAKES = {
    "nsp_labels_inverted": {
        "why": "0 = IsNext and 1 = NotNext; the reverse trains the opposite question",
        "cells": {"pairs": _PAIRS.format(is_next=1, not_next=0, draw=_OTHER_DOCUMENT)},
        "loses": ["test_pairs"],
    },
    "b_from_same_document": {
        "why": "a NotNext B must come from another document, not a random sentence of A's own",
        "cells": {"pairs": _PAIRS.format(is_next=0, not_next=1, draw="tokens_b = rng.choice(document)")},
        "loses": ["test_pairs"],
    },
    "b_from_any_document": {
        "why": "drawing the NotNext document among all of them sometimes picks A's own",
        "cells": {"pairs": _PAIRS.format(is_next=0, not_next=1,
                                         draw="tokens_b = rng.choice(rng.choice(documents))")},
        "loses": ["test_pairs"],
    },
    "nsp_on_mean_vector": {
        "why": "NSP reads the pooled [CLS] vector, not the mean of all positions",
        "cells": {"nsp_logits": '''
def nsp_logits(sequence_output, pooler_dense, seq_relationship):
    return seq_relationship(torch.tanh(pooler_dense(sequence_output.mean(dim=1))))
'''},
        "loses": ["test_nsp_logits"],
    },
    "nsp_on_sep_vector": {
        "why": "NSP reads the pooled [CLS] vector, not the final [SEP] (the last position)",
        "cells": {"nsp_logits": '''
def nsp_logits(sequence_output, pooler_dense, seq_relationship):
    return seq_relationship(torch.tanh(pooler_dense(sequence_output[:, -1])))
'''},
        "loses": ["test_nsp_logits"],
    },
    "nsp_loss_labels_inverted": {
        "why": "class 0 of the logits is IsNext; 1 - label scores the opposite class",
        "cells": {"pretraining_loss": '''
def pretraining_loss(prediction_logits, seq_relationship_logits, labels, next_sentence_label):
    mlm = bertlib.mlm_loss(prediction_logits, labels)
    return mlm + F.cross_entropy(seq_relationship_logits, 1 - next_sentence_label)
'''},
        "loses": ["test_pretraining_loss"],
    },
    "calls_bertlib_nsp_loss": {
        "why": "calling bertlib's own NSP loss is not writing it",
        "cells": {"pretraining_loss": '''
def pretraining_loss(prediction_logits, seq_relationship_logits, labels, next_sentence_label):
    return bertlib.mlm_loss(prediction_logits, labels) + bertlib.nsp_loss(seq_relationship_logits, next_sentence_label)
'''},
        "loses": ["test_pretraining_loss"],
    },
    "ignores_rng_argument": {
        "why": "a generator of its own, seeded with a constant: every rng gives the same pairs",
        "cells": {"pairs": _DRAWS.format(**{**_FAIR, "setup": "rng = random.Random(0)"})},
        "loses": ["test_pairs"],
    },
    "labels_alternate": {
        "why": "IsNext, NotNext, IsNext, ...: half of each, but no coin is tossed for a pair",
        "cells": {"pairs": _DRAWS.format(**{**_FAIR, "coin": "len(pairs) % 2 == 0"})},
        "loses": ["test_pairs"],
    },
    "b_from_next_document": {
        "why": "B's document is always the one after A's, not a random other document",
        "cells": {"pairs": _DRAWS.format(**{**_FAIR, "other": "(d + 1) % len(documents)"})},
        "loses": ["test_pairs"],
    },
    "b_first_sentence": {
        "why": "B is always the first sentence of the other document, not a random one of its sentences",
        "cells": {"pairs": _DRAWS.format(**{**_FAIR, "sentence": "documents[other][0]"})},
        "loses": ["test_pairs"],
    },
    "b_at_a_position": {
        "why": "B is the sentence at A's own position in the other document, not a random one",
        "cells": {"pairs": _DRAWS.format(**{**_FAIR, "sentence": "documents[other][min(i, len(documents[other]) - 1)]"})},
        "loses": ["test_pairs"],
    },
}
