"""Small display helpers the chapters share: one palette, PNG bytes for widgets, two heat maps, an HTML
table (the book does not depend on pandas), and the words that describe a figure to a reader who cannot see it.

Every function takes the Axes (or Figure) it draws on and returns it, so a chapter stays in control of
its layout. Nothing here needs a running kernel: the figures are what a reader of the static page sees.

Figure descriptions: ``course.book_setup()`` calls ``describe_figures()``, so every matplotlib figure a
chapter shows is saved as a PNG that carries its caption (PNG ``Title``: the figure's suptitle, or its panels'
titles) and its alt text (PNG ``Description``: what kind of chart each panel is, its title, axes and
categories), both read from the figure itself (``describe_figure``). course/sphinx_ext.py reads them back
from the PNG and gives every figure of the page its alt text and a caption. A chapter may set its own
words with ``describe(fig, caption=..., alt=...)`` before showing the figure.
"""
from __future__ import annotations

import io
from collections.abc import Sequence

import matplotlib
import matplotlib.pyplot as plt
import numpy as np

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
    """Set a figure's caption and/or alt text by hand (otherwise ``describe_figure`` reads them from it)."""
    if caption is not None:
        fig._course_caption = str(caption)
    if alt is not None:
        fig._course_alt = str(alt)
    return fig


def _words(items: Sequence[str], most: int = 8) -> str:
    items = [i for i in (str(x).strip() for x in items) if i]
    if len(items) > most:
        return ", ".join(items[:most - 2]) + f", ... ({len(items)} in all), " + items[-1]
    return ", ".join(items)


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


def _panel(ax) -> str:
    """One Axes in words: its kind of chart, title, axes and categories."""
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
        kind = "heat map"
        rows, cols = yt, xt
        detail = []
        if rows:
            detail.append(f"rows ({ylabel or 'rows'}): {_words(rows)}")
        elif ylabel:
            detail.append(f"rows: {ylabel}")
        if cols:
            detail.append(f"columns ({xlabel or 'columns'}): {_words(cols)}")
        elif xlabel:
            detail.append(f"columns: {xlabel}")
    else:
        kind = "bar chart" if bars and len(bars) >= len(lines) else "line chart" if lines else "chart"
        if kind == "bar chart" and len(bars) > 0:
            kind = f"bar chart of {len(bars)} bars"
        elif kind == "line chart":
            kind = f"line chart of {len(lines)} line{'s' if len(lines) > 1 else ''}"
        detail = []
        if xlabel or xt:
            detail.append("horizontal axis" + (f": {plain_text(xlabel)}" if xlabel else "") + (f" ({_words(xt)})" if xt else ""))
        if ylabel or yt:
            detail.append("vertical axis" + (f": {plain_text(ylabel)}" if ylabel else "") + (f" ({_words(yt)})" if yt else ""))
    if series:
        detail.append(f"series: {_words(series)}")
    text = kind + (f" titled \u201c{title}\u201d" if title else "")
    return text + ("; " + "; ".join(detail) if detail else "")


def _panels(fig) -> list:
    """The figure's Axes that are panels (not colour bars)."""
    return [ax for ax in fig.get_axes() if ax.get_label() != "<colorbar>" and ax.get_visible()
            and not hasattr(ax, "_colorbar")]


def describe_figure(fig) -> tuple[str, str]:
    """(caption, alt text) of a matplotlib figure, read from what it draws: the caption is its suptitle, or
    its panels' titles; the alt text says what each panel is (kind, title, axes, categories, series)."""
    panels = _panels(fig)
    sup = fig._suptitle.get_text() if getattr(fig, "_suptitle", None) is not None else ""
    titles = [t for t in (ax.get_title() for ax in panels) if t]
    caption = getattr(fig, "_course_caption", None) or sup or "; ".join(titles)
    alt = getattr(fig, "_course_alt", None)
    if alt is None:
        if len(panels) == 1:
            alt = "Figure: a " + _panel(panels[0]) + "."
        else:
            alt = f"Figure of {len(panels)} panels" + (f", \u201c{sup}\u201d" if sup else "") + ". " + " ".join(
                f"Panel {k + 1}: a {_panel(ax)}." for k, ax in enumerate(panels))
    if not caption:
        caption = alt
    return caption, alt


def _png_described(fig, **kwargs):
    """The inline backend's PNG (base64), carrying the figure's caption and alt text as PNG text chunks."""
    from IPython.core.pylabtools import print_figure

    caption, alt = describe_figure(fig)
    return print_figure(fig, "png", base64=True, metadata={"Title": caption, "Description": alt},
                        pil_kwargs={"optimize": True}, **kwargs)  # optimize: a smaller file, the same pixels


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
