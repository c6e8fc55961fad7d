"""Hidden tests of assignment 8 (15%, then 80/10/10), run by the grader outside the student's kernel.

Each function grades the graded cell of the same name: it calls the student's functions through
``student`` (their kernel, sandboxed), on the visible tests' inputs and on new ones, and checks the data
that comes back against bertlib, here. See bertgrader/checks.py.
"""
import math

import torch

import bertlib
from inputs import masking_pairs_batch as _pairs_batch  # inputs.py, beside the notebook: the visible tests' inputs too
from inputs import masking_selection_case as _selection_case
from bertgrader.kernel import wire
from bertgrader.checks import case, check, tensor

# While the notebook is graded its kernel has these as stubs: calling them, however, earns nothing.
SWITCHED_OFF = ["bertlib.masking.mask_tokens", "bertlib.masking.masking_statistics"]

PAD, UNK, CLS, SEP, MASK = 0, 100, 101, 102, 103
SPECIAL_IDS = [PAD, UNK, CLS, SEP, MASK]
VOCAB_SIZE = 30522


ROWS_ALIKE = ("every row selects the same positions (where they are eligible): draw a fresh random number for "
              "every position of every row, e.g. torch.rand(input_ids.shape, generator=generator), not one per column")


def _same_pattern_in_every_row(selected, eligible):
    """Whether the rows share one pattern: in every column, either every eligible position is selected or
    none is (independent draws make that all but impossible over 30 or more rows)."""
    all_eligible = (selected == eligible).all(0)  # (T,)
    none = (~selected).all(0)  # (T,)
    return bool((all_eligible | none).all()) and bool(selected.any())


def _tolerance(p, n):
    return 6 * math.sqrt(2 * p * (1 - p) / max(n, 1))  # six standard deviations of a difference of rates


def _rounded(p, n):
    """round(p x n) for each row's n, as float64 and as float32 arithmetic give it (they differ when p x n
    is within float32's precision of a half: a student's code may compute it either way)."""
    wide = [round(p * int(k)) for k in n]
    narrow = torch.round(torch.tensor(p, dtype=torch.float32) * n.to(torch.float32)).long().tolist()
    return wide, narrow


def _check_count_rule(got, eligible, p):
    """The task allows either variant. An answer whose every row holds floor or ceil of p x n selected
    positions picks an exact count (independent draws make that all but impossible over 20 long rows): then
    each row's count must be round(p x n), Python's round (a half to the even number), checked row by row."""
    counts, n = got.sum(1), eligible.sum(1)  # (B,), (B,)
    exact = p * n.double()
    if not bool(((counts >= exact.floor()) & (counts <= exact.ceil())).all()):
        return  # drawn position by position: the rates are checked
    wide, narrow = _rounded(p, n)
    for b in range(len(n)):
        k = int(counts[b])
        check(k in (wide[b], narrow[b]),
              f"you pick an exact count per row, but a row with {int(n[b])} eligible tokens got {k} selected; "
              f"round(mlm_probability x n) = {wide[b]} (Python's round: a half goes to the even number, "
              f"round(2.5) == 2)")


def _count_rule_batch(seed):
    """Rows of n eligible words (then [SEP] and padding) chosen so that 0.25 x n is a half (n = 6, 10, ...,
    34), has a fraction above or below a half, or is large enough (n of 90 to 118) to tell an exact count from
    independent draws."""
    gen = torch.Generator().manual_seed(seed)
    lengths = [6, 10, 14, 18, 22, 26, 30, 34, 7, 9, 11, 13, 15, 17, 19, 21] + list(range(90, 120, 2))
    T = max(lengths) + 3
    ids = torch.full((len(lengths), T), PAD)
    for b, n in enumerate(lengths):
        ids[b, 0], ids[b, n + 1] = CLS, SEP
        ids[b, 1:n + 1] = torch.randint(1000, VOCAB_SIZE, (n,), generator=gen)
    return ids[torch.randperm(len(lengths), generator=gen)]


def _fates(inputs, ids, mask_id):
    """(B, T) long: 0 where [MASK] was put, 1 where the token was kept, 2 where a random word was put."""
    return torch.where(inputs == mask_id, 0, torch.where(inputs == ids, 1, 2))


def _one_fate_along(fates, selected, dim):
    """Whether, along every row (dim=1) or every column (dim=0) holding 8 or more selected positions, they all
    met the same fate (independent draws make that all but impossible)."""
    lines = selected.sum(dim) >= 8
    same = torch.stack([((fates == f) | ~selected).all(dim) for f in range(3)]).any(0)
    return bool(lines.any()) and bool(same[lines].all())


