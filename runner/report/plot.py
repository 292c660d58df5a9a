"""A metric against a parameter: a Mermaid `xychart-beta` block for markdown, PNG or SVG files.

The x axis is the parameter asked for (`--by`), or else the first parameter whose value varies
among the points that have the metric. Every other parameter that varies splits the points into
series, one line per combination of their values (`nodes=2`). When no value of theirs repeats
(sampled points: each point its own combination), lines would join nothing, so the chart is a
scatter of every point instead (bars in Mermaid, which has no scatter). Mermaid draws lines over
categories and has no gaps, so when some series lacks a value at some x, each series gets a
chart of its own. Files are drawn by matplotlib, the optional `[plot]` extra, imported only here.

For `report`'s page, two more files (`parallel`: parallel coordinates of every finished point,
log-scale parameters placed by their logarithm; `progress`: the best so far) and the best so far
as a Mermaid chart (`progress_chart`).
"""

from __future__ import annotations

import importlib.util
import math
from collections.abc import Mapping
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path
from typing import TYPE_CHECKING, Any

from runner.core.errors import RunnerError
from runner.core.model import Cell
from runner.core.values import Value, as_text
from runner.manifest.sample import Goal
from runner.observe.model import Observation
from runner.report.tables import params_text

if TYPE_CHECKING:
    from runner.observe.findings import Findings

EXTRA = "pip install 'beaker-sweep-runner[plot]'"
SIZE = (8.0, 5.0)
DPI = 100
"""Files are SIZE × DPI pixels: 800 × 500."""
SUFFIXES = (".png", ".svg")
AXIS_LABELS = 8
"""A parallel-coordinates axis labels each value when it has at most this many, else its ends."""
MERMAID_STEPS = 100
"""The best-so-far chart in Mermaid keeps at most this many of the steps where the best moved."""


@dataclass(frozen=True)
class Series:
    label: str
    """The other varying parameters' values, e.g. `nodes=2`; empty when there are none."""
    points: tuple[tuple[Value, float], ...]
    """(x, metric), sorted by x."""


@dataclass(frozen=True)
class Chart:
    sweep: str
    metric: str
    x: str
    series: tuple[Series, ...]
    scatter: bool = False
    """One series of every point, x values possibly repeated: no series has two points."""

    @property
    def xs(self) -> list[Value]:
        return _sorted({x: None for s in self.series for x, _ in s.points})

    @property
    def complete(self) -> bool:
        """Whether every series has a value at every x (Mermaid cannot leave a gap)."""
        xs = self.xs
        return all([x for x, _ in s.points] == xs for s in self.series)


def chart(sweep: Observation, metric: str, by: str | None = None) -> Chart:
    """The chart of `metric` over the points that have it as a number; RunnerError if none."""
    scored = [(p, p.number(metric)) for p in sweep.points]
    points = [(dict(p.params), v) for p, v in scored if v is not None]
    if not points:
        have = ", ".join(sweep.metric_names) or "none yet"
        raise RunnerError(
            f"{sweep.name}: no point has a numeric metric {metric!r} (metrics: {have})"
        )
    names = list(sweep.axes)
    if by is not None and by not in names:
        raise RunnerError(
            f"{sweep.name}: no parameter {by!r} to plot against (parameters: {', '.join(names)})"
        )
    varying = [n for n in names if len({repr(params.get(n)) for params, _ in points}) > 1]
    x = by or (varying[0] if varying else names[0])
    others = [n for n in varying if n != x]
    groups: dict[str, dict[Value, float]] = {}
    for params, value in points:
        label = params_text([(n, params[n]) for n in others if n in params])
        groups.setdefault("" if not others else label, {})[params.get(x, "")] = value
    if len(groups) > 1 and all(len(values) == 1 for values in groups.values()):
        every = [(params.get(x, ""), value) for params, value in points]
        order = _sorted({k: None for k, _ in every})
        ranked = sorted(every, key=lambda item: order.index(item[0]))
        return Chart(sweep.name, metric, x, (Series("", tuple(ranked)),), scatter=True)
    series = tuple(
        Series(label, tuple((k, values[k]) for k in _sorted(values)))
        for label, values in groups.items()
    )
    return Chart(sweep.name, metric, x, series)


def _sorted(values: Mapping[Value, object]) -> list[Value]:
    """Numbers in numeric order; anything else in the order first seen."""
    keys = list(values)
    if all(isinstance(k, int | float) and not isinstance(k, bool) for k in keys):
        return sorted(keys, key=float)
    return keys


