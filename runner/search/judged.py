"""A point's numbers as a search is told them: done with each objective's value (and how far it
breaks each constraint), or failed when it lacks a metric the search judges it by; and a warm
start's prior points, told the same way. Pure.

A point without a constraint's metric cannot be judged feasible or not: the search is told it
failed (it learns nothing from it, and never proposes it again), as for a missing objective.
"""

from __future__ import annotations

from collections.abc import Sequence

from runner.core.aims import Aims, Number
from runner.core.locked import Seeds
from runner.core.model import Cell
from runner.search.points import Result, Told


def judged(aims: Aims, row: Sequence[Cell], number: Number) -> Told:
    """A finished point (succeeded) as the search is told it, `number` its metrics."""
    values = [number(a.metric) for a in aims.objectives]
    limits = [(c, number(c.metric)) for c in aims.constraints]
    if not values or None in values or any(v is None for _, v in limits):
        return Told(tuple(row), Result.FAILED)
    done = [float(v or 0.0) for v in values]
    return Told(
        tuple(row),
        Result.DONE,
        done[0],
        values=tuple(done) if len(done) > 1 else (),
        excess=tuple(c.excess(float(v or 0.0)) for c, v in limits),
    )


def priors(aims: Aims, seeds: Seeds | None) -> tuple[Told, ...]:
    """The warm start's prior points, each told as a finished point of this search."""
    if seeds is None:
        return ()
    names = aims.metrics
    return tuple(
        judged(aims, seed.row, dict(zip(names, seeds.values(seed, names), strict=True)).get)
        for seed in seeds.points
    )


def front_values(point: Told) -> tuple[float, ...] | None:
    """A told point's objective values, when it finished and keeps every constraint."""
    if point.result is not Result.DONE or point.value is None or not point.feasible:
        return None
    return point.values or (point.value,)
