"""A self-check quiz that works in the static page: plain HTML radio buttons and CSS, no JavaScript.

Use it from any chapter (put the cell's input away with the ``remove-input`` tag)::

    from course.quiz import quiz
    quiz([
        ("How are BERT's three embeddings combined?",          # the question
         ["concatenated", "added", "averaged", "multiplied"],  # the options
         1,                                                    # the right one: index or letter ("B")
         "Added element-wise, so the width stays H."),         # why, shown with the answer
    ])

Pass ``key="padding"`` (any string unique to the quiz) to let the quiz place the right answers itself: within
one quiz the right answers are dealt out over the letters like cards (every letter once before any letter
twice), in an order shuffled by ``random.Random(key)``; each question's options are rotated so that the
right one lands on its letter (the others keep their cyclic order, the explanation stays with its
question). The placement depends only on the key and the number of options, so it is the same on every
build, and a quiz of four four-option questions uses each of A-D once. Without ``key`` the options are
shown as written.

Options that are all numbers ("0.478", "about 15%", "30,522") are shown in order, smallest first or
largest first, never rotated into "5, 0, 1, 4". Such a question cannot take any letter, only the rank of
its answer counted from either end, so within the quiz the letters that ``placement`` dealt are shared out
again: the numeric questions take letters their order allows, the others keep theirs where they can. The
quiz uses the same letters as before, only assigned to other questions.

Two editions (issue 31 §2, course/editions.py): ``quiz`` displays both editions' HTML from one execution
(``editions.both``), the page keeping its own. Every question, option, explanation, the title and the fixed
words ("Show answer", "right", ...) go through ``editions.tr`` (catalogue
``locale/zh_CN/LC_MESSAGES/outputs/quizzes.po``, msgid the English exactly as the chapter writes it, backticks
included, each number replaced by a numbered field, ``{0}``, ``{1}``, …: see ``template``; the chapters compute
some of them); options that are numbers only ("0.478", "30,522", "15%", "0 0 1 1") or code only (`` `max` ``) are
shown as they are. The placement is
computed once, from the English, so both editions put each right answer on the same letter.

Picking an option marks it right or wrong at once (a CSS ``:checked`` rule); a "Show answer" fold
(``<details>``) holds the answer and the reason. Text may use `backticks` for code; everything else is
escaped, so a ``<`` in a question is shown, not parsed.
"""
from __future__ import annotations

import hashlib
import html
import random
import re
from collections.abc import Sequence

from course.editions import ENGLISH, HTML_LANG, both, tr

Question = tuple[str, Sequence[str], "int | str", str]

_CSS = """
.bert-quiz{border:1px solid #ccd;border-radius:6px;padding:.6em 1em;margin:1em 0}
.bert-quiz ol{padding-left:1.4em}
.bert-quiz li.q{margin-bottom:.9em}
.bert-quiz label{display:block;cursor:pointer;margin:.15em 0}
.bert-quiz .fb{display:none;font-weight:bold;margin-left:.5em}
.bert-quiz input:checked ~ .fb{display:inline}
.bert-quiz .fb.ok{color:#1a7f37}
.bert-quiz .fb.no{color:#cf222e}
.bert-quiz details{margin-top:.3em}
.bert-quiz summary{cursor:pointer;color:#555}
html:not(:lang(zh)) .bert-quiz:lang(zh){display:none}
"""  # the last rule: a notebook in JupyterLab (English) shows the English quiz only; a built page holds one edition


def _letter(i: int) -> str:
    return chr(ord("A") + i)


def _answer_index(answer: int | str, n_options: int) -> int:
    if isinstance(answer, str):
        if len(answer) != 1 or not answer.isalpha():
            raise ValueError(f"answer must be an option index or a single letter, got {answer!r}")
        answer = ord(answer.upper()) - ord("A")
    if not isinstance(answer, int) or not 0 <= answer < n_options:
        raise ValueError(f"answer {answer!r} is not one of the {n_options} options")
    return answer


def placement(n_options: Sequence[int], key: str) -> list[int]:
    """Where the right answer goes (an option index) for each question of a quiz whose questions have
    ``n_options[i]`` options: slots 0..k-1 dealt in rounds, each round shuffled by ``random.Random(key)``,
    with k the largest number of options; a question with fewer options takes its slot modulo its count."""
    if not n_options:
        return []
    k = max(n_options)
    rng = random.Random(key)
    slots: list[int] = []
    while len(slots) < len(n_options):
        round_ = list(range(k))
        rng.shuffle(round_)
        slots += round_
    return [slot % n for slot, n in zip(slots, n_options)]


