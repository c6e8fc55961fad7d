"""Small display helpers the chapters share: one palette, PNG bytes for widgets, two heat maps, an HTML
table (the book does not depend on pandas), and the words that describe a figure to a reader who cannot see it.

Every function takes the Axes (or Figure) it draws on and returns it, so a chapter stays in control of
its layout. Nothing here needs a running kernel: the figures are what a reader of the static page sees.

Figure descriptions: ``course.book_setup()`` calls ``describe_figures()``, so every matplotlib figure a
chapter shows is saved as a PNG that carries its caption (PNG ``Title``) and its alt text (PNG ``Description``).
The chapter says what the figure shows with ``describe(fig, caption)`` before showing it: a sentence with the
numbers its cell computed (the finding, not the axes); the alt text is that sentence, then what
``describe_figure`` reads from the figure itself (what kind of chart each panel is, its title, axes and
categories). A figure left undescribed gets its suptitle or its panels' titles as a caption, which
tests/test_figure_captions.py refuses. course/sphinx_ext.py reads both back from the PNG and gives every
figure of the page its alt text and a caption.

Figures drawn for the page's column: a figure wider than a desktop's column (``PAGE_COLUMN_PX``), whose text the
page would scale below ``READABLE_PX``, is drawn again at the column's width with the same fonts (``page_figure``).
Figures redrawn for a phone: a figure whose text would be scaled below ``READABLE_PX`` in a phone's column, or
whose panels sit side by side, is drawn a second time for the phone (``narrow_figure``: its panels stacked in one
column ``NARROW_WIDTH_IN`` wide, the same fonts) and that PNG travels inside the first one (chunk
``NARROW_CHUNK``); course/sphinx_ext.py takes it out and serves it under 600 px (``<picture>``). In both, what the
new size breaks is mended (``_tidy``): category names that collide are turned, a heat map's row names get a line
each (its column names thinned to every k-th), a legend that covers the data moves off it. Every PNG says
its smallest text (``Text size``, pixels) and the version of this module that drew it (``Course figures``:
course/build.py executes a chapter again when its figures were drawn by another).
"""
from __future__ import annotations

import functools
import hashlib
import io
import pickle
import re
import struct
import warnings
import zlib
from collections.abc import Sequence
from pathlib import Path

import matplotlib
import matplotlib.pyplot as plt
import numpy as np

from course import editions

# One colour per idea, used the same way in every chapter.
COLORS = {
    "token": "#4C72B0",
    "position": "#DD8452",
    "segment": "#55A868",
    "sum": "#8172B3",
    "layernorm": "#937860",
    "bert": "#4C72B0",
    "gpt": "#C44E52",
    "hidden": "#DDDDDD",
    "embeddings": "#4C72B0",
    "encoder": "#DD8452",
    "pooler": "#55A868",
    "heads": "#8172B3",
    "pad": "#8C8C8C",
}


def tint(color: str, alpha: float = 0.25) -> str:
    """A palette colour as a translucent CSS rgba(): a cell background that reads in light and dark mode."""
    r, g, b = (round(255 * c) for c in matplotlib.colors.to_rgb(color))
    return f"rgba({r},{g},{b},{alpha})"


def fig_to_png(fig: plt.Figure, dpi: int = 100, close: bool = True) -> bytes:
    """The figure as PNG bytes (what an ``ipywidgets.Image`` shows); closes it so it is not drawn twice."""
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=dpi, bbox_inches="tight")
    if close:
        plt.close(fig)
    return buf.getvalue()


def visibility_heatmap(ax, visible, labels: Sequence[str], title: str = "", color: str = COLORS["bert"],
                       highlight_row: int | None = None):
    """Draw a (T, T) boolean visibility matrix: row = query (who looks), column = key (who is looked at)."""
    visible = np.asarray(visible, dtype=bool)
    T = visible.shape[0]
    rgb = np.ones((T, T, 3))
    on = np.array(matplotlib.colors.to_rgb(color))
    off = np.array(matplotlib.colors.to_rgb(COLORS["hidden"]))
    rgb[visible], rgb[~visible] = on, off
    if highlight_row is not None:  # fade the other rows so the chosen query stands out
        fade = np.ones(T, dtype=bool)
        fade[highlight_row] = False
        rgb[fade] = 0.35 * rgb[fade] + 0.65
    ax.imshow(rgb, interpolation="nearest")
    keep_words(ax, labels)  # the tokens: the same in every edition
    ax.set_xticks(range(T), labels, rotation=90)
    ax.set_yticks(range(T), labels)
    ax.set_xlabel("key (may be looked at)")
    ax.set_ylabel("query (looks)")
    ax.set_title(title)
    ax.set_xticks(np.arange(-0.5, T, 1), minor=True)
    ax.set_yticks(np.arange(-0.5, T, 1), minor=True)
    ax.grid(which="minor", color="white", linewidth=1)
    ax.tick_params(which="minor", length=0)
    return ax


def matrix_heatmap(ax, matrix, row_labels: Sequence[str] | None = None, col_labels: Sequence[str] | None = None,
                   title: str = "", cmap: str = "viridis", vmin: float | None = None, vmax: float | None = None,
                   annotate: bool = False, fmt: str = "{:.2f}", colorbar: bool = True):
    """A labelled heat map of a small matrix (similarities, attention weights), optionally with the numbers."""
    matrix = np.asarray(matrix, dtype=float)
    im = ax.imshow(matrix, cmap=cmap, vmin=vmin, vmax=vmax, interpolation="nearest")
    keep_words(ax, [*(row_labels or ()), *(col_labels or ())])  # its rows' and columns' names: tokens, sentences
    if row_labels is not None:
        ax.set_yticks(range(len(row_labels)), row_labels)
    if col_labels is not None:
        ax.set_xticks(range(len(col_labels)), col_labels, rotation=90)
    if annotate:
        for (i, j), v in np.ndenumerate(matrix):
            r, g, b, _ = im.cmap(im.norm(v))  # the cell's own colour: dark text on light cells, whatever the map
            ax.text(j, i, fmt.format(v), ha="center", va="center", fontsize=8,
                    color="black" if 0.2126 * r + 0.7152 * g + 0.0722 * b > 0.45 else "white")
    ax.set_title(title)
    if colorbar:
        ax.figure.colorbar(im, ax=ax, fraction=0.046, pad=0.04)
    return ax


