"""What an observation says against its sweep's aims (`Sweep.search.aims`): which finished points
a constraint rules out, the best point by a metric among the others, and the Pareto set of two or
more objectives (`Front`). Pure; `report`, `status --best`, `propose` and the notices read it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from runner.backends import ExperimentState
from runner.core.aims import Aim, Constraint, Goal, broken, feasibility
from runner.observe.model import Observation, PointResult
from runner.search import ranking
from runner.search.pareto import front


def counts(point: PointResult, constraints: Sequence[Constraint]) -> bool:
    """Whether a point may be ranked: it keeps every constraint (it is never "best" else)."""
    return feasibility(constraints, point.number).counts


def winner(results: Observation, metric: str, goal: Goal) -> PointResult | None:
    """The best point by one metric toward `goal`, among those that keep the sweep's
    constraints (the best of `report`, `status --best` and the notices)."""
    limits = results.constraints
    kept = [p for p in results.points if counts(p, limits)]
    return ranking.best(kept, lambda p: p.number(metric), goal)


def ranked(results: Observation, metric: str, goal: Goal) -> list[PointResult]:
    """The finished points that keep the sweep's constraints, best first by `metric` toward
    `goal` (ties in the sweep's order): every reader's ranking."""
    limits = results.constraints
    kept = [p for p in results.points if counts(p, limits)]
    return ranking.ranked(kept, lambda p: p.finished(metric), goal)


@dataclass(frozen=True)
class Front:
    """A sweep judged by two or more objectives: its Pareto set, and what was ruled out."""

    aims: tuple[Aim, ...]
    constraints: tuple[Constraint, ...]
    pareto: tuple[PointResult, ...]
    """The succeeded, feasible points with every objective, that no other dominates; in the
    sweep's order."""
    finished: tuple[PointResult, ...]
    """Every succeeded point with every objective as a number, feasible or not."""
    ruled_out: tuple[tuple[PointResult, str], ...] = ()
    """Finished points a constraint rules out (broken, or not judged: no such metric), and why."""

    @property
    def metrics(self) -> tuple[str, ...]:
        return tuple(a.metric for a in self.aims)

    def values(self, point: PointResult) -> tuple[float, ...] | None:
        """The point's objective values, when each is a finite number."""
        found = [point.number(m) for m in self.metrics]
        return None if None in found else tuple(float(v or 0.0) for v in found)


def front_of(results: Observation, aims: Sequence[Aim], constraints: Sequence[Constraint]) -> Front:
    """The sweep's front by `aims`, its constraints ruling points out."""
    base = Front(tuple(aims), tuple(constraints), (), ())
    finished = [
        p
        for p in results.points
        if p.state == ExperimentState.SUCCEEDED and base.values(p) is not None
    ]
    kept = [p for p in finished if counts(p, constraints)]
    out = [p for p in finished if not counts(p, constraints)]
    ruled = [(p, "; ".join(broken(constraints, p.number))) for p in out]
    pareto = front(kept, base.values, [a.goal for a in aims])
    return Front(base.aims, base.constraints, tuple(pareto), tuple(finished), tuple(ruled))


def sweep_front(results: Observation, aim: Aim) -> Front | None:
    """The front by the sweep's own objectives when it has two or more (else by `aim`, the
    page's metric), when it has two or more objectives or any constraint; else None."""
    aims = results.search.aims
    if not aims.pareto and not aims.constraints:
        return None
    return front_of(results, aims.objectives if aims.pareto else (aim,), aims.constraints)
