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
