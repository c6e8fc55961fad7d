"""What the live demos (each module's ``make_demo()``) share: the page's chart, shown in JupyterLab.

A demo's chart is one function returning a ``plotly.graph_objects.Figure``, usually inside a state function
(``state(**values) -> {"caption", "figure"?, "html"?}``). ``static_demos()`` stores every state
(course.static_demo); ``make_demo()`` builds a ``panel`` on the same state function, which redraws the state's
line, figure and table on each change: the figure in an ``ipywidgets.Output``, as Plotly's MIME bundle
(``application/vnd.plotly.v1+json``), which JupyterLab draws offline with the jupyterlab-plotly extension (no
CDN, no anywidget). The bundle holds the JSON the page stores (``static_demo._figure_json``), so the two cannot
differ.

The page's script (``static_demo.js``, ``themed()``) colours a chart for the page's light or dark theme;
JupyterLab's Plotly renderer follows no theme, so the live bundle carries a template of its own that reads on
both: transparent paper and plot, a mid-grey ink (4.5:1 on white, 4.2:1 on JupyterLab's dark #111) and a
translucent grid. The page drops every template (``_figure_json``), so this one never reaches it.
"""
from __future__ import annotations

import html
import json
from collections.abc import Callable, Sequence

from course.static_demo import _as_html, _figure_json

MIME = "application/vnd.plotly.v1+json"
INK = "#767676"
GRID = "rgba(128,128,128,0.3)"
_AXIS = {"gridcolor": GRID, "zerolinecolor": GRID, "linecolor": GRID}
LIVE_TEMPLATE = {"layout": {"paper_bgcolor": "rgba(0,0,0,0)", "plot_bgcolor": "rgba(0,0,0,0)",
                            "font": {"color": INK}, "xaxis": _AXIS, "yaxis": _AXIS}}


def figure_bundle(fig) -> dict:
    """The MIME bundle JupyterLab draws ``fig`` from: the page's JSON of it, with the live template."""
    data, layout = (json.loads(s) for s in _figure_json(fig))
    layout["template"] = LIVE_TEMPLATE
    title = layout.get("title")
    text = (title.get("text") if isinstance(title, dict) else title) or "a Plotly chart"
    # not Plotly's responsive config: in an Output built before it is displayed, the chart then stays 0 px high
    # until the window resizes (seen in JupyterLab 4.6 with jupyterlab-plotly; the renderer resizes it anyway)
    return {MIME: {"data": data, "layout": layout, "config": {"displayModeBar": False}},
            "text/plain": f"<Figure: {text}>"}


def figure_output():
    """An empty ``ipywidgets.Output`` for ``show``."""
    import ipywidgets as widgets

    return widgets.Output()


def show(output, fig) -> None:
    """Replace what ``output`` shows by ``fig`` (or by nothing when ``fig`` is None). Setting the widget's
    ``outputs`` works with or without a kernel, so the tests read back exactly what a reader sees."""
    output.outputs = () if fig is None else (
        {"output_type": "display_data", "data": figure_bundle(fig), "metadata": {}},)


def shown(output) -> tuple[str, str] | None:
    """(data JSON, layout JSON without the live template) of the figure ``output`` shows, in the form the page
    stores it (``static_demo._figure_json``); None when it shows none. The demo tests compare the two."""
    bundles = [o["data"][MIME] for o in output.outputs if MIME in o.get("data", {})]
    if not bundles:
        return None
    (fig,) = bundles
    layout = {k: v for k, v in fig["layout"].items() if k != "template"}
    return _figure_json({"data": fig["data"], "layout": layout})


def caption_html(caption: str) -> str:
    """A state's caption as the live line shows it: escaped, in ``<code>``, one per line of the caption."""
    return "<br>".join(f"<code>{html.escape(line, quote=False)}</code>" for line in caption.split("\n"))


def panel(controls: dict, state: Callable[..., dict], rows: Sequence | None = None):
    """The live twin of one page demo: ``controls`` (state argument name -> ipywidget) over the line, figure
    and table that ``state(**values)`` returns for their values (the page's state function, or one taking more
    controls), redrawn on every change.

    Returns ``VBox([controls, line, figure, table])``: the controls in an HBox, or in a VBox of ``rows`` (each a
    widget, or a sequence of widgets side by side; they may hold widgets of the demo's own, e.g. preset buttons,
    but must hold every control), the caption (``caption_html``), the figure (``figure_output``) and the table
    (an HTML widget, hidden while the state has none). A ValueError from ``state`` (input it cannot take) takes
    the line's place, with neither figure nor table."""
    import ipywidgets as widgets

    if rows is None:
        box = widgets.HBox(list(controls.values()))
    else:
        rows = [r if isinstance(r, widgets.Widget) else widgets.HBox(list(r)) for r in rows]
        box = widgets.VBox(rows)
        shown_ids = {id(w) for r in rows for w in (r.children if isinstance(r, widgets.HBox) else (r,))}
        missing = [name for name, w in controls.items() if id(w) not in shown_ids]
        if missing:
            raise ValueError(f"rows must show every control; missing: {', '.join(missing)}")
    line, figure, table = widgets.HTML(), figure_output(), widgets.HTML()

    def draw(_=None):
        try:
            out = state(**{name: w.value for name, w in controls.items()})
        except ValueError as err:
            out = {"caption": str(err)}
        line.value = caption_html(out["caption"])
        show(figure, out.get("figure"))
        table.value = _as_html(out.get("html"))
        table.layout.display = "" if table.value else "none"

    for w in controls.values():
        w.observe(draw, names="value")
    draw()
    return widgets.VBox([box, line, figure, table])
