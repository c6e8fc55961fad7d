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

Two editions (issue 31 §2, course/editions.py): the chapter executes once and displaying a StaticDemo gives both
editions' HTML (``editions.both``), each with its own payload; the page keeps its own. What is English in a demo
reaches Chinese through ``editions.tr`` and the code catalogue ``locale/zh_CN/LC_MESSAGES/outputs/<yours>.po``
(msgid the English exactly as written, ``{name}`` fields for what code fills in; numbers are never translated):

* the demo's ``title``, each control's ``label`` and the page's fixed words go through ``tr`` here;
* a control's value ``labels`` go through ``tr`` only with ``words=True`` (``Select(..., options=["on", "off"],
  words=True)``), and then only those with a letter ("none" beside "8"); without it, labels that are numbers or
  tokens ("3: cute") are shown as they are;
* a ``state`` that takes a ``language`` keyword is called once per edition, ``state(**values, language="en")``
  then ``language="zh_CN"``, and writes its caption, figure (titles, axes, legends, hover text) and table in
  that language with ``tr``. Compute the numbers once: put the expensive part in a function of the control
  values cached with ``functools.cache`` and let ``state`` only word it::

      @functools.cache
      def numbers(position):            # the model's work, once per state
          ...
      def state(position, language="en"):
          n = numbers(position)
          return {"caption": tr("query {q} reads {k} keys", language).format(q=position, k=n.keys),
                  "figure": plot(n, language)}

  (the default ``language="en"`` keeps the live demo, ``course.demos._live``, calling ``state(**values)``).
  A ``state`` without ``language`` is called once and both editions show its words as written (English).

``state_at``, ``caption``, ``payload`` and ``to_html`` take ``language`` (default English), so a test can ask
for what the Chinese page shows. "language" is therefore no control's name.

