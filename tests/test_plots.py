"""Figures redrawn for a phone (course/plots.py), served by width (course/sphinx_ext.py), and kept current by the
build (course/build.py). The page test (tests/test_pages.py) checks the same in the built book, in Chromium."""
from __future__ import annotations

import base64
import io
from types import SimpleNamespace

import matplotlib.pyplot as plt
import numpy as np
import pytest

from course import build, plots, sphinx_ext


def three_heatmaps():
    """Chapter 5's layout: three heat maps side by side, a colour bar beside the last, a title over all."""
    fig, axes = plt.subplots(1, 3, figsize=(12, 4))
    rng = np.random.default_rng(0)
    for k, ax in enumerate(axes):
        plots.matrix_heatmap(ax, rng.random((6, 6)), [f"s{i}a" for i in range(6)], [f"s{i}b" for i in range(6)],
                             title=f"layer {k}", colorbar=ax is axes[-1])
    fig.suptitle("Cosine similarity between the sentences")
    fig.tight_layout()
    return fig


def one_small_line():
    fig, ax = plt.subplots(figsize=(3.4, 2.6))
    ax.plot([1, 2, 3], [3, 1, 2])
    ax.set_title("small")
    return fig


def shown(fig) -> tuple[bytes, bytes | None]:
    """(the page's PNG, the phone's PNG or None), as a chapter's figure is stored."""
    return plots.split_narrow(plots.split_edition(base64.b64decode(plots._png_described(fig)))[0])


def test_side_by_side_panels_are_stacked_for_a_phone():
    fig = three_heatmaps()
    fig.canvas.draw()
    size, positions = fig.get_size_inches().copy(), [ax.get_position().bounds for ax in fig.axes]
    narrow = plots.narrow_figure(fig)
    narrow.canvas.draw()
    assert fig.get_size_inches().tolist() == size.tolist(), "the page's figure is left as it was"
    assert [ax.get_position().bounds for ax in fig.axes] == positions
    assert narrow.get_size_inches()[0] == pytest.approx(plots.NARROW_WIDTH_IN)
    panels = plots._panels(narrow)
    assert [ax.get_title() for ax in panels] == ["layer 0", "layer 1", "layer 2"]  # reading order
    boxes = [ax.get_position() for ax in panels]
    for upper, lower in zip(boxes, boxes[1:]):
        assert lower.y1 <= upper.y0, "one panel to a row, top to bottom"
    colorbar = next(ax for ax in narrow.axes if ax not in panels)
    cb, last = colorbar.get_position(), boxes[-1]
    assert cb.x0 >= last.x1 - 1e-3 and cb.y0 < last.y1 and cb.y1 > last.y0, "the colour bar stays beside its panel"
    assert narrow._suptitle.get_text() == "Cosine similarity between the sentences"
    assert plots.smallest_text_pt(narrow) == plots.smallest_text_pt(fig), "the same font sizes"
    assert not plt.fignum_exists(narrow.number) or plt.figure(narrow.number) is not narrow  # pyplot will not show it


def test_the_phone_version_travels_in_the_png_and_reads_at_a_phone_s_width():
    wide, narrow = shown(three_heatmaps())
    assert narrow is not None
    text = plots.png_text(wide)
    assert text["Course figures"] == plots.FIGURES_VERSION and float(text["Text size"]) > 0
    assert "3 panels" in text["Description"]  # the words are the page's figure's
    width, height = plots.png_size(narrow)
    assert width <= plots.NARROW_WIDTH_IN * 100 * 1.1 and height > width  # stacked: taller than wide
    text_px = float(plots.png_text(narrow)["Text size"])
    assert text_px * min(1.0, plots.PHONE_COLUMN_PX / width) >= plots.READABLE_PX
    wide_text = float(text["Text size"]) * plots.PHONE_COLUMN_PX / plots.png_size(wide)[0]
    assert wide_text < plots.READABLE_PX, "the page's version scaled to a phone would be unreadable"
    from PIL import Image

    for png in (wide, narrow):
        Image.open(io.BytesIO(png)).load()  # both whole, valid PNGs


