"""course/verdicts.py: how a page prints a comparison over seeds, in both editions (issue 31 §2), and the code
catalogues of chapters 7-12's computed sentences and demos (locale/zh_CN/LC_MESSAGES/outputs/verdicts.po,
demos_07_12.po): complete, their fields kept, no dead entry, every worded string of the chapters and demos in them."""
import ast
import json
import re
import string
from pathlib import Path

import polib
import pytest

from course import editions
from course.verdicts import bracket, glue_key, glue_said, interval, said, sentence

ROOT = Path(__file__).resolve().parents[1]


def _cmp(difference, low, high, verdict="larger"):
    return {"difference": difference, "low": low, "high": high, "confidence": 0.95, "n": 3, "verdict": verdict}


def test_an_interval_prints_its_ends_at_three_digits():
    assert interval(_cmp(0.125, 0.05, 0.2)) == "+0.125 (95% interval +0.050 to +0.200, 3 seeds)"


def test_a_nonzero_end_is_never_printed_as_zero():
    # a lower end of 0.0004 decides the verdict "larger"; "+0.000" would read as an interval touching zero
    text = interval(_cmp(0.01, 0.0004, 0.02))
    assert "+0.0004 to +0.020" in text
    assert "-0.00003" in interval(_cmp(0.01, -0.00003, 0.02, "no difference"))
    assert "+0.000 to" in interval(_cmp(0.01, 0.0, 0.02, "no difference"))  # an end that is zero stays zero


def test_said_follows_the_verdict():
    assert said(_cmp(0, 0, 0, "no difference"), "up", "down", "same") == "same"
    assert said(_cmp(0, 0, 0, "smaller"), "up", "down", "same") == "down"


def test_a_table_cell_gives_the_difference_and_its_interval_in_brackets():
    assert bracket(_cmp(0.125, 0.0004, 0.2)) == "+0.125 [+0.0004, +0.200]"


# --- both editions from one execution (issue 31 §2) -------------------------------------------------------------
def test_an_interval_in_chinese_shows_the_same_numbers():
    assert interval(_cmp(0.125, 0.05, 0.2), language="zh_CN") == "+0.125（95% 区间 +0.050 至 +0.200，3 个种子）"
    assert "+0.0004 至 +0.020" in interval(_cmp(0.01, 0.0004, 0.02), language="zh_CN")


def test_a_sentence_is_translated_then_filled_in_and_sentences_join_per_language():
    keep = "With {n} seeds neither pair task shows NSP helping, least of all the one its topic shortcut cannot solve."
    budget = ("At this budget neither model has learned much of the topic task, whose chance level is a half, so it "
              "cannot tell; `--full` trains both longer.")
    en, zh = sentence("en", keep, budget, n=3), sentence("zh_CN", keep, budget, n=3)
    assert en == keep.format(n=3) + " " + budget
    assert zh == editions.tr(keep, "zh_CN").format(n=3) + editions.tr(budget, "zh_CN")  # no space between Chinese
    assert "在 3 个种子上" in zh and "`--full`" in zh and not re.search(r"[A-Za-z]{4,} [a-z]{3,}", zh)
    assert sentence("zh_CN", "", keep, n=3) == editions.tr(keep, "zh_CN").format(n=3)  # an empty part adds nothing


def test_glue_said_glues_the_english_under_the_key_and_the_chinese_under_key_zh_cn(monkeypatch):
    import myst_nb

    glued = {}
    monkeypatch.setattr(myst_nb, "glue", lambda key, value, display=True: glued.update({key: (value, display)}))
    texts = glue_said("exp_e3_choice_said", "So this experiment does not settle the default run's choice of "
                      "{rate:.0%} against 15%; the default run keeps it as a choice, not a finding", rate=0.25)
    assert set(glued) == {"exp_e3_choice_said", glue_key("exp_e3_choice_said", "zh_CN")} == \
        {"exp_e3_choice_said", "exp_e3_choice_said__zh_CN"}
    assert glued["exp_e3_choice_said"][0].data == texts["en"] and "choice of 25% against 15%" in texts["en"]
    assert glued["exp_e3_choice_said__zh_CN"][0].data == texts["zh_CN"] and "25%" in texts["zh_CN"]
    assert all(display is False for _, display in glued.values())
    glue_said("pretrain_max_diff_text", "to {max_diff:.1e}", markdown=False, max_diff=3e-7)
    assert glued["pretrain_max_diff_text"][0] == "to 3.0e-07" and "3.0e-07" in glued["pretrain_max_diff_text__zh_CN"][0]


