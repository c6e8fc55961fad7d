"""Chapter 12 demo: how many seeds a verdict needs. Pick one of the chapter's comparisons and a number of
seeds; see each seed's two scores, their differences, and the mean difference with its interval against zero.

Nothing is trained here: the scores are the chapter's runs (``course.runs``), handed over by the chapter as
``Paired`` records. The interval and the verdict are ``compare``'s (``projects/pretraining_experiments``), worded
by ``course.verdicts``; with one seed there is one difference and no interval.
"""
from __future__ import annotations

import json
import re
from dataclasses import asdict, dataclass, field
from pathlib import Path

from ..editions import ENGLISH, tr
from ..plots import COLORS
from ..verdicts import interval, said

# Where the chapter leaves its comparisons when it is executed, so that the page test and the tests can rebuild
# the demo's states without the runs (_build/ is not committed).
RECORD = Path(__file__).resolve().parents[2] / "_build" / "experiments_demo.json"


@dataclass(frozen=True)
class Paired:
    """One comparison of the chapter: recipe ``names[0]`` against ``names[1]``, one score each per seed (the
    same seed's runs, paired), on ``metric``."""

    label: str  # what the picker shows
    metric: str  # what was scored
    names: tuple[str, str]
    a: tuple[float, ...]
    b: tuple[float, ...]
    seeds: tuple[int, ...]
    fields: dict = field(default_factory=dict)  # what label and metric fill in ({n} labels): each edition's words

    def say(self, text: str, language: str = ENGLISH) -> str:
        """``text`` (the label, the metric or a name) as ``language``'s page shows it: words through
        ``editions.tr``, then this comparison's ``fields``; a name without words (25%, 80/10/10) as it is."""
        return (tr(text, language) if re.search("[A-Za-z]{2}", text) else text).format(**self.fields)

    def __post_init__(self):
        if not len(self.a) == len(self.b) == len(self.seeds) >= 1:
            raise ValueError(f"{self.label}: {len(self.a)} and {len(self.b)} scores for {len(self.seeds)} seeds: "
                             "one score of each recipe per seed")


def _compare(a, b) -> dict:
    from course import runs  # noqa: F401  (puts the repository on sys.path for projects/)
    from projects.pretraining_experiments.experiments import compare

    return compare(a, b)


def caption(p: Paired, n: int, language: str = ENGLISH) -> str:
    """The state's line: with one seed its single difference, else the interval over the first ``n`` seeds and
    the sentence it chooses, in ``language``."""
    if not 1 <= n <= len(p.seeds):
        raise ValueError(f"{p.label}: {n} seeds asked, {len(p.seeds)} were run")
    label, a_name, b_name = (p.say(t, language) for t in (p.label, *p.names))
    if n == 1:
        return tr("{label}, seed {seed} alone: {a_name} {a:.3f}, {b_name} {b:.3f}, a difference of {d:+.3f}; one "
                  "seed has no spread, so no interval and no verdict", language).format(
            label=label, seed=p.seeds[0], a_name=a_name, a=p.a[0], b_name=b_name, b=p.b[0], d=p.a[0] - p.b[0])
    cmp = _compare(p.a[:n], p.b[:n])
    verdict = tr(said(cmp, "{name} is larger", "{name} is smaller", "no difference we can see"), language)
    return tr("{label}: difference {interval}: {verdict}", language).format(
        label=label, interval=interval(cmp, language=language), verdict=verdict.format(name=a_name))


