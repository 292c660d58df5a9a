"""What a sweep weighs, as values: which way is better (`Goal`), its objectives (`Aim`: one
metric, or two or more for a Pareto question) and its constraints (`peak_mem_gb <= 78`), spelled
once for the whole sweep (`Aims`, on `runner.core.search.Search`); and what a point's numbers say
against them. Pure. `runner.manifest.aims` parses them.

A constraint is kept where its metric is a number on the right side of the limit, broken where
it is a number on the wrong side, and unknown where the point has no such number: a point is
feasible only when every constraint is kept, and only a feasible point is ever "best".
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from runner.core.values import StrEnum

GPU_HOURS = "gpu_hours"
"""The built-in value every finished point has: its GPU-hours, measured from its jobs
(`runner.observe.usage`); usable wherever a metric is."""


class Goal(StrEnum):
    """Which way is better: an objective's direction, and every ranking of points."""

    MINIMIZE = "minimize"
    MAXIMIZE = "maximize"

    def better(self, a: float, b: float) -> bool:
        """Whether a is strictly better than b."""
        return a > b if self is Goal.MAXIMIZE else a < b

    @property
    def short(self) -> str:
        """`min` or `max`, as `status --best` says it."""
        return self.value[:3]


@dataclass(frozen=True)
class Aim:
    """One objective: a metric and which way is better."""

    metric: str
    goal: Goal


class Bound(StrEnum):
    """Which side of its limit a constraint keeps."""

    AT_MOST = "<="
    AT_LEAST = ">="


@dataclass(frozen=True)
class Constraint:
    """`metric <= limit` or `metric >= limit`."""

    metric: str
    bound: Bound
    limit: float

    def excess(self, value: float) -> float:
        """How far `value` breaks it: above 0 broken, 0 or below kept (Optuna's convention)."""
        return value - self.limit if self.bound is Bound.AT_MOST else self.limit - value

    def __str__(self) -> str:
        return f"{self.metric} {self.bound} {self.limit:g}"


@dataclass(frozen=True)
class Aims:
    """A sweep's objectives and constraints: what its search optimises (an adaptive search's
    `metric`, a halving's), else the direction its `stop_when` names; none for a grid that says
    neither. Every reader ranks by these."""

    objectives: tuple[Aim, ...] = ()
    constraints: tuple[Constraint, ...] = ()

    @property
    def first(self) -> Aim | None:
        """The objective a single-metric reader ranks by (the first); None without one."""
        return self.objectives[0] if self.objectives else None

    @property
    def pareto(self) -> bool:
        """Two or more objectives: a Pareto question, with no single best point."""
        return len(self.objectives) > 1

    @property
    def metrics(self) -> tuple[str, ...]:
        """The metrics a point is judged by: each objective's, then each constraint's."""
        names = [a.metric for a in self.objectives]
        return tuple(dict.fromkeys([*names, *(c.metric for c in self.constraints)]))

    def goal_of(self, metric: str) -> Goal | None:
        """The direction the sweep gives `metric` (an objective's); None for another metric."""
        return next((a.goal for a in self.objectives if a.metric == metric), None)


class Feasibility(StrEnum):
    """What a point's numbers say of the search's constraints."""

    FEASIBLE = "feasible"
    INFEASIBLE = "infeasible"
    """A constraint's metric is on the wrong side of its limit."""
    NOT_JUDGED = "not judged"
    """No constraint is broken, but one's metric is not a number at this point."""

    @property
    def counts(self) -> bool:
        """Whether the point may be ranked, be on the Pareto front, or be "best"."""
        return self is Feasibility.FEASIBLE


Number = Callable[[str], "float | None"]
"""A point's metric as a finite number, or None (`PointResult.number`)."""


def feasibility(constraints: Sequence[Constraint], number: Number) -> Feasibility:
    """The point's verdict: broken beats not judged beats kept."""
    values = [number(c.metric) for c in constraints]
    if any(v is not None and c.excess(v) > 0 for c, v in zip(constraints, values, strict=True)):
        return Feasibility.INFEASIBLE
    return Feasibility.NOT_JUDGED if None in values else Feasibility.FEASIBLE


def broken(constraints: Sequence[Constraint], number: Number) -> list[str]:
    """The constraints the point breaks, and those it cannot be judged on, as words."""
    said = []
    for c in constraints:
        value = number(c.metric)
        if value is None:
            said.append(f"no {c.metric}")
        elif c.excess(value) > 0:
            said.append(f"{c.metric} {value:g} breaks {c}")
    return said