# --- the code catalogues of the computed sentences and of the demos of chapters 7-12 -----------------------------
CATALOGUES = [ROOT / "locale" / "zh_CN" / "LC_MESSAGES" / "outputs" / name for name in ("verdicts.po", "demos_07_12.po")]
CHAPTERS = [ROOT / "chapters" / f"{page}.md" for page in
            ("07_mlm", "08_masking", "09_nsp", "10_finetuning", "11_pretraining", "12_experiments")]
MODULES = [ROOT / "course" / "verdicts.py"] + [ROOT / "course" / "demos" / f"{name}.py" for name in
                                                 ("mlm", "masking", "nsp", "finetuning", "pretraining",
                                                  "pretraining_checkpoints", "experiments")]
# the calls whose string arguments are English a page shows: translated (editions.tr) or made a template of
# (the positions of the arguments that are words: a glue key, an experiment's number or a score are not)
WORDED = {"tr": slice(0, 1), "say": slice(0, 1), "cell": slice(0, 1), "glue_said": slice(1, None),
          "verdict": slice(1, 2), "P": slice(0, 3), "Paired": slice(0, 3)}
CONTROLS = {"StaticDemo", "Slider", "Select", "Buttons", "Comparisons"}  # a title, a control's label


def _trees():
    for path in CHAPTERS:
        source = path.read_text(encoding="utf-8")
        for m in re.finditer(r"```\{code-cell\}[^\n]*\n(.*?)```", source, re.S):
            yield path, ast.parse("\n".join(line for line in m.group(1).splitlines() if not line.startswith(":tags:")))
    for path in MODULES:
        yield path, ast.parse(path.read_text(encoding="utf-8"))


def _constants(node) -> list[str]:
    """The strings of an expression that may be shown: not a subscript's key, a comparison's, a dict's key or a keyword's value
    (a format field's number: ``cell(("{n} labels", {"n": n}), lang)``)."""
    if isinstance(node, ast.Constant):
        return [node.value] if isinstance(node.value, str) else []
    if isinstance(node, (ast.Subscript, ast.Compare)):  # a key, or a condition's ("topic" if kind == "topic")
        return []
    if isinstance(node, ast.Dict):
        return [s for v in node.values for s in _constants(v)]
    if isinstance(node, ast.keyword):
        return []
    return [s for child in ast.iter_child_nodes(node) for s in _constants(child)]


def _name(call: ast.Call) -> str | None:
    return getattr(call.func, "id", None) or getattr(call.func, "attr", None)


def worded_strings() -> set[str]:
    """The English the chapters of 7-12 and their demo modules hand to the calls that word a page: every string
    argument of those calls, each demo's title and control labels, and the strings a comprehension feeds to ``tr``
    (``[tr(h, lang) for h in (...)]``)."""
    found = set()
    for _, tree in _trees():
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and _name(node) in WORDED:
                for arg in node.args[WORDED[_name(node)]]:
                    found.update(_constants(arg))
            if isinstance(node, ast.Call) and _name(node) in CONTROLS:
                found.update(_constants(node.args[1]) if _name(node) != "StaticDemo" and len(node.args) > 1 else [])
                found.update(s for kw in node.keywords if kw.arg in ("title", "label") for s in _constants(kw.value))
            if isinstance(node, (ast.ListComp, ast.GeneratorExp)) and isinstance(node.elt, ast.Call) and \
                    _name(node.elt) in ("tr", "say"):
                for gen in node.generators:
                    found.update(_constants(gen.iter))
    return {s for s in found if re.search(r"[A-Za-z]{2}", s)}


