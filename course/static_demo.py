"""Demos a reader operates in the static page: every state computed at build time, shown by a little
JavaScript, with no kernel and no network.

    from course.static_demo import StaticDemo, Slider, Select, Buttons
    StaticDemo(demo_id="padding",
               controls=[Slider("n_pad", "padding tokens", values=[0, 1, 2, 3]),
                         Select("mask", "mask", options=["on", "off"])],
               state=callable)            # state(n_pad=..., mask=...) -> {"caption": str, "figure"?, "html"?}

``state`` is called once for every combination of control values when the cell runs (at build time) and
must return a dict with ``"caption"`` (one line naming the key number of that state; the page test compares
it with Python), and optionally ``"figure"`` (a plotly Figure or its dict) and/or ``"html"`` (a string or an
object with ``_repr_html_``, e.g. ``course.plots.html_table``). Displaying the StaticDemo in a cell renders it:
the controls, the caption, the figure and the table of the default state, and the states as JSON.

A demo's live version (its module's ``make_demo()``, for JupyterLab) shows the very figure a state returns, from
the same function, through ``course.demos._live`` (which reuses ``_figure_json``).

The page's JavaScript (``course/_static/static_demo.js``) and Plotly's (``plotly.min.js`` from the installed
plotly package) are added by ``course.sphinx_ext`` to the pages that hold a demo, and nowhere else.

Payload: figures, layouts and tables that several states share are stored once (``pool``) and referenced by
index, so a demo whose states differ only in their data does not repeat the layout.

The HTML carries data attributes for the page test (tests/test_pages.py): ``data-demo`` (the id) on the
container, ``data-demo-control`` (the control's name) and ``data-demo-kind`` on each control,
``data-demo-caption``, ``data-demo-figure`` and ``data-demo-html`` on the parts, and ``data-demo-indices``
(the JSON list of each control's current value index) on the container, updated by the script.
"""
from __future__ import annotations

import html as _html
import itertools
import json
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

# Shown where the page's script is absent (a notebook in JupyterLab); course.css and the script hide it.
_FROZEN = ("<em>The book's page runs this demo; here it shows its first state only. "
           "The chapter's live (ipywidgets) version follows in the notebook.</em>")
MAX_STATES = 2000  # a bigger product of control values is a mistake (a page of tens of MB)
_ID = re.compile(r"^[a-z][a-z0-9]*(-[a-z0-9]+)*$")  # named by topic (a chapter number would go stale)


@dataclass
class _Control:
    name: str
    label: str
    values: list = field(default_factory=list)
    default: Any = None
    labels: list[str] | None = None  # what the reader sees for each value (default: str(value))
    kind = "control"

    def __post_init__(self):
        self.values = list(self.values)
        if not self.name.isidentifier():
            raise ValueError(f"control name {self.name!r} is not a Python identifier (it is state()'s keyword)")
        if not self.values:
            raise ValueError(f"control {self.name!r} has no values")
        if len(set(map(repr, self.values))) != len(self.values):
            raise ValueError(f"control {self.name!r} repeats a value: {self.values}")
        if self.labels is None:
            self.labels = [str(v) for v in self.values]
        self.labels = [str(lab) for lab in self.labels]
        if len(self.labels) != len(self.values):
            raise ValueError(f"control {self.name!r}: {len(self.labels)} labels for {len(self.values)} values")
        if self.default is None:
            self.default = self.values[0]
        if self.default not in self.values:
            raise ValueError(f"control {self.name!r}: default {self.default!r} is not one of {self.values}")

    @property
    def default_index(self) -> int:
        return self.values.index(self.default)

    def value_text(self, i: int) -> str:
        """What a screen reader says for value i (a slider's aria-valuetext): the label and the value."""
        return f"{self.label} = {self.labels[i]}"

    def spec(self) -> dict:
        return {"name": self.name, "kind": self.kind, "labels": self.labels,
                "texts": [self.value_text(i) for i in range(len(self.values))]}


@dataclass
class Slider(_Control):
    """A range input over ``values`` (in order); shows the current value's label beside it."""
    kind = "slider"


