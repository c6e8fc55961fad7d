"""course.drawings: each chapter's conceptual drawing is valid SVG, named for a screen reader, inside its own
frame, and shows bertlib's numbers."""
import re
import xml.etree.ElementTree as ET

import pytest

from course import drawings, editions
from course.plots import Edition, _letters

SVG = "{http://www.w3.org/2000/svg}"
LANGUAGES = editions.LANGUAGES  # every drawing is checked in each edition's words


@pytest.fixture(params=[(name, language) for name in sorted(drawings.DRAWINGS) for language in LANGUAGES],
                ids=lambda p: "-".join(p))
def drawn(request):
    name, language = request.param
    d = drawings.DRAWINGS[name](language)
    return d, ET.fromstring(d.svg())


def test_the_svg_is_named_described_and_captioned(drawn):
    d, svg = drawn
    assert svg.get("role") == "img"
    title, desc = svg.find(f"{SVG}title"), svg.find(f"{SVG}desc")
    assert svg.get("aria-labelledby") == f"{title.get('id')} {desc.get('id')}"
    short = (20, 80) if d.edition.language == "en" else (4, 40)  # characters: a Chinese one says about a word
    assert len(title.text) > short[0] and len(desc.text) > short[1], "a reader who cannot see it gets what it shows"
    assert d.caption and d.caption != title.text and "<figcaption" in d.html()
    assert d.width <= drawings.WIDTH, "wider drawings shrink their words below legible on a phone"


def test_everything_is_drawn_inside_the_frame(drawn):
    """Every shape and (estimated) word lies inside the viewBox: nothing is cut at the edge."""
    d, svg = drawn
    for rect in svg.iter(f"{SVG}rect"):
        x, y, w, h = (float(rect.get(k)) for k in ("x", "y", "width", "height"))
        assert 0 <= x and x + w <= d.width and 0 <= y and y + h <= d.height, (rect.attrib, d.width, d.height)
    for text in svg.iter(f"{SVG}text"):
        x, y, size = float(text.get("x")), float(text.get("y")), float(text.get("font-size"))
        width = _letters(text.text) * size * 0.55  # (a Chinese character about two letters wide)
        left = {"start": x, "middle": x - width / 2, "end": x - width}[text.get("text-anchor")]
        assert 0 <= left and left + width <= d.width + 2 and size <= y <= d.height, (text.text, left, width, d.width)


def test_every_word_is_readable_on_a_phone(drawn):
    """A drawing is shown PHONE_PX wide on a 390-px phone: its smallest word is READABLE_PX there or more
    (tests/test_pages.py measures it in the page)."""
    from course.plots import READABLE_PX

    d, svg = drawn
    shown = min(d.width, drawings.PHONE_PX)
    small = [(t.text, round(float(t.get("font-size")) * shown / d.width, 2)) for t in svg.iter(f"{SVG}text")
             if float(t.get("font-size")) * shown / d.width < READABLE_PX]
    assert not small, f"words under {READABLE_PX} px on a phone: {small}"


def test_words_use_the_page_colour():
    """Text is drawn in currentColor, so it reads in the light and the dark theme alike."""
    for make in drawings.DRAWINGS.values():
        for text in ET.fromstring(make().svg()).iter(f"{SVG}text"):
            assert text.get("fill") == "currentColor", text.text


def test_every_word_of_every_drawing_is_in_the_catalogue_and_every_entry_is_used():
    """Issue 31 §2: each drawing drawn in Chinese has no English word left but the example's own (its tokens and
    sentences, ``keep``), and every msgid of drawings.po is one a drawing asks for (no dead entry)."""
    import polib

    used, missing = set(), set()
    for make in drawings.DRAWINGS.values():
        d = make("zh_CN")
        used |= d.edition.used
        missing |= d.edition.missing
    assert not missing, f"words of the drawings with no translation in {drawings.WORDS}: {sorted(missing)}"
    entries = polib.pofile(str(drawings.WORDS))
    dead = [e.msgid for e in entries if e.msgid not in used]
    assert not dead, f"entries of {drawings.WORDS.name} no drawing asks for: {dead}"
    for e in entries:
        assert e.msgstr and not e.fuzzy, e.msgid
        assert sorted(re.findall(r"\{\w*\}", e.msgid)) == sorted(re.findall(r"\{\w*\}", e.msgstr)), e.msgid


def test_a_chinese_drawing_says_in_chinese_what_it_shows():
    d = drawings.nsp("zh_CN")
    svg = ET.fromstring(d.svg())
    assert re.search(r"[\u4e00-\u9fff]", svg.find(f"{SVG}title").text + svg.find(f"{SVG}desc").text + d.caption)
    words = [t.text for t in svg.iter(f"{SVG}text")]
    assert "下一句预测" in svg.find(f"{SVG}title").text and "一半" in words
    assert "A: the man went to the store" in words, "the example sentence the model reads stays as it is"


def test_show_gives_each_edition_its_own_drawing(monkeypatch):
    shown = []
    monkeypatch.setattr("IPython.display.display", lambda obj: shown.append(obj.data))
    drawings.show("nsp")
    (html,) = shown
    assert editions.keep(html, "en").count("<svg") == 1 and "Next-sentence prediction" in editions.keep(html, "en")
    assert editions.keep(html, "zh_CN").count("<svg") == 1 and "下一句预测" in editions.keep(html, "zh_CN")
    assert "下一句预测" not in editions.keep(html, "en")


def test_an_untranslated_word_is_listed_not_hidden():
    edition = Edition("zh_CN")
    assert edition.words("a word no catalogue has") == "a word no catalogue has"
    assert edition.missing == {"a word no catalogue has"}
    assert edition.words("[CLS] → 2 logits") == "[CLS] → 2 个 logit" and edition.words("L = 12, H = 768") == "L = 12, H = 768"
    assert edition.words("seed 7") == "种子 7", "a template's field is filled with the number the drawing shows"


def test_the_numbers_come_from_bertlib(monkeypatch):
    from bertlib import BertConfig

    base, large = BertConfig.base(), BertConfig.large()
    sizes = drawings.sizes()
    for cfg in (base, large):
        assert f"L = {cfg.num_hidden_layers}, H = {cfg.hidden_size}, A = {cfg.num_attention_heads}" in sizes.svg()
    bars = [r for r in ET.fromstring(sizes.svg()).iter(f"{SVG}rect")]
    assert len(bars) == base.num_hidden_layers + large.num_hidden_layers
    monkeypatch.setattr(drawings, "_masking_defaults", lambda: (0.2, 0.5, 0.25))
    split = drawings.masking_split().svg()
    assert "20%" in split and "50% of selected" in split and "25% of selected" in split and "80%" in split
    assert "20%, then 50%/25%/25%" in drawings.pretraining_loop().svg()


def test_show_names_the_drawings_it_has():
    with pytest.raises(KeyError, match="no drawing 'nope'; there are: visibility"):
        drawings.show("nope")


def test_a_chapter_whose_drawings_an_older_module_drew_is_executed_again(monkeypatch):
    import nbformat

    from course import build

    nb = nbformat.v4.new_notebook()
    cell = nbformat.v4.new_code_cell("drawings.show('nsp')")
    cell.outputs = [nbformat.v4.new_output("display_data", data={"text/html": drawings.nsp().html()})]
    nb.cells = [cell]
    assert build.figures_current(nb)
    monkeypatch.setattr(drawings, "DRAWINGS_VERSION", "another")
    assert not build.figures_current(nb), "a drawing made by another course/drawings.py counts as current"
