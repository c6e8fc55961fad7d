"""Named wrong answers to 07_masking, each losing the points of its part only (tests/test_exercises.py)."""

# The correct replacement, reused by the mistakes that are wrong only in their labels.
_REPLACE = '''
def mask_selected(input_ids, selected, mask_token_id, vocab_size, generator=None):
    u = torch.rand(input_ids.shape, generator=generator)
    random_words = torch.randint(vocab_size, input_ids.shape, generator=generator)
    inputs = input_ids.clone()
    to_random = selected & (u >= 0.8) & (u < 0.9)
    inputs[to_random] = random_words[to_random]
    inputs[selected & (u < 0.8)] = mask_token_id
    {labels}
    return inputs, labels
'''

MISTAKES = {
    "same_selection_every_row": {
        "why": "one random draw per column, shared by every row: each sequence gets the same positions",
        "cells": {"select": '''
def select_for_prediction(input_ids, special_ids, mlm_probability=0.15, generator=None):
    eligible = ~torch.isin(input_ids, torch.tensor(special_ids))
    draw = torch.rand(input_ids.shape[1], generator=generator)  # (T,): broadcast over the rows
    return eligible & (draw < mlm_probability)
'''},
        "loses": ["test_select"],
    },
    "constant_mask_id": {
        "why": "writes id 103 instead of the mask_token_id it is given",
        "cells": {"replace": _REPLACE.replace("inputs[selected & (u < 0.8)] = mask_token_id",
                                              "inputs[selected & (u < 0.8)] = 103").format(
            labels="labels = torch.where(selected, input_ids, -100)")},
        "loses": ["test_replace"],
    },
    "random_words_from_a_fixed_vocabulary": {
        "why": "draws random words from BERT's 30522 ids instead of the vocab_size it is given",
        "cells": {"replace": _REPLACE.replace("torch.randint(vocab_size,", "torch.randint(30522,").format(
            labels="labels = torch.where(selected, input_ids, -100)")},
        "loses": ["test_replace"],
    },
    "corrupts_input_in_place": {
        "why": "writes the replacements into input_ids itself, then labels from the corrupted ids",
        "cells": {"replace": '''
def mask_selected(input_ids, selected, mask_token_id, vocab_size, generator=None):
    u = torch.rand(input_ids.shape, generator=generator)
    random_words = torch.randint(vocab_size, input_ids.shape, generator=generator)
    inputs = input_ids  # not a copy
    to_random = selected & (u >= 0.8) & (u < 0.9)
    inputs[to_random] = random_words[to_random]
    inputs[selected & (u < 0.8)] = mask_token_id
    labels = torch.where(selected, input_ids, -100)
    return inputs, labels
'''},
        "loses": ["test_replace", "test_labels"],
    },
    "masks_special_tokens": {
        "why": "[CLS], [SEP] and [PAD] hold no word to predict and are never selected",
        "cells": {"select": '''
def select_for_prediction(input_ids, special_ids, mlm_probability=0.15, generator=None):
    return torch.rand(input_ids.shape, generator=generator) < mlm_probability
'''},
        "loses": ["test_select"],
    },
    "ignores_generator": {
        "why": "random numbers from torch's global generator: a seed passed in does not pin the result",
        "cells": {"select": '''
def select_for_prediction(input_ids, special_ids, mlm_probability=0.15, generator=None):
    eligible = ~torch.isin(input_ids, torch.tensor(special_ids))
    return eligible & (torch.rand(input_ids.shape) < mlm_probability)
'''},
        "loses": ["test_select"],
    },
    "calls_bertlib_mask_tokens": {
        "why": "calling bertlib's own masking is not writing it",
        "cells": {"select": '''
def select_for_prediction(input_ids, special_ids, mlm_probability=0.15, generator=None):
    _, labels = bertlib.mask_tokens(input_ids, mask_token_id=MASK, vocab_size=VOCAB_SIZE, special_ids=special_ids,
                                    mlm_probability=mlm_probability, generator=generator)
    return labels != -100
'''},
        "loses": ["test_select"],
    },
    "all_selected_become_mask": {
        "why": "selecting 15% and replacing all of them with [MASK]: no random and no unchanged tokens",
        "cells": {"replace": '''
def mask_selected(input_ids, selected, mask_token_id, vocab_size, generator=None):
    inputs = input_ids.clone()
    inputs[selected] = mask_token_id
    labels = torch.where(selected, input_ids, -100)
    return inputs, labels
'''},
        "loses": ["test_replace"],
    },
    "80_10_10_on_all_tokens": {
        "why": "the 80/10/10 draw is applied to every position instead of the selected ones",
        "cells": {"replace": '''
def mask_selected(input_ids, selected, mask_token_id, vocab_size, generator=None):
    u = torch.rand(input_ids.shape, generator=generator)
    random_words = torch.randint(vocab_size, input_ids.shape, generator=generator)
    inputs = input_ids.clone()
    to_random = (u >= 0.8) & (u < 0.9)
    inputs[to_random] = random_words[to_random]
    inputs[u < 0.8] = mask_token_id
    labels = torch.where(selected, input_ids, -100)
    return inputs, labels
'''},
        "loses": ["test_replace"],
    },
    "random_tokens_not_labelled": {
        "why": "labels only where [MASK] was put: the random and the unchanged tokens are not predicted",
        "cells": {"replace": _REPLACE.format(labels="labels = torch.where(inputs == mask_token_id, input_ids, -100)")},
        "loses": ["test_labels"],
    },
    "labels_after_replacement": {
        "why": "the labels are taken from the corrupted inputs: the model is asked to predict [MASK]",
        "cells": {"replace": _REPLACE.format(labels="labels = torch.where(selected, inputs, -100)")},
        "loses": ["test_labels"],
    },
}