def test_a_small_single_panel_needs_no_phone_version():
    wide, narrow = shown(one_small_line())
    assert narrow is None and plots.png_size(wide)[0] <= plots.PHONE_COLUMN_PX * 1.4


def test_a_wide_single_panel_gets_one():
    fig, ax = plt.subplots(figsize=(9, 3))
    ax.bar([f"w{i}" for i in range(16)], np.arange(16))
    ax.set_title("Editing one word: who notices?")
    assert plots.needs_narrow(fig, 900) and not plots._side_by_side(fig)
    wide, narrow = shown(fig)
    assert narrow is not None and plots.png_size(narrow)[0] < plots.png_size(wide)[0]


def test_split_narrow_takes_out_exactly_what_with_narrow_put_in():
    wide, narrow = shown(one_small_line())[0], shown(three_heatmaps())[0]
    both = plots.with_narrow(wide, narrow)
    assert plots.split_narrow(both) == (wide, narrow)
    assert plots.split_narrow(wide) == (wide, None)
    assert plots.png_text(both) == plots.png_text(wide)
    assert plots.split_narrow(b"not a png") == (b"not a png", None)


def test_the_page_serves_the_phone_version_under_600_px(tmp_path):
    from docutils import nodes
    from docutils.utils import new_document

    src, out = tmp_path / "src", tmp_path / "out"
    (src / "_build").mkdir(parents=True)
    stored = base64.b64decode(plots._png_described(three_heatmaps()))
    (src / "_build" / "fig.png").write_bytes(stored)
    doc = new_document("page")
    box = nodes.container(classes=["cell_output"])
    box += nodes.image(uri="/_build/fig.png")
    doc += box
    app = SimpleNamespace(srcdir=str(src), outdir=str(out), config=SimpleNamespace(language=None),
                          builder=SimpleNamespace(images={"_build/fig.png": "fig.png"}, imagedir="_images"))
    for _ in range(2):  # a second reading finds the PNG already split
        sphinx_ext._describe_figures(app, doc, "page")
        (image,) = doc.findall(nodes.image)
        assert sphinx_ext.NARROW_CLASS in image["classes"]
        doc = new_document("page")
        box = nodes.container(classes=["cell_output"])
        box += nodes.image(uri="/_build/fig.png")
        doc += box
    wide, narrow = plots.split_narrow(plots.split_edition(stored)[0])
    assert (src / "_build" / "fig.png").read_bytes() == wide, "the page's PNG no longer carries the phone's"
    assert (src / "_build" / "fig.narrow.png").read_bytes() == narrow

    context = {"body": f'<figure><img alt="x" class="{sphinx_ext.NARROW_CLASS}" src="../_images/fig.png" />'
                       '<img alt="y" src="../_images/other.png" /></figure>'}
    sphinx_ext._serve_narrow(app, "chapters/x", "page.html", context, None)
    body = context["body"]
    assert body.startswith('<figure><picture><source media="(max-width: 600px)" srcset="../_images/fig.narrow.png">')
    assert f'data-text-px="{plots.png_text(wide)["Text size"]}"' in body
    assert f'data-narrow-text-px="{plots.png_text(narrow)["Text size"]}" /></picture>' in body
    assert '<img alt="y" src="../_images/other.png" />' in body  # not a figure a chapter drew: left alone
    assert (out / "_images" / "fig.narrow.png").read_bytes() == narrow

    small = plots.split_edition(base64.b64decode(plots._png_described(one_small_line())))[0]  # no phone's version
    (src / "_build" / "small.png").write_bytes(small)
    app.builder.images["_build/small.png"] = "small.png"
    context = {"body": '<img alt="z" src="../_images/small.png" />'}
    sphinx_ext._serve_narrow(app, "chapters/x", "page.html", context, None)
    assert context["body"] == f'<img alt="z" src="../_images/small.png" data-text-px="{plots.png_text(small)["Text size"]}" />'