def _one_generator_twice(student, call, what):
    """Call ``call(generator)`` twice with one generator kept in the student's kernel: the two draws must differ
    (drawing advances a generator). (Every call is also held to the grader's rules on random state: torch's
    global generator neither reseeded nor drawn from, the generator given drawn from; bertgrader.effects.)"""
    gen = student.keep_in_kernel(wire.Generator(2026))  # one generator, alive across both calls
    first, second = call(gen), call(gen)
    check(not torch.equal(tensor(first), tensor(second)),
          f"two calls with one generator gave the same {what}: draw from the generator itself, which advances it "
          "(a copy of its state, or a new generator seeded from it, gives every call the same numbers)")


# ------------------------------------------------------------------------------------------------ part 1
def test_select(student):
    select = student.select_for_prediction
    ids = _pairs_batch(64, 128, seed=7)
    special = torch.isin(ids, torch.tensor(SPECIAL_IDS))
    with case("on the visible test's batch (64 x 128, mlm_probability=0.15)"):
        got, (ids_after, *_) = select.call_keeping_args(ids, SPECIAL_IDS, 0.15, wire.Generator(0))
        got = tensor(got)
        check(got.dtype == torch.bool, f"expected a torch.bool tensor, got {got.dtype}")
        check(got.shape == ids.shape, f"expected the shape of input_ids {tuple(ids.shape)}, got {tuple(got.shape)}")
        check(torch.equal(ids_after, ids), "select_for_prediction changed input_ids; it must only read them")
        picked = {name: int((got & (ids == i)).sum()) for name, i in [("[CLS]", CLS), ("[SEP]", SEP), ("[PAD]", PAD)]}
        check(not any(picked.values()), f"selected special tokens: {picked}; leave out every id in special_ids")
        check(not _same_pattern_in_every_row(got, ~special), ROWS_ALIKE)
        _check_count_rule(got, ~special, 0.15)
        rate = got[~special].float().mean().item()
        check(abs(rate - 0.15) < 0.025, f"selected {rate:.1%} of the eligible tokens; BERT selects about 15%")
    with case("with mlm_probability=0.4"):
        rate = tensor(select(ids, SPECIAL_IDS, 0.4, wire.Generator(1)))[~special].float().mean().item()
        check(abs(rate - 0.4) < 0.03, f"selected {rate:.1%} of the eligible tokens, expected about 40%")
    with case("called twice with generators seeded alike"):
        first, second = select(ids, SPECIAL_IDS, 0.15, wire.Generator(5)), select(ids, SPECIAL_IDS, 0.15, wire.Generator(5))
        check(torch.equal(tensor(first), tensor(second)),
              "two calls with generators seeded alike selected different positions: draw every random number "
              "from `generator`, e.g. torch.rand(shape, generator=generator)")
    with case("called with generators seeded differently"):
        other = tensor(select(ids, SPECIAL_IDS, 0.15, wire.Generator(6)))
        check(not torch.equal(tensor(first), other),
              "two calls with differently seeded generators selected the same positions: the generator passed in "
              "must be the only source of randomness (not a generator or a seed of your own)")
    with case("called twice with one generator"):
        _one_generator_twice(student, lambda g: select(ids, SPECIAL_IDS, 0.15, g), "selection")
    other = _pairs_batch(64, 128, seed=70)  # the visible test's shape, other ids: nothing kept from a call
    other_special = torch.isin(other, torch.tensor(SPECIAL_IDS))
    with case("with another 64 x 128 batch, in int32"):
        got = tensor(select(other.to(torch.int32), SPECIAL_IDS, 0.15, wire.Generator(70)))
        check(got.dtype == torch.bool and got.shape == other.shape,
              f"expected a torch.bool tensor of shape {tuple(other.shape)}, got {got.dtype} {tuple(got.shape)}")
        check(not (got & other_special).any(), "selected a special token of this batch; leave out every id in "
                                                "special_ids (and select from this call's input_ids)")
        rate = got[~other_special].float().mean().item()
        check(abs(rate - 0.15) < 0.025, f"selected {rate:.1%} of the eligible tokens; BERT selects about 15%")
    # Special ids anywhere in the vocabulary, not only below the words: here [MASK] is its last id (as in
    # RoBERTa's), and the words lie between the special ids.
    V, specials = 500, [0, 1, 2, 3, 499]
    gen = torch.Generator().manual_seed(76)
    batch = torch.randint(4, V - 1, (40, 60), generator=gen)
    batch[:, 0], batch[:, 59] = 1, 2
    batch[torch.rand(40, 60, generator=gen) < 0.1] = 499
    eligible = ~torch.isin(batch, torch.tensor(specials))
    with case(f"with special_ids={specials} (the last id of a {V}-word vocabulary special too)"):
        got = tensor(select(batch, specials, 0.3, wire.Generator(77)))
        check(got.dtype == torch.bool and got.shape == batch.shape,
              f"expected a torch.bool tensor of shape {tuple(batch.shape)}, got {got.dtype} {tuple(got.shape)}")
        check(not (got & ~eligible).any(), "selected an id that is in special_ids; leave out exactly those ids")
        rate = got[eligible].float().mean().item()
        check(abs(rate - 0.3) < _tolerance(0.3, int(eligible.sum())),
              f"selected {rate:.1%} of the eligible tokens, expected about 30%: a position is eligible when its id "
              "is not in special_ids, wherever those ids lie in the vocabulary (not only below the words)")
    batch = _count_rule_batch(seed=74)
    eligible = ~torch.isin(batch, torch.tensor(SPECIAL_IDS))
    with case("with mlm_probability=0.25 and rows of 6 to 118 eligible tokens"):
        got = tensor(select(batch, SPECIAL_IDS, 0.25, wire.Generator(75)))
        check(got.dtype == torch.bool and got.shape == batch.shape,
              f"expected a torch.bool tensor of shape {tuple(batch.shape)}, got {got.dtype} {tuple(got.shape)}")
        check(not (got & ~eligible).any(), "selected a special token; leave out every id in special_ids")
        _check_count_rule(got, eligible, 0.25)
    for B, T, p, seed in [(48, 96, 0.15, 71), (100, 64, 0.3, 72), (30, 200, 0.1, 73)]:
        specials = SPECIAL_IDS + [1000 + seed]  # one more id: the argument, not a fixed list, must decide
        batch = _pairs_batch(B, T, seed=seed)
        batch[:, 3] = 1000 + seed
        eligible = ~torch.isin(batch, torch.tensor(specials))
        _, labels = bertlib.masking.mask_tokens(batch, mask_token_id=MASK, vocab_size=VOCAB_SIZE, special_ids=specials,
                                                mlm_probability=p, generator=torch.Generator().manual_seed(seed + 1000))
        expected = (labels != -100)[eligible].float().mean().item()  # bertlib's own selection rate
        with case(f"with a {B} x {T} batch, mlm_probability={p} and special_ids={specials}"):
            got = tensor(select(batch, specials, p, wire.Generator(seed + 500)))
            check(got.dtype == torch.bool and got.shape == batch.shape,
                  f"expected a torch.bool tensor of shape {tuple(batch.shape)}, got {got.dtype} {tuple(got.shape)}")
            check(not (got & ~eligible).any(), f"selected id {1000 + seed}, which is in special_ids: every id in "
                                                "the argument special_ids is ineligible, not only the usual five")
            check(not _same_pattern_in_every_row(got, eligible), ROWS_ALIKE)
            _check_count_rule(got, eligible, p)
            rate = got[eligible].float().mean().item()
            check(abs(rate - expected) < _tolerance(p, int(eligible.sum())),
                  f"selected {rate:.1%} of the eligible tokens; expected about {p:.0%} (bertlib: {expected:.1%})")


