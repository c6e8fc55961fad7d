"""The grader's sanitising in linear time: time at 256 KB over time at 32 KB of hostile markdown.

Run: python benchmarks/bench_sanitize.py [--repeats 3] [--bleach]

Issue 28: one markdown cell repeating ``<b>x`` (128 KB) took nbconvert's bleach-based sanitiser 18 s (1.9 /
4.8 / 18.4 s at 32 / 64 / 128 KB: quadratic), in autograde and again in generate_feedback. What is timed
here, per input size, on ``<b>x`` repeated (and two other inputs that are hard for an HTML parser):

* ``clean``: bertgrader.sanitize.clean_html (nh3) on the text, the whole of it (no cap);
* ``cell``: bertgrader.preprocessors._inert_markdown, what autograde and generate_feedback do to a markdown
  cell (cut at MAX_MARKDOWN_SOURCE, then cleaned);
* ``page``: bertgrader.sanitize.markdown2html, what a page does with it (a cell over MAX_MARKDOWN_CHARS is
  shown as escaped text, so the markdown renderer never sees it; under it, rendered and cleaned).

The ratio time(256 KB) / time(32 KB) is about 8 for linear work and 64 for quadratic (``clean`` and
``cell``); ``page`` is bounded by its cap instead (at 256 KB the cell is shown as text, not rendered). Times
are CPU seconds of the calling thread. ``--bleach`` adds nbconvert's old path (32 and 64 KB only: it is slow).
The best of ``--repeats`` counts. The last line printed is a JSON object with the figures.
"""
import argparse
import json
import time

import nbformat
from jinja2 import Environment

from bertgrader.preprocessors import _inert_markdown
from bertgrader.sanitize import clean_html, markdown2html

SIZES_KB = (32, 256)
INPUTS = {"<b>x": "<b>x", "<a href=x>": "<a href=x>", "<table><tr><td>": "<table><tr><td>"}


def best(fn, repeats: int) -> float:
    """Least CPU time of this thread over ``repeats`` calls (nh3 cleans in the calling thread): on a shared
    machine wall time swings tenfold with the load, CPU time does not."""
    times = []
    for _ in range(repeats):
        t = time.thread_time()
        fn()
        times.append(time.thread_time() - t)
    return min(times)


def page_filter():
    """markdown2html called as the page's template calls it (a Jinja context with the page's resources)."""
    env = Environment()
    env.filters["markdown2html"] = markdown2html
    template = env.from_string("{{ source | markdown2html }}")
    return lambda source: template.render(source=source, resources={}, cell={})


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--bleach", action="store_true", help="also time nbconvert's bleach-based sanitiser")
    args = p.parse_args()
    render = page_filter()
    figures = {}
    for name, unit in INPUTS.items():
        row = {}
        for kb in SIZES_KB:
            text = unit * (kb * 1024 // len(unit))
            row[f"clean_{kb}"] = best(lambda: clean_html(text), args.repeats)
            row[f"cell_{kb}"] = best(lambda: _inert_markdown(nbformat.v4.new_markdown_cell(text)), args.repeats)
            row[f"page_{kb}"] = best(lambda: render(text), args.repeats)
        for what in ("clean", "cell"):
            row[f"{what}_ratio"] = row[f"{what}_{SIZES_KB[1]}"] / row[f"{what}_{SIZES_KB[0]}"]
        figures[name] = row
        print(f"{name:16s} " + "  ".join(f"{w}: {row[f'{w}_{SIZES_KB[0]}'] * 1e3:6.1f} / {row[f'{w}_{SIZES_KB[1]}'] * 1e3:6.1f} ms"
                                         f" (x{row[f'{w}_ratio']:.1f})" for w in ("clean", "cell"))
              + f"  page: {row[f'page_{SIZES_KB[0]}'] * 1e3:6.1f} / {row[f'page_{SIZES_KB[1]}'] * 1e3:6.1f} ms (capped)")
    if args.bleach:
        from nbconvert.filters.strings import clean_html as bleach_clean

        row = {f"bleach_{kb}": best(lambda: bleach_clean("<b>x" * (kb * 256)), 1) for kb in (32, 64)}
        row["bleach_ratio_64_over_32"] = row["bleach_64"] / row["bleach_32"]
        figures["bleach <b>x"] = row
        print(f"bleach <b>x: {row['bleach_32']:.2f} s at 32 KB, {row['bleach_64']:.2f} s at 64 KB "
              f"(x{row['bleach_ratio_64_over_32']:.1f} for twice the size)")
    print(json.dumps({"sizes_kb": SIZES_KB, "figures": figures}))


if __name__ == "__main__":
    main()
