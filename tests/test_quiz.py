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
    assert ' lang="zh-CN"' in zh and " lang=" not in quiz_html(questions)  # JupyterLab (English) hides this one
    assert editions.untranslated() == []
    quiz_html([("Untranslated?", ["a", "b"], 0, "why")], language="zh_CN")
    assert editions.untranslated() == ["Untranslated?", "a", "b", "why"]  # shown in English, and recorded


def test_html_table():
    t = html_table(["name", "count"], [["a <b>", 1234567], ["c", 8]]).data
    assert "1,234,567" in t and "a &lt;b&gt;" in t and t.count("<tr>") == 3
    assert 'style="text-align:right">1,234,567' in t


# --- the catalogue, locale/zh_CN/LC_MESSAGES/outputs/quizzes.po (issue 31 §2) ------------------------------------

CATALOGUE = editions.OUTPUTS / "quizzes.po"
FIXED = {"Show answer", "right", "not this one", "Question {n}, {letter}: {verdict}"}  # course/quiz.py's own


def _catalogue():
    import polib

    return polib.pofile(str(CATALOGUE))


def test_every_translation_keeps_its_fields_and_code():
    wrong = []
    for entry in _catalogue():
        for pattern in (r"\{[^{}]*\}", r"`[^`]+`", r"\[[A-Z]+\]"):  # {0}, `code`, [CLS]
            if sorted(re.findall(pattern, entry.msgid)) != sorted(re.findall(pattern, entry.msgstr)):
                wrong.append(f"{entry.msgid!r} -> {entry.msgstr!r}: {pattern}")
    assert not wrong, "\n".join(wrong)


def _quiz_cells():
    """(chapter, the quiz cell's code) for every chapter's quiz (``quiz([`` in a code cell)."""
    from course.build import ROOT

    for path in sorted((ROOT / "chapters").glob("*.md")):
        for body in re.findall(r"```\{code-cell\} ipython3\n(.*?)```", path.read_text(), re.S):
            if "quiz([" in body:
                yield path.stem, "\n".join(line for line in body.splitlines() if not line.startswith(":"))


def test_every_literal_quiz_string_of_the_chapters_is_in_the_catalogue():
    """What the chapters write as it is (f-strings aside: the book test below reads those as the page shows
    them) is translated: a new question or a changed word fails here, before any build."""
    import ast

    from course.quiz import msgid

    have = {entry.msgid for entry in _catalogue() if entry.msgstr}
    chapters, missing = set(), []
    for chapter, code in _quiz_cells():
        chapters.add(chapter)
        tree = ast.parse(code)
        formatted = {id(v) for node in ast.walk(tree) if isinstance(node, ast.JoinedStr) for v in ast.walk(node)}
        for call in (n for n in ast.walk(tree) if isinstance(n, ast.Call) and getattr(n.func, "id", "") == "quiz"):
            for node in ast.walk(call.args[0]):
                if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in formatted:
                    text = node.value
                    if re.fullmatch(r"[A-Z]", text) or msgid(text) is None:
                        continue  # an answer letter, a number, code
                    if msgid(text) not in have:
                        missing.append(f"{chapter}: {text!r}")
    assert len(chapters) == 12
    assert not missing, "untranslated quiz strings (add them to quizzes.po):\n" + "\n".join(missing)


def _page_quizzes(page_html: str) -> list[list[tuple[str, list[str], str, str]]]:
    """Each quiz of a built page: per question (question, options, the right letter, the explanation), as
    the reader sees them (HTML unescaped, <code> back to backticks)."""
    import html as html_

    def text(s):
        return html_.unescape(re.sub(r"</?code>", "`", s))

    quizzes = []
    for block in re.findall(r'<div class="bert-quiz".*?</ol>', page_html, re.S):
        questions = []
        for item in block.split('<li class="q">')[1:]:
            question = text(re.match(r"<p>(.*?)</p>", item, re.S).group(1))
            options = [text(o) for o in re.findall(r'<span>[A-Z]\. (.*?)</span><span class="fb', item, re.S)]
            right = re.search(r'value="([A-Z])"> <span>(?:(?!</label>).)*class="fb ok"', item, re.S).group(1)
            why = text(re.search(r"</summary><p><strong>[A-Z]</strong>\. (.*?)</p></details>", item, re.S).group(1))
            questions.append((question, options, right, why))
        quizzes.append(questions)
    return quizzes


@pytest.mark.book
def test_the_chinese_pages_show_every_quiz_in_chinese_with_the_same_answers():
    """The built book: each chapter's quiz on the Chinese page has the English page's questions in the same
    order, the right answers on the same letters and the same numbers, every string with words translated;
    and every catalogue entry is asked for by some chapter (no dead entry)."""
    import os
    from pathlib import Path

    from course.quiz import msgid, template

    root = Path(os.environ.get("BOOK_BUILD_DIR") or editions.ROOT / "_build")
    html_dir = root / "html" if (root / "html").is_dir() else root
    if not (html_dir / "zh_CN" / "chapters").is_dir():
        pytest.fail(f"no Chinese edition in {html_dir / 'zh_CN'}: run `make book`")
    table = {entry.msgid: entry.msgstr for entry in _catalogue() if entry.msgstr}
    asked, pages = set(), 0
    for page in sorted((html_dir / "chapters").glob("*.html")):
        english = _page_quizzes(page.read_text())
        chinese = _page_quizzes((html_dir / "zh_CN" / "chapters" / page.name).read_text())
        if not english:
            continue
        pages += 1
        assert [len(q) for q in english] == [len(q) for q in chinese], page.name
        for en_quiz, zh_quiz in zip(english, chinese):
            for en, zh in zip(en_quiz, zh_quiz):
                assert en[2] == zh[2], f"{page.name}: {en[0]!r} is {en[2]} in English, {zh[2]} in Chinese"
                for en_text, zh_text in zip([en[0], *en[1], en[3]], [zh[0], *zh[1], zh[3]]):
                    key = msgid(en_text)
                    if key is None:
                        assert zh_text == en_text, f"{page.name}: {en_text!r} is shown as it is"
                        continue
                    asked.add(key)
                    assert key in table, f"{page.name}: {en_text!r} has no translation in quizzes.po"
                    assert zh_text == table[key].format(*template(en_text)[1]), (page.name, en_text, zh_text)
    assert pages == 12
    dead = set(table) - asked - FIXED
    assert not dead, "entries no chapter's quiz asks for:\n" + "\n".join(sorted(dead))


def test_a_notebook_shows_one_edition_and_the_chinese_page_its_own(tmp_path, browser, chinese):
    """Both editions' quiz in an English document (a notebook in JupyterLab): only the English one is shown; the
    Chinese block alone in a Chinese page is shown."""
    both = quiz(QUESTIONS).data
    context = browser.new_context()
    try:
        tab = context.new_page()
        for lang, body, visible in (("en", both, ["How are the embeddings combined?"]),
                                    ("zh-CN", editions.keep(both, "zh_CN"), ["嵌入如何组合？"])):
            (tmp_path / "q.html").write_text(f'<!doctype html><html lang="{lang}"><head><meta charset="utf-8"></head>'
                                             f"<body>{body}</body></html>", encoding="utf-8")
            tab.goto((tmp_path / "q.html").as_uri())
            shown = [q.locator("li.q p").first.inner_text() for q in tab.locator(".bert-quiz").all() if q.is_visible()]
            assert shown == visible, lang
    finally:
        context.close()
