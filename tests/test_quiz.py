"""course.quiz and course.plots.html_table: the static quiz and the tables the chapters show."""
from __future__ import annotations

import re

import pytest

from course import editions
from course.plots import html_table
from course.quiz import quiz, quiz_html, template


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
    shown = quiz(QUESTIONS).data  # every edition's quiz; each page keeps its own
    assert editions.keep(shown, "en") == quiz_html(QUESTIONS)
    assert editions.keep(shown, "zh_CN") == quiz_html(QUESTIONS, language="zh_CN")
    assert "<strong>Title</strong>" in quiz_html(QUESTIONS, title="Title")


# a catalogue for the tests (the real one is locale/zh_CN/LC_MESSAGES/outputs/quizzes.po)
FAKE = {"How are the embeddings combined?": "嵌入如何组合？", "concatenated": "拼接", "added": "相加",
        "They are added.": "它们相加。", "Is {0} < {1}?": "{0} < {1} 吗？", "yes": "是", "no": "否",
        "Of course & obviously.": "当然。", "Show answer": "显示答案", "right": "正确", "not this one": "不是这个",
        "Question {n}, {letter}: {verdict}": "第 {n} 题，{letter}：{verdict}", "about {0}%": "约 {0}%",
        "How much?": "多少？", "A share of {0}% of {1} tokens.": "{1} 个词元的 {0}%。"}


@pytest.fixture
def chinese(monkeypatch):
    monkeypatch.setattr(editions, "translations", lambda language: FAKE)
    monkeypatch.setattr(editions, "_missing", {})


def test_template_fields_every_number_and_escapes_braces():
    assert template("about 15% of 30,522 in {x}, 0.85^5") == ("about {0}% of {1} in {{x}}, {2}^{3}",
                                                               ["15", "30,522", "0.85", "5"])
    pattern, numbers = template("A share of 15% of 30,522 tokens.")
    assert pattern.format(*numbers) == "A share of 15% of 30,522 tokens."


def test_chinese_quiz_has_the_same_letters_and_numbers(chinese):
    questions = QUESTIONS + [("How much?", ["about 15%", "30,522", "about 85%", "0.5"], 1,
                              "A share of 15% of 30,522 tokens.")]
    for key in (None, "k1", "another"):
        en, zh = quiz_html(questions, key=key), quiz_html(questions, key=key, language="zh_CN")

        def letters(page):
            return [re.search(r'value="(\w)"> <span>[^<]*(?:<code>[^<]*</code>)?[^<]*</span><span class="fb ok"', q)
                    .group(1) for q in page.split('<li class="q">')[1:]]

        assert letters(en) == letters(zh) and len(letters(en)) == 3, key
        assert re.findall(r'name="([^"]+)"', en) == re.findall(r'name="([^"]+)"', zh)  # same radio names
    zh = quiz_html(questions, title="How much?", language="zh_CN")
    assert "嵌入如何组合？" in zh and "拼接" in zh and "<code>max</code>" in zh and "1 &lt; 2 吗？" in zh
    assert "显示答案" in zh and "Show answer" not in zh and "&#10003; 正确" in zh and 'data-verdict="不是这个"' in zh
    assert "约 15%" in zh and "30,522" in zh and "30,522 个词元的 15%。" in zh and "<strong>多少？</strong>" in zh
    assert 'data-quiz-live="第 {n} 题，{letter}：{verdict}"' in zh
    assert editions.untranslated() == []
    quiz_html([("Untranslated?", ["a", "b"], 0, "why")], language="zh_CN")
    assert editions.untranslated() == ["Untranslated?", "a", "b", "why"]  # shown in English, and recorded


def test_html_table():
    t = html_table(["name", "count"], [["a <b>", 1234567], ["c", 8]]).data
    assert "1,234,567" in t and "a &lt;b&gt;" in t and t.count("<tr>") == 3
    assert 'style="text-align:right">1,234,567' in t
