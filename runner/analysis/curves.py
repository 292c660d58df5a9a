"""Learning curves: each point's reported values of one metric by step, from the reporting
lines its log carried (`runner.observe.live`), the best point marked. Pure: what `report` draws
(`runner.report.curves`) and what its web page's `curves` section reads (`Curves.as_json`).

The metric is the page's own when some point reported it, else the first name (by name) any
point reported. Every point with at least one report of it has a line, finished or running.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from runner.observe.model import Observation, PointResult


@dataclass(frozen=True)
class Curve:
    """One point's line: (step, value) in the order printed."""

    experiment: str
    key: str
    state: str
    steps: tuple[tuple[int, float], ...]
    best: bool = False
    """The page's best point (by its finished metric)."""


@dataclass(frozen=True)
class Curves:
    metric: str
    lines: tuple[Curve, ...]

    @property
    def best(self) -> Curve | None:
        return next((c for c in self.lines if c.best), None)

    def as_json(self) -> dict[str, object]:
        """`{"metric", "points": [{"experiment", "key", "state", "best", "steps": [[step,
        value], ...]}]}`: the web page's `curves` section and `report --format json`."""
        return {
            "metric": self.metric,
            "points": [
                {
                    "experiment": c.experiment,
                    "key": c.key,
                    "state": c.state,
                    "best": c.best,
                    "steps": [[step, value] for step, value in c.steps],
                }
                for c in self.lines
            ],
        }


def reported_names(points: Sequence[PointResult]) -> list[str]:
    """Every value name some point reported, by name."""
    return sorted({name for p in points for r in p.reported for name in r.values})


def learning_curves(results: Observation, metric: str, best: str | None) -> Curves | None:
    """The curves of `metric` (else of the first reported name); `best`: the best point's key.
    None when no point reported anything."""
    names = reported_names(results.points)
    if not names:
        return None
    shown = metric if metric in names else names[0]
    lines = tuple(
        Curve(p.experiment, p.key, str(p.state), p.curve(shown), p.key == best)
        for p in results.points
        if p.curve(shown)
    )
    return Curves(shown, lines)
