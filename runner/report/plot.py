"""Files drawn by matplotlib, the optional `[plot]` extra, imported only here: `status --plot`'s
chart (`save`, PNG or SVG), and `report`'s images: parallel coordinates of every finished point
(`parallel`) and the best so far (`progress`). Each is built as a figure first (`*_figure`), so a
test can read what was drawn; then written.

What makes them readable: a numeric axis whose values span a factor of ten or more is
logarithmic, by the one rule (`runner.analysis.findings.logarithmic`) in both; the best point
is a thick line of its own colour, drawn last; an axis's value labels are thinned so none
overlaps another (`runner.report.charts.thinned`); a count (a point's place, a round, a number
of nodes) gets integer ticks.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import TYPE_CHECKING, Any

from runner.analysis.findings import logarithmic
from runner.core.aims import Goal
from runner.core.errors import RunnerError
from runner.core.model import Cell
from runner.core.output import writing
from runner.core.values import as_text
from runner.report.charts import Chart, axis_positions

if TYPE_CHECKING:
    from runner.analysis.findings import Findings

EXTRA = "pip install 'beaker-sweep-runner[plot]'"
SIZE = (8.0, 5.0)
DPI = 100
"""Files are SIZE × DPI pixels: 800 × 500."""
SUFFIXES = (".png", ".svg")
BEST = "#d62728"
"""The best point's line: a red no colour of the map (viridis) comes near."""


def check_can_save(path: Path) -> None:
    """Refuse a file this installation cannot draw (no [plot] extra) before any work is done,
    so the command prints one line and no half of its report. Finding is not importing."""
    if path.suffix.lower() in SUFFIXES and importlib.util.find_spec("matplotlib") is None:
        raise RunnerError(f"plotting to a file needs matplotlib: {EXTRA}")


def save(c: Chart, path: Path) -> None:
    """Draw the chart to a PNG or SVG file (by its suffix) with matplotlib."""
    if path.suffix.lower() not in SUFFIXES:
        raise RunnerError(f"{path}: a plot file must end in .png or .svg")
    write_figure(chart_figure(c), path)


def chart_figure(c: Chart) -> Any:
    """The chart as a matplotlib figure."""
    figure = new_figure()
    axes = figure.subplots()
    numeric = all(isinstance(x, int | float) and not isinstance(x, bool) for x in c.xs)
    positions = {x: i for i, x in enumerate(c.xs)}
    for s in c.series:
        xs = [x if numeric else positions[x] for x, _ in s.points]
        ys = [y for _, y in s.points]
        if c.scatter:
            axes.scatter(xs, ys, label=c.metric)
        else:
            axes.plot(xs, ys, marker="o", label=s.label or c.metric)
    if numeric:
        values = [float(x) for x in c.xs]
        if logarithmic(values):
            axes.set_xscale("log")  # learning rates and the like are swept on a log scale
        elif all(isinstance(x, int) for x in c.xs):
            _integer_ticks(axes.xaxis)
    else:
        axes.set_xticks(range(len(c.xs)), [as_text(x) for x in c.xs])
    axes.set_xlabel(c.x)
    axes.set_ylabel(c.metric)
    axes.set_title(f"{c.sweep}: {c.metric} by {c.x}")
    axes.grid(True, alpha=0.3)
    if any(s.label for s in c.series):
        axes.legend()
    return figure


def _integer_ticks(axis: Any) -> None:
    from matplotlib.ticker import MaxNLocator

    axis.set_major_locator(MaxNLocator(integer=True))


def new_figure() -> Any:
    """A blank figure of the house size (SIZE at DPI); a RunnerError without matplotlib."""
    try:
        from matplotlib.figure import Figure
    except ImportError:
        raise RunnerError(f"plotting to a file needs matplotlib: {EXTRA}") from None
    return Figure(figsize=SIZE, dpi=DPI, layout="constrained")


def write_figure(figure: Any, path: Path) -> None:
    """The figure as a PNG or SVG (by the suffix): the same picture, the same bytes; a
    RunnerError where the file cannot be written."""
    from matplotlib import rc_context

    suffix = path.suffix.lower()
    # No date and fixed element ids in an SVG, so the same results draw the same bytes.
    metadata = {"Date": None} if suffix == ".svg" else None
    with writing(path), rc_context({"svg.hashsalt": "beaker-sweep-runner"}):
        path.parent.mkdir(parents=True, exist_ok=True)
        figure.savefig(path, format=suffix[1:], metadata=metadata)


# -- the results page's images ---------------------------------------------------------------


def parallel(f: Findings, path: Path) -> None:
    write_figure(parallel_figure(f), path)


def parallel_figure(f: Findings) -> Any:
    """Parallel coordinates: one axis per parameter and one for the metric, one line per
    finished point coloured by its metric, the best in BEST, thick, drawn last; categories
    spaced evenly, log-scale parameters (`Findings.log`) on a log axis."""
    from matplotlib import colormaps
    from matplotlib.cm import ScalarMappable
    from matplotlib.colors import Normalize

    figure = new_figure()
    axes = figure.subplots()
    names = [*f.params, f.metric]
    values = [p.number(f.metric) or 0.0 for p in f.ranked]  # finished: each has a number
    columns: list[list[Cell]] = [[dict(p.params).get(n) for p in f.ranked] for n in f.params]
    columns.append(list(values))
    scaled, ticks = [], []
    for name, column in zip(names, columns, strict=True):
        position, labels = axis_positions(column, name in f.log)
        scaled.append(position)
        ticks.append(labels)
    norm = Normalize(min(values), max(values))
    cmap = colormaps["viridis" if f.goal is Goal.MAXIMIZE else "viridis_r"]
    for i in reversed(range(len(values))):  # the best (first) last, on top
        ys = [scaled[j][i] for j in range(len(names))]
        best = i == 0
        colour = BEST if best else cmap(norm(values[i]))
        axes.plot(range(len(names)), ys, color=colour, lw=3 if best else 1, zorder=3 if best else 2)
    for j, labels in enumerate(ticks):
        axes.axvline(j, color="black", lw=0.8)
        for y, text in labels:
            axes.annotate(text, (j, y), xytext=(3, 0), textcoords="offset points", fontsize=7)
    axes.set_xticks(range(len(names)), names)
    axes.set_yticks([])
    axes.set_xlim(-0.1, len(names) - 0.6)
    axes.set_title(
        f"{f.results.name}: {len(values)} finished point(s) by {f.metric} (red: the best)"
    )
    figure.colorbar(ScalarMappable(norm, cmap), ax=axes, label=f.metric)
    return figure


def progress(f: Findings, path: Path) -> None:
    write_figure(progress_figure(f), path)


def progress_figure(f: Findings) -> Any:
    """Each finished point's value (or each round's best) and the best so far, as a step line,
    over integer ticks (points and rounds are counted)."""
    figure = new_figure()
    axes = figure.subplots()
    xs = [s.x for s in f.progress]
    axes.scatter(xs, [s.value for s in f.progress], s=12, label=f.metric)
    axes.step(xs, [s.best for s in f.progress], where="post", color=BEST, label="best so far")
    _integer_ticks(axes.xaxis)
    axes.set_xlabel("round" if f.by_round else "point, in the sweep's order")
    axes.set_ylabel(f.metric)
    axes.set_title(f"{f.results.name}: best {f.metric} so far ({f.goal})")
    axes.grid(True, alpha=0.3)
    axes.legend()
    return figure