_NUMBER = re.compile(r"^(?:about |exactly |roughly )?(-?[\d,]*\.?\d+(?:e-?\d+)?)\s*(?:%|x)?$")


def _numeric_values(options: Sequence[str]) -> list[float] | None:
    """The options' values if every option is a number ("0.478", "about 15%", "30,522"), else None."""
    values = []
    for option in options:
        m = _NUMBER.match(str(option).strip())
        if not m:
            return None
        values.append(float(m.group(1).replace(",", "")))
    return values if len(set(values)) == len(values) else None


def _numeric_slots(options: Sequence[str], right: int) -> dict[int, list[str]] | None:
    """For a question whose options are all numbers: slot -> the options in order that put the right one at
    that slot, ascending first, then descending. None if the options are not all numbers."""
    values = _numeric_values(options)
    if values is None:
        return None
    ascending = [options[i] for i in sorted(range(len(options)), key=lambda i: values[i])]
    rank = ascending.index(options[right])
    slots = {rank: ascending}
    slots.setdefault(len(options) - 1 - rank, ascending[::-1])
    return slots


def _assign(targets: list[int], allowed: dict[int, list[int]]) -> list[int] | None:
    """The quiz's slots (the multiset ``targets``) shared out again: question i of ``allowed`` gets one of the
    slots listed for it (its own if it can, else the first that fits), and every other question keeps its
    own slot where it can and takes a left-over one where it cannot. None if no such assignment exists."""
    order = sorted(allowed, key=lambda i: len(allowed[i]))  # the most constrained first

    def search(k: int, left: list[int], chosen: dict[int, int]) -> dict[int, int] | None:
        if k == len(order):
            return chosen
        i = order[k]
        for slot in sorted((s for s in allowed[i] if s in left), key=lambda s: s != targets[i]):
            rest = list(left)
            rest.remove(slot)
            found = search(k + 1, rest, {**chosen, i: slot})
            if found is not None:
                return found
        return None

    chosen = search(0, list(targets), {})
    if chosen is None:
        return None
    left = list(targets)
    for slot in chosen.values():
        left.remove(slot)
    out = list(targets)
    movers = []
    for i in range(len(targets)):
        if i in chosen:
            out[i] = chosen[i]
        elif targets[i] in left:
            left.remove(targets[i])  # keeps its own slot
        else:
            movers.append(i)
    for i in movers:
        out[i] = left.pop(0)
    return out


def _placed(questions: Sequence[Question], key: str) -> list[Question]:
    """The questions with each right option moved onto its slot from ``placement``: rotated there, or, for
    options that are all numbers, put in order with the slots shared out again (see the module's docstring)."""
    for n, q in enumerate(questions):
        if len(q) != 4:
            raise ValueError(f"question {n + 1}: expected (question, options, answer, why), got {len(q)} items")
    targets = placement([len(q[1]) for q in questions], key)
    rights = [_answer_index(q[2], len(q[1])) for q in questions]
    numeric = {n: s for n, q in enumerate(questions) if (s := _numeric_slots(list(q[1]), rights[n])) is not None}
    if numeric:
        shared = _assign(targets, {n: list(s) for n, s in numeric.items()})
        if shared is None:
            numeric = {}  # no way to order them all: rotate as usual
        else:  # a question with fewer options than the slot it was given takes it modulo its count
            targets = [t % len(q[1]) for t, q in zip(shared, questions)]
    out = []
    for n, ((question, options, _, why), target, right) in enumerate(zip(questions, targets, rights)):
        options = list(options)
        if n in numeric:
            placed = numeric[n][target]
        else:
            shift = (target - right) % len(options)  # rotate right by `shift`: index right -> target
            placed = options[-shift:] + options[:-shift] if shift else options
        assert placed[target] == options[right]
        out.append((question, placed, target, why))
    return out


_PLAIN_NUMBER = re.compile(r"^[-+]?[0-9,]*\.?[0-9]+(?:e-?[0-9]+)?\s*%?$")
_CODE_ONLY = re.compile(r"^\s*(?:`[^`]+`[\s,;]*)+$")  # an option that is code only: the same in every edition
_DIGITS = re.compile(r"[0-9]+(?:[.,][0-9]+)*")  # 12, 0.85, 30,522: a number as a chapter writes it


