"""Helpers for the book only: shared plots (``course.plots``), the static quiz (``course.quiz``) and each
chapter's widget demo (``course.demos.chNN_*``). The model code lives in bertlib, never here.

A chapter's first (hidden) cell calls ``book_setup()`` so that every chapter runs the same way: offline,
quiet on stderr (a warning printed there would show up in the page), figures drawn inline.
"""
from __future__ import annotations

import os


def book_setup(seed: int = 0) -> None:
    """Offline Hugging Face, no progress bars or library warnings on stderr, inline figures, fixed seeds."""
    for key, value in (("HF_HUB_OFFLINE", "1"), ("TRANSFORMERS_OFFLINE", "1"),
                       ("TOKENIZERS_PARALLELISM", "false"), ("HF_HUB_DISABLE_PROGRESS_BARS", "1")):
        os.environ.setdefault(key, value)
    try:  # inside Jupyter: draw figures into the page even when the build sets MPLBACKEND=Agg
        from IPython import get_ipython

        shell = get_ipython()
        if shell is not None and "ipykernel" in type(shell).__module__:
            shell.run_line_magic("matplotlib", "inline")
            from course.plots import describe_figures

            describe_figures(shell)  # every figure's PNG carries its caption and alt text (course/sphinx_ext.py)
    except ImportError:  # pragma: no cover
        pass
    import matplotlib.pyplot as plt

    plt.rcParams.update({"figure.dpi": 100, "savefig.dpi": 100, "font.size": 10, "axes.titlesize": 11})
    try:
        import transformers

        transformers.logging.set_verbosity_error()
        transformers.utils.logging.disable_progress_bar()
    except ImportError:  # pragma: no cover
        pass
    import random

    import numpy as np
    import torch

    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
