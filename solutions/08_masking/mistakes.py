"""Named wrong answers to 08_masking, each losing the points of its part only (tests/test_exercises.py).

One `# %%` cell per mistake: the solution cell it rewrites, the graded cells it loses, why, and its
code (docs/exercises.md); `python -m bertgrader.assignment --lint` checks each in its notebook.
The mistakes that are wrong only in their labels repeat the correct replacement around them."""


# %% same_selection_every_row cell=select loses=test_select
# why: one random draw per column, shared by every row: each sequence gets the same positions
def select_for_prediction(input_ids, special_ids, mlm_probability=0.15, generator=None):
    eligible = ~torch.isin(input_ids, torch.tensor(special_ids))
    draw = torch.rand(input_ids.shape[1], generator=generator)  # (T,): broadcast over the rows
    return eligible & (draw < mlm_probability)


# %% constant_mask_id cell=replace loses=test_replace
# why: writes id 103 instead of the mask_token_id it is given
def mask_selected(input_ids, selected, mask_token_id, vocab_size, generator=None):
    u = torch.rand(input_ids.shape, generator=generator)
    random_words = torch.randint(vocab_size, input_ids.shape, generator=generator)
    inputs = input_ids.clone()
    to_random = selected & (u >= 0.8) & (u < 0.9)
    inputs[to_random] = random_words[to_random]
    inputs[selected & (u < 0.8)] = 103
    labels = torch.where(selected, input_ids, -100)
    return inputs, labels


# %% random_words_from_a_fixed_vocabulary cell=replace loses=test_replace
# why: draws random words from BERT's 30522 ids instead of the vocab_size it is given
def mask_selected(input_ids, selected, mask_token_id, vocab_size, generator=None):
    u = torch.rand(input_ids.shape, generator=generator)
    random_words = torch.randint(30522, input_ids.shape, generator=generator)
    inputs = input_ids.clone()
    to_random = selected & (u >= 0.8) & (u < 0.9)
    inputs[to_random] = random_words[to_random]
    inputs[selected & (u < 0.8)] = mask_token_id
    labels = torch.where(selected, input_ids, -100)
    return inputs, labels


# %% corrupts_input_in_place cell=replace loses=test_replace,test_labels
# why: writes the replacements into input_ids itself, then labels from the corrupted ids
def mask_selected(input_ids, selected, mask_token_id, vocab_size, generator=None):
    u = torch.rand(input_ids.shape, generator=generator)
    random_words = torch.randint(vocab_size, input_ids.shape, generator=generator)
    inputs = input_ids  # not a copy
    to_random = selected & (u >= 0.8) & (u < 0.9)
    inputs[to_random] = random_words[to_random]
    inputs[selected & (u < 0.8)] = mask_token_id
    labels = torch.where(selected, input_ids, -100)
    return inputs, labels


# %% masks_special_tokens cell=select loses=test_select
# why: [CLS], [SEP] and [PAD] hold no word to predict and are never selected
def select_for_prediction(input_ids, special_ids, mlm_probability=0.15, generator=None):
    return torch.rand(input_ids.shape, generator=generator) < mlm_probability


# %% ignores_generator cell=select loses=test_select
# why: random numbers from torch's global generator: a seed passed in does not pin the result
def select_for_prediction(input_ids, special_ids, mlm_probability=0.15, generator=None):
    eligible = ~torch.isin(input_ids, torch.tensor(special_ids))
    return eligible & (torch.rand(input_ids.shape) < mlm_probability)


# %% calls_bertlib_mask_tokens cell=select loses=test_select
# why: calling bertlib's own masking is not writing it
def select_for_prediction(input_ids, special_ids, mlm_probability=0.15, generator=None):
    _, labels = bertlib.mask_tokens(input_ids, mask_token_id=MASK, vocab_size=VOCAB_SIZE, special_ids=special_ids,
                                    mlm_probability=mlm_probability, generator=generator)
    return labels != -100


# %% all_selected_become_mask cell=replace loses=test_replace
# why: selecting 15% and replacing all of them with [MASK]: no random and no unchanged tokens
def mask_selected(input_ids, selected, mask_token_id, vocab_size, generator=None):
    inputs = input_ids.clone()
    inputs[selected] = mask_token_id
    labels = torch.where(selected, input_ids, -100)
    return inputs, labels


# %% 80_10_10_on_all_tokens cell=replace loses=test_replace
# why: the 80/10/10 draw is applied to every position instead of the selected ones
def mask_selected(input_ids, selected, mask_token_id, vocab_size, generator=None):
    u = torch.rand(input_ids.shape, generator=generator)
    random_words = torch.randint(vocab_size, input_ids.shape, generator=generator)
    inputs = input_ids.clone()
    to_random = (u >= 0.8) & (u < 0.9)
    inputs[to_random] = random_words[to_random]
    inputs[u < 0.8] = mask_token_id
    labels = torch.where(selected, input_ids, -100)
    return inputs, labels


