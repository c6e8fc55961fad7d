"""How the pages word a comparison over seeds: the sentence ``compare``'s verdict chose, and the difference with
its interval as the prose prints it.

``compare`` (``projects/pretraining_experiments/experiments.py``) computes the mean of the seed-by-seed
differences, its interval (Student's t) and a verdict; chapters 11 and 12 turn that into words here, so both
pages say a result the same way.
"""
from __future__ import annotations


def said(cmp: dict, larger: str, smaller: str, same: str) -> str:
    """The sentence ``compare``'s verdict chose: its interval over the seeds above zero (``larger``), below it
    (``smaller``), or across it (``same``)."""
    return {"larger": larger, "smaller": smaller, "no difference": same}[cmp["verdict"]]


def interval(cmp: dict, digits: int = 3) -> str:
    """A difference with its confidence interval over the seeds, as the prose prints it:
    ``+0.125 (95% interval +0.050 to +0.200, 3 seeds)``."""
    return (f"{cmp['difference']:+.{digits}f} ({cmp['confidence']:.0%} interval {cmp['low']:+.{digits}f} to "
            f"{cmp['high']:+.{digits}f}, {cmp['n']} seeds)")