class Select(_Control):
    """A drop-down over ``options``."""
    kind = "select"

    def __init__(self, name: str, label: str, options: Sequence, default: Any = None,
                 labels: Sequence[str] | None = None):
        super().__init__(name, label, list(options), default, None if labels is None else list(labels))

    @property
    def options(self) -> list:
        return self.values


class Buttons(Select):
    """A row of buttons, one per option (the pressed one is the current value)."""
    kind = "buttons"


def _as_html(obj) -> str:
    if obj is None:
        return ""
    if isinstance(obj, str):
        return obj
    if hasattr(obj, "_repr_html_"):
        return obj._repr_html_()
    raise TypeError(f"a state's 'html' must be a str or have _repr_html_, not {type(obj).__name__}")


def _figure_json(fig) -> tuple[str, str]:
    """(data JSON, layout JSON) of a plotly Figure or figure dict, with no template (the page's script
    applies colours that follow the light or dark theme)."""
    from plotly.utils import PlotlyJSONEncoder

    obj = fig.to_plotly_json() if hasattr(fig, "to_plotly_json") else dict(fig)
    layout = {k: v for k, v in (obj.get("layout") or {}).items() if k != "template"}

    def dumps(x):
        return json.dumps(x, cls=PlotlyJSONEncoder, separators=(",", ":"))

    return dumps(list(obj.get("data") or [])), dumps(layout)


def figure_label(layout: dict, title: str | None, caption: str) -> str:
    """A demo figure's name for a screen reader (its aria-label): the chart's title (or the demo's), then the
    state's caption, which names the state's key number. static_demo.js builds the same text on every change."""
    t = layout.get("title")
    text = (t.get("text") if isinstance(t, dict) else t) or title or "chart"
    text = re.sub(r"<[^>]+>", " ", str(text))
    return re.sub(r"\s+", " ", f"Chart: {text}. {caption}").strip()


