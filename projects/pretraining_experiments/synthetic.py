"""Small seeded generators for the experiments (``bertlib.training.experiments``), where real text cannot
guarantee the property an experiment needs.

* ``cloze_sentences``: "the <animal> <verb> in the <place> <adverb> ." where only the verb (on the right)
  tells the animal and only the animal (on the left) tells the verb: experiment 1, bidirectional against
  causal attention.
* ``topical_documents``: documents with a topic each, so that two sentences can share a topic or not:
  experiment 4, pretraining with and without NSP, then a sentence-pair task.
"""
from __future__ import annotations

import random

from bertlib.tokenizer import DEFAULT_SPECIAL_TOKENS

# ----------------------------------------------------------------------------- experiment 1: a cloze
# Animals, each with verbs only it does: in "the [MASK] barks at the fox" the answer is fixed by a word to
# its *right*; in "the dog [MASK] at the fox" by a word to its left.
CLOZE_LEXICON = {
    "dog": ["barks", "fetches", "wags", "growls"],
    "cat": ["meows", "purrs", "scratches", "pounces"],
    "bird": ["sings", "chirps", "flies", "nests"],
    "fish": ["swims", "dives", "schools", "spawns"],
    "cow": ["moos", "grazes", "chews", "calves"],
    "horse": ["neighs", "gallops", "trots", "canters"],
    "frog": ["croaks", "hops", "leaps", "ribbits"],
    "bee": ["buzzes", "stings", "pollinates", "swarms"],
}
CLOZE_PLACES = ["garden", "river", "field", "house", "barn", "forest", "pond", "meadow", "hill", "yard"]
CLOZE_ADVERBS = ["today", "again", "quietly", "loudly", "often", "slowly", "early", "late"]


def cloze_sentences(n: int, rng: random.Random) -> list[list[str]]:
    """``n`` word lists "the <animal> <verb> in the <place> <adverb> ." with a verb that only that animal does.

    The animal is predictable only from its right (the verb), the verb only from its left (the animal):
    the generator behind experiment 1, bidirectional against causal attention.
    """
    animals = sorted(CLOZE_LEXICON)
    out = []
    for _ in range(n):
        animal = rng.choice(animals)
        out.append(["the", animal, rng.choice(CLOZE_LEXICON[animal]), "in", "the",
                    rng.choice(CLOZE_PLACES), rng.choice(CLOZE_ADVERBS), "."])
    return out


def cloze_vocabulary() -> list[str]:
    """A word-level vocabulary for ``cloze_sentences``: the special tokens, then every word."""
    words = ["the", "in", "."] + sorted(CLOZE_LEXICON) + sorted(v for vs in CLOZE_LEXICON.values() for v in vs)
    words += CLOZE_PLACES + CLOZE_ADVERBS
    return list(DEFAULT_SPECIAL_TOKENS.values()) + words


# ----------------------------------------------------------------------------- experiment 4: topics
TOPIC_WORDS, FUNCTION_WORDS = 12, 24


def topical_documents(num_topics: int, docs_per_topic: int, rng: random.Random) -> tuple[list, list, list]:
    """Synthetic documents with a topic each: every sentence mixes words of its document's topic with
    function words shared by all. Returns (documents as lists of word lists, the topic of each, the words)."""
    function = [f"w{i}" for i in range(FUNCTION_WORDS)]
    topical = [[f"t{t}_{i}" for i in range(TOPIC_WORDS)] for t in range(num_topics)]
    docs, topics = [], []
    for t in range(num_topics):
        for _ in range(docs_per_topic):
            doc = []
            for _ in range(rng.randint(6, 12)):
                n = rng.randint(5, 9)
                doc.append([rng.choice(topical[t]) if rng.random() < 0.35 else rng.choice(function) for _ in range(n)])
            docs.append(doc)
            topics.append(t)
    return docs, topics, function + [w for ws in topical for w in ws]
