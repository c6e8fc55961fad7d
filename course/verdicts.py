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


def _end(value: float, digits: int) -> str:
    """An interval's end, with as many more digits as it takes not to print a nonzero end as zero: a lower end
    of 0.0004 printed "+0.000" reads as an interval that touches zero, which decides the verdict."""
    while digits < 8 and value != 0 and round(value, digits) == 0:
        digits += 1
    return f"{value:+.{digits}f}"


def interval(cmp: dict, digits: int = 3) -> str:
    """A difference with its confidence interval over the seeds, as the prose prints it:
    ``+0.125 (95% interval +0.050 to +0.200, 3 seeds)``."""
    return (f"{cmp['difference']:+.{digits}f} ({cmp['confidence']:.0%} interval {_end(cmp['low'], digits)} to "
            f"{_end(cmp['high'], digits)}, {cmp['n']} seeds)")


def bracket(cmp: dict, digits: int = 3) -> str:
    """A difference and its interval in a table's few characters: ``+0.125 [+0.050, +0.200]`` (the table's header
    says the confidence and the seeds)."""
    return f"{cmp['difference']:+.{digits}f} [{_end(cmp['low'], digits)}, {_end(cmp['high'], digits)}]"