# ------------------------------------------------------------------------------------------------ part 2
def test_replace(student):
    replace = student.mask_selected
    ids, selected = _selection_case(64, 128, seed=8)
    with case("on the visible test's inputs (64 x 128, about half the positions selected)"):
        out, (ids_after, *_) = replace.call_keeping_args(ids, selected, MASK, VOCAB_SIZE, wire.Generator(0))
        check(isinstance(out, (tuple, list)) and len(out) == 2, "expected (inputs, labels), a pair of tensors")
        inputs = tensor(out[0], "inputs")
        check(torch.equal(ids_after, ids), "mask_selected changed input_ids in place: return a new tensor")
        check(inputs.shape == ids.shape, f"expected inputs shaped like input_ids {tuple(ids.shape)}, got {tuple(inputs.shape)}")
        changed = (inputs != ids) & ~selected
        check(not changed.any(), f"{int(changed.sum())} positions that were NOT selected were changed: 80/10/10 "
                                 "applies only to the selected positions; the others keep their token")
        new, old = inputs[selected], ids[selected]
        masked = (new == MASK).float().mean().item()
        kept = (new == old).float().mean().item()
        check(abs(masked - 0.8) < 0.04, f"{masked:.1%} of the selected positions became [MASK]; BERT masks about 80%")
        check(abs(1 - masked - kept - 0.1) < 0.03,
              f"{1 - masked - kept:.1%} of the selected positions became another word; BERT replaces about 10%")
        check(abs(kept - 0.1) < 0.03, f"{kept:.1%} of the selected positions kept their token; BERT keeps about 10%")
        drawn = new[(new != MASK) & (new != old)]
        check(drawn.min() >= 0 and drawn.max() < VOCAB_SIZE, "random words must be ids in [0, vocab_size)")
        check(drawn.unique().numel() > 0.9 * drawn.numel(),
              f"the {drawn.numel()} random replacements use only {drawn.unique().numel()} distinct ids: draw each "
              "random word on its own, uniformly from [0, vocab_size)")
        fates = _fates(inputs, ids, MASK)
        for dim, what in [(1, "row"), (0, "column")]:
            check(not _one_fate_along(fates, selected, dim),
                  f"in every {what}, all the selected positions met the same fate (all [MASK], all a random word or "
                  "all kept): draw the fate of every selected position on its own")
    with case("called twice with generators seeded alike"):
        a = replace(ids, selected, MASK, VOCAB_SIZE, wire.Generator(5))[0]
        b = replace(ids, selected, MASK, VOCAB_SIZE, wire.Generator(5))[0]
        check(torch.equal(tensor(a), tensor(b)), "two calls with generators seeded alike gave different inputs: "
                                                 "draw every random number from `generator`")
    with case("called with generators seeded differently"):
        c = replace(ids, selected, MASK, VOCAB_SIZE, wire.Generator(6))[0]
        check(not torch.equal(tensor(a), tensor(c)),
              "two calls with differently seeded generators gave the same inputs: the generator passed in must be "
              "the only source of randomness (not a generator or a seed of your own)")
    with case("called twice with one generator"):
        _one_generator_twice(student, lambda g: replace(ids, selected, MASK, VOCAB_SIZE, g)[0], "inputs")
    V, mask_id, word = 10, 9, 8
    batch = torch.full((16, 300), word)  # every position the same word, every position selected
    with case(f"with vocab_size={V}, mask_token_id={mask_id}, every position selected"):
        inputs = tensor(replace(batch, torch.ones_like(batch, dtype=torch.bool), mask_id, V, wire.Generator(84))[0],
                        "inputs")
        check(inputs.shape == batch.shape and inputs.min() >= 0 and inputs.max() < V,
              f"expected ids in [0, {V}) shaped like input_ids")
        # about 1% of the positions draw each id: 48 of each expected, a missing one all but impossible
        missing = sorted(set(range(V)) - {mask_id, word} - set(inputs.unique().tolist()))
        check(not missing, f"no random word was id {missing}: draw every random word uniformly from the whole "
                           "of [0, vocab_size), special ids and 0 included")
    # Every id's share, on a vocabulary where neither [MASK] nor the word is the first or the last id: a
    # random word is drawn from all of [0, vocab_size), so [MASK] gets 0.8 + 0.1/V, the word 0.1 + 0.1/V and
    # every other id 0.1/V (a draw that skips [MASK], the original word or the last id shifts them).
    V, mask_id, word = 5, 1, 3
    batch = torch.full((64, 1000), word)
    with case(f"with vocab_size={V}, mask_token_id={mask_id}, every position of a 64 x 1000 batch of word {word} "
              "selected"):
        inputs = tensor(replace(batch, torch.ones_like(batch, dtype=torch.bool), mask_id, V, wire.Generator(85))[0],
                        "inputs")
        check(inputs.shape == batch.shape and inputs.min() >= 0 and inputs.max() < V,
              f"expected ids in [0, {V}) shaped like input_ids")
        n = batch.numel()
        share = torch.bincount(inputs.flatten().long(), minlength=V).double() / n
        expected = torch.full((V,), 0.1 / V, dtype=torch.double)
        expected[mask_id] += 0.8
        expected[word] += 0.1
        off = [v for v in range(V) if abs(share[v] - expected[v]) > _tolerance(float(expected[v]), n)]
        if off:
            hint = ""
            if share[mask_id] < expected[mask_id] and share[word] > expected[word]:
                hint = ": your random words are never [MASK], but [MASK] is a word of the vocabulary like any other"
            elif share[word] < expected[word]:
                hint = ": your random words are never the original word, but it may be drawn (it then looks unchanged)"
            elif share[V - 1] < expected[V - 1]:
                hint = (f": the last id ({V - 1}) is too rare; draw from [0, vocab_size), which holds vocab_size - 1 "
                        "(torch.randint's high is excluded)")
            v = off[0]
            check(False, f"id {v} was put at {share[v].item():.2%} of the selected positions, expected "
                         f"{expected[v].item():.2%} (80% [MASK], 10% kept, 10% a word drawn uniformly from all {V} "
                         f"ids, [MASK] and the original word included){hint}")
    for B, T, V, mask_id, density, seed in [(64, 128, 30522, MASK, 0.3, 81), (64, 64, 5000, 4, 0.6, 82),
                                            (16, 300, 30522, MASK, 0.9, 83)]:
        batch, sel = _selection_case(B, T, seed, vocab_size=V, density=density)
        with case(f"with vocab_size={V} and mask_token_id={mask_id}"):
            out = replace(batch, sel, mask_id, V, wire.Generator(seed + 500))
            inputs = tensor(out[0], "inputs")
            check(torch.equal(inputs[~sel], batch[~sel]), "changed a position that was not selected")
            check(inputs.min() >= 0 and inputs.max() < V, f"an id outside [0, {V}): draw random words from "
                                                         "[0, vocab_size), the argument, not a fixed size")
            new, old = inputs[sel], batch[sel]
            n = int(sel.sum())
            shares = {"[MASK]": (new == mask_id).float().mean().item(), "unchanged": (new == old).float().mean().item()}
            shares["a random word"] = 1 - shares["[MASK]"] - shares["unchanged"]
            for what, q in [("[MASK]", 0.8), ("a random word", 0.1), ("unchanged", 0.1)]:
                check(abs(shares[what] - q) < _tolerance(q, n),
                      f"{shares[what]:.1%} of the selected positions became {what}, expected about {q:.0%} "
                      f"(with mask_token_id={mask_id}: use the argument)")