def _fields(text: str) -> list[str]:
    return sorted(f"{{{name}:{spec}}}" for _, name, spec, _ in string.Formatter().parse(text) if name is not None)


@pytest.mark.parametrize("path", CATALOGUES, ids=lambda p: p.name)
def test_the_catalogue_is_translated_keeps_its_fields_and_has_no_dead_entry(path):
    entries = [e for e in polib.pofile(str(path)) if not e.obsolete]
    assert entries, path
    used = {n.value for _, tree in _trees() for n in ast.walk(tree)
            if isinstance(n, ast.Constant) and isinstance(n.value, str)}
    for e in entries:
        assert e.msgstr and not e.fuzzy, f"{path.name}: not translated: {e.msgid!r}"
        assert _fields(e.msgstr) == _fields(e.msgid), f"{path.name}: a field changed in {e.msgid!r}: {e.msgstr!r}"
        assert e.msgid in used, f"{path.name}: {e.msgid!r} is used by no chapter of 7-12 and no demo module (dead)"
        if e.msgstr != e.msgid:
            assert re.search(r"[\u3000-\u303f\u4e00-\u9fff\uff00-\uffef]", e.msgstr), \
                f"{path.name}: {e.msgstr!r} is not Chinese"


def test_every_sentence_the_chapters_and_demos_word_has_a_translation():
    """What the cells and demos ask ``editions.tr`` for (statically: every string they hand to a wording call) is
    in a code catalogue, so the Chinese pages of chapters 7-12 show no English sentence from a glue or a demo."""
    table = editions.translations("zh_CN")
    missing = sorted(s for s in worded_strings() if s not in table)
    assert not missing, "English a page of chapters 7-12 shows without a translation:\n" + "\n".join(missing)


def test_the_checks_see_a_dead_entry_and_a_missing_translation():
    assert "clipping is a guard that seldom acts" in worded_strings()  # a glue_said of chapter 11
    assert "gradient on unselected" in worded_strings()  # a header fed to tr by a comprehension (chapter 7's demo)
    assert "NSP pairs and labels, one seed at a time" in worded_strings()  # a demo's title
    used = {n.value for _, tree in _trees() for n in ast.walk(tree)
            if isinstance(n, ast.Constant) and isinstance(n.value, str)}
    assert "clipping is a guard that never acts" not in used and "clipping is a guard that seldom acts" in used
    assert _fields("{n:,} of {T} positions") != _fields("{n} 个位置，共 {T} 个")


# --- the built Chinese pages (make book): no English sentence from a glue or a demo ------------------------------
def _built() -> Path:
    import os

    given = os.environ.get("BOOK_BUILD_DIR")
    root = Path(given) if given else ROOT / "_build"
    html = root / "html" if (root / "html").is_dir() else root
    if not (html / "zh_CN" / "index.html").is_file():
        pytest.fail(f"no Chinese edition in {html / 'zh_CN'}: run `make book`")
    return html


def twin_keys(chapter: Path) -> set[str]:
    """The glue keys a chapter glues in both languages (``glue_said``'s, and ``glue_key``'s)."""
    keys = set()
    source = chapter.read_text(encoding="utf-8")
    for m in re.finditer(r"```\{code-cell\}[^\n]*\n(.*?)```", source, re.S):
        tree = ast.parse("\n".join(line for line in m.group(1).splitlines() if not line.startswith(":tags:")))
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and _name(node) in ("glue_said", "glue_key") and \
                    isinstance(node.args[0], ast.Constant):
                keys.add(node.args[0].value)
    return keys