def _notebook(png: bytes):
    import nbformat

    nb = nbformat.v4.new_notebook()
    cell = nbformat.v4.new_code_cell("fig")
    cell.outputs = [nbformat.v4.new_output("display_data", data={"image/png": base64.b64encode(png).decode()})]
    nb.cells = [cell]
    return nb


def test_a_chapter_whose_figures_an_older_plots_drew_is_executed_again(monkeypatch):
    current = base64.b64decode(plots._png_described(one_small_line()))
    assert build.figures_current(_notebook(current))
    monkeypatch.setattr(plots, "FIGURES_VERSION", "another")
    assert not build.figures_current(_notebook(current))
    from IPython.core.pylabtools import print_figure

    foreign = print_figure(one_small_line(), "png")  # not a chapter's described figure: never stale
    assert build.figures_current(_notebook(foreign))


def test_a_page_executed_after_sphinx_read_it_is_read_again(monkeypatch):
    read_at = 1_700_000_000.0
    env = SimpleNamespace(all_docs={"chapters/a": read_at * 1e6, "chapters/b": read_at * 1e6, "intro": read_at * 1e6})
    executed = {"chapters/a": read_at + 5, "chapters/b": read_at - 5, "intro": None}
    monkeypatch.setattr(build, "executed_at", executed.get)
    assert sphinx_ext._reexecuted_pages(None, env, set(), set(), set()) == ["chapters/a"]


def test_a_diagram_keeps_its_one_layout():
    """Boxes and words placed by coordinates (axes off) cannot be stacked or narrowed: no phone version."""
    fig, ax = plt.subplots(figsize=(6.6, 8))
    ax.add_patch(plt.Rectangle((0.5, 1), 6, 0.8))
    ax.text(3.5, 1.4, "multi-head self-attention: Q, K, V, softmax", ha="center", fontsize=8.5)
    ax.set_xlim(0, 9)
    ax.set_ylim(0, 10)
    ax.axis("off")
    assert plots.is_diagram(fig) and not plots.needs_narrow(fig, 900)
    wide, narrow = shown(fig)
    assert narrow is None and plots.png_text(wide)["Diagram"] == "yes"
    assert "Diagram" not in plots.png_text(shown(one_small_line())[0])


def test_a_wide_legend_takes_one_column_on_a_phone():
    fig, ax = plt.subplots(figsize=(8, 3))
    for k in range(5):
        ax.barh(["BERT-Base"], [0.2], left=[0.2 * k], label=f"a long legend entry {k}")
    ax.legend(ncol=3, loc="upper center", bbox_to_anchor=(0.5, -0.28))
    fig.tight_layout()
    wide, narrow = shown(fig)
    assert narrow is not None
    assert plots.readable_px(fig, plots.png_size(narrow)[0]) >= plots.READABLE_PX


def test_category_names_that_would_collide_on_a_phone_are_turned():
    fig, axes = plt.subplots(1, 2, figsize=(11, 3))
    for ax in axes:
        ax.bar(["copy the visible piece", "a random piece", "the most frequent piece"], [1, 2, 3])
    narrow = plots.narrow_figure(fig)
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    renderer = FigureCanvasAgg(narrow).get_renderer()
    for ax in plots._panels(narrow):
        labels = ax.get_xticklabels()
        assert all(t.get_rotation() == 40 for t in labels)
        boxes = [t.get_window_extent(renderer) for t in labels]
        assert all(a.x0 < b.x0 for a, b in zip(boxes, boxes[1:]))
    assert all(t.get_rotation() == 0 for t in fig.axes[0].get_xticklabels()), "the page's figure is unchanged"


def _drawn(fig):
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    canvas = FigureCanvasAgg(fig)
    canvas.draw()
    return canvas.get_renderer()