# %% random_tokens_not_labelled cell=replace loses=test_labels
# why: labels only where [MASK] was put: the random and the unchanged tokens are not predicted
def mask_selected(input_ids, selected, mask_token_id, vocab_size, generator=None):
    u = torch.rand(input_ids.shape, generator=generator)
    random_words = torch.randint(vocab_size, input_ids.shape, generator=generator)
    inputs = input_ids.clone()
    to_random = selected & (u >= 0.8) & (u < 0.9)
    inputs[to_random] = random_words[to_random]
    inputs[selected & (u < 0.8)] = mask_token_id
    labels = torch.where(inputs == mask_token_id, input_ids, -100)
    return inputs, labels


# %% labels_after_replacement cell=replace loses=test_labels
# why: the labels are taken from the corrupted inputs: the model is asked to predict [MASK]
def mask_selected(input_ids, selected, mask_token_id, vocab_size, generator=None):
    u = torch.rand(input_ids.shape, generator=generator)
    random_words = torch.randint(vocab_size, input_ids.shape, generator=generator)
    inputs = input_ids.clone()
    to_random = selected & (u >= 0.8) & (u < 0.9)
    inputs[to_random] = random_words[to_random]
    inputs[selected & (u < 0.8)] = mask_token_id
    labels = torch.where(selected, inputs, -100)
    return inputs, labels


# %% constant_private_seed cell=select loses=test_select
# why: draws from a generator of its own with a fixed seed: the generator passed in never changes the selection
def select_for_prediction(input_ids, special_ids, mlm_probability=0.15, generator=None):
    eligible = ~torch.isin(input_ids, torch.tensor(special_ids))
    own = torch.Generator().manual_seed(0)
    return eligible & (torch.rand(input_ids.shape, generator=own) < mlm_probability)


# %% floor_count_per_row cell=select loses=test_select
# why: the exact-count variant with int(mlm_probability * n), a floor: the task says round
def select_for_prediction(input_ids, special_ids, mlm_probability=0.15, generator=None):
    eligible = ~torch.isin(input_ids, torch.tensor(special_ids))
    selected = torch.zeros_like(eligible)
    for b in range(input_ids.shape[0]):
        positions = eligible[b].nonzero().flatten()
        k = int(mlm_probability * len(positions))
        chosen = positions[torch.randperm(len(positions), generator=generator)[:k]]
        selected[b, chosen] = True
    return selected


# %% half_up_count_per_row cell=select loses=test_select
# why: the exact-count variant rounding a half up, int(x + 0.5): round(2.5) is 2 (to the even number)
def select_for_prediction(input_ids, special_ids, mlm_probability=0.15, generator=None):
    eligible = ~torch.isin(input_ids, torch.tensor(special_ids))
    selected = torch.zeros_like(eligible)
    for b in range(input_ids.shape[0]):
        positions = eligible[b].nonzero().flatten()
        k = int(mlm_probability * len(positions) + 0.5)
        chosen = positions[torch.randperm(len(positions), generator=generator)[:k]]
        selected[b, chosen] = True
    return selected


# %% replace_with_a_constant_private_seed cell=replace loses=test_replace
# why: the 80/10/10 draws come from a generator of its own with a fixed seed, not from the argument
def mask_selected(input_ids, selected, mask_token_id, vocab_size, generator=None):
    own = torch.Generator().manual_seed(1234)
    u = torch.rand(input_ids.shape, generator=own)
    random_words = torch.randint(vocab_size, input_ids.shape, generator=own)
    inputs = input_ids.clone()
    to_random = selected & (u >= 0.8) & (u < 0.9)
    inputs[to_random] = random_words[to_random]
    inputs[selected & (u < 0.8)] = mask_token_id
    labels = torch.where(selected, input_ids, -100)
    return inputs, labels


# %% random_words_never_pad cell=replace loses=test_replace
# why: draws random words from [1, vocab_size): id 0 is part of the vocabulary, drawn like any other
def mask_selected(input_ids, selected, mask_token_id, vocab_size, generator=None):
    u = torch.rand(input_ids.shape, generator=generator)
    random_words = torch.randint(1, vocab_size, input_ids.shape, generator=generator)
    inputs = input_ids.clone()
    to_random = selected & (u >= 0.8) & (u < 0.9)
    inputs[to_random] = random_words[to_random]
    inputs[selected & (u < 0.8)] = mask_token_id
    labels = torch.where(selected, input_ids, -100)
    return inputs, labels


# %% random_words_from_the_batch cell=replace loses=test_replace
# why: a "random word" is another word of the batch, not a word drawn uniformly from [0, vocab_size)
def mask_selected(input_ids, selected, mask_token_id, vocab_size, generator=None):
    u = torch.rand(input_ids.shape, generator=generator)
    flat = input_ids.flatten()
    random_words = flat[torch.randint(len(flat), input_ids.shape, generator=generator)]
    inputs = input_ids.clone()
    to_random = selected & (u >= 0.8) & (u < 0.9)
    inputs[to_random] = random_words[to_random]
    inputs[selected & (u < 0.8)] = mask_token_id
    labels = torch.where(selected, input_ids, -100)
    return inputs, labels


