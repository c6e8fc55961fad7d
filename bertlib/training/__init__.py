"""What is done *with* the BERT in ``bertlib``: training it and measuring what it learned.

``bertlib`` itself is the model and its data code (config, tokenizer, embeddings, attention, encoder,
modeling, heads, masking, nsp, collate, params, weights, io). Everything here trains a model or feeds a training
run, and imports from ``bertlib``; nothing in ``bertlib`` imports from here.

- ``loop``              the training toolkit: one optimizer set-up, one learning-rate schedule, one progress bar,
                        one training step, one step timer (pretraining, fine-tuning, the experiments and the
                        book all use it)
- ``cli``               argument types the three command lines share, and ``option()``: a config field that
                        is also a command-line option
- ``checkpoint``        the checkpoint folder: checked before training, written atomically; the folders a run
                        may start from
- ``run_control``       how a run is launched and stopped: torchrun's processes, Ctrl-C

Pretraining (``python -m bertlib.pretrain``: MLM + NSP pretraining of a tiny BERT):

- ``corpus``            the pretraining corpus: the Python documentation every installation carries
- ``pretrain_config``   ``PretrainConfig``, one run and the command's options
- ``pretraining_data``  the vocabulary, the documents as ids, the stream of NSP batches, the held-out pairs
- ``objective``         the MLM + NSP loss of a batch and the held-out scores
- ``pretrain``          the run (set-up, step loop, one pretraining step, final metrics, Ctrl-C) and its command

Fine-tuning (``python -m bertlib.finetune``: the three heads on the shipped datasets, with baselines):

- ``task_data``         the datasets shipped in ``datasets/``, read, sampled and encoded
- ``tasks``             the three tasks: head, training tensors, scoring, baselines
- ``metrics``           accuracy and macro-F1, span F1, SQuAD's exact match and F1
- ``baselines``         what each task's model must beat without a model
- ``finetune``          the run (the model it starts from, the epochs, the recipe) and its command

Chapter 12's experiments and the generators of their data are not the library: they live beside it, in
``projects/pretraining_experiments/`` (``python -m projects.pretraining_experiments``), and import from here.
"""