def _overlapping(labels, renderer) -> bool:
    boxes = [t.get_window_extent(renderer) for t in labels if t.get_visible() and t.get_text().strip()]
    return any(a.overlaps(b) and a.intersection(a, b).width > 1 and a.intersection(a, b).height > 1
               for a, b in zip(boxes, boxes[1:]))


def test_a_figure_wider_than_the_page_s_column_is_drawn_at_its_width():
    """A desktop shows a figure at most PAGE_COLUMN_PX wide: a wider one is drawn again, narrower with the same
    fonts, so that its text is not scaled below READABLE_PX there; a narrow one is left as it is."""
    fig = three_heatmaps()
    from IPython.core.pylabtools import print_figure

    as_drawn = plots.png_size(print_figure(fig, "png"))[0]
    assert plots.page_px(fig, as_drawn) < plots.READABLE_PX, "the chapter's own drawing would be scaled too small"
    page, _ = shown(fig)
    width, text = plots.png_size(page)[0], float(plots.png_text(page)["Text size"])
    assert text * min(1.0, plots.PAGE_COLUMN_PX / width) >= plots.READABLE_PX
    assert text == pytest.approx(plots.smallest_text_pt(fig) * fig.dpi / 72, abs=0.05), "the same font sizes"
    assert fig.get_size_inches().tolist() == [12, 4], "the chapter's figure is unchanged"
    assert plots.page_figure(one_small_line()) is None, "a small figure is shown as the chapter drew it"


def schedule_and_clipping():
    """Chapter 11's schedule panel: a legend as wide as the panel is drawn over the lines on a phone."""
    fig, axes = plt.subplots(1, 2, figsize=(11, 3))
    steps = np.arange(1800)
    axes[0].plot(steps, np.minimum(steps / 100, (1800 - steps) / 1700) * 3e-3, label="bertlib (transformers' linear schedule)")
    axes[0].plot(steps, np.minimum(steps / 100, 1 - steps / 1800) * 3e-3, ls="--", label="the original's rule, same warm-up")
    axes[0].legend(fontsize=8)
    axes[1].plot(steps, np.exp(np.random.default_rng(0).normal(0.6, 0.3, steps.size)), lw=0.8, label="gradient norm")
    axes[1].axhline(1.0, ls=":", label="clipped above this")
    axes[1].set_yscale("log")
    axes[1].legend(fontsize=8)
    fig.tight_layout()
    return fig


def test_a_legend_over_the_data_moves_where_it_covers_none():
    fig = schedule_and_clipping()
    narrow = plots.narrow_figure(fig)
    as_drawn = plots._copy(fig)
    as_drawn.set_size_inches(plots.NARROW_WIDTH_IN, 3)
    as_drawn.tight_layout()
    r = _drawn(as_drawn)
    assert any(plots.legend_over_data(ax, r) for ax in as_drawn.axes), "the legends cover the lines at a phone's width"
    r = _drawn(narrow)
    assert not any(plots.legend_over_data(ax, r) for ax in narrow.axes)
    assert all(ax.get_legend() is not None for ax in narrow.axes), "moved, not dropped"
    for ax in narrow.axes:  # and still inside the figure
        box = ax.get_legend().get_window_extent(r)
        assert box.x0 >= 0 and box.y0 >= 0 and box.x1 <= narrow.bbox.width + 1
    assert fig.axes[0].get_legend()._loc == 0, "the chapter's figure is unchanged"


