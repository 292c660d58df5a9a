"""What a search weighs: its objectives (one metric, or two or more: a Pareto question, `metric:
[loss, gpu_hours]`) and its constraints (`peak_mem_gb <= 78`), from `params.sample`; and what a
point's numbers say against them. Pure.

A constraint is kept where its metric is a number on the right side of the limit, broken where
it is a number on the wrong side, and unknown where the point has no such number: a point is
feasible only when every constraint is kept, and only a feasible point is ever "best".
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from runner.core.marks import KeyPath
from runner.core.values import StrEnum
from runner.manifest.conditions import Add
from runner.manifest.sample import Goal, Sample

GPU_HOURS = "gpu_hours"
"""The built-in value every finished point has: its GPU-hours, measured from its jobs
(`runner.observe.usage`); usable wherever a metric is."""

_CONSTRAINT = re.compile(r"^\s*([A-Za-z_][\w.\-/]*)\s*(<=|>=)\s*(\S+)\s*$")


class Bound(StrEnum):
    """Which side of its limit a constraint keeps."""

    AT_MOST = "<="
    AT_LEAST = ">="


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


@dataclass(frozen=True)
class Aim:
    """One objective: a metric and which way is better."""

    metric: str
    goal: Goal


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


def parse_aims(
    raw: Mapping[str, Any], base: KeyPath, add: Add
) -> tuple[tuple[Aim, ...], tuple[Constraint, ...]]:
    """The section's objectives (none without `metric`) and constraints."""
    metrics = raw.get("metric", [])
    metrics = [metrics] if isinstance(metrics, str) else list(metrics)
    goals = raw.get("goal", Goal.MINIMIZE)
    if isinstance(goals, str):
        goals = [goals] * len(metrics)
    elif len(goals) != len(metrics):
        add(
            (*base, "goal"),
            f"{len(goals)} goal(s) for {len(metrics)} metric(s): write one goal per metric, in"
            " the same order (or one goal for all)",
            False,
        )
        goals = [Goal.MINIMIZE] * len(metrics)
    aims = tuple(Aim(m, Goal(g)) for m, g in zip(metrics, goals, strict=True))
    constraints = []
    for i, text in enumerate(raw.get("constraints", ())):
        parsed = constraint(text)
        if parsed is None:
            add(
                (*base, "constraints", i),
                f"{text!r} is not a constraint: write `metric <= number` or `metric >= number`"
                " (e.g. `peak_mem_gb <= 78`)",
                False,
            )
        else:
            constraints.append(parsed)
    return aims, tuple(constraints)


def constraint(text: str) -> Constraint | None:
    """A constraint as written (`name <= limit`, `name >= limit`); None when it is not one."""
    found = _CONSTRAINT.match(text)
    if found is None:
        return None
    try:
        limit = float(found.group(3))
    except ValueError:
        return None
    if not math.isfinite(limit):
        return None
    return Constraint(found.group(1), Bound(found.group(2)), limit)


def objectives(sample: Sample) -> tuple[Aim, ...]:
    """The sample's objectives: those parsed, else its one `metric` (none without)."""
    if sample.objectives:
        return sample.objectives
    return (Aim(sample.metric, sample.goal),) if sample.metric else ()