def html_table(header: Sequence[str], rows: Sequence[Sequence], align: str | None = None,
               caption: str | None = None, cell_style=None):
    """A small table as an ``IPython.display.HTML`` object (the book has no pandas). Numbers are
    formatted by the caller; ``align`` is one letter per column, "l" or "r" (default: right for numbers).
    ``cell_style(i, j)``, if given, returns extra CSS for body cell (row i, column j), e.g. a background
    from ``tint``. The page's CSS (course/_static/course.css) lets a wide table scroll in its own box."""
    import html

    from IPython.display import HTML

    rows = [list(r) for r in rows]
    if align is None:
        align = "".join("r" if rows and isinstance(rows[0][i], (int, float)) else "l" for i in range(len(header)))
    style = {"l": "text-align:left", "r": "text-align:right"}
    def fmt(v):
        return f"{v:,}" if isinstance(v, int) and not isinstance(v, bool) else html.escape(str(v))
    out = ['<table class="table">']
    if caption:
        out.append(f"<caption>{html.escape(caption)}</caption>")
    out.append("<thead><tr>" + "".join(f'<th style="{style[a]}">{html.escape(str(h))}</th>'
                                       for h, a in zip(header, align)) + "</tr></thead><tbody>")
    for i, r in enumerate(rows):
        extra = [(";" + cell_style(i, j)) if cell_style and cell_style(i, j) else "" for j in range(len(r))]
        out.append("<tr>" + "".join(f'<td style="{style[a]}{x}">{fmt(v)}</td>'
                                    for v, a, x in zip(r, align, extra)) + "</tr>")
    out.append("</tbody></table>")
    return HTML("\n".join(out))


# --- figure descriptions (alt text and caption) -------------------------------------------------------------

def describe(fig, caption: str | None = None, alt: str | None = None):
    """Say what the figure shows: ``caption``, its finding in a sentence, with the numbers the cell computed
    (never typed: tests/test_prose_numbers.py reads every call); the alt text is that sentence, then what
    ``describe_figure`` reads from the figure (its kind, axes, categories), unless ``alt`` replaces it. A
    figure the chapter does not describe gets its titles as a caption, which the book's tests refuse."""
    if caption is not None:
        fig._course_caption = str(caption)
    if alt is not None:
        fig._course_alt = str(alt)
    return fig


def _words(items: Sequence[str], most: int = 8, say=None) -> str:
    """A list of names for the alt text: the first few, how many, the last."""
    items = [i for i in (str(x).strip() for x in items) if i]
    say = say or _ENGLISH.say
    if len(items) > most:
        return say("{items}, ... ({n} in all), {last}", items=_join(items[:most - 2], say), n=len(items), last=items[-1])
    return _join(items, say)


def _join(items: Sequence[str], say) -> str:
    return say("{a}, {b}", a=items[0], b=_join(items[1:], say)) if len(items) > 1 else (items[0] if items else "")


def plain_text(text: str) -> str:
    """Matplotlib's mathtext as plain words: ``$\\mathdefault{10^{-6}}$`` -> ``10^-6``, ``$d_k$`` -> ``d_k``."""
    import re

    def math(m):
        t = re.sub(r"\\mathdefault\{(.*)\}", r"\1", m.group(1))
        t = re.sub(r"\^\{([^{}]*)\}", r"^\1", t)
        t = re.sub(r"_\{([^{}]*)\}", r"_\1", t)
        t = re.sub(r"\\(?:mathrm|text|mathbf|mathit)\{([^{}]*)\}", r"\1", t)
        t = re.sub(r"\\sqrt\{([^{}]*)\}", r"sqrt(\1)", t)
        return t.replace("\\", "")

    return re.sub(r"\$([^$]*)\$", math, text)


def _panel(ax, say) -> str:
    """One Axes in words: its kind of chart, title, axes and categories (``say``: an ``Edition``'s)."""
    from matplotlib.patches import Rectangle

    def ticks(labels, axis):
        lo, hi = sorted(axis.get_view_interval())
        return [plain_text(t.get_text()) for t in labels
                if t.get_text() and lo - 1e-9 <= axis.convert_units(t.get_position()[0 if axis is ax.xaxis else 1]) <= hi + 1e-9]

    title = ax.get_title() or ax.get_title("left") or ax.get_title("right")
    xlabel, ylabel = ax.get_xlabel(), ax.get_ylabel()
    xt, yt = ticks(ax.get_xticklabels(), ax.xaxis), ticks(ax.get_yticklabels(), ax.yaxis)
    bars = [p for p in ax.patches if isinstance(p, Rectangle)]
    lines = [ln for ln in ax.get_lines() if ln.get_visible() and len(ln.get_xdata()) > 1]
    legend = ax.get_legend()
    series = [t.get_text() for t in legend.get_texts()] if legend is not None else []
    if ax.images:
        kind = say("heat map")
        rows, cols = yt, xt
        detail = []
        if rows:
            detail.append(say("rows ({name}): {items}", name=ylabel or say("rows"), items=_words(rows, say=say)))
        elif ylabel:
            detail.append(say("rows: {name}", name=ylabel))
        if cols:
            detail.append(say("columns ({name}): {items}", name=xlabel or say("columns"), items=_words(cols, say=say)))
        elif xlabel:
            detail.append(say("columns: {name}", name=xlabel))
    else:
        kind = say("chart")
        if bars and len(bars) >= len(lines):
            kind = say("bar chart of {n} bars", n=len(bars))
        elif lines:
            kind = say("line chart of {n} lines", n=len(lines)) if len(lines) > 1 else say("line chart of 1 line")
        detail = []
        for name, label, names in ((say("horizontal axis"), xlabel, xt), (say("vertical axis"), ylabel, yt)):
            if label or names:
                text = say("{axis}: {label}", axis=name, label=plain_text(label)) if label else name
                detail.append(say("{axis} ({items})", axis=text, items=_words(names, say=say)) if names else text)
    if series:
        detail.append(say("series: {items}", items=_words(series, say=say)))
    text = say("{kind} titled \u201c{title}\u201d", kind=kind, title=title) if title else kind
    return _semicolons([text, *detail], say)


def _semicolons(parts: Sequence[str], say) -> str:
    return say("{a}; {b}", a=parts[0], b=_semicolons(parts[1:], say)) if len(parts) > 1 else parts[0]


def _panels(fig) -> list:
    """The figure's Axes that are panels (not colour bars)."""
    return [ax for ax in fig.get_axes() if ax.get_label() != "<colorbar>" and ax.get_visible()
            and not hasattr(ax, "_colorbar")]