def template(text: str) -> tuple[str, list[str]]:
    """``text`` with each number replaced by a numbered field, and the numbers: ("about {0}%", ["15"]). The
    chapters compute some of their quizzes' numbers (f-strings), so the catalogue holds the template and
    every edition fills in the same numbers."""
    numbers: list[str] = []

    def field(m):
        numbers.append(m.group(0))
        return f"{{{len(numbers) - 1}}}"

    return _DIGITS.sub(field, text.replace("{", "{{").replace("}", "}}")), numbers


def msgid(text: str) -> str | None:
    """The catalogue's msgid of a quiz string (its ``template``), or None for a string every edition shows as it
    is: numbers only ("0.478", "about" is a word; "15%", "0 0 1 1") or code only (`` `max` ``)."""
    text = str(text)
    if _PLAIN_NUMBER.match(text.strip()) or _CODE_ONLY.match(text):
        return None
    pattern, _ = template(text)
    if not re.search(r"[^\W\d_]", re.sub(r"\{\d+\}", "", pattern)):
        return None
    return pattern


def _words(text: str, language: str) -> str:
    """``text`` in ``language``: its ``msgid`` through editions.tr, filled with its own numbers."""
    text = str(text)
    pattern = None if language == ENGLISH else msgid(text)
    return text if pattern is None else tr(pattern, language).format(*template(text)[1])


def _inline(text: str) -> str:
    """Escape HTML, then turn `code` into <code>code</code>."""
    return re.sub(r"`([^`]+)`", r"<code>\1</code>", html.escape(str(text)))


def quiz_html(questions: Sequence[Question], title: str | None = None, key: str | None = None,
              language: str = ENGLISH) -> str:
    """The quiz as one HTML string in ``language``. Radio names are derived from the (English) questions, so
    two quizzes on a page do not interfere and the same quiz always renders the same HTML. With ``key`` the
    right answers are placed by ``placement`` (see the module's docstring), from the English, so every
    edition has the same letters."""
    if not questions:
        raise ValueError("a quiz needs at least one question")
    if key is not None:
        questions = _placed(questions, key)
    uid = hashlib.sha1(repr([q[0] for q in questions]).encode()).hexdigest()[:8]
    e = html.escape
    live = tr("Question {n}, {letter}: {verdict}", language)  # page.js's live region (see course/_static/page.js)
    ok, no = tr("right", language), tr("not this one", language)
    parts = [f"<style>{_CSS}</style>",
             f'<div class="bert-quiz" id="quiz-{uid}" data-quiz-live="{e(live)}"{_lang_attribute(language)}>']
    if title:
        parts.append(f"<p><strong>{_inline(_words(title, language))}</strong></p>")
    parts.append("<ol>")
    for n, q in enumerate(questions):
        if len(q) != 4:
            raise ValueError(f"question {n + 1}: expected (question, options, answer, why), got {len(q)} items")
        question, options, answer, why = q
        if len(options) < 2:
            raise ValueError(f"question {n + 1}: needs at least two options")
        right = _answer_index(answer, len(options))
        name = f"q-{uid}-{n}"
        parts.append(f'<li class="q"><p>{_inline(_words(question, language))}</p>')
        for i, option in enumerate(options):
            mark = f'<span class="fb ok" data-verdict="{e(ok)}">&#10003; {e(ok)}</span>' if i == right else \
                f'<span class="fb no" data-verdict="{e(no)}">&#10007; {e(no)}</span>'
            parts.append(f'<label><input type="radio" name="{name}" value="{_letter(i)}"> '
                         f"<span>{_letter(i)}. {_inline(_words(option, language))}</span>{mark}</label>")
        parts.append(f"<details><summary>{e(tr('Show answer', language))}</summary><p><strong>{_letter(right)}"
                     f"</strong>. {_inline(_words(why, language))}</p></details></li>")
    parts += ["</ol>", "</div>"]
    return "\n".join(parts)


def _lang_attribute(language: str) -> str:
    """`` lang="zh-CN"`` on a translation's quiz (none on the source's)."""
    return "" if language == ENGLISH else f' lang="{HTML_LANG.get(language, language)}"'


def quiz(questions: Sequence[Question], title: str | None = None, key: str | None = None):
    """Display the quiz in a notebook (and in the built page): an ``IPython.display.HTML`` object holding
    every edition's quiz (``editions.both``; the built page keeps its own)."""
    from IPython.display import HTML

    return HTML(both(lambda language: quiz_html(questions, title, key, language)))