class StaticDemo:
    """A demo whose every state is computed now and shown in the page without a kernel."""

    def __init__(self, demo_id: str, controls: Sequence[_Control], state: Callable[..., dict],
                 title: str | None = None):
        if not _ID.match(demo_id):
            raise ValueError(f"demo_id {demo_id!r} must be lowercase words joined by hyphens, named by topic (e.g. 'padding')")
        controls = list(controls)
        if not controls:
            raise ValueError(f"{demo_id}: a demo needs at least one control")
        names = [c.name for c in controls]
        if len(set(names)) != len(names):
            raise ValueError(f"{demo_id}: two controls share a name: {names}")
        n = 1
        for c in controls:
            n *= len(c.values)
        if n > MAX_STATES:
            raise ValueError(f"{demo_id}: {n} states (more than {MAX_STATES}); offer fewer values")
        self.demo_id, self.controls, self.state, self.title = demo_id, controls, state, title
        self.n_states = n
        self._payload: dict | None = None

    # --- Python side: the states, as the page test and the chapters' tests rebuild them ----------------------

    def combinations(self):
        """Every combination of value indices, in the page's order (the last control varies fastest)."""
        return itertools.product(*(range(len(c.values)) for c in self.controls))

    def values_at(self, indices: Sequence[int]) -> dict:
        """The keyword arguments of state() for these value indices."""
        return {c.name: c.values[i] for c, i in zip(self.controls, indices)}

    def state_at(self, indices: Sequence[int]) -> dict:
        values = self.values_at(indices)
        out = self.state(**values)
        if not isinstance(out, dict) or not isinstance(out.get("caption"), str) or not out["caption"].strip():
            raise TypeError(f"{self.demo_id}: state({values}) must return a dict with a non-empty str 'caption'")
        unknown = set(out) - {"caption", "figure", "html"}
        if unknown:
            raise TypeError(f"{self.demo_id}: state({values}) returned unknown keys {sorted(unknown)}")
        return out

    def caption(self, **values) -> str:
        """The caption the page shows for these control values."""
        return self.state_at([c.values.index(values[c.name]) for c in self.controls])["caption"]

    def payload(self) -> dict:
        """Everything the page's script needs (computed once)."""
        if self._payload is not None:
            return self._payload
        pool: list[str] = []
        where: dict[str, int] = {}

        def ref(text: str | None):
            if text is None:
                return None
            if text not in where:
                where[text] = len(pool)
                pool.append(text)
            return where[text]

        states, figures = [], {}  # figures: id -> (figure, JSON); a figure several states return is dumped once
        for indices in self.combinations():
            out = self.state_at(indices)
            entry: dict[str, Any] = {"caption": out["caption"]}
            if out.get("figure") is not None:
                fig = out["figure"]
                if id(fig) not in figures:
                    figures[id(fig)] = (fig, _figure_json(fig))
                data, layout = figures[id(fig)][1]
                entry["data"], entry["layout"] = ref(data), ref(layout)
            if out.get("html") is not None:
                entry["html"] = ref(_as_html(out["html"]))
            states.append(entry)
        self._payload = {
            "id": self.demo_id,
            "controls": [c.spec() for c in self.controls],
            "default": [c.default_index for c in self.controls],
            "states": states,
            "pool": pool,
        }
        return self._payload

    def index_of(self, indices: Sequence[int]) -> int:
        """Position of a combination in payload()['states'] (mixed radix, last control fastest)."""
        k = 0
        for c, i in zip(self.controls, indices):
            k = k * len(c.values) + i
        return k

    # --- the page ----------------------------------------------------------------------------------------------

    def _control_html(self, c: _Control) -> str:
        e = _html.escape
        attrs = f'class="demo-control demo-{c.kind}" data-demo-control="{e(c.name)}" data-demo-kind="{c.kind}"'
        label = f'<span class="demo-label">{e(c.label)}</span>'
        d = c.default_index
        if c.kind == "slider":
            return (f'<label {attrs}>{label}<input type="range" min="0" max="{len(c.values) - 1}" step="1" '
                    f'value="{d}" aria-label="{e(c.label)}" aria-valuetext="{e(c.value_text(d))}">'
                    f'<output class="demo-value">{e(c.labels[d])}</output></label>')
        if c.kind == "select":
            options = "".join(f'<option value="{i}"{" selected" if i == d else ""}>{e(lab)}</option>'
                              for i, lab in enumerate(c.labels))
            return f'<label {attrs}>{label}<select aria-label="{e(c.label)}">{options}</select></label>'
        buttons = "".join(f'<button type="button" data-demo-index="{i}" aria-pressed="{str(i == d).lower()}">'
                          f'{e(lab)}</button>' for i, lab in enumerate(c.labels))
        return f'<div {attrs} role="group" aria-label="{e(c.label)}">{label}{buttons}</div>'

    def to_html(self) -> str:
        p = self.payload()
        first = p["states"][self.index_of(p["default"])]
        data = json.dumps(p, separators=(",", ":")).replace("</", "<\\/")  # no "</script>" inside the JSON
        e = _html.escape
        table = p["pool"][first["html"]] if "html" in first else ""
        figure = ""
        if any("data" in s for s in p["states"]):  # Plotly draws it; for a screen reader it is one image
            label = figure_label(json.loads(p["pool"][first["layout"]]) if "layout" in first else {},
                                 self.title, first["caption"])
            figure = f'<div class="demo-figure" data-demo-figure role="img" aria-label="{e(label)}"></div>'
        title = f'<p class="demo-title">{e(self.title)}</p>' if self.title else ""
        return (f'<div class="static-demo" id="demo-{e(self.demo_id)}" data-demo="{e(self.demo_id)}" '
                f'data-demo-indices="{e(json.dumps(p["default"]))}">{title}'
                f'<div class="demo-controls">{"".join(self._control_html(c) for c in self.controls)}</div>'
                f'<p class="demo-caption" data-demo-caption aria-live="polite">{e(first["caption"])}</p>'
                f'<p class="demo-frozen">{_FROZEN}</p>'
                f'{figure}<div class="demo-html" data-demo-html>{table}</div>'
                f'<script type="application/json" data-demo-payload>{data}</script></div>')

    def _repr_html_(self) -> str:
        return self.to_html()

    def __repr__(self) -> str:
        return f"StaticDemo({self.demo_id!r}, {self.n_states} states)"