def describe_figure(fig, edition: "Edition | None" = None) -> tuple[str, str]:
    """(caption, alt text) of a matplotlib figure: the caption is the finding ``describe`` gave it (else its
    suptitle, or its panels' titles); the alt text is that finding, then what each panel is, read from what it
    draws (kind, title, axes, categories, series), in ``edition``'s words (English by default)."""
    say = (edition or _ENGLISH).say
    panels = _panels(fig)
    sup = fig._suptitle.get_text() if getattr(fig, "_suptitle", None) is not None else ""
    titles = [t for t in (ax.get_title() for ax in panels) if t]
    finding = getattr(fig, "_course_caption", None)
    caption = finding or sup or (_semicolons(titles, say) if titles else "")
    alt = getattr(fig, "_course_alt", None)
    if alt is None:
        if len(panels) == 1:
            alt = say("Figure: a {panel}.", panel=_panel(panels[0], say))
        else:
            head = say("Figure of {n} panels, \u201c{title}\u201d.", n=len(panels), title=sup) if sup else \
                say("Figure of {n} panels.", n=len(panels))
            alt = " ".join([head] + [say("Panel {k}: a {panel}.", k=k + 1, panel=_panel(ax, say))
                                     for k, ax in enumerate(panels)])
        if finding:  # what it shows first, then how it is drawn
            alt = say("{a} {b}", a=finding, b=alt)
    if not caption:
        caption = alt
    return caption, alt


# --- a figure redrawn for a phone -----------------------------------------------------------------------------

# The width a figure gets on a 390-px phone: the article's column is 342 px, less the 8-px frame the dark theme
# draws around an image (tests/test_pages.py measures what the text becomes in both themes)
PHONE_COLUMN_PX = 326
# The width a figure gets on a desktop: the article's column (672 px from 1280 px up) less the same frame
PAGE_COLUMN_PX = 656
READABLE_PX = 9.0  # the smallest text a figure may show once scaled to its column, in CSS pixels
NARROW_WIDTH_IN = 3.8  # the phone's version: its panels stacked in one column this wide
NARROW_CHUNK = b"naRr"  # a private PNG chunk: the phone's version inside the figure's PNG
# What drew a figure's PNG: this module (its heat maps, descriptions and phone versions). A chapter whose stored
# figures carry another version is executed again by course/build.py.
FIGURES_VERSION = hashlib.sha256(Path(__file__).read_bytes()).hexdigest()[:12]
# The figures' code catalogue: a figure's Chinese words, drawn into its PNG when the chapter executes (a figure
# whose words it changed is drawn again: ``figure_current``)
CATALOGUE = editions.OUTPUTS / "figures.po"


def smallest_text_pt(fig) -> float:
    """The size in points of the smallest text the figure shows (tick labels, titles, annotations)."""
    from matplotlib.text import Text

    sizes = [t.get_fontsize() for t in fig.findobj(Text) if t.get_visible() and t.get_text().strip()]
    return min(sizes, default=0.0)


def _side_by_side(fig) -> bool:
    """Whether two of the figure's panels share a row (a phone would shrink them to half its width)."""
    tops = [ax.get_subplotspec().get_topmost_subplotspec() for ax in _panels(fig) if ax.get_subplotspec()]
    rows = [set(t.rowspan) for t in tops]
    return any(rows[i] & rows[j] and tops[i] != tops[j] for i in range(len(tops)) for j in range(i))


def is_diagram(fig) -> bool:
    """Whether every panel is a drawing with its axes off (boxes and words placed by coordinates): stacking
    panels or narrowing the figure would only push its words out of its boxes, so it keeps one layout."""
    panels = _panels(fig)
    return bool(panels) and not any(ax.axison for ax in panels)


def needs_narrow(fig, width_px: int) -> bool:
    """Whether a phone needs its own drawing of ``fig``, whose PNG is ``width_px`` wide: its panels sit side
    by side, or its smallest text would be shown under ``READABLE_PX`` in the phone's column (a diagram,
    ``is_diagram``, never: it cannot be redrawn narrower by moving panels)."""
    if is_diagram(fig):
        return False
    return _side_by_side(fig) or readable_px(fig, width_px) < READABLE_PX


def page_px(fig, width_px: int) -> float:
    """The size of the figure's smallest text, in CSS pixels, once its PNG (``width_px`` wide) is scaled to the
    page's column at a desktop's width (``PAGE_COLUMN_PX``)."""
    return smallest_text_pt(fig) * fig.dpi / 72 * min(1.0, PAGE_COLUMN_PX / width_px)


def readable_px(fig, width_px: int) -> float:
    """The size of the figure's smallest text, in CSS pixels, once its PNG (``width_px`` wide) is scaled to a
    phone's column."""
    return smallest_text_pt(fig) * fig.dpi / 72 * min(1.0, PHONE_COLUMN_PX / width_px)


def _copy(fig):
    """A deep copy of ``fig`` that pyplot will not show (unpickling gives it a pyplot manager)."""
    import matplotlib.pyplot as plt

    new = pickle.loads(pickle.dumps(fig))
    if plt.fignum_exists(getattr(new, "number", -1)) and plt.figure(new.number) is new:
        plt.close(new)  # the inline backend must not show it again
    return new


