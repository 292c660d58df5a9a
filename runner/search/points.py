"""A search's points as values: a number in [0, 1) as a parameter's value, a point's
conditional parameters, and what a point so far says; pure, no library."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from enum import Enum, auto

from runner.core.aims import Aims
from runner.core.model import Cell, in_order
from runner.core.sample import Distribution, Kind, Sample
from runner.core.values import Value


class Result(Enum):
    """How a point so far ended, as Optuna's trial states: complete, failed, still running."""

    DONE = auto()
    FAILED = auto()
    PENDING = auto()


@dataclass(frozen=True)
class Told:
    """What a point so far says: its values, and how it ended (with its metric, when done)."""

    row: tuple[Cell, ...]
    """None where a conditional parameter is absent."""
    result: Result
    value: float | None = None
    key: str = ""
    """The point's key, when it was submitted (a halving breaks ties by it)."""
    name: str = ""
    """Its experiment's name, when it was submitted."""
    values: tuple[float, ...] = ()
    """Every objective's value, when the search has two or more (`value` is the first's)."""
    excess: tuple[float, ...] = ()
    """How far it breaks each of the search's constraints (above 0: broken)."""

    @property
    def feasible(self) -> bool:
        """Whether it keeps every constraint (a point that breaks one is never "best")."""
        return all(e <= 0 for e in self.excess)


Proposer = Callable[[Sample, Aims, Sequence[Told], int, int], list[tuple[Cell, ...]]]
"""What to try, the search's first seam: (sample, the sweep's aims, every point so far as told,
how many, the round) -> that many new points (fewer when the space has no more), never one
told. A drawn sample's proposer ignores the results (`runner.search.draw`); an adaptive one asks
Optuna (`runner.search.adaptive`). What continues is the second seam, the promoter
(`runner.search.rungs`)."""


def rounded(value: float, digits: int) -> float:
    """`digits` significant digits, as a float that prints the same way (`0.000123`)."""
    return float(f"{value:.{digits}g}")


def value(d: Distribution, u: float, digits: int) -> Value:
    """The value at quantile u (0 <= u < 1): equal strata of u map to equal strata of the range
    (of its logarithm for the log kinds), so a balanced draw stays balanced."""
    u = min(max(u, 0.0), math.nextafter(1.0, 0.0))
    if d.kind == Kind.CHOICE:
        return d.bounds[int(u * len(d.bounds))]
    low, high = float(d.bounds[0]), float(d.bounds[1])
    if d.kind == Kind.UNIFORM:
        return rounded(low + u * (high - low), digits)
    if d.kind == Kind.LOG_UNIFORM:
        return rounded(math.exp(math.log(low) + u * (math.log(high) - math.log(low))), digits)
    if d.kind == Kind.INT:
        return min(int(high), int(low) + int(u * (high - low + 1)))
    # log_int: equal strata of log(x) over [low, high + 1), floored
    drawn = math.exp(math.log(low) + u * (math.log(high + 1) - math.log(low)))
    return min(int(high), max(int(low), int(drawn)))


def row(sample: Sample, quantiles: Sequence[float]) -> tuple[Cell, ...]:
    """One point: every dimension is drawn (so a point's draw never depends on the conditions),
    then a conditional parameter is dropped (None) where its condition fails."""
    drawn = [value(d, u, sample.digits) for d, u in zip(sample.params, quantiles, strict=True)]
    return absent_dropped(sample, drawn)


def absent_dropped(sample: Sample, values: Sequence[Cell]) -> tuple[Cell, ...]:
    """`values` (in `sample.names` order) with each conditional parameter whose condition
    fails set to None, parents first so that a chain drops as a whole."""
    given = dict(zip(sample.names, values, strict=True))
    for condition in sample.conditions:
        if not condition.holds(given):
            given[condition.name] = None
    return tuple(given[n] for n in sample.names)


def parents_first(sample: Sample) -> list[Distribution]:
    """The sampled parameters in the order written, each conditional one after those its
    condition reads (acyclic: checked on load)."""
    return list(in_order(sample.params))
