"""`report`'s learning curves as a picture: each point's reported metric by step, one line per
point, the best point thick and drawn last (`runner.analysis.curves` holds the data; matplotlib,
the `[plot]` extra, is reached through `runner.report.plot`'s figure and writer)."""

from __future__ import annotations

from pathlib import Path

from runner.analysis.curves import Curves
from runner.report.plot import BEST, new_figure, write_figure

LEGEND_AT_MOST = 12
"""Lines named in the legend; beyond, only the best is (the others are faint)."""


def draw(name: str, curves: Curves, path: Path) -> None:
    """One line per point: value by step; the best point red, thick and on top."""
    figure = new_figure()
    axes = figure.subplots()
    named = len(curves.lines) <= LEGEND_AT_MOST
    for curve in sorted(curves.lines, key=lambda c: c.best):  # the best last, on top
        steps = [s for s, _ in curve.steps]
        values = [v for _, v in curve.steps]
        label = f"{curve.experiment} (best)" if curve.best else curve.experiment
        style = {"color": BEST, "linewidth": 2.5, "zorder": 3} if curve.best else {"alpha": 0.6}
        axes.plot(steps, values, label=label if named or curve.best else None, **style)
    axes.set_xlabel("step")
    axes.set_ylabel(curves.metric)
    axes.set_title(f"{name}: {curves.metric} by step, one line per point")
    axes.grid(True, alpha=0.3)
    if named or curves.best is not None:
        axes.legend(fontsize="small")
    write_figure(figure, path)
