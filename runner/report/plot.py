"""A metric against a parameter: a Mermaid `xychart-beta` block for markdown, PNG or SVG files.

The x axis is the parameter asked for (`--by`), or else the first parameter whose value varies
among the points that have the metric. Every other parameter that varies splits the points into
series, one line per combination of their values (`nodes=2`). When no value of theirs repeats
(sampled points: each point its own combination), lines would join nothing, so the chart is a
scatter of every point instead (bars in Mermaid, which has no scatter). Mermaid draws lines over
categories and has no gaps, so when some series lacks a value at some x, each series gets a
chart of its own. Files are drawn by matplotlib, the optional `[plot]` extra, imported only here.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Mapping
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path

from runner.core.errors import RunnerError
from runner.core.values import Value, as_text
from runner.operate.results import SweepResults
from runner.report.tables import params_text

EXTRA = "pip install 'beaker-sweep-runner[plot]'"
SIZE = (8.0, 5.0)
DPI = 100
"""Files are SIZE × DPI pixels: 800 × 500."""
SUFFIXES = (".png", ".svg")


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


def chart(sweep: SweepResults, metric: str, by: str | None = None) -> Chart:
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
    try:
        from matplotlib import rc_context
        from matplotlib.figure import Figure
    except ImportError:
        raise RunnerError(f"plotting to a file needs matplotlib: {EXTRA}") from None
    figure = Figure(figsize=SIZE, dpi=DPI, layout="constrained")
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
    path.parent.mkdir(parents=True, exist_ok=True)
    # No date and fixed element ids in an SVG, so the same results draw the same bytes.
    metadata = {"Date": None} if suffix == ".svg" else None
    with rc_context({"svg.hashsalt": "beaker-sweep-runner"}):
        figure.savefig(path, format=suffix[1:], metadata=metadata)