def test_a_heat_map_with_a_name_a_row_keeps_every_row_name_on_a_phone():
    """Chapter 10's score matrix of (start, end) token pairs: a name on every row and column. On a phone it is
    drawn taller than wide, every row's name kept, the columns' names thinned to every k-th, none overlapping."""
    names = [f"token{i}" for i in range(31)]
    fig, ax = plt.subplots(figsize=(8, 7))
    plots.matrix_heatmap(ax, np.random.default_rng(0).random((31, 31)), names, names)
    for t in ax.get_xticklabels() + ax.get_yticklabels():
        t.set_fontsize(7)
    narrow = plots.narrow_figure(fig)
    r = _drawn(narrow)
    panel = plots._panels(narrow)[0]
    rows = [t.get_text() for t in panel.get_yticklabels()]
    cols = [t.get_text() for t in panel.get_xticklabels()]
    assert rows == names, "every row keeps its name"
    assert 3 <= len(cols) < len(names) and cols == names[::names.index(cols[1])], "every k-th column's name"
    assert not _overlapping(panel.get_yticklabels(), r) and not _overlapping(panel.get_xticklabels(), r)
    as_drawn = plots._copy(fig)
    as_drawn.set_size_inches(plots.NARROW_WIDTH_IN, plots.NARROW_WIDTH_IN)
    as_drawn.tight_layout()
    r = _drawn(as_drawn)
    assert _overlapping(as_drawn.axes[0].get_yticklabels(), r), "(the names would overlap at the phone's width)"


def test_category_names_of_two_lines_are_turned_on_one_line():
    fig, ax = plt.subplots(figsize=(9, 3))
    names = [f"{w}\n({'AB'[i > 5]})" for i, w in enumerate("[CLS] my dog is cute [SEP] he likes playing [SEP]".split())]
    ax.bar(range(10), np.arange(10), tick_label=names)
    narrow = plots.narrow_figure(fig)
    r = _drawn(narrow)
    labels = plots._panels(narrow)[0].get_xticklabels()
    assert [t.get_text() for t in labels] == [n.replace("\n", " ") for n in names]
    assert all(t.get_rotation() == 40 for t in labels)
    ends = [t.get_window_extent(r).x1 for t in labels]  # each name ends at its tick, turned 40 degrees
    line = labels[0].get_fontsize() * narrow.dpi / 72
    assert min(b - a for a, b in zip(ends, ends[1:])) * np.sin(np.radians(40)) >= line, "the turned names are apart"


def test_a_note_that_runs_out_of_its_panel_is_written_on_another_side_of_its_point():
    """Chapter 7's -ln p curve: the note beside its last point ran past the panel's right edge on a phone."""
    fig, ax = plt.subplots(figsize=(7, 3.5))
    ps = np.logspace(-5, 0, 100)
    ax.plot(ps, -np.log(ps))
    ax.set_xscale("log")
    for p in (1e-4, 0.62):
        ax.plot([p], [-np.log(p)], "o")
        ax.annotate(f"p = {p}: {-np.log(p):.3f}", (p, -np.log(p)), textcoords="offset points", xytext=(8, 4))
    narrow = plots.narrow_figure(fig)
    r = _drawn(narrow)
    panel = narrow.axes[0].get_window_extent(r)
    line = narrow.axes[0].get_lines()[0]
    path = line.get_transform().transform_path(line.get_path())
    for note in narrow.axes[0].texts:
        box = note.get_window_extent(r)
        assert panel.x0 <= box.x0 and box.x1 <= panel.x1, f"{note.get_text()} runs out of its panel"
        assert not path.intersects_bbox(box, filled=False), f"{note.get_text()} is written over the line"
    assert narrow.axes[0].texts[1].xyann[0] < 0 and fig.axes[0].texts[1].xyann == (8, 4), "moved in the copy only"


def test_a_legend_moves_on_a_panel_whose_x_axis_shows_nothing():
    """Stacked panels sharing x: the upper one's axis draws no labels, so it has no box to put a legend under
    (it raised AttributeError in the page, chapter 2's costs figure)."""
    fig, axes = plt.subplots(2, 1, figsize=(8, 5), sharex=True)
    x = np.linspace(0, 1, 50)
    for ax in axes:
        for k in range(6):
            ax.plot(x, np.full_like(x, k / 5), label=f"a long legend entry {k}")
        ax.legend(loc="center", fontsize=10)
    axes[0].xaxis.set_visible(False)
    fig.tight_layout()
    r = _drawn(fig)
    assert plots.legend_over_data(axes[0], r), "the legend starts over the lines"
    assert plots._clear_legend(axes[0], r)
    assert axes[0].get_legend() is not None, "moved, not dropped"