# ------------------------------------------------------------------------------------------------ part 3
def test_labels(student):
    # This part grades the labels; how mask_selected draws its random numbers is graded (and costs) in Part 2.
    why = "the labels part grades the labels; the draws of the replacement are graded in Part 2"
    replace = student.mask_selected.call_with(allow={"generator_unused": why, "global_rng": why, "reseeds": why})
    ids, selected = _selection_case(32, 128, seed=9)
    with case("on the visible test's inputs"):
        inputs, labels = replace(ids, selected, MASK, VOCAB_SIZE, wire.Generator(0))
        labels, inputs = tensor(labels, "labels"), tensor(inputs, "inputs")
        check(labels.shape == ids.shape, f"expected labels shaped like input_ids {tuple(ids.shape)}, got {tuple(labels.shape)}")
        check(labels.dtype == torch.long, f"labels are class indices for cross_entropy: torch.long, got {labels.dtype}")
        unlabelled = selected & (labels == -100)
        became = {"[MASK]": int((unlabelled & (inputs == MASK)).sum()),
                  "a random word": int((unlabelled & (inputs != MASK) & (inputs != ids)).sum()),
                  "itself": int((unlabelled & (inputs == ids)).sum())}
        check(not unlabelled.any(), f"{int(unlabelled.sum())} selected positions have label -100; by what they "
                                    f"became: {became}. Every selected position is predicted, whatever it became")
        check(not (~selected & (labels != -100)).any(),
              "positions that were not selected have a label; every other label is -100")
        check(torch.equal(labels[selected], ids[selected]),
              "selected positions are labelled with something other than their original id: the label is the "
              "word that was there before the replacement")
    for B, T, V, mask_id, density, seed in [(8, 50, 30522, MASK, 0.15, 91), (50, 20, 700, 4, 0.7, 92)]:
        batch, sel = _selection_case(B, T, seed, vocab_size=V, density=density)
        _, expected = bertlib.masking.mask_tokens(batch, mask_token_id=mask_id, vocab_size=V, special_ids=[],
                                                  attention_mask=sel.long(), mlm_probability=1.0,
                                                  generator=torch.Generator().manual_seed(seed + 1000))
        with case(f"with vocab_size={V}, mask_token_id={mask_id} and {int(sel.sum())} of {B * T} positions selected"):
            got = tensor(replace(batch, sel, mask_id, V, wire.Generator(seed + 500))[1], "labels")
            check(got.shape == expected.shape and torch.equal(got, expected),
                  "wrong labels: the original id at every selected position, -100 everywhere else")
