"""course/editions.py: one execution's output holds every edition's text; each page keeps its own (issue 31 §2)."""
import polib

from course import editions


def test_keep_leaves_one_edition_and_no_marker():
    html = "<p>x</p>" + editions.both(lambda lang: f"<b>{lang}</b>") + "<p>y</p>"
    assert editions.keep(html, "en") == "<p>x</p><b>en</b><p>y</p>"
    assert editions.keep(html, "zh_CN") == "<p>x</p><b>zh_CN</b><p>y</p>"
    assert editions.keep(html, None) == editions.keep(html, "en")  # Sphinx's language is None for the source
    assert editions.keep("<p>plain</p>", "zh_CN") == "<p>plain</p>"


def test_keep_removes_every_block_of_the_other_edition_even_across_lines():
    html = editions.both(lambda lang: f"<div>\n{lang} one\n</div>") * 3
    assert editions.keep(html, "zh_CN").count("zh_CN one") == 3
    assert "en one" not in editions.keep(html, "zh_CN") and "edition:" not in editions.keep(html, "zh_CN")


def test_tr_reads_the_code_catalogues_and_records_what_is_missing(tmp_path, monkeypatch):
    outputs = tmp_path / "zh_CN" / "LC_MESSAGES" / "outputs"
    outputs.mkdir(parents=True)
    po = polib.POFile()
    po.append(polib.POEntry(msgid="Selected", msgstr="已选"))
    po.append(polib.POEntry(msgid="Masked", msgstr="已遮", flags=["fuzzy"]))  # fuzzy: not used
    po.save(str(outputs / "demo.po"))
    monkeypatch.setattr(editions, "OUTPUTS", outputs)
    editions.translations.cache_clear()
    try:
        assert editions.tr("Selected", "zh_CN") == "已选"
        assert editions.tr("Selected", "en") == "Selected"
        assert editions.tr("Masked", "zh_CN") == "Masked" and "Masked" in editions.untranslated("zh_CN")
        assert "Selected" not in editions.untranslated("zh_CN")
    finally:
        editions.translations.cache_clear()


def test_no_two_code_catalogues_translate_one_string_differently():
    """editions.tr merges every catalogue of outputs/: a string two of them translate differently would take
    whichever loads last, in every chapter (demos_07_12.po's 'head' once turned chapter 2's attention heads into
    任务头). One English string, one Chinese."""
    seen: dict[str, tuple[str, str]] = {}
    clashes = []
    for po in sorted(editions.OUTPUTS.glob("*.po")):
        for entry in polib.pofile(str(po)):
            if not entry.msgstr or entry.fuzzy or entry.obsolete:
                continue
            first = seen.setdefault(entry.msgid, (po.name, entry.msgstr))
            if first[1] != entry.msgstr:
                clashes.append(f"{entry.msgid!r}: {first[0]} says {first[1]!r}, {po.name} says {entry.msgstr!r}")
    assert len(seen) > 100, f"only {len(seen)} translated strings in {editions.OUTPUTS}"
    assert not clashes, "\n".join(clashes)


def test_the_pages_scroll_hint_and_its_label_speak_the_pages_language(tmp_path, browser):
    """course/_static/page.js words the hint under a box that scrolls sideways, and the box's label, in the page's
    edition (a Chinese page said 'scroll sideways for the rest')."""
    from pathlib import Path

    script = (Path(editions.ROOT) / "course" / "_static" / "page.js").as_uri()
    said = {}
    for lang in ("zh-CN", "en"):
        page = tmp_path / f"{lang}.html"
        page.write_text(f'<!doctype html><html lang="{lang}"><head><meta charset="utf-8"></head><body>'
                        f'<article class="bd-article"><div class="highlight" style="overflow-x:auto"><pre>{"x" * 400}'
                        f'</pre></div></article><script src="{script}"></script></body></html>', encoding="utf-8")
        tab = browser.new_page(viewport={"width": 390, "height": 600})
        tab.goto(page.as_uri())
        tab.wait_for_selector(".course-scroll-hint", state="attached")
        said[lang] = tab.evaluate("[document.querySelector('.course-scroll-hint').textContent, "
                                  "document.querySelector('.course-scrolls').getAttribute('aria-label')]")
        tab.close()
    assert said["zh-CN"] == ["\u21c6 左右滑动查看其余部分", "代码 1，可左右滚动"], said
    assert said["en"] == ["\u21c6 scroll sideways for the rest", "code 1, scrolls sideways"], said