# -- Mermaid ------------------------------------------------------------------------------------


def mermaid(c: Chart) -> str:
    """One or more fenced `xychart-beta` blocks, with the order of the lines spelled out."""
    if c.scatter:
        return _mermaid_scatter(c)
    blocks = []
    groups = [c.series] if c.complete else [(s,) for s in c.series]
    for series in groups:
        xs = _sorted({x: None for s in series for x, _ in s.points})
        title = f"{c.sweep}: {c.metric} by {c.x}"
        if len(groups) > 1 and series[0].label:
            title += f" ({series[0].label})"
        lines = [
            "```mermaid",
            "xychart-beta",
            f"    title {_quoted(title)}",
            f"    x-axis {_quoted(c.x)} [{', '.join(_quoted(as_text(x)) for x in xs)}]",
            f"    y-axis {_quoted(c.metric)}",
        ]
        for s in series:
            values = dict(s.points)
            lines.append(f"    line [{', '.join(_number(values[x]) for x in xs)}]")
        lines.append("```")
        blocks.append("\n".join(lines))
    labels = [s.label for s in c.series if s.label]
    if c.complete and len(labels) > 1:
        blocks.append("Lines, in order: " + ", ".join(f"`{label}`" for label in labels) + ".")
    return "\n\n".join(blocks) + "\n"


def _mermaid_scatter(c: Chart) -> str:
    """Every point as a bar at its x (in x order; a repeated x is a category of its own)."""
    (s,) = c.series
    return (
        "\n".join(
            [
                "```mermaid",
                "xychart-beta",
                f"    title {_quoted(f'{c.sweep}: {c.metric} by {c.x} (each point)')}",
                f"    x-axis {_quoted(c.x)} [{', '.join(_quoted(as_text(x)) for x, _ in s.points)}]",
                f"    y-axis {_quoted(c.metric)}",
                f"    bar [{', '.join(_number(y) for _, y in s.points)}]",
                "```",
            ]
        )
        + "\n"
    )


def _quoted(text: str) -> str:
    return '"' + text.replace('"', "'").replace("\n", " ") + '"'


def _number(value: float) -> str:
    """A plain decimal (Mermaid's grammar has no exponents)."""
    text = f"{value:.6g}"
    if "e" in text or "E" in text:
        text = format(Decimal(text), "f")
    return text


# -- files --------------------------------------------------------------------------------------


def check_can_save(path: Path) -> None:
    """Refuse a file this installation cannot draw (no [plot] extra) before any work is done,
    so the command prints one line and no half of its report. Finding is not importing."""
    if path.suffix.lower() in SUFFIXES and importlib.util.find_spec("matplotlib") is None:
        raise RunnerError(f"plotting to a file needs matplotlib: {EXTRA}")


def save(c: Chart, path: Path) -> None:
    """Draw the chart to a PNG or SVG file (by its suffix) with matplotlib."""
    suffix = path.suffix.lower()
    if suffix not in SUFFIXES:
        raise RunnerError(f"{path}: a plot file must end in .png or .svg")
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
        if min(values) > 0 and max(values) / min(values) >= 10:
            axes.set_xscale("log")  # learning rates and the like are swept on a log scale
    else:
        axes.set_xticks(range(len(c.xs)), [as_text(x) for x in c.xs])
    axes.set_xlabel(c.x)
    axes.set_ylabel(c.metric)
    axes.set_title(f"{c.sweep}: {c.metric} by {c.x}")
    axes.grid(True, alpha=0.3)
    if any(s.label for s in c.series):
        axes.legend()
    write_figure(figure, path)


def new_figure() -> Any:
    """A blank figure of the house size (SIZE at DPI); a RunnerError without matplotlib."""
    try:
        from matplotlib.figure import Figure
    except ImportError:
        raise RunnerError(f"plotting to a file needs matplotlib: {EXTRA}") from None
    return Figure(figsize=SIZE, dpi=DPI, layout="constrained")


def write_figure(figure: Any, path: Path) -> None:
    """The figure as a PNG or SVG (by the suffix): the same picture, the same bytes."""
    from matplotlib import rc_context

    suffix = path.suffix.lower()
    path.parent.mkdir(parents=True, exist_ok=True)
    # No date and fixed element ids in an SVG, so the same results draw the same bytes.
    metadata = {"Date": None} if suffix == ".svg" else None
    with rc_context({"svg.hashsalt": "beaker-sweep-runner"}):
        figure.savefig(path, format=suffix[1:], metadata=metadata)