def figure(p: Paired, n: int, language: str = ENGLISH):
    """Top: each seed's two scores. Bottom: each seed's difference, and (from two seeds) the mean difference
    with its interval, against zero. The top panel's range covers every seed, so adding one does not rescale it."""
    import plotly.graph_objects as go
    from plotly.subplots import make_subplots

    def seed(s):
        return tr("seed {seed}", language).format(seed=s)

    mean = tr("mean", language)
    names = [p.say(name, language) for name in p.names]
    seeds = [seed(s) for s in p.seeds[:n]]
    d = [x - y for x, y in zip(p.a[:n], p.b[:n])]
    fig = make_subplots(rows=2, cols=1, vertical_spacing=0.2, row_heights=[0.5, 0.5],
                        subplot_titles=(p.say(p.metric, language), f"{names[0]} − {names[1]}"))
    for name, ys, color in ((names[0], p.a, COLORS["bert"]), (names[1], p.b, COLORS["gpt"])):
        fig.add_trace(go.Scatter(x=seeds, y=list(ys[:n]), mode="markers", name=name,
                                 marker=dict(color=color, size=11)), row=1, col=1)
    fig.add_trace(go.Scatter(x=seeds, y=d, mode="markers", name=tr("difference, per seed", language),
                             marker=dict(color=COLORS["pad"], size=9)), row=2, col=1)
    low = high = None
    if n >= 2:
        cmp = _compare(p.a[:n], p.b[:n])
        low, high = cmp["low"], cmp["high"]
        fig.add_trace(go.Scatter(x=[mean], y=[cmp["difference"]], mode="markers",
                                 name=tr("mean, with its interval", language),
                                 marker=dict(color=COLORS["sum"], size=12, symbol="diamond"),
                                 error_y=dict(type="data", symmetric=False, array=[high - cmp["difference"]],
                                              arrayminus=[cmp["difference"] - low], thickness=3, width=8)),
                      row=2, col=1)
    categories = [seed(s) for s in p.seeds] + [mean]
    every = list(p.a) + list(p.b)
    pad = 0.1 * (max(every) - min(every)) or 0.05
    fig.update_yaxes(range=[min(every) - pad, max(every) + pad], row=1, col=1)
    span = [0.0, *d] + ([low, high] if n >= 2 else [])
    pad = 0.1 * (max(span) - min(span)) or 0.05
    fig.update_yaxes(range=[min(span) - pad, max(span) + pad], zeroline=True, zerolinewidth=2, row=2, col=1)
    for row in (1, 2):
        fig.update_xaxes(categoryorder="array", categoryarray=categories, range=[-0.5, len(categories) - 0.5],
                         row=row, col=1)
    fig.update_layout(height=460, legend=dict(orientation="h", yanchor="top", y=-0.12, x=0),
                      margin=dict(l=55, r=15, t=40, b=40))
    return fig


def state(p: Paired, n: int, language: str = ENGLISH) -> dict:
    return {"caption": caption(p, n, language), "figure": figure(p, n, language)}


def save_record(pairs: list[Paired], path: Path | None = None) -> Path:
    """Write the comparisons as JSON (to ``RECORD`` by default)."""
    path = RECORD if path is None else Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps([asdict(p) for p in pairs]))
    tmp.replace(path)
    return path


def load_record(path: Path | None = None) -> list[Paired]:
    """The comparisons ``save_record`` wrote (JSON numbers round-trip exactly, so the states are the same)."""
    path = RECORD if path is None else Path(path)
    if not path.exists():
        raise FileNotFoundError(f"{path} does not exist: it is written when chapter 12 is executed "
                                "(build the book, or chapters/12_experiments.md alone, first)")
    return [Paired(r["label"], r["metric"], tuple(r["names"]), tuple(r["a"]), tuple(r["b"]), tuple(r["seeds"]),
                   r.get("fields", {})) for r in json.loads(path.read_text())]


def _seed_counts(pairs: list[Paired]) -> list[int]:
    counts = {len(p.seeds) for p in pairs}
    if len(counts) != 1:
        raise ValueError(f"the comparisons were run over different numbers of seeds ({sorted(counts)}): "
                         "the seeds slider needs one count")
    return list(range(1, counts.pop() + 1))


def make_demo(pairs: list[Paired] | None = None, choice: int = 0, n: int | None = None):
    """A picker over the comparisons and a seeds slider; the page's line and figure (``state``) follow them."""
    import ipywidgets as widgets

    from ._live import panel

    pairs = load_record() if pairs is None else pairs
    counts = _seed_counts(pairs)
    pick = widgets.Dropdown(options=[(p.say(p.label), i) for i, p in enumerate(pairs)], value=choice,
                            description="comparison", layout=widgets.Layout(width="auto"))
    seeds = widgets.IntSlider(value=counts[-1] if n is None else n, min=1, max=counts[-1], description="seeds",
                              continuous_update=False)
    return panel({"choice": pick, "n": seeds}, lambda choice, n: state(pairs[choice], n), rows=[pick, seeds])


def static_demos(pairs: list[Paired] | None = None):
    """Chapter 12's demo in the static page: a comparison and a number of seeds. Called without ``pairs``, it is
    rebuilt from the record the chapter's last execution left (``RECORD``)."""
    from course.static_demo import Select, Slider, StaticDemo

    class Comparisons(Select):
        """The comparison picker: each label in each edition's words, its numbers filled in (``Paired.say``)."""

        def shown_labels(self, language: str = ENGLISH) -> list[str]:
            return [p.say(p.label, language) for p in pairs]

    pairs = load_record() if pairs is None else pairs
    counts = _seed_counts(pairs)
    return [StaticDemo("how-many-seeds",
                       [Comparisons("choice", "comparison", options=list(range(len(pairs))),
                                    labels=[p.say(p.label) for p in pairs]),
                        Slider("n", "seeds", values=counts, default=counts[-1])],
                       state=lambda choice, n, language=ENGLISH: state(pairs[choice], n, language),
                       title="How many seeds a verdict needs")]