# %% one_fate_per_row cell=replace loses=test_replace
# why: one draw per row decides the fate of all its selected positions: a row is all [MASK], all random or all kept
def mask_selected(input_ids, selected, mask_token_id, vocab_size, generator=None):
    u = torch.rand(input_ids.shape[0], 1, generator=generator).expand(input_ids.shape)
    random_words = torch.randint(vocab_size, input_ids.shape, generator=generator)
    inputs = input_ids.clone()
    to_random = selected & (u >= 0.8) & (u < 0.9)
    inputs[to_random] = random_words[to_random]
    inputs[selected & (u < 0.8)] = mask_token_id
    labels = torch.where(selected, input_ids, -100)
    return inputs, labels


# %% random_words_below_the_last_id cell=replace loses=test_replace
# why: torch.randint's high is excluded: randint(vocab_size - 1) never draws the last id, vocab_size - 1
def mask_selected(input_ids, selected, mask_token_id, vocab_size, generator=None):
    u = torch.rand(input_ids.shape, generator=generator)  # (B, T)
    random_words = torch.randint(vocab_size - 1, input_ids.shape, generator=generator, dtype=input_ids.dtype)
    inputs = torch.where(selected & (u >= 0.8) & (u < 0.9), random_words, input_ids)
    inputs = torch.where(selected & (u < 0.8), torch.full_like(input_ids, mask_token_id), inputs)
    labels = torch.where(selected, input_ids, torch.full_like(input_ids, -100))
    return inputs, labels


# %% random_words_never_mask cell=replace loses=test_replace
# why: the random word is drawn from the whole vocabulary, [MASK] included: skipping it changes the 80/10/10
def mask_selected(input_ids, selected, mask_token_id, vocab_size, generator=None):
    u = torch.rand(input_ids.shape, generator=generator)  # (B, T)
    random_words = torch.randint(vocab_size - 1, input_ids.shape, generator=generator, dtype=input_ids.dtype)
    random_words = random_words + (random_words >= mask_token_id).long()  # every id but [MASK]
    inputs = torch.where(selected & (u >= 0.8) & (u < 0.9), random_words, input_ids)
    inputs = torch.where(selected & (u < 0.8), torch.full_like(input_ids, mask_token_id), inputs)
    labels = torch.where(selected, input_ids, torch.full_like(input_ids, -100))
    return inputs, labels


# %% random_words_never_the_original cell=replace loses=test_replace
# why: a random word may be the original one (then it looks unchanged): BERT draws it from every id
def mask_selected(input_ids, selected, mask_token_id, vocab_size, generator=None):
    u = torch.rand(input_ids.shape, generator=generator)  # (B, T)
    shift = torch.randint(1, vocab_size, input_ids.shape, generator=generator, dtype=input_ids.dtype)
    random_words = (input_ids + shift) % vocab_size  # any id but the original
    inputs = torch.where(selected & (u >= 0.8) & (u < 0.9), random_words, input_ids)
    inputs = torch.where(selected & (u < 0.8), torch.full_like(input_ids, mask_token_id), inputs)
    labels = torch.where(selected, input_ids, torch.full_like(input_ids, -100))
    return inputs, labels


# %% select_copies_the_generator cell=select loses=test_select
# why: a copy of the generator's state is drawn from, not the generator: every call with it selects the same
def select_for_prediction(input_ids, special_ids, mlm_probability=0.15, generator=None):
    own = torch.Generator()
    if generator is not None:
        own.set_state(generator.get_state())  # same numbers, and the caller's generator left as it was
    eligible = ~torch.isin(input_ids, torch.tensor(list(special_ids), dtype=input_ids.dtype))  # (B, T)
    return eligible & (torch.rand(input_ids.shape, generator=own) < mlm_probability)


# %% select_reseeds_torch cell=select loses=test_select
# why: torch.manual_seed changes everyone's random numbers: dropout and every later draw repeat too
def select_for_prediction(input_ids, special_ids, mlm_probability=0.15, generator=None):
    if generator is not None:
        torch.manual_seed(generator.initial_seed())  # so that the draw below repeats with the seed
    eligible = ~torch.isin(input_ids, torch.tensor(list(special_ids), dtype=input_ids.dtype))  # (B, T)
    return eligible & (torch.rand(input_ids.shape) < mlm_probability)


# %% specials_at_the_low_end cell=select loses=test_select
# why: special ids are the ones listed, not every id up to the largest: a vocabulary may put [MASK] last
def select_for_prediction(input_ids, special_ids, mlm_probability=0.15, generator=None):
    eligible = input_ids > max(special_ids)  # BERT's vocabulary lists its special ids first
    return eligible & (torch.rand(input_ids.shape, generator=generator) < mlm_probability)
