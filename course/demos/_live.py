"""What the live demos (each module's ``make_demo()``) share: the page's chart, shown in JupyterLab.

A demo's chart is one function returning a ``plotly.graph_objects.Figure``. ``static_demos()`` stores it for
every state (course.static_demo); ``make_demo()`` shows the very same figure in an ``ipywidgets.Output`` on each
change, as Plotly's MIME bundle (``application/vnd.plotly.v1+json``), which JupyterLab draws offline with the
jupyterlab-plotly extension (no CDN, no anywidget). The bundle holds the JSON the page stores
(``static_demo._figure_json``), so the two cannot differ.

The page's script (``static_demo.js``, ``themed()``) colours a chart for the page's light or dark theme;
JupyterLab's Plotly renderer follows no theme, so the live bundle carries a template of its own that reads on
both: transparent paper and plot, a mid-grey ink (4.5:1 on white, 4.2:1 on JupyterLab's dark #111) and a
translucent grid. The page drops every template (``_figure_json``), so this one never reaches it.
"""
from __future__ import annotations

import json

from course.static_demo import _figure_json

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
