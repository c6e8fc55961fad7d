"""A self-check quiz that works in the static page: plain HTML radio buttons and CSS, no JavaScript.

Use it from any chapter (put the cell's input away with the ``remove-input`` tag)::

    from course.quiz import quiz
    quiz([
        ("How are BERT's three embeddings combined?",          # the question
         ["concatenated", "added", "averaged", "multiplied"],  # the options
         1,                                                    # the right one: index or letter ("B")
         "Added element-wise, so the width stays H."),         # why, shown with the answer
    ])

Pass ``key="ch05"`` (any string unique to the quiz) to let the quiz place the right answers itself: within
one quiz the right answers are dealt out over the letters like cards (every letter once before any letter
twice), in an order shuffled by ``random.Random(key)``; each question's options are rotated so that the
right one lands on its letter (the others keep their cyclic order, the explanation stays with its
question). The placement depends only on the key and the number of options, so it is the same on every
build, and a quiz of four four-option questions uses each of A-D once. Without ``key`` the options are
shown as written.

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
"""


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


def _placed(questions: Sequence[Question], key: str) -> list[Question]:
    """The questions with each right option rotated onto its slot from ``placement``."""
    targets = placement([len(q[1]) for q in questions], key)
    out = []
    for n, (q, target) in enumerate(zip(questions, targets)):
        if len(q) != 4:
            raise ValueError(f"question {n + 1}: expected (question, options, answer, why), got {len(q)} items")
        question, options, answer, why = q
        options = list(options)
        right = _answer_index(answer, len(options))
        shift = (target - right) % len(options)  # rotate right by `shift`: index right -> target
        rotated = options[-shift:] + options[:-shift] if shift else options
        assert rotated[target] == options[right]
        out.append((question, rotated, target, why))
    return out


def _inline(text: str) -> str:
    """Escape HTML, then turn `code` into <code>code</code>."""
    return re.sub(r"`([^`]+)`", r"<code>\1</code>", html.escape(str(text)))


def quiz_html(questions: Sequence[Question], title: str | None = None, key: str | None = None) -> str:
    """The quiz as one HTML string. Radio names are derived from the questions, so two quizzes on a page
    do not interfere and the same quiz always renders the same HTML. With ``key`` the right answers are
    placed by ``placement`` (see the module's docstring)."""
    if not questions:
        raise ValueError("a quiz needs at least one question")
    if key is not None:
        questions = _placed(questions, key)
    uid = hashlib.sha1(repr([q[0] for q in questions]).encode()).hexdigest()[:8]
    parts = [f"<style>{_CSS}</style>", f'<div class="bert-quiz" id="quiz-{uid}">']
    if title:
        parts.append(f"<p><strong>{_inline(title)}</strong></p>")
    parts.append("<ol>")
    for n, q in enumerate(questions):
        if len(q) != 4:
            raise ValueError(f"question {n + 1}: expected (question, options, answer, why), got {len(q)} items")
        question, options, answer, why = q
        if len(options) < 2:
            raise ValueError(f"question {n + 1}: needs at least two options")
        right = _answer_index(answer, len(options))
        name = f"q-{uid}-{n}"
        parts.append(f'<li class="q"><p>{_inline(question)}</p>')
        for i, option in enumerate(options):
            mark = '<span class="fb ok">&#10003; right</span>' if i == right else \
                '<span class="fb no">&#10007; not this one</span>'
            parts.append(f'<label><input type="radio" name="{name}" value="{_letter(i)}"> '
                         f"<span>{_letter(i)}. {_inline(option)}</span>{mark}</label>")
        parts.append(f"<details><summary>Show answer</summary><p><strong>{_letter(right)}</strong>. "
                     f"{_inline(why)}</p></details></li>")
    parts += ["</ol>", "</div>"]
    return "\n".join(parts)


def quiz(questions: Sequence[Question], title: str | None = None, key: str | None = None):
    """Display the quiz in a notebook (and in the built page): an ``IPython.display.HTML`` object."""
    from IPython.display import HTML

    return HTML(quiz_html(questions, title, key))