def narrow_figure(fig, width_in: float = NARROW_WIDTH_IN):
    """A copy of ``fig`` drawn for a phone: every panel (with its colour bar) in a row of its own, in reading
    order, the figure ``width_in`` wide, the same font sizes; long titles and labels wrap, crowded labels are
    turned or thinned, a legend over the data moves (``_tidy``). ``fig`` is unchanged."""
    new = _copy(fig)
    w0, h0 = fig.get_size_inches()
    groups: dict = {}  # the top-level cell of each panel -> the Axes in it (the panel, its colour bar, a twin)
    for ax in new.get_axes():
        spec = ax.get_subplotspec()
        if spec is not None:
            groups.setdefault(spec.get_topmost_subplotspec(), []).append(ax)
    tops = sorted(groups, key=lambda t: (t.rowspan.start, t.colspan.start))
    if tops:
        heights = []
        for top in tops:
            panel = next((ax for ax in groups[top] if ax in _panels(new)), groups[top][0])
            box = panel.get_position()  # as drawn in ``fig`` (an image's aspect applied)
            w, h = box.width * w0, box.height * h0
            if panel.images or panel.get_aspect() != "auto":  # a fixed aspect: its height follows its new width
                h = min(5.0, max(1.0, h * (width_in - 1.0) / max(w, 1e-6)))
                rows = [t for t in panel.get_yticklabels() if t.get_text().strip()]
                tall = len(rows) * max((t.get_fontsize() for t in rows), default=0) / 72  # one label a font size high
                if panel.images and tall > h:  # a heat map whose row names would touch: taller, every name kept
                    panel.set_aspect("auto")
                    h = min(5.0, 1.4 * tall)  # a line and a gap a name
            else:
                h = min(3.2, max(1.8, h))
            heights.append(h + 0.9)  # + its own title, tick labels and axis label
        grid = new.add_gridspec(len(tops), 1, height_ratios=heights)
        row = {top: grid[i] for i, top in enumerate(tops)}
        for top, axes in groups.items():
            for ax in axes:
                spec = ax.get_subplotspec()
                if spec == top:
                    ax.set_subplotspec(row[top])
                    continue
                gs = spec.get_gridspec()  # a nested grid (a colour bar beside its panel): move its parent cell
                while getattr(gs, "_subplot_spec", None) is not None:
                    if gs._subplot_spec == top:
                        gs._subplot_spec = row[top]
                        break
                    gs = gs._subplot_spec.get_gridspec()
        for ax in new.get_axes():
            if ax.get_subplotspec() is not None:
                ax.set_subplotspec(ax.get_subplotspec())  # its position from its (moved) cell
        height = sum(heights) + (0.4 if getattr(new, "_suptitle", None) is not None else 0.0)
    else:
        height = h0
    for ax in new.get_axes():
        legend = ax.get_legend()
        if legend is not None and legend._ncols > 1:  # a row of entries wider than a phone: one entry a line
            handles, labels = ax.get_legend_handles_labels()
            anchor = legend.get_bbox_to_anchor().transformed(ax.transAxes.inverted())
            outside = not 0 <= anchor.y0 <= 1
            ax.legend(handles, labels, ncols=1, loc=legend._loc, fontsize=legend._fontsize,
                      frameon=legend.get_frame_on(), bbox_to_anchor=anchor.bounds if outside else None)
            if outside:  # below the panel: room for its new lines
                height += 0.2 * (len(labels) - -(-len(labels) // legend._ncols))
    new.set_size_inches(width_in, height)
    for ax in _panels(new):
        if len(ax.get_shared_y_axes().get_siblings(ax)) > 1:
            ax.tick_params(axis="y", labelleft=True)  # no longer beside the panel that showed them
        _wrap(ax.title, width_in)
        _wrap(ax.xaxis.label, width_in * 0.85)
    if getattr(new, "_suptitle", None) is not None:
        _wrap(new._suptitle, width_in)
    _tidy(new)
    return new


def page_figure(fig, width_in: float | None = None):
    """A copy of ``fig`` for the page's column: ``width_in`` wide (a figure wider than the column, drawn at the
    column's width so that its text is not scaled below ``READABLE_PX``; its panels where they were, the same
    font sizes, titles wrapped to their panel), crowded labels turned or thinned and a legend that covers the
    data moved (``_tidy``). None when the figure needs none of this (the page shows ``fig`` itself)."""
    new = _copy(fig)
    w0, h0 = fig.get_size_inches()
    changed = False
    if width_in is not None and width_in < w0 - 1e-6:
        shrink = width_in / w0
        fixed = any(ax.images or ax.get_aspect() != "auto" for ax in _panels(new))
        # a fixed aspect (a heat map): its height shrinks with its width, less the room its words keep
        new.set_size_inches(width_in, max(h0 * shrink + 0.6 * (1 - shrink), 0.6 * h0) if fixed else h0)
        for ax in _panels(new):
            _wrap(ax.title, ax.get_position().width * width_in * 1.15)
        if getattr(new, "_suptitle", None) is not None:
            _wrap(new._suptitle, width_in)
        changed = True
    changed |= _tidy(new)
    return new if changed else None


def _renderer(fig):
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    return FigureCanvasAgg(fig).get_renderer()  # (a canvas of its own: the copy is drawn only to be measured)


def _lay_out(fig) -> None:
    from matplotlib.layout_engine import PlaceHolderLayoutEngine

    if fig.get_layout_engine() is None or isinstance(fig.get_layout_engine(), PlaceHolderLayoutEngine):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # "not compatible with tight_layout": the layout stays as set
            fig.tight_layout()
    else:
        _renderer(fig)
        fig.draw_without_rendering()  # a constrained layout lays itself out when drawn


def _tidy(fig) -> bool:
    """Lay ``fig`` out, then mend what its new size broke: category names that run into each other are
    turned (a name of two lines on one line first), a heat map's crowded labels thinned to every k-th, a
    legend that covers the data placed where it covers none, or below its panel. Whether anything changed."""
    _lay_out(fig)
    renderer = _renderer(fig)
    changed, grow = False, 0.0
    for ax in _panels(fig):
        if ax.images:
            changed |= _thin_labels(ax, renderer)
            continue
        labels = [t for t in ax.get_xticklabels() if t.get_visible() and t.get_text().strip()]
        boxes = [t.get_window_extent(renderer) for t in labels]
        # (Chinese names, with no spaces to tell them apart, need a gap: 4 px; Latin ones must not overlap)
        gap = 4 if any(_letters(t.get_text()) > len(t.get_text()) for t in labels) else -1
        if any(a.x1 > b.x0 - gap for a, b in zip(boxes, boxes[1:])) and not any(t.get_rotation() for t in labels):
            # category names that run into each other: turned, read from their end, a name on one line
            before = ax.xaxis.get_tightbbox(renderer).height
            names = [" ".join(t.get_text().split("\n")) for t in ax.get_xticklabels()]
            ax.set_xticks(ax.get_xticks(), names, fontsize=labels[0].get_fontsize(), rotation=40,
                          horizontalalignment="right", rotation_mode="anchor")
            grow = max(grow, (ax.xaxis.get_tightbbox(renderer).height - before) / fig.dpi)
            changed = True
    if changed:
        w, h = fig.get_size_inches()
        fig.set_size_inches(w, h + grow)  # room for the turned names: the panels keep their height
        _lay_out(fig)
        renderer = _renderer(fig)
    moved = False
    for ax in _panels(fig):
        moved |= _keep_notes_inside(ax, renderer)
    if moved:
        renderer = _renderer(fig)
    for ax in _panels(fig):
        moved |= _clear_legend(ax, renderer)
    if moved:
        _lay_out(fig)
    return changed or moved


def _keep_notes_inside(ax, renderer) -> bool:
    """A note written beside its point (an annotation offset in points) that runs out of its panel is written
    on another side of its point (left above, left below, right below), the first inside the panel and off the
    panel's lines. Whether one moved."""
    from matplotlib.text import Annotation

    panel, moved = ax.get_window_extent(renderer), False
    lines = [ln.get_transform().transform_path(ln.get_path()) for ln in ax.get_lines() if ln.get_visible()]
    for note in ax.texts:
        if not (isinstance(note, Annotation) and note.get_visible() and note.anncoords == "offset points"):
            continue
        box = note.get_window_extent(renderer)
        if box.x0 >= panel.x0 - 1 and box.x1 <= panel.x1 + 1:
            continue
        dx, dy = (abs(v) for v in note.xyann)
        for sx, sy in ((-1, 1), (-1, -1), (1, -1), (1, 1)):
            note.xyann = (sx * dx, sy * dy)
            note.set_horizontalalignment("left" if sx > 0 else "right")
            note.set_verticalalignment("bottom" if sy > 0 else "top")
            box = note.get_window_extent(renderer)
            if (box.x0 >= panel.x0 and box.x1 <= panel.x1 and box.y0 >= panel.y0 and box.y1 <= panel.y1
                    and not any(path.intersects_bbox(box, filled=False) for path in lines)):
                break
        moved = True
    return moved


def _thin_labels(ax, renderer) -> bool:
    """A heat map's tick labels that overlap (one a row or column, too many for its size) thinned to every
    k-th, k the fewest that leaves a gap between them."""
    import math

    thinned = False
    for axis, along in ((ax.xaxis, 0), (ax.yaxis, 1)):
        ticks = list(axis.get_ticklocs())
        labels = [t for t in axis.get_ticklabels() if t.get_visible()]
        if len(ticks) < 3 or len(labels) != len(ticks):
            continue
        boxes = [t.get_window_extent(renderer) for t in labels]
        centres = [(b.x0 + b.x1) / 2 if along == 0 else (b.y0 + b.y1) / 2 for b in boxes]
        pitch = abs(centres[-1] - centres[0]) / (len(centres) - 1)
        size = max((b.width if along == 0 else b.height) for b in boxes)
        if pitch <= 0 or size + 1 <= pitch:
            continue
        k = math.ceil((size + 2) / pitch)
        keep = list(range(0, len(ticks), k))
        texts = [t.get_text() for t in labels]
        font = labels[0].get_fontsize()
        rotation = labels[0].get_rotation()
        if along == 0:
            ax.set_xticks([ticks[i] for i in keep], [texts[i] for i in keep], fontsize=font, rotation=rotation)
        else:
            ax.set_yticks([ticks[i] for i in keep], [texts[i] for i in keep], fontsize=font, rotation=rotation)
        thinned = True
    return thinned


def _data_boxes(ax, renderer):
    """What a legend must not cover: the panel's lines (as paths), bars, scattered points and texts."""
    for line in ax.get_lines():
        if line.get_visible():
            yield line.get_transform().transform_path(line.get_path())
    for patch in ax.patches:
        box = patch.get_window_extent(renderer)
        if patch.get_visible() and box.width > 0 and box.height > 0:  # (a bar of height 0 covers nothing)
            yield box
    for coll in ax.collections:
        if coll.get_visible() and len(coll.get_offsets()):
            for x, y in coll.get_offset_transform().transform(coll.get_offsets()):
                yield matplotlib.transforms.Bbox([[x - 2, y - 2], [x + 2, y + 2]])
    for text in ax.texts:
        if text.get_visible() and text.get_text().strip():
            yield text.get_window_extent(renderer)


def legend_over_data(ax, renderer=None) -> bool:
    """Whether the panel's legend (inside it) covers a line, bar, point or text of the panel (a heat map's
    legend sits on its cells by design: False)."""
    from matplotlib.path import Path as MplPath

    legend = ax.get_legend()
    if legend is None or not legend.get_visible() or ax.images:
        return False
    renderer = renderer or _renderer(ax.figure)
    box = legend.get_window_extent(renderer)
    for item in _data_boxes(ax, renderer):
        if isinstance(item, MplPath):
            if item.intersects_bbox(box, filled=False):
                return True
        elif item.overlaps(box):
            return True
    return False


def _clear_legend(ax, renderer) -> bool:
    """A legend that covers the data: first where matplotlib finds the least covered ("best"), else below the
    panel (under its axis label, as many entries a row as its width holds). Whether it moved."""
    from matplotlib.transforms import offset_copy

    legend = ax.get_legend()
    if not legend_over_data(ax, renderer):
        return False
    handles, labels = ax.get_legend_handles_labels()
    if len(labels) != len(legend.get_texts()):
        handles, labels = legend.legend_handles, [t.get_text() for t in legend.get_texts()]
    style = dict(fontsize=legend._fontsize, frameon=legend.get_frame_on(), title=legend.get_title().get_text() or None)
    ax.legend(handles, labels, loc="best", ncols=1, **style)
    if not legend_over_data(ax, renderer):
        return True
    fig = ax.figure
    under = ax.xaxis.get_tightbbox(renderer)  # None where the axis shows nothing (a panel sharing x above another)
    below = max(0.0, ax.bbox.y0 - under.y0 if under is not None else 0.0) * 72 / fig.dpi + 4  # points under the axes
    for ncols in range(len(labels), 0, -1):
        new = ax.legend(handles, labels, loc="upper center", bbox_to_anchor=(0.5, 0), ncols=ncols,
                        bbox_transform=offset_copy(ax.transAxes, fig=fig, y=-below, units="points"), **style)
        box = new.get_window_extent(renderer)
        if box.width <= max(ax.bbox.width * 1.1, 0.0) or ncols == 1:
            break
    w, h = fig.get_size_inches()
    fig.set_size_inches(w, h + box.height / fig.dpi + 0.1)  # room for it, the panels keep their size
    return True


def _wrap(text, width_in: float) -> None:
    """Break a title or label into lines that fit ``width_in`` (an average letter is about half its size wide);
    broken in its text, not at drawing time, so that tight_layout makes room for every line."""
    import textwrap

    letters = int(width_in * 72 / (0.55 * text.get_fontsize()))
    if "$" not in text.get_text() and _letters(text.get_text()) > letters:
        text.set_text("\n".join(textwrap.fill(line, letters) if _letters(line) == len(line) else _fill_wide(line, letters)
                                for line in text.get_text().split("\n")))


def _letters(text: str) -> int:
    """How wide ``text`` is in average letters: a Chinese character (a wide one) counts two."""
    import unicodedata

    return sum(2 if unicodedata.east_asian_width(c) in "WF" else 1 for c in text)


def _fill_wide(line: str, letters: int) -> str:
    """A line with Chinese characters broken into lines of at most ``letters`` (``_letters``): between any two
    characters, never inside a run of Latin letters or digits."""
    out, current = [], ""
    for piece in re.findall(r"[A-Za-z0-9.,%()\[\]_+\-]+|\s+|.", line):
        if current and _letters(current + piece) > letters and not piece.isspace():
            out.append(current.rstrip())
            current = piece.lstrip()
        else:
            current += piece
    return "\n".join(out + [current.rstrip()])


def _chunk(kind: bytes, data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)


def with_narrow(png: bytes, narrow: bytes) -> bytes:
    """``png`` carrying ``narrow`` (the phone's version) in a chunk of its own, before its end."""
    end = png.rindex(b"IEND") - 4
    return png[:end] + _chunk(NARROW_CHUNK, narrow) + png[end:]


def split_narrow(png: bytes) -> tuple[bytes, bytes | None]:
    """(the PNG without the phone's version, the phone's version or None)."""
    return _split_chunk(png, NARROW_CHUNK)


def _split_chunk(png: bytes, chunk: bytes) -> tuple[bytes, bytes | None]:
    if png[:8] != b"\x89PNG\r\n\x1a\n":
        return png, None
    out, found, i = [png[:8]], None, 8
    while i + 8 <= len(png):
        n, kind = struct.unpack(">I4s", png[i:i + 8])
        if kind == chunk:
            found = png[i + 8:i + 8 + n]
        else:
            out.append(png[i:i + 12 + n])
        i += 12 + n
    return b"".join(out), found


def png_size(png: bytes) -> tuple[int, int]:
    """(width, height) in pixels, from the PNG's header."""
    return struct.unpack(">II", png[16:24])


def _png_described(fig, **kwargs):
    """The inline backend's PNG (base64), carrying the figure's caption and alt text as PNG text chunks, and,
    where a phone needs one (``needs_narrow``), the figure redrawn for a phone (``narrow_figure``); and inside it
    the figure of every other edition (``Edition.figure``, drawn with ``CJK_RC``), made the same way."""
    import base64

    png = _figure_png(fig, *describe_figure(fig), {}, kwargs)
    for language in editions.LANGUAGES[1:]:
        edition = Edition(language)
        with plt.rc_context(CJK_RC), warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            other = edition.figure(fig)
            caption, alt = describe_figure(other, edition)
            keep = set().union(*(getattr(ax, "_course_keep", ()) for ax in other.get_axes()))
            for text in set(shown_words(other)) - keep:
                edition.words(text)  # what the drawn copy shows: a string the walk did not reach is listed
            translated = _figure_png(other, caption, alt, edition.png_text(), kwargs)
            glyphs = sorted({str(w.message) for w in caught if "missing from" in str(w.message)})
        if glyphs:
            translated = with_text(translated, {"Missing glyphs": "; ".join(glyphs)})
        png = with_edition(png, translated)
    return base64.b64encode(png).decode("ascii")


def _figure_png(fig, caption: str, alt: str, more: dict[str, str], kwargs) -> bytes:
    """The PNG of ``fig`` at the width the page's column reads, its text chunks (caption, alt text, smallest
    text, this module's version, ``more``), with its phone version inside where a phone needs one."""
    from IPython.core.pylabtools import print_figure

    page, width_in = fig, None
    if not is_diagram(fig):  # a diagram keeps its one layout (tapped, it opens at its natural size)
        for _ in range(4):  # narrower while its text would be scaled below READABLE_PX in the page's column
            page = page_figure(fig, width_in) or fig
            png = print_figure(page, "png", **kwargs)
            shown = page_px(page, png_size(png)[0]) / 1.02  # a margin for the page's rounding
            if shown >= READABLE_PX:
                break
            width_in = page.get_size_inches()[0] * 0.97 * shown / READABLE_PX
    text = {"Text size": f"{smallest_text_pt(page) * page.dpi / 72:.1f}", "Course figures": FIGURES_VERSION,
            **({"Diagram": "yes"} if is_diagram(fig) else {}), **more}  # a diagram: a phone opens it at its size
    png = print_figure(page, "png", metadata={"Title": caption, "Description": alt, **text},
                       pil_kwargs={"optimize": True}, **kwargs)  # optimize: a smaller file, the same pixels
    if needs_narrow(fig, png_size(png)[0]):
        width_in = NARROW_WIDTH_IN
        for _ in range(3):  # narrower while its small text would still be scaled below READABLE_PX
            narrow = narrow_figure(fig, width_in)
            small = print_figure(narrow, "png", metadata={"Text size": f"{smallest_text_pt(narrow) * narrow.dpi / 72:.1f}"},
                                 pil_kwargs={"optimize": True}, **kwargs)
            shown = readable_px(narrow, png_size(small)[0]) / 1.02  # a margin for the page's rounding
            if shown >= READABLE_PX:
                break
            width_in *= 0.97 * shown / READABLE_PX
        png = with_narrow(png, small)
    return png


def describe_figures(shell=None) -> bool:
    """Make every figure the IPython ``shell`` shows carry its caption and alt text (``describe_figure``) in
    its PNG. Returns False where there is no IPython shell (a script)."""
    if shell is None:
        try:
            from IPython import get_ipython
        except ImportError:  # pragma: no cover
            return False
        shell = get_ipython()
    if shell is None:
        return False
    from matplotlib.figure import Figure

    shell.display_formatter.formatters["image/png"].for_type(Figure, _png_described)
    return True


def png_text(data: bytes) -> dict[str, str]:
    """The text chunks (tEXt and iTXt) of a PNG, e.g. {"Title": ..., "Description": ...} (empty if none)."""
    import struct
    import zlib

    if data[:8] != b"\x89PNG\r\n\x1a\n":
        return {}
    out, i = {}, 8
    while i + 8 <= len(data):
        n, kind = struct.unpack(">I4s", data[i:i + 8])
        body = data[i + 8:i + 8 + n]
        if kind == b"tEXt" and b"\0" in body:
            key, value = body.split(b"\0", 1)
            out[key.decode("latin-1")] = value.decode("latin-1")
        elif kind == b"iTXt" and b"\0" in body:
            key, rest = body.split(b"\0", 1)
            compressed, _method = rest[0], rest[1]
            _lang, _tkey, text = rest[2:].split(b"\0", 2)
            out[key.decode("latin-1")] = (zlib.decompress(text) if compressed else text).decode("utf-8")
        elif kind == b"IEND":
            break
        i += 12 + n
    return out


# --- the figure in the other editions (issue 31 §2) ------------------------------------------------------------
# The chapters execute once; the Chinese page's figure is drawn in the same execution: the PNG formatter copies
# the figure, turns every word it shows into Chinese (``Edition.figure``: titles, axis labels, the tick labels a
# chapter named, legends, annotations, suptitles, table cells, caption and alt text) from the code catalogue
# locale/zh_CN/LC_MESSAGES/outputs/figures.po, draws the copy with a CJK font (``CJK_RC``) through the same page
# and phone steps, and embeds that PNG (its own phone version inside) in the English one, chunk
# ``EDITION_CHUNK``. course/sphinx_ext.py serves it, its alt text and its caption on the Chinese pages.
#
# A catalogue msgid is a string as a figure shows it, or a template with ``{name}`` fields where the figure shows
# numbers or names the cell computed ("loss after {n} steps"): the walk matches templates and fills the Chinese
# with the very text it matched (numbers are never translated; a field that is itself a catalogue word, e.g.
# "embeddings", is). A string with words that neither matches stays English and is listed in the Chinese PNG
# (``Untranslated``), with the msgids it used (``Catalogue``) and any glyph the font lacked (``Missing glyphs``):
# tests/test_figure_captions.py reads them from the built book.
EDITION_CHUNK = b"zhEd"  # a private PNG chunk: the Chinese edition's PNG inside the figure's PNG
# Debian's fonts-noto-cjk, then DejaVu Sans for what it lacks (ᵀ): a family list, which matplotlib falls back
# along glyph by glyph (a generic "sans-serif" resolves to its first font only); new texts (tick labels) get it
# from these settings, the figure's own texts from ``Edition.figure``
CJK_FONTS = ["Noto Sans CJK SC", "DejaVu Sans"]
CJK_RC = {"font.family": CJK_FONTS, "font.sans-serif": CJK_FONTS}
# The sentences this module writes itself (the alt text's reading of a chart): msgids of figures.po too.
STRUCTURE = ("{items}, ... ({n} in all), {last}", "{a}, {b}", "{a}; {b}", "{a} {b}", "heat map", "rows", "columns",
             "rows ({name}): {items}", "rows: {name}", "columns ({name}): {items}", "columns: {name}", "chart",
             "bar chart of {n} bars", "line chart of {n} lines", "line chart of 1 line", "horizontal axis",
             "vertical axis", "{axis}: {label}", "{axis} ({items})", "series: {items}", "{kind} titled \u201c{title}\u201d",
             "Figure: a {panel}.", "Figure of {n} panels, \u201c{title}\u201d.", "Figure of {n} panels.",
             "Panel {k}: a {panel}.")
_FIELD = re.compile(r"\{(\w+)(?:![rsa])?(?::[^{}]*)?\}")
_MATH = re.compile(r"\$[^$]*\$")
_SPECIAL = re.compile(r"\[(?:CLS|SEP|PAD|MASK|UNK)\]")


def has_words(text: str) -> bool:
    """Whether a figure's string holds words to translate: a run of two lower-case letters outside its formulas
    (``$d_k$``) and special tokens (``[CLS]``). Numbers, symbols, acronyms (BERT, MLM) are the same in Chinese."""
    return re.search(r"[a-z]{2}", _SPECIAL.sub("", _MATH.sub("", text))) is not None


@functools.cache
def _table(language: str) -> dict[str, str]:
    """msgid -> msgstr of the figures' and drawings' catalogues (figures.po, drawings.po) of ``language``: theirs
    only, so that a figure's words change with them (``FIGURES_VERSION``, ``DRAWINGS_VERSION``) and no other
    module's words or templates stand in."""
    folder = editions.outputs(language)
    return {msgid: msgstr for name in ("figures.po", "drawings.po") if (folder / name).is_file()
            for msgid, msgstr in editions.translated(folder / name).items()}


@functools.cache
def _templates(language: str) -> list[tuple[re.Pattern, str, str, dict[str, str]]]:
    """(pattern, msgid, msgstr, group of each field) of every entry with ``{fields}`` and words of ``_table``,
    the most literal text first."""
    out = []
    for msgid, msgstr in _table(language).items():
        if not _FIELD.search(msgid) or not has_words(_FIELD.sub("", msgid)):
            continue  # (a template of fields and punctuation, "{a}, {b}", would match anything)
        pattern, pos, groups = "", 0, {}  # a field's name -> its group's (a name may be "0")
        for m in _FIELD.finditer(msgid):
            name = m.group(1)
            group = groups.setdefault(name, f"f{len(groups)}_{name}" if name.isidentifier() else f"f{len(groups)}")
            pattern += re.escape(msgid[pos:m.start()]) + (f"(?P={group})" if pos and group in pattern else f"(?P<{group}>.+?)")
            pos = m.end()
        out.append((re.compile(pattern + re.escape(msgid[pos:]), re.S), msgid, msgstr, groups))
    return sorted(out, key=lambda t: -len(_FIELD.sub("", t[1])))


class Edition:
    """One language's words for what the figures (and course/drawings.py's drawings) show, from the code
    catalogues; ``used`` the msgids it took, ``missing`` the strings with words it found no translation for."""

    def __init__(self, language: str):
        self.language = language
        self.used: set[str] = set()
        self.missing: set[str] = set()
        self.written: set[str] = set()  # what ``words`` returned: a figure drawn again shows these

    def words(self, text: str) -> str:
        """``text`` in this language: its catalogue entry, or a template's with the matched fields filled in;
        a string without words as it is; else English, recorded in ``missing`` (and ``editions.untranslated``)."""
        if self.language == editions.ENGLISH or not has_words(text) or text in self.written:
            return text
        table = _table(self.language)
        if text in table:
            self.used.add(text)
            self.written.add(table[text])
            return table[text]
        for pattern, msgid, msgstr, groups in _templates(self.language):
            m = pattern.fullmatch(text)
            if m:
                self.used.add(msgid)
                values = {name: m.group(group) for name, group in groups.items()}
                self.used.update(v for v in values.values() if v in table)
                found = _FIELD.sub(lambda f: table.get(values[f.group(1)], values[f.group(1)])
                                   if f.group(1) in values else f.group(0), msgstr)
                self.written.add(found)
                return found
        self.missing.add(text)
        editions.tr(text, self.language)  # recorded for editions.untranslated() too
        return text

    def say(self, msgid: str, **fields) -> str:
        """A sentence this module writes (``msgid`` a template), in this language, its fields filled in."""
        if self.language == editions.ENGLISH:
            return msgid.format(**fields)
        found = _table(self.language).get(msgid)
        if found is None:
            self.missing.add(msgid)
            editions.tr(msgid, self.language)
            found = msgid
        else:
            self.used.add(msgid)
        return found.format(**fields)

    def figure(self, fig):
        """A copy of ``fig`` whose every word is in this language (its caption and alt text too)."""
        from matplotlib.table import Table
        from matplotlib.text import Text
        from matplotlib.ticker import FixedFormatter, FuncFormatter

        new = _copy(fig)
        for attr in ("_course_caption", "_course_alt"):
            if getattr(new, attr, None):
                setattr(new, attr, self.words(getattr(new, attr)))
        keep = set().union(*(getattr(ax, "_course_keep", ()) for ax in new.get_axes()))

        def words(text: str) -> str:
            return text if text in keep else self.words(text)

        for ax in new.get_axes():
            for axis in (ax.xaxis, ax.yaxis):
                for which in (axis.major, axis.minor):  # the names a chapter gave its ticks, drawn again from these
                    form = which.formatter
                    if isinstance(form, FixedFormatter):
                        form.seq = [words(str(s)) for s in form.seq]
                    elif isinstance(form, FuncFormatter) and isinstance(form.func, functools.partial) and \
                            isinstance(form.func.args[0], dict):  # set_ticks(locations, labels)'s table
                        names = {k: words(str(v)) for k, v in form.func.args[0].items()}
                        form.func = functools.partial(form.func.func, names, *form.func.args[1:])
        for ax in new.get_axes():  # the series' names, from which a legend drawn again (for a phone) takes its words
            for artist in [*ax.get_children(), *ax.containers]:  # (a bar chart's series: its container)
                label = artist.get_label()
                if isinstance(label, str) and label and not label.startswith("_") and not isinstance(artist, Text):
                    artist.set_label(words(label))
        texts = set(new.findobj(Text))
        for table in new.findobj(Table):
            texts.update(cell.get_text() for cell in table.get_celld().values())
        for text in texts:
            if text.get_text():
                text.set_text(words(text.get_text()))
            if text.get_fontfamily() == ["sans-serif"]:  # (the default; a family a chapter chose stays)
                text.set_fontfamily(CJK_FONTS)
        return new

    def png_text(self) -> dict[str, str]:
        """What the edition's PNG says of its words: the language, the msgids used (and a digest of their
        translations), the strings left English."""
        import json

        return {"Language": self.language, "Catalogue": json.dumps(sorted(self.used), ensure_ascii=False),
                "Words": self.digest(self.used),
                **({"Untranslated": json.dumps(sorted(self.missing))} if self.missing else {})}

    def digest(self, msgids) -> str:
        table = _table(self.language)
        return hashlib.sha256("\0".join(f"{m}\0{table.get(m, '')}" for m in sorted(msgids)).encode()).hexdigest()[:12]


def figure_current(png: bytes) -> bool:
    """Whether a stored figure is what the chapter would draw now: drawn by this module as it is
    (``FIGURES_VERSION``), and each edition's words as the catalogues give them (every msgid it used translated as
    then, every string it left English still without a translation). course/build.py executes a chapter again
    whose figures are not."""
    import json

    text = png_text(png)
    if "Description" not in text:
        return True  # not a figure a chapter drew
    if text.get("Course figures") != FIGURES_VERSION:
        return False
    other = split_edition(png)[1]
    if other is None:
        return True  # a PNG with no other edition inside (none in the book: each figure carries its Chinese copy)
    text = png_text(other)
    edition = Edition(text.get("Language", ""))
    if edition.digest(json.loads(text.get("Catalogue", "[]"))) != text.get("Words"):
        return False
    return all(edition.words(s) == s for s in json.loads(text.get("Untranslated", "[]")))


_ENGLISH = Edition("en")  # English: the source, every template as written


def keep_words(ax, words: Sequence[str]) -> None:
    """Say that ``words`` (a heat map's tokens, an example's sentence) are drawn as they are in every edition:
    the example the model reads, not words of the book."""
    ax._course_keep = getattr(ax, "_course_keep", frozenset()) | {str(w) for w in words}


def shown_words(fig) -> list[str]:
    """Every string with words the drawn figure shows (titles, labels, tick labels, legends, notes, cells)."""
    from matplotlib.table import Table
    from matplotlib.text import Text

    _renderer(fig)
    fig.draw_without_rendering()  # the tick labels as their formatters write them
    texts = [t for t in fig.findobj(Text) if t.get_visible()]
    for table in fig.findobj(Table):
        texts += [cell.get_text() for cell in table.get_celld().values()]
    return [t.get_text() for t in texts if has_words(t.get_text())]


def with_edition(png: bytes, edition: bytes) -> bytes:
    """``png`` carrying another edition's PNG (``edition``) in a chunk of its own, before its end."""
    end = png.rindex(b"IEND") - 4
    return png[:end] + _chunk(EDITION_CHUNK, edition) + png[end:]


def split_edition(png: bytes) -> tuple[bytes, bytes | None]:
    """(the PNG without the other edition's, the other edition's PNG or None)."""
    return _split_chunk(png, EDITION_CHUNK)


def with_text(png: bytes, text: dict[str, str]) -> bytes:
    """``png`` with more text chunks (iTXt, UTF-8), before its end."""
    end = png.rindex(b"IEND") - 4
    chunks = b"".join(_chunk(b"iTXt", key.encode("latin-1") + b"\0\0\0\0\0" + value.encode("utf-8"))
                      for key, value in text.items())
    return png[:end] + chunks + png[end:]
