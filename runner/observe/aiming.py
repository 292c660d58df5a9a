"""What an observation says against a search's aims: each point as the search is told it
(`told_search`: every objective's value and each constraint's excess), which finished points a
constraint rules out, and the Pareto set of the others (`Front`). Pure; `report`, `status
--best` and `propose` read it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from runner.backends import ExperimentState
from runner.manifest.aims import Aim, Constraint, broken, feasibility, objectives
from runner.manifest.sample import Goal, Sample
from runner.observe.model import Absent, Observation, PointResult
from runner.search import ranking
from runner.search.judged import judged
from runner.search.pareto import front
from runner.search.points import Result, Told


def told_search(results: Observation, sample: Sample) -> tuple[Told, ...]:
    """Each submitted point as the search is told it, its row the values of the sample's
    parameters: finished (with every objective and constraint it is judged by), failed (or
    ended without one of those metrics), or still pending."""
    out = []
    for p in results.points:
        if isinstance(p.state, Absent):
            continue
        params = dict(p.params)
        row = tuple(params.get(n) for n in sample.names)
        if p.state == ExperimentState.SUCCEEDED:
            out.append(judged(sample, row, p.number))
        else:
            out.append(Told(row, Result.FAILED if p.state.final else Result.PENDING))
    return tuple(out)


def constraints_of(results: Observation) -> tuple[Constraint, ...]:
    """The sweep's own constraints (those of its sample section)."""
    sample = results.sample
    return () if sample is None else sample.constraints


def counts(point: PointResult, constraints: Sequence[Constraint]) -> bool:
    """Whether a point may be ranked: it keeps every constraint (it is never "best" else)."""
    return feasibility(constraints, point.number).counts


def winner(results: Observation, metric: str, goal: Goal) -> PointResult | None:
    """The best point by one metric toward `goal`, among those that keep the sweep's
    constraints (the best of `report`, `status --best` and the notices)."""
    limits = constraints_of(results)
    kept = [p for p in results.points if counts(p, limits)]
    return ranking.best(kept, lambda p: p.number(metric), goal)


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
    sample = results.sample
    aims = objectives(sample) if sample is not None else ()
    constraints = constraints_of(results)
    if len(aims) < 2 and not constraints:
        return None
    return front_of(results, aims if len(aims) > 1 else (aim,), constraints)