The HTML carries data attributes for the page test (tests/test_pages.py): ``data-demo`` (the id) on the
container, ``data-demo-control`` (the control's name) and ``data-demo-kind`` on each control,
``data-demo-caption``, ``data-demo-figure`` and ``data-demo-html`` on the parts, and ``data-demo-indices``
(the JSON list of each control's current value index) on the container, updated by the script.
"""
from __future__ import annotations

import html as _html
import inspect
import itertools
import json
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from course.editions import ENGLISH, both, tr

# Shown where the page's script is absent (a notebook in JupyterLab); course.css and the script hide it.
_FROZEN = ("The book's page runs this demo; here it shows its first state only. "
           "The chapter's live (ipywidgets) version follows in the notebook.")
MAX_STATES = 2000  # a bigger product of control values is a mistake (a page of tens of MB)
_LETTER = re.compile(r"[^\W\d_]")  # a letter of any script
_ID = re.compile(r"^[a-z][a-z0-9]*(-[a-z0-9]+)*$")  # named by topic (a chapter number would go stale)


@dataclass
class _Control:
    name: str
    label: str
    values: list = field(default_factory=list)
    default: Any = None
    labels: list[str] | None = None  # what the reader sees for each value (default: str(value))
    words: bool = False  # the labels are words: each edition shows them through editions.tr
    kind = "control"

    def __post_init__(self):
        self.values = list(self.values)
        if not self.name.isidentifier():
            raise ValueError(f"control name {self.name!r} is not a Python identifier (it is state()'s keyword)")
        if self.name == "language":
            raise ValueError("'language' is state()'s edition keyword, not a control's name")
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

    def shown_label(self, language: str = ENGLISH) -> str:
        """The control's name as ``language``'s page shows it."""
        return tr(self.label, language)

    def shown_labels(self, language: str = ENGLISH) -> list[str]:
        """Each value's label as ``language``'s page shows it: translated when ``words`` and it has a letter
        (a number among words, "8" beside "none", is the same in every edition)."""
        return [tr(lab, language) if self.words and _LETTER.search(lab) else lab for lab in self.labels]

    def value_text(self, i: int, language: str = ENGLISH) -> str:
        """What a screen reader says for value i (a slider's aria-valuetext): the label and the value."""
        return f"{self.shown_label(language)} = {self.shown_labels(language)[i]}"

    def spec(self, language: str = ENGLISH) -> dict:
        return {"name": self.name, "kind": self.kind, "labels": self.shown_labels(language),
                "texts": [self.value_text(i, language) for i in range(len(self.values))]}


@dataclass
class Slider(_Control):
    """A range input over ``values`` (in order); shows the current value's label beside it."""
    kind = "slider"


class Select(_Control):
    """A drop-down over ``options``."""
    kind = "select"

    def __init__(self, name: str, label: str, options: Sequence, default: Any = None,
                 labels: Sequence[str] | None = None, words: bool = False):
        super().__init__(name, label, list(options), default, None if labels is None else list(labels), words)

    @property
    def options(self) -> list:
        return self.values


class Buttons(Select):
    """A row of buttons, one per option (the pressed one is the current value)."""
    kind = "buttons"


def _takes_language(state: Callable) -> bool:
    """Whether ``state`` names a ``language`` parameter (see the module's docstring; a ``**values`` catch-all
    does not count, so such a state never receives a keyword it did not ask for)."""
    try:
        return "language" in inspect.signature(state).parameters
    except (TypeError, ValueError):  # a builtin: no signature to read
        return False


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


CHART = "Chart: {title}. {caption}"  # a figure's aria-label; static_demo.js fills the page's edition's template


def figure_label(layout: dict, title: str | None, caption: str, language: str = ENGLISH) -> str:
    """A demo figure's name for a screen reader (its aria-label): the chart's title (or the demo's), then the
    state's caption, which names the state's key number. static_demo.js builds the same text on every change."""
    t = layout.get("title")
    text = (t.get("text") if isinstance(t, dict) else t) or title or tr("chart", language)
    text = re.sub(r"<[^>]+>", " ", str(text))
    return re.sub(r"\s+", " ", tr(CHART, language).format(title=text, caption=caption)).strip()


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
        self.bilingual = _takes_language(state)  # state(**values, language=...) words each edition itself
        self._payloads: dict[str, dict] = {}

    # --- Python side: the states, as the page test and the chapters' tests rebuild them ----------------------

    def combinations(self):
        """Every combination of value indices, in the page's order (the last control varies fastest)."""
        return itertools.product(*(range(len(c.values)) for c in self.controls))

    def values_at(self, indices: Sequence[int]) -> dict:
        """The keyword arguments of state() for these value indices."""
        return {c.name: c.values[i] for c, i in zip(self.controls, indices)}

    def state_at(self, indices: Sequence[int], language: str = ENGLISH) -> dict:
        """What ``state`` returns for these value indices in ``language``'s edition (a state without a
        ``language`` keyword is the same in every edition)."""
        values = self.values_at(indices)
        out = self.state(**values, language=language) if self.bilingual else self.state(**values)
        if not isinstance(out, dict) or not isinstance(out.get("caption"), str) or not out["caption"].strip():
            raise TypeError(f"{self.demo_id}: state({values}) must return a dict with a non-empty str 'caption'")
        unknown = set(out) - {"caption", "figure", "html"}
        if unknown:
            raise TypeError(f"{self.demo_id}: state({values}) returned unknown keys {sorted(unknown)}")
        return out

    def caption(self, language: str = ENGLISH, **values) -> str:
        """The caption ``language``'s page shows for these control values."""
        return self.state_at([c.values.index(values[c.name]) for c in self.controls], language)["caption"]

    def payload(self, language: str = ENGLISH) -> dict:
        """Everything ``language``'s page script needs (computed once per edition; a state without
        ``language`` is computed once for all editions)."""
        if language in self._payloads:
            return self._payloads[language]
        # the page's words in this edition: the controls and the figure's aria-label template (static_demo.js)
        worded = {"controls": [c.spec(language) for c in self.controls], "chart": tr(CHART, language),
                  "untitled": tr("chart", language)}
        if not self.bilingual and language != ENGLISH:
            self._payloads[language] = {**self.payload(ENGLISH), **worded}
            return self._payloads[language]
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
            out = self.state_at(indices, language)
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
        self._payloads[language] = {
            "id": self.demo_id,
            "controls": worded["controls"],
            "default": [c.default_index for c in self.controls],
            "states": states,
            "pool": pool,
            "chart": worded["chart"],
            "untitled": worded["untitled"],
        }
        return self._payloads[language]

    def index_of(self, indices: Sequence[int]) -> int:
        """Position of a combination in payload()['states'] (mixed radix, last control fastest)."""
        k = 0
        for c, i in zip(self.controls, indices):
            k = k * len(c.values) + i
        return k

    # --- the page ----------------------------------------------------------------------------------------------

    def _control_html(self, c: _Control, language: str = ENGLISH) -> str:
        e = _html.escape
        attrs = f'class="demo-control demo-{c.kind}" data-demo-control="{e(c.name)}" data-demo-kind="{c.kind}"'
        name, labels = c.shown_label(language), c.shown_labels(language)
        label = f'<span class="demo-label">{e(name)}</span>'
        d = c.default_index
        if c.kind == "slider":
            return (f'<label {attrs}>{label}<input type="range" min="0" max="{len(c.values) - 1}" step="1" '
                    f'value="{d}" aria-label="{e(name)}" aria-valuetext="{e(c.value_text(d, language))}">'
                    f'<output class="demo-value">{e(labels[d])}</output></label>')
        if c.kind == "select":
            options = "".join(f'<option value="{i}"{" selected" if i == d else ""}>{e(lab)}</option>'
                              for i, lab in enumerate(labels))
            return f'<label {attrs}>{label}<select aria-label="{e(name)}">{options}</select></label>'
        buttons = "".join(f'<button type="button" data-demo-index="{i}" aria-pressed="{str(i == d).lower()}">'
                          f'{e(lab)}</button>' for i, lab in enumerate(labels))
        return f'<div {attrs} role="group" aria-label="{e(name)}">{label}{buttons}</div>'

    def to_html(self, language: str = ENGLISH) -> str:
        """The demo as ``language``'s page shows it before its script runs (one edition's HTML)."""
        p = self.payload(language)
        first = p["states"][self.index_of(p["default"])]
        data = json.dumps(p, separators=(",", ":")).replace("</", "<\\/")  # no "</script>" inside the JSON
        e = _html.escape
        table = p["pool"][first["html"]] if "html" in first else ""
        figure = ""
        if any("data" in s for s in p["states"]):  # Plotly draws it; for a screen reader it is one image
            label = figure_label(json.loads(p["pool"][first["layout"]]) if "layout" in first else {},
                                 tr(self.title, language) if self.title else None, first["caption"], language)
            figure = f'<div class="demo-figure" data-demo-figure role="img" aria-label="{e(label)}"></div>'
        title = f'<p class="demo-title">{e(tr(self.title, language))}</p>' if self.title else ""
        return (f'<div class="static-demo" id="demo-{e(self.demo_id)}" data-demo="{e(self.demo_id)}" '
                f'data-demo-indices="{e(json.dumps(p["default"]))}">{title}'
                f'<div class="demo-controls">{"".join(self._control_html(c, language) for c in self.controls)}</div>'
                f'<p class="demo-caption" data-demo-caption aria-live="polite">{e(first["caption"])}</p>'
                f'<p class="demo-frozen"><em>{e(tr(_FROZEN, language))}</em></p>'
                f'{figure}<div class="demo-html" data-demo-html>{table}</div>'
                f'<script type="application/json" data-demo-payload>{data}</script></div>')

    def editions_html(self) -> str:
        """Every edition's HTML in its markers (``editions.both``): what a cell displays."""
        return both(self.to_html)

    def _repr_html_(self) -> str:
        return self.editions_html()

    def __repr__(self) -> str:
        return f"StaticDemo({self.demo_id!r}, {self.n_states} states)"
