"""A sweep judged by two or more objectives, or by constraints, on its results page: the Pareto
set as a table, the points a constraint rules out (and why), a PNG of the front (the first two
objectives; infeasible points marked, drawn through `runner.report.plot`, matplotlib's one
user), and the same as data (`data`: the page's JSON, and what the web page draws a front from).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from runner.analysis.aiming import Front
from runner.analysis.findings import Findings
from runner.core.errors import RunnerError
from runner.observe.model import PointResult
from runner.report import plot
from runner.report.status import metric_text
from runner.report.tables import params_text, tabulate

SHOWN = 50
"""Rows of each table; the rest are counted (the CSV and the JSON have every point)."""
IMAGE = "pareto"
"""The key of the front's PNG among a page's images (`runner.report.page.markdown`)."""


def front_lines(f: Findings, image: str | None) -> list[str]:
    """The page's sections: the Pareto set (two or more objectives), the points ruled out."""
    front = f.front
    if front is None:
        return []
    parts: list[str] = []
    if len(front.aims) > 1:
        by = ", ".join(f"`{a.metric}` ({a.goal})" for a in front.aims)
        parts += [
            f"### Pareto set ({len(front.pareto)} of {len(front.finished)} finished)",
            "",
            f"The feasible points no other point beats on every one of {by}.",
            "",
            _table(front, front.pareto, f.params) if front.pareto else "_None yet._",
            "",
        ]
        parts += [f"![{f.results.name}: the Pareto front]({image})", ""] if image else []
    if front.ruled_out:
        rows = [
            [f"`{p.experiment}`", *_values(front, p), why, p.url]
            for p, why in front.ruled_out[:SHOWN]
        ]
        headers = ["experiment", *front.metrics, "ruled out by", "url"]
        parts += [
            f"### Ruled out by a constraint ({len(front.ruled_out)})",
            "",
            "Constraints: " + ", ".join(f"`{c}`" for c in front.constraints) + ".",
            "",
            tabulate(rows, headers=headers, tablefmt="github"),
            "",
        ]
        if len(front.ruled_out) > SHOWN:
            parts += [f"… and {len(front.ruled_out) - SHOWN} more: see the CSV.", ""]
    return parts


def _values(front: Front, point: PointResult) -> list[str]:
    return [metric_text(point.metrics.get(m)) for m in front.metrics]


def _table(front: Front, points: Sequence[PointResult], params: Sequence[str]) -> str:
    rows = [
        [f"`{p.experiment}`", *_values(front, p), params_text(p.params), p.url]
        for p in points[:SHOWN]
    ]
    headers = ["experiment", *front.metrics, "params", "url"]
    return tabulate(rows, headers=headers, tablefmt="github")


def pareto_names(f: Findings) -> list[str] | None:
    """The Pareto set's point names (two or more objectives), else None."""
    front = f.front
    if front is None or len(front.aims) < 2:
        return None
    return [p.experiment for p in front.pareto]


def data(f: Findings) -> dict[str, Any] | None:
    """The front as JSON values (None for a sweep with one objective and no constraint): the
    objectives, the constraints, the Pareto set's names and every finished point's values,
    whether it is feasible, and why not."""
    front = f.front
    if front is None:
        return None
    ruled = {p.key: why for p, why in front.ruled_out}
    return {
        "objectives": [{"metric": a.metric, "goal": str(a.goal)} for a in front.aims],
        "constraints": [str(c) for c in front.constraints],
        "pareto": [p.experiment for p in front.pareto],
        "points": [
            {
                "experiment": p.experiment,
                "values": list(front.values(p) or ()),
                "feasible": p.key not in ruled,
                "ruled_out": ruled.get(p.key, ""),
            }
            for p in front.finished
        ],
    }


def figure(f: Findings) -> Any:
    """The front of the first two objectives: every finished point, the Pareto set joined as a
    step line, points a constraint rules out as red crosses."""
    front = f.front
    if front is None or len(front.aims) < 2:
        raise RunnerError(f"{f.results.name}: no two objectives to draw a front of")
    drawn = plot.new_figure()
    axes = drawn.subplots()
    ruled = {p.key for p, _ in front.ruled_out}
    kept = _xy(front, [p for p in front.finished if p.key not in ruled])
    if kept:
        axes.scatter(*kept, color="C0", s=14, label="feasible")
    out = _xy(front, [p for p, _ in front.ruled_out])
    if out:
        axes.scatter(*out, color="C1", marker="x", s=30, label="ruled out by a constraint")
    line = _xy(front, front.pareto)
    if line:
        xs, ys = zip(*sorted(zip(*line, strict=True)), strict=True)
        axes.step(xs, ys, where="post", color="black", label="Pareto set")
        axes.scatter(xs, ys, color="black", s=20)
    first, second = front.aims[0], front.aims[1]
    axes.set_xlabel(f"{first.metric} ({first.goal})")
    axes.set_ylabel(f"{second.metric} ({second.goal})")
    axes.set_title(f"{f.results.name}: the Pareto front")
    axes.grid(True, alpha=0.3)
    axes.legend()
    return drawn


def _xy(front: Front, points: Sequence[PointResult]) -> tuple[list[float], list[float]] | None:
    """The points' first two objective values, as x and y; None for no point."""
    pairs = [v[:2] for p in points if (v := front.values(p)) is not None]
    return ([x for x, _ in pairs], [y for _, y in pairs]) if pairs else None


def save(f: Findings, path: Path) -> None:
    """`figure` as a PNG (or SVG, by the suffix)."""
    plot.write_figure(figure(f), path)