# --- the Chinese edition's figure (issue 31 §2) ----------------------------------------------------------------

@pytest.fixture
def catalogue(tmp_path, monkeypatch):
    """A code catalogue of this test's own, in place of locale/zh_CN/LC_MESSAGES/outputs/*.po."""
    import polib

    from course import editions

    folder = tmp_path / "zh_CN" / "LC_MESSAGES" / "outputs"
    folder.mkdir(parents=True)
    po = polib.POFile()
    real = polib.pofile(str(plots.CATALOGUE)) if plots.CATALOGUE.is_file() else []
    for e in real:  # the sentences course/plots.py writes (alt text), as the book's catalogue has them
        if e.msgid in plots.STRUCTURE:
            po.append(polib.POEntry(msgid=e.msgid, msgstr=e.msgstr))
    for msgid, msgstr in (("Cosine similarity between the sentences", "句子之间的余弦相似度"), ("layer {k}", "第 {k} 层"),
                          ("step", "步数"), ("loss", "损失"), ("train", "训练集"), ("held-out", "留出集"),
                          ("embeddings", "嵌入"), ("encoder", "编码器"), ("most here", "这里最多"),
                          ("The {part} hold {share} of the loss after {n} steps.", "{n} 步后，{part}占损失的 {share}。")):
        po.append(polib.POEntry(msgid=msgid, msgstr=msgstr))
    po.save(str(folder / "figures.po"))
    monkeypatch.setattr(editions, "OUTPUTS", folder)
    monkeypatch.setattr(plots, "CATALOGUE", folder / "figures.po")
    editions.translations.cache_clear()
    plots._templates.cache_clear()
    plots._table.cache_clear()
    yield
    editions.translations.cache_clear()
    plots._templates.cache_clear()
    plots._table.cache_clear()


def worded():
    fig, (a, b) = plt.subplots(1, 2, figsize=(9, 3.2))
    a.plot([0, 1, 2], [3, 2, 1], label="train")
    a.plot([0, 1, 2], [3, 2.5, 2], label="held-out")
    a.set(xlabel="step", ylabel="loss", title="layer 3")
    a.legend()
    b.bar([0, 1], [2, 1])
    b.set_xticks([0, 1], ["embeddings", "encoder"])
    b.annotate("most here", (0, 2), xytext=(4, -12), textcoords="offset points")
    fig.suptitle("Cosine similarity between the sentences")
    plots.describe(fig, "The embeddings hold 61% of the loss after 200 steps.")
    return fig


def chinese(fig) -> dict:
    stored = base64.b64decode(plots._png_described(fig))
    english, other = plots.split_edition(stored)
    assert other is not None, "the figure's PNG carries the Chinese edition's"
    page, narrow = plots.split_narrow(other)
    return {"english": plots.png_text(english), "text": plots.png_text(page), "png": page, "narrow": narrow}


