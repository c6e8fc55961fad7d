"""Small display helpers the chapters share: one palette, PNG bytes for widgets, two heat maps, and an
HTML table (the book does not depend on pandas).

Every function takes the Axes (or Figure) it draws on and returns it, so a chapter stays in control of
its layout. Nothing here needs a running kernel: the figures are what a reader of the static page sees.
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
        lo, hi = np.nanmin(matrix), np.nanmax(matrix)
        mid = (lo + hi) / 2
        for (i, j), v in np.ndenumerate(matrix):
            ax.text(j, i, fmt.format(v), ha="center", va="center", fontsize=8,
                    color="white" if v < mid else "black")
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
