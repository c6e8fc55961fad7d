"""Chapter 12's experiments: what the BERT paper (and later work) asserts, tested by training a tiny BERT.

An application of ``bertlib``, kept beside the library as minGPT keeps its ``projects/``: it imports from
``bertlib`` and ``bertlib.training``, and nothing there imports from here. Not part of the installed package;
run it from the repository's root:

    python -m projects.pretraining_experiments NAME [--full]     # bidirectional, mask_mismatch, mask_rate, nsp, few_labels

- ``experiments``          the five experiments, ``compare`` (the interval over seeds the book's wording follows)
                           and the command
- ``synthetic``            small seeded generators for the experiments where real text cannot guarantee a property
- ``datasets/build_datasets.py``  writes the fine-tuning datasets that ship in ``bertlib/training/datasets/``
"""
