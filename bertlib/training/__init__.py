"""What is done *with* the BERT in ``bertlib``: training it and measuring what it learned.

``bertlib`` itself is the model and its data code (config, tokenizer, embeddings, attention, encoder,
modeling, heads, masking, nsp, params, weights). Everything here trains a model or feeds a training run, and
imports from ``bertlib``; nothing in ``bertlib`` imports from here.

- ``loop``         the training toolkit: one optimizer set-up, one learning-rate schedule, one progress bar,
                   one step loop (pretraining, fine-tuning, the experiments and the book all use it)
- ``corpus``       the pretraining corpus: the Python documentation every installation carries
- ``synthetic``    small seeded generators for the experiments where real text cannot guarantee a property
- ``pretrain``     ``python -m bertlib.pretrain``: MLM + NSP pretraining of a tiny BERT
- ``finetune``     ``python -m bertlib.finetune``: the three heads on the shipped datasets, with baselines
- ``experiments``  ``python -m bertlib.experiments``: five experiments on what the BERT paper asserts
- ``checkpoint``   the checkpoint folder: checked before training, written atomically
- ``cli``          argument types the three command lines share
"""
