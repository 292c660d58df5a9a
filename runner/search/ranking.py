"""Which point is best, how the best moved, and which parameter mattered: pure functions of a
search's values (no library, no I/O), shared by `status --best`, `propose`, the notifier and
`report`.

Importance without any extra is the share of the metric's variance that each parameter's main
effect explains (Kelley's epsilon squared, so a parameter that only splits the points into
groups earns nothing by chance), normalised to sum to 1. A parameter whose values rarely repeat
(a sampled one) is grouped into quantile bins first. fANOVA, Optuna's default, is in
`runner.search.adaptive` (the one Optuna user).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TypeVar

from runner.core.aims import Goal
from runner.core.model import Cell
from runner.core.sample import Distribution, Kind
from runner.core.values import StrEnum, Value, identity

T = TypeVar("T")


class Estimator(StrEnum):
    """How importance was computed."""

    FANOVA = "fanova"
    VARIANCE = "main-effect variance"


def ranked(items: Sequence[T], value: Callable[[T], float | None], goal: Goal) -> list[T]:
    """The items that have a finite value, best first; on a tie, the earlier item first."""
    scored = [(v, i, item) for i, item in enumerate(items) if _finite(v := value(item))]
    sign = -1.0 if goal is Goal.MAXIMIZE else 1.0
    scored.sort(key=lambda t: (sign * float(t[0] or 0.0), t[1]))
    return [item for _, _, item in scored]


def best(items: Sequence[T], value: Callable[[T], float | None], goal: Goal) -> T | None:
    """The item with the best finite value (the earliest on a tie); None when none has one."""
    top = ranked(items, value, goal)
    return top[0] if top else None


def best_so_far(values: Sequence[float | None], goal: Goal) -> tuple[float | None, ...]:
    """The best value among the first i + 1 values, for each i (None until one is finite)."""
    out: list[float | None] = []
    current: float | None = None
    for v in values:
        if _finite(v) and (current is None or goal.better(float(v or 0.0), current)):
            current = v
        out.append(current)
    return tuple(out)


def _finite(value: float | None) -> bool:
    return value is not None and math.isfinite(value)


@dataclass(frozen=True)
class Importance:
    """One share per parameter, each in [0, 1], summing to 1; or none, and why."""

    method: Estimator
    shares: tuple[tuple[str, float], ...] = ()
    """Largest first."""
    note: str = ""
    """Why there are no shares (too few finished points, a metric that never varies)."""


def min_points(parameters: int) -> int:
    """The finished points importance needs: two per parameter, and never fewer than five."""
    return max(5, 2 * parameters)


def too_few(method: Estimator, names: Sequence[str], finished: int) -> Importance | None:
    """An Importance that says why not, when there are too few points or parameters to judge."""
    if not names:
        return Importance(method, note="no parameter varies among the finished points")
    needed = min_points(len(names))
    if finished < needed:
        return Importance(
            method,
            note=f"too few finished points to judge ({finished}; {needed} needed for"
            f" {len(names)} parameter(s))",
        )
    return None


def normalised(method: Estimator, raw: dict[str, float]) -> Importance:
    """Shares summing to 1, largest first (ties by name); a note when all are zero."""
    total = sum(max(0.0, v) for v in raw.values())
    if total <= 0 or not math.isfinite(total):
        return Importance(method, note="no parameter explains the metric's variance")
    shares = sorted(((n, max(0.0, v) / total) for n, v in raw.items()), key=lambda t: (-t[1], t[0]))
    return Importance(method, tuple(shares))


def main_effects(
    names: Sequence[str], rows: Sequence[Sequence[Cell]], values: Sequence[float]
) -> Importance:
    """Each parameter's share of the metric's variance, from its main effect alone (a
    conditional parameter's absence is one level of it)."""
    method = Estimator.VARIANCE
    refused = too_few(method, names, len(values))
    if refused is not None:
        return refused
    mean = sum(values) / len(values)
    total = sum((v - mean) ** 2 for v in values)
    if total <= 0:
        return Importance(method, note="the metric has the same value at every finished point")
    raw = {}
    for j, name in enumerate(names):
        levels = groups([row[j] for row in rows])
        between = 0.0
        for members in levels:
            group_mean = sum(values[i] for i in members) / len(members)
            between += len(members) * (group_mean - mean) ** 2
        k, n = len(levels), len(values)
        within = (total - between) / (n - k) if n > k else 0.0
        raw[name] = max(0.0, between - (k - 1) * within) / total
    return normalised(method, raw)


def groups(column: Sequence[Cell]) -> list[list[int]]:
    """Indices of equal values; numbers that rarely repeat go into about sqrt(n) quantile bins."""
    by_value: dict[str | None, list[int]] = {}
    for i, v in enumerate(column):
        by_value.setdefault(None if v is None else identity(v), []).append(i)
    numeric = all(isinstance(v, int | float) and not isinstance(v, bool) for v in column)
    if not numeric or len(by_value) <= len(column) // 2:
        return list(by_value.values())
    bins = max(2, round(math.sqrt(len(column))))
    order = sorted(range(len(column)), key=lambda i: float(column[i] or 0))
    return [order[b * len(order) // bins : (b + 1) * len(order) // bins] for b in range(bins)]


def spanned(name: str, column: Sequence[Value]) -> Distribution:
    """The space a parameter's values span, for fANOVA: a range of the numbers seen, or the
    values seen as choices. (A sampled parameter's own distribution says whether it is on a
    log scale; the values of a grid axis do not.)"""
    numbers = [v for v in column if isinstance(v, int | float) and not isinstance(v, bool)]
    if len(numbers) == len(column) and numbers:
        low, high = min(numbers), max(numbers)
        if all(isinstance(v, int) for v in numbers):
            return Distribution(name, Kind.INT, (low, high))
        return Distribution(name, Kind.UNIFORM, (float(low), float(high)))
    seen: dict[str, Value] = {}
    for v in column:
        seen.setdefault(identity(v), v)
    return Distribution(name, Kind.CHOICE, tuple(seen.values()))
