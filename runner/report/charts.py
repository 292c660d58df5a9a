"""A metric against a parameter, as values (`Chart`) and as Mermaid `xychart-beta` blocks for
markdown; and the geometry of the parallel coordinates' axes. Pure: `runner.report.plot` draws
files with matplotlib, the results page (`runner.report.web`) draws in the browser.

The x axis is the parameter asked for (`--by`), or else the first parameter whose value varies
among the points that have the metric. Every other parameter that varies splits the points into
series, one line per combination of their values (`nodes=2`). When no value of theirs repeats
(sampled points: each point its own combination), lines would join nothing, so the chart is a
scatter of every point instead (bars in Mermaid, which has no scatter). Mermaid draws lines over
categories and has no gaps, so when some series lacks a value at some x, each series gets a
chart of its own.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from decimal import Decimal
from typing import TYPE_CHECKING

from runner.core.errors import RunnerError
from runner.core.ladder import RUNG
from runner.core.model import Cell
from runner.core.values import Value, as_text
from runner.observe.model import Observation, PointResult
from runner.report.tables import params_text

if TYPE_CHECKING:
    from runner.analysis.findings import Findings

AXIS_LABELS = 8
"""A parallel-coordinates axis labels each value when it has at most this many, else its ends."""
LABEL_GAP = 0.06
"""The least distance between two labels of an axis, as a fraction of its height: closer ones
are thinned out (the ends kept), so no two overlap."""
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


# -- the parallel coordinates' axes -------------------------------------------------------------


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
        return [(v - low) / span for v in t], thinned(list(zip(labels, texts, strict=True)))
    order = list(dict.fromkeys(as_text(v) for v in column))
    step = 1.0 / max(1, len(order) - 1)
    ticks = [(i * step, text) for i, text in enumerate(order)]
    return [order.index(as_text(v)) * step for v in column], thinned(ticks)


def parallel_axes(
    f: Findings, lines: Sequence[PointResult]
) -> tuple[list[dict[str, object]], dict[str, list[float]]]:
    """The results page's parameter axes (each swept parameter, then a halving's rung) as JSON,
    and each point's height on them, by key: over `lines`, the points that can be drawn."""
    axes: list[dict[str, object]] = []
    columns: list[list[float]] = []
    for name in f.params:
        column = [dict(p.params).get(name) for p in lines]
        heights, ticks = axis_positions(column, name in f.log) if column else ([], [])
        axes.append({"name": name, "ticks": [[h, t] for h, t in ticks], "log": name in f.log})
        columns.append(heights)
    halving = f.results.halving
    if halving is not None:  # placed by the ladder: a rung no point reached keeps its place
        ladder = halving.ladder
        top = max(1, len(ladder.values) - 1)
        at = [(k / top, f"{k} ({ladder.param}={v})") for k, v in enumerate(ladder.values)]
        axes.append({"name": RUNG, "ticks": [[h, t] for h, t in thinned(at)], "log": False})
        columns.append([ladder.rung(dict(p.params)) / top for p in lines])
    return axes, {p.key: [c[i] for c in columns] for i, p in enumerate(lines)}


def metric_axis(metric: str, lines: Sequence[PointResult]) -> dict[str, object]:
    """A metric's axis over the points finished with it: its ticks and each one's height."""
    done = [p for p in lines if p.finished(metric) is not None]
    heights, ticks = axis_positions([p.finished(metric) for p in done], False) if done else ([], [])
    return {
        "ticks": [[h, t] for h, t in ticks],
        "heights": {p.key: h for p, h in zip(done, heights, strict=True)},
    }


def thinned(ticks: Sequence[tuple[float, str]], gap: float = LABEL_GAP) -> list[tuple[float, str]]:
    """The labels of an axis (height, text), fewer: from the lowest up, each kept only at `gap`
    or more above the last kept; the highest always kept (the one below it yields)."""
    ordered = sorted(ticks)
    kept: list[tuple[float, str]] = []
    for tick in ordered:
        if not kept or tick[0] - kept[-1][0] >= gap:
            kept.append(tick)
    if ordered and kept[-1] != ordered[-1]:
        while len(kept) > 1 and ordered[-1][0] - kept[-1][0] < gap:
            kept.pop()
        kept.append(ordered[-1])
    return kept


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
