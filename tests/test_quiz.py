"""course.quiz and course.plots.html_table: the static quiz and the tables the chapters show."""
from __future__ import annotations

import re

import pytest

from course.plots import html_table
from course.quiz import quiz, quiz_html


QUESTIONS = [
    ("How are the embeddings combined?", ["concatenated", "added", "`max`"], 1, "They are added."),
    ("Is 1 < 2?", ["yes", "no"], "A", "Of course & obviously."),
]


def test_quiz_html_marks_exactly_one_right_answer_per_question():
    page = quiz_html(QUESTIONS)
    assert page.count('type="radio"') == 5
    assert page.count('class="fb ok"') == 2  # one right mark per question
    items = page.split('<li class="q">')[1:]
    for item, (_, options, answer, _) in zip(items, QUESTIONS):
        labels = re.findall(r"<label>.*?</label>", item)
        right = [i for i, lab in enumerate(labels) if "fb ok" in lab]
        assert right == [answer if isinstance(answer, int) else ord(answer) - ord("A")]
    assert "<code>max</code>" in page and "1 &lt; 2" in page and "&amp; obviously" in page
    assert "<script" not in page  # works on a static page


def test_quiz_names_are_stable_and_distinct():
    a, b = quiz_html(QUESTIONS), quiz_html(QUESTIONS[:1])
    assert a == quiz_html(QUESTIONS)
    name_a = set(re.findall(r'name="([^"]+)"', a))
    name_b = set(re.findall(r'name="([^"]+)"', b))
    assert len(name_a) == 2 and not name_a & name_b


@pytest.mark.parametrize("bad", [
    [],
    [("q", ["only one"], 0, "why")],
    [("q", ["a", "b"], 2, "why")],
    [("q", ["a", "b"], "C", "why")],
    [("q", ["a", "b"], 0)],
])
def test_quiz_rejects_bad_questions(bad):
    with pytest.raises(ValueError):
        quiz_html(bad)


def test_quiz_display_object():
    assert quiz(QUESTIONS).data == quiz_html(QUESTIONS)
    assert "<strong>Title</strong>" in quiz_html(QUESTIONS, title="Title")


def test_html_table():
    t = html_table(["name", "count"], [["a <b>", 1234567], ["c", 8]]).data
    assert "1,234,567" in t and "a &lt;b&gt;" in t and t.count("<tr>") == 3
    assert 'style="text-align:right">1,234,567' in t