# -- the results page's images ---------------------------------------------------------------


def parallel(f: Findings, path: Path) -> None:
    """Parallel coordinates: one axis per parameter and one for the metric, one line per
    finished point coloured by its metric (the best drawn last, thick); categories spaced
    evenly, log-scale parameters on a log axis."""
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
    for i in reversed(range(len(values))):  # the best (first) on top
        ys = [scaled[j][i] for j in range(len(names))]
        axes.plot(range(len(names)), ys, color=cmap(norm(values[i])), lw=3 if i == 0 else 1)
    for j, labels in enumerate(ticks):
        axes.axvline(j, color="black", lw=0.8)
        for y, text in labels:
            axes.annotate(text, (j, y), xytext=(3, 0), textcoords="offset points", fontsize=7)
    axes.set_xticks(range(len(names)), names)
    axes.set_yticks([])
    axes.set_xlim(-0.1, len(names) - 0.6)
    axes.set_title(
        f"{f.results.name}: {len(values)} finished point(s) by {f.metric} (thick: the best)"
    )
    figure.colorbar(ScalarMappable(norm, cmap), ax=axes, label=f.metric)
    write_figure(figure, path)


ABSENT = "(absent)"
"""The tick of a conditional parameter's points that do not have it, below the axis's values."""
ABSENT_AT = -0.12


def axis_positions(column: list[Cell], log: bool) -> tuple[list[float], list[tuple[float, str]]]:
    """Each value's height in [0, 1] (an absent conditional parameter's below, at ABSENT_AT),
    and the labelled ticks of its axis."""
    present = [v for v in column if v is not None]
    if len(present) == len(column):
        return _positions(present, log)
    heights, ticks = _positions(present, log) if present else ([], [])
    at = iter(heights)
    return [ABSENT_AT if v is None else next(at) for v in column], [*ticks, (ABSENT_AT, ABSENT)]


def _positions(column: list[Value], log: bool) -> tuple[list[float], list[tuple[float, str]]]:
    if all(isinstance(v, int | float) and not isinstance(v, bool) for v in column):
        numbers = [float(v) for v in column]
        log = log and min(numbers) > 0
        t = [math.log(v) if log else v for v in numbers]
        low, high = min(t), max(t)
        span = (high - low) or 1.0
        distinct = sorted(set(numbers))
        shown = distinct if len(distinct) <= AXIS_LABELS else [distinct[0], distinct[-1]]
        labels = [((math.log(v) if log else v) - low) / span for v in shown]
        texts = [
            f"{v:.4g}" + (" (log)" if log and i == len(shown) - 1 else "")
            for i, v in enumerate(shown)
        ]
        return [(v - low) / span for v in t], list(zip(labels, texts, strict=True))
    order = list(dict.fromkeys(as_text(v) for v in column))
    step = 1.0 / max(1, len(order) - 1)
    return [order.index(as_text(v)) * step for v in column], [
        (i * step, text) for i, text in enumerate(order)
    ]


def progress(f: Findings, path: Path) -> None:
    """Each finished point's value (or each round's best) and the best so far, as a step line."""
    figure = new_figure()
    axes = figure.subplots()
    xs = [s.x for s in f.progress]
    axes.scatter(xs, [s.value for s in f.progress], s=12, label=f.metric)
    axes.step(xs, [s.best for s in f.progress], where="post", color="C3", label="best so far")
    axes.set_xlabel("round" if f.by_round else "point, in the sweep's order")
    axes.set_ylabel(f.metric)
    axes.set_title(f"{f.results.name}: best {f.metric} so far ({f.goal})")
    axes.grid(True, alpha=0.3)
    axes.legend()
    write_figure(figure, path)


def progress_chart(f: Findings) -> Chart:
    """The best so far as a chart for `mermaid`."""
    x = "round" if f.by_round else "point"
    kept = [  # where the best moved, and the last step: a short chart for any sweep
        s
        for i, s in enumerate(f.progress)
        if i in (0, len(f.progress) - 1) or s.best != f.progress[i - 1].best
    ]
    steps = tuple((s.x, s.best) for s in kept[-MERMAID_STEPS:])
    return Chart(f.results.name, f"best {f.metric} so far", x, (Series("", steps),))
