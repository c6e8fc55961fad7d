"""How the pages word a comparison over seeds: the sentence ``compare``'s verdict chose, and the difference with
its interval as the prose prints it.

``compare`` (``projects/pretraining_experiments/experiments.py``) computes the mean of the seed-by-seed
differences, its interval (Student's t) and a verdict; chapters 11 and 12 turn that into words here, so both
pages say a result the same way.

Both editions, one execution (issue 31 §2): a sentence is written as an English template with ``{name}`` fields for
its numbers; ``glue_said`` glues it under ``key`` and its Chinese (``course.editions.tr``, from
``locale/zh_CN/LC_MESSAGES/outputs/verdicts.po``) under ``key__zh_CN``, which the chapter's Chinese catalogue
references. The numbers are filled in after the translation, so both editions show the same ones.
"""
from __future__ import annotations

from collections.abc import Callable

from course.editions import ENGLISH, LANGUAGES, both, tr


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


def interval(cmp: dict, digits: int = 3, language: str = ENGLISH) -> str:
    """A difference with its confidence interval over the seeds, as the prose prints it:
    ``+0.125 (95% interval +0.050 to +0.200, 3 seeds)``."""
    return tr("{difference} ({confidence} interval {low} to {high}, {n} seeds)", language).format(
        difference=f"{cmp['difference']:+.{digits}f}", confidence=f"{cmp['confidence']:.0%}",
        low=_end(cmp["low"], digits), high=_end(cmp["high"], digits), n=cmp["n"])


def bracket(cmp: dict, digits: int = 3) -> str:
    """A difference and its interval in a table's few characters: ``+0.125 [+0.050, +0.200]`` (the table's header
    says the confidence and the seeds)."""
    return f"{cmp['difference']:+.{digits}f} [{_end(cmp['low'], digits)}, {_end(cmp['high'], digits)}]"


def glue_key(key: str, language: str) -> str:
    """The glue key of ``key``'s text in ``language``: the English under ``key`` itself, the Chinese under
    ``key__zh_CN`` (tests/test_translation.py lets a translation reference that in place of ``key``)."""
    return key if language == ENGLISH else f"{key}__{language}"


def sentence(language: str, *templates: str, **fields) -> str:
    """The templates in ``language``, one after the other (a space between English sentences, none between
    Chinese ones), their ``{name}`` fields filled in from ``fields``."""
    return ("" if language != ENGLISH else " ").join(tr(t, language) for t in templates if t).format(**fields)


def glue_said(key: str, *templates: str, markdown: bool = True, **fields) -> dict[str, str]:
    """Glue the sentence in every edition (``{glue:md}`` by default; ``markdown=False`` for ``{glue:text}``):
    ``key`` and ``key__zh_CN``. Returns each language's text."""
    from IPython.display import Markdown
    from myst_nb import glue

    texts = {language: sentence(language, *templates, **fields) for language in LANGUAGES}
    for language, text in texts.items():
        glue(glue_key(key, language), Markdown(text) if markdown else text, display=False)
    return texts


def glue_html(key: str, render: Callable[[str], object]) -> None:
    """Glue ``render(language)`` (HTML: a str or an object with ``_repr_html_``/``data``, e.g.
    ``course.plots.html_table``) of every edition under one key (``course.editions.both``): a ``{glue}`` directive
    shows it, and each page keeps its own edition's."""
    from IPython.display import HTML
    from myst_nb import glue

    def text(language: str) -> str:
        out = render(language)
        return out if isinstance(out, str) else getattr(out, "data", None) or out._repr_html_()

    glue(key, HTML(both(text)), display=False)