def test_every_word_of_the_figure_is_drawn_in_chinese_with_the_same_numbers(catalogue):
    import json

    got = chinese(worded())
    text = got["text"]
    assert got["english"]["Title"] == "The embeddings hold 61% of the loss after 200 steps.", "English unchanged"
    assert text["Language"] == "zh_CN" and text["Title"] == "200 步后，嵌入占损失的 61%。", "a template's fields filled"
    alt = text["Description"]
    assert alt.startswith(text["Title"]) and "第 3 层" in alt and "步数" in alt and "训练集" in alt and "嵌入" in alt
    assert "Untranslated" not in text, text.get("Untranslated")
    assert "Missing glyphs" not in text, text["Missing glyphs"]
    assert {"layer {k}", "most here", "embeddings", "The {part} hold {share} of the loss after {n} steps."} <= \
        set(json.loads(text["Catalogue"]))
    assert got["narrow"] is not None, "side by side: the Chinese figure has its phone version too"
    with plt.rc_context(plots.CJK_RC):  # as the book draws every Chinese copy
        other = plots.Edition("zh_CN").figure(worded())
        narrow = plots.narrow_figure(other)  # its legend drawn again, from the series' names
    assert [t.get_text() for t in narrow.axes[0].get_legend().get_texts()] == ["训练集", "留出集"]
    fig, ax = plt.subplots(figsize=(4, 3))
    ax.barh([0, 1], [1, 2], label="embeddings")  # a bar chart's series name is its container's
    ax.barh([0, 1], [1, 1], left=[1, 2], label="encoder")
    ax.legend(ncols=2)  # two entries a row: a phone's figure draws it again, one a line
    with plt.rc_context(plots.CJK_RC):
        moved = plots.narrow_figure(plots.Edition("zh_CN").figure(fig))
    assert [t.get_text() for t in moved.axes[0].get_legend().get_texts()] == ["嵌入", "编码器"]
    plt.close(fig)


def test_a_string_with_no_translation_is_listed_in_the_figure(catalogue):
    import json

    fig, ax = plt.subplots(figsize=(4, 3))
    ax.plot([0, 1], [1, 0])
    ax.set(title="layer 2", xlabel="a label nobody translated")
    plots.describe(fig, "The loss falls by 1.0 in one step, a caption nobody translated.")
    text = chinese(fig)["text"]
    assert json.loads(text["Untranslated"]) == ["The loss falls by 1.0 in one step, a caption nobody translated.",
                                                "a label nobody translated"]
    assert text["Title"] == "The loss falls by 1.0 in one step, a caption nobody translated."  # English, visibly


def test_a_glyph_missing_from_the_font_is_an_error():
    """The Chinese figure is drawn with Noto Sans CJK SC (CJK_RC): no character is drawn as a box. Without it,
    DejaVu Sans has no Chinese and matplotlib warns "Glyph ... missing from font(s)": here an error."""
    import warnings

    def draw():
        fig, ax = plt.subplots(figsize=(3, 2))
        ax.set(title="句子之间的余弦相似度 — 第 3 层", xlabel="步数（预热），QKᵀ")  # ᵀ: not in Noto Sans CJK
        fig.canvas.draw()
        plt.close(fig)

    with warnings.catch_warnings():
        warnings.filterwarnings("error", message=r".*[Gg]lyph.*missing")
        with plt.rc_context(plots.CJK_RC):
            draw()
        with plt.rc_context({"font.sans-serif": ["DejaVu Sans"]}), pytest.raises(UserWarning, match="missing from"):
            draw()
        with plt.rc_context({"font.sans-serif": plots.CJK_FONTS}), pytest.raises(UserWarning, match="missing from"):
            draw()  # a generic family resolves to one font: no fallback to DejaVu Sans for the ᵀ


def test_the_chinese_copy_falls_back_to_dejavu_for_what_noto_lacks(catalogue):
    import json

    fig, ax = plt.subplots(figsize=(4, 3))
    ax.plot([0, 1], [1, 0], label="QKᵀ and ·V: 2TH")
    ax.set(title="layer 2", xlabel="step")
    ax.legend()
    plots.describe(fig, "The embeddings hold 61% of the loss after 200 steps.")
    text = chinese(fig)["text"]
    assert "Missing glyphs" not in text, text["Missing glyphs"]
    assert json.loads(text["Untranslated"]) == ["QKᵀ and ·V: 2TH"]


