"""The Pareto set of points judged by two or more objectives, and the hypervolume it covers:
pure functions, no library (shared by `report`, `status --best`, `propose` and the benchmarks).

A point dominates another when it is no worse on every objective and better on one; the Pareto
set is every point no other dominates (two points with equal values are both in it). Points in
lexicographic order of their values (each objective turned into a minimisation) can only be
dominated by points before them, so one pass against the set found so far finds it.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import TypeVar

from runner.core.aims import Goal

T = TypeVar("T")


def minimised(values: Sequence[float], goals: Sequence[Goal]) -> tuple[float, ...]:
    """The values turned so that lower is better on every objective."""
    return tuple(-v if g is Goal.MAXIMIZE else v for v, g in zip(values, goals, strict=True))


def dominates(a: Sequence[float], b: Sequence[float], goals: Sequence[Goal]) -> bool:
    """Whether values `a` dominate values `b`: no worse on every objective, better on one."""
    pairs = list(zip(minimised(a, goals), minimised(b, goals), strict=True))
    return all(x <= y for x, y in pairs) and any(x < y for x, y in pairs)


def front(
    items: Sequence[T], values: Callable[[T], Sequence[float] | None], goals: Sequence[Goal]
) -> list[T]:
    """The items no other item dominates, in their own order; an item without values (None, or
    one that is not finite) is in no front."""
    scored = []
    for i, item in enumerate(items):
        found = values(item)
        if found is not None and all(math.isfinite(v) for v in found):
            scored.append((minimised(found, goals), i))
    scored.sort()
    kept: list[tuple[tuple[float, ...], int]] = []
    for point, i in scored:
        if not any(_below(other, point) for other, _ in kept):
            kept.append((point, i))
    return [items[i] for _, i in sorted(kept, key=lambda k: k[1])]


def _below(a: tuple[float, ...], b: tuple[float, ...]) -> bool:
    """Domination between minimised values."""
    return all(x <= y for x, y in zip(a, b, strict=True)) and a != b


def hypervolume(points: Sequence[Sequence[float]], reference: Sequence[float]) -> float:
    """The area that two-objective points, all minimised, dominate up to `reference` (points
    beyond the reference add nothing)."""
    inside = sorted(
        (x, y) for x, y in points if x < reference[0] and y < reference[1]
    )  # by the first objective, then the second
    area, ceiling = 0.0, reference[1]
    for x, y in inside:
        if y < ceiling:
            area += (reference[0] - x) * (ceiling - y)
            ceiling = y
    return area