def english_chunks() -> list[str]:
    """The English of the two catalogues a Chinese page must not show: each translated message's runs of three
    words or more between its fields."""
    chunks = set()
    for path in CATALOGUES:
        for e in polib.pofile(str(path)):
            if e.msgstr and e.msgstr != e.msgid:
                chunks.update(part.strip() for part in re.split(r"\{[^{}]*\}", e.msgid)
                              if len(re.findall(r"[A-Za-z]{2,}", part)) >= 3)
    return sorted(chunks)


def shown_by_glues_and_demos(page_html: str) -> tuple[str, list[str]]:
    """The text a page shows from its glued values and its demos (each state's caption, controls, figure titles,
    legends and table, from the demo's payload), and each demo's captions."""
    import html as html_lib

    from bs4 import BeautifulSoup

    from course.sphinx_ext import GLUE_KEY

    main = BeautifulSoup(page_html, "html.parser").select_one("main")
    parts = [el.get_text(" ") for el in main.select(f'[class*="{GLUE_KEY}"]')]
    captions = []

    def strings(x):
        if isinstance(x, str):
            yield x
        elif isinstance(x, dict):
            yield from (s for v in x.values() for s in strings(v))
        elif isinstance(x, list):
            yield from (s for v in x for s in strings(v))

    for demo in main.select("[data-demo]"):
        payload = json.loads(demo.select_one("script[data-demo-payload]").string)
        captions += [s["caption"] for s in payload["states"]]
        parts += captions + list(strings(payload["controls"]))
        for entry in payload["pool"]:
            try:
                parts += list(strings(json.loads(entry)))
            except ValueError:
                parts.append(BeautifulSoup(entry, "html.parser").get_text(" "))
        parts.append(demo.get_text(" "))
    return " ".join(" ".join(html_lib.unescape(p).split()) for p in parts), captions


@pytest.mark.book
@pytest.mark.parametrize("chapter", CHAPTERS, ids=lambda p: p.stem)
def test_the_chinese_page_shows_no_english_sentence_from_a_glue_or_a_demo(chapter):
    from course.sphinx_ext import GLUE_KEY

    built = _built()
    page = f"chapters/{chapter.stem}.html"
    english, chinese = ((built / page).read_text(encoding="utf-8"),
                        (built / "zh_CN" / page).read_text(encoding="utf-8"))
    for key in sorted(twin_keys(chapter)):
        if f'{GLUE_KEY}{key}"' not in english and f'{GLUE_KEY}{key} ' not in english:
            continue  # glued for the other pages (e.g. a verdict the prose no longer prints)
        assert re.search(rf'{GLUE_KEY}{key}__zh_CN[" ]', chinese), f"{page}: the Chinese page lacks {key}__zh_CN"
        assert not re.search(rf'{GLUE_KEY}{key}[" ]', chinese), f"{page}: the Chinese page shows the English {key}"
    text, captions = shown_by_glues_and_demos(chinese)
    shown = [c for c in english_chunks() if c in text]
    assert not shown, f"{page}: English from a glue or a demo on the Chinese page: {shown}"
    assert all(re.search(r"[\u4e00-\u9fff]", c) for c in captions), f"{page}: a demo caption without Chinese"
    if chapter.stem != "10_finetuning":  # chapter 10 glues numbers only
        assert re.search(r"[\u4e00-\u9fff]", text)


def test_the_page_check_sees_english_left_on_a_chinese_page():
    """The check above on a planted page: a Chinese glued sentence replaced by its English is named."""
    english = "the causal one does no better than guessing"
    assert english in english_chunks()
    page = (f'<main><p>因果模型为 5%：<span class="pasted-text course-glue-exp_e1_chance_said__zh_CN">{english}</span>'
            '</p></main>')
    text, _ = shown_by_glues_and_demos(page)
    assert [c for c in english_chunks() if c in text] == [english]
    assert twin_keys(ROOT / "chapters" / "12_experiments.md") >= {"exp_e1_chance_said", "exp_few_interval"}