def test_the_chinese_page_serves_the_chinese_figure_its_alt_text_and_caption(catalogue, tmp_path):
    from docutils import nodes
    from docutils.utils import new_document

    got = chinese(worded())
    stored = base64.b64decode(plots._png_described(worded()))
    for language in ("zh_CN", None):
        src = tmp_path / str(language)
        (src / "_build").mkdir(parents=True)
        (src / "_build" / "fig.png").write_bytes(stored)
        doc = new_document("page")
        doc += nodes.image(uri="/_build/fig.png")
        app = SimpleNamespace(srcdir=str(src), config=SimpleNamespace(language=language))
        sphinx_ext._describe_figures(app, doc, "page")
        (image,) = doc.findall(nodes.image)
        (caption,) = doc.findall(nodes.caption)
        served = (src / "_build" / "fig.png").read_bytes()
        if language:
            assert served == got["png"] and image["alt"] == got["text"]["Description"]
            assert caption.astext() == "200 步后，嵌入占损失的 61%。"
            assert (src / "_build" / "fig.narrow.png").read_bytes() == got["narrow"]
        else:
            assert plots.split_edition(served)[1] is None, "the English page's PNG does not carry the Chinese one"
            assert caption.astext() == "The embeddings hold 61% of the loss after 200 steps."
            assert "嵌入" not in image["alt"]


def test_chinese_titles_wrap_between_characters():
    fig, ax = plt.subplots(figsize=(3, 2))
    ax.set_title("从多个种子的运行到对两种方案的结论：每个种子给出一个差值")
    plots._wrap(ax.title, 2.0)
    lines = ax.title.get_text().split("\n")
    assert len(lines) > 1 and all(plots._letters(line) <= 2.0 * 72 / (0.55 * ax.title.get_fontsize()) for line in lines)
    plt.close(fig)


def test_a_figure_whose_chinese_words_changed_is_drawn_again(catalogue):
    """course/build.py executes a chapter again when a figure's Chinese words changed in figures.po (a msgid it
    used translated otherwise, or a string it left English now translated), and only then."""
    import polib

    fig, ax = plt.subplots(figsize=(4, 3))
    ax.set(title="layer 2", xlabel="step", ylabel="a label nobody translated")
    plots.describe(fig, "The embeddings hold 61% of the loss after 200 steps.")
    png = base64.b64decode(plots._png_described(fig))
    assert plots.figure_current(png) and build.figures_current(_notebook(png))
    path = plots.CATALOGUE
    po = polib.pofile(str(path))

    def changed(edit):
        edit(po)
        po.save(str(path))
        plots._table.cache_clear()
        plots._templates.cache_clear()
        return not plots.figure_current(png)

    assert not changed(lambda po: po.append(polib.POEntry(msgid="an entry no figure uses", msgstr="无关")))
    assert changed(lambda po: setattr(po.find("step"), "msgstr", "训练步数"))
    setattr(po.find("step"), "msgstr", "步数")
    assert not changed(lambda po: None)
    assert changed(lambda po: po.append(polib.POEntry(msgid="a label nobody translated", msgstr="一个标签")))


def test_chinese_category_names_that_touch_on_a_phone_are_turned():
    """Chapter 12's phone figure showed '100% [MASK] 微调' and '不预训练 微调' touching: Chinese names, without spaces
    between them, are turned unless a gap is left."""
    fig, ax = plt.subplots(figsize=(3.4, 2.6))  # the names 2.6 to 3.6 px apart: not overlapping, but touching
    names = ["80/10/10\n微调", "100% [MASK]\n微调", "80/10/10\n基于特征", "100% [MASK]\n基于特征", "不预训练\n微调"]
    ax.bar(range(5), [0.2, 0.1, 0.1, 0.1, 0.2])
    ax.set_xticks(range(5), names, fontsize=7)
    with plt.rc_context(plots.CJK_RC):
        for t in ax.get_xticklabels():
            t.set_fontfamily(plots.CJK_FONTS)
        assert plots._tidy(fig)
        assert all(t.get_rotation() == 40 for t in ax.get_xticklabels() if t.get_text())
    plt.close(fig)
