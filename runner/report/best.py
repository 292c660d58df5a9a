"""`status --best`: each sweep's best point by one metric, or its Pareto set by two or more
(`--best loss,gpu_hours --min`, or `--best auto`: each sweep's own objectives and goals), as
lines or JSON. A point that breaks one of the sweep's constraints, or cannot be judged on one,
is never the best nor in the set.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from runner.analysis.aiming import Front, front_of, winner
from runner.core.aims import Aim, Goal
from runner.core.errors import RunnerError
from runner.observe.model import Observation, PointResult
from runner.report.status import best_text, metric_text, point_json
from runner.report.tables import params_text

OWN = "auto"
"""`--best auto`: each sweep's own objectives (its search's metrics and goals, or stop_when's)."""


def aims_of(sweep: Observation, asked: str, goal: Goal | None) -> tuple[Aim, ...]:
    """The objectives `--best` asks for (comma-separated, one goal for all), or the sweep's."""
    if asked != OWN:
        assert goal is not None
        return tuple(Aim(m.strip(), goal) for m in asked.split(",") if m.strip())
    own = sweep.search.aims.objectives
    if not own:
        raise RunnerError(
            f"{sweep.name}: --best auto: the sweep names no objective (params.sample.metric or"
            " stop_when): pass --best METRIC and --min or --max"
        )
    return own


def best(sweeps: Sequence[Observation], asked: str, goal: Goal | None, fmt: str) -> str:
    """Each sweep's best point, or Pareto set, in `fmt` (json or lines)."""
    found: list[Found] = []
    for sweep in sweeps:
        aims = aims_of(sweep, asked, goal)
        if len(aims) == 1:
            found.append((sweep, aims, winner(sweep, aims[0].metric, aims[0].goal), None))
        else:
            found.append((sweep, aims, None, front_of(sweep, aims, sweep.constraints)))
    if fmt == "json":
        return _json(found, asked, goal)
    lines = []
    for sweep, aims, point, front in found:
        if front is None:
            lines.append(best_text(sweep, point, aims[0].metric, aims[0].goal.short))
        else:
            lines += front_text(sweep, front)
    return "".join(line + "\n" for line in lines)


def front_text(sweep: Observation, front: Front) -> list[str]:
    """The Pareto set: a line, then a line per point."""
    by = ", ".join(f"{a.metric} ({a.goal.short})" for a in front.aims)
    if not front.pareto:
        return [f"{sweep.name}: no feasible point has a number for each of {by}"]
    head = f"{sweep.name}: the Pareto set by {by}: {len(front.pareto)} point(s)"
    return [head] + [
        f"  {p.experiment} "
        + " ".join(f"{m}={metric_text(p.metrics.get(m))}" for m in front.metrics)
        + f" {params_text(p.params)} {p.url}".rstrip()
        for p in front.pareto
    ]


Found = tuple[Observation, tuple[Aim, ...], PointResult | None, Front | None]


def _json(found: Sequence[Found], asked: str, goal: Goal | None) -> str:
    single = asked != OWN and "," not in asked
    data = {
        "metric": asked if single else [m.strip() for m in asked.split(",")],
        "goal": goal.short if goal is not None else OWN,
        "sweeps": [
            {
                "name": sweep.name,
                "objectives": [{"metric": a.metric, "goal": a.goal.short} for a in aims],
                "best": None if point is None else point_json(point),
                **({} if front is None else {"pareto": [point_json(p) for p in front.pareto]}),
            }
            for sweep, aims, point, front in found
        ],
    }
    return json.dumps(data, indent=2, default=str) + "\n"
