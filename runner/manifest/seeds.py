"""A warm start's prior points, as the lock keeps them (its `seeds` key).

`propose` reads the other sweeps (`seed_from`) once, at round 0, and copies what it used into
the lock: each point's sweep and key, its values in this search's parameters, and its value of
each metric the search reads. Every later round reads them from the lock, so nothing another
sweep does later changes this search's proposals, and the same lock proposes the same bytes. The
lock's digest covers them; a lock without the key reads as before.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from runner.core.locked import Seed, Seeds
from runner.core.values import checked

SEEDS = "seeds"
"""The lock's key."""


def seeds_json(seeds: Seeds) -> dict[str, Any]:
    return {
        "metrics": list(seeds.metrics),
        "points": [[s.sweep, s.key, list(s.row), list(s.values)] for s in seeds.points],
    }


def parse_seeds(data: Mapping[str, Any], width: int) -> Seeds:
    """The key's value; ValueError (or KeyError, TypeError) for one not written by `seeds_json`
    for `width` parameters."""
    metrics = tuple(str(m) for m in data["metrics"])
    points = []
    for sweep, key, row, values in data["points"]:
        cells = tuple(None if v is None else checked(v) for v in row)
        numbers = tuple(float(v) for v in values)
        if len(cells) != width or len(numbers) != len(metrics):
            raise ValueError("a seed of another shape")
        if not all(math.isfinite(v) for v in numbers):
            raise ValueError("a seed without a finite value")
        points.append(Seed(str(sweep), str(key), cells, numbers))
    return Seeds(metrics, tuple(points))


@dataclass(frozen=True)
class LeftOut:
    """A point of another sweep a warm start did not learn from, and why."""

    sweep: str
    experiment: str
    why: str
    """`outside the space: …`, `no metric …`, `another commit …`, `not finished (failed)`."""


@dataclass(frozen=True)
class Seeding:
    """What a warm start learns from: the prior points, and every point it left out."""

    seeds: Seeds
    left_out: tuple[LeftOut, ...] = ()
    notes: tuple[str, ...] = ()
    """What else a reviewer should know (another sweep's parameters this search ignores)."""
