"""A sampled space as values: the checked `params.sample` section (`runner.manifest.sample`
parses it) — its distributions, how its points are found, its known points and the sweeps a warm
start learns from. What it optimises is the sweep's (`runner.core.aims.Aims`), not the sample's.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from runner.core.conditions import Cell, Condition, in_order
from runner.core.values import StrEnum, Value, canonical_json, identity

DEFAULT_DIGITS = 4
DEFAULT_SEED = 0


class Method(StrEnum):
    """How the points are found: drawn at once (`lock`), or proposed round by round from the
    results so far (`propose`)."""

    RANDOM = "random"
    SOBOL = "sobol"
    HALTON = "halton"
    TPE = "tpe"
    GP = "gp"

    @property
    def adaptive(self) -> bool:
        """Whether `propose` adds the points round by round, from the results so far."""
        return self in (Method.TPE, Method.GP)


class Kind(StrEnum):
    """A sampled parameter's distribution."""

    UNIFORM = "uniform"
    LOG_UNIFORM = "log_uniform"
    INT = "int"
    LOG_INT = "log_int"
    CHOICE = "choice"

    @property
    def integer(self) -> bool:
        return self in (Kind.INT, Kind.LOG_INT)

    @property
    def log(self) -> bool:
        """Drawn evenly over the logarithm."""
        return self in (Kind.LOG_UNIFORM, Kind.LOG_INT)


@dataclass(frozen=True)
class Distribution:
    """One sampled parameter (`runner.search.points` maps a number in [0, 1) to its value)."""

    name: str
    kind: Kind
    bounds: tuple[Value, ...]
    """[low, high] for ranges; the values for `choice`."""
    when: Condition | None = None
    """A conditional parameter's condition: drawn always, kept only where it holds."""

    @property
    def on(self) -> tuple[str, ...]:
        return self.when.on if self.when is not None else ()


class Commits(StrEnum):
    """Which of another sweep's points a warm start may learn from."""

    SAME = "same"
    """Only those submitted at a commit whose code (every file outside sweeps/) is the code
    checked out now: the runs this search's own would repeat."""
    ANY = "any"
    """Every finished point, whatever code it ran."""


@dataclass(frozen=True)
class SeedFrom:
    """`seed_from: [{sweep: NAME, commit: same|any}]`: one sweep to learn from."""

    sweep: str
    commit: Commits = Commits.SAME


@dataclass(frozen=True)
class Sample:
    """The checked `params.sample` section."""

    method: Method
    n: int
    seed: int
    digits: int
    params: tuple[Distribution, ...]
    declared: tuple[str, ...] = ()
    """Every name the section claimed, those with a bad distribution too (no cascade)."""
    batch: int = 0
    """Adaptive methods: points per round."""
    proceed: float = 1.0
    """Adaptive methods: the fraction of a round finished before the next is proposed."""
    enqueue: tuple[tuple[Cell, ...], ...] = ()
    """Known points, as written, in `names` order: the lock's first points."""
    seed_from: tuple[SeedFrom, ...] = ()
    """Sweeps whose finished points are an adaptive search's prior trials."""
    seeded: tuple[str, ...] = ()
    """With `seed_from`: the metrics each prior point is copied with (the sweep's objectives'
    and constraints', `Aims.metrics`); part of the digest, as a prior point is made of them."""

    @property
    def adaptive(self) -> bool:
        return self.method.adaptive

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(d.name for d in self.params)

    @property
    def conditions(self) -> tuple[Condition, ...]:
        """The conditional parameters' conditions, each after those of the names it reads."""
        return in_order(tuple(d.when for d in self.params if d.when is not None))

    @property
    def digest(self) -> str:
        """What the lock must belong to: everything but `n`."""
        identity_ = {
            "method": self.method,
            "seed": self.seed,
            "digits": self.digits,
            "space": [[d.name, d.kind, list(d.bounds), *_when(d)] for d in self.params],
        }
        # Known points and warm-start sources are what the first points are made of: each
        # makes another sample (absent when empty, so older locks stay valid).
        if self.enqueue:
            identity_["enqueue"] = [row_identity(row) for row in self.enqueue]
        if self.seed_from:
            identity_["seed_from"] = [[s.sweep, s.commit] for s in self.seed_from]
            identity_["seeded"] = list(self.seeded)
        return hashlib.sha256(canonical_json(identity_).encode()).hexdigest()


def _when(d: Distribution) -> list[Any]:
    """A condition's part of the digest; nothing for an unconditional parameter (older locks
    stay valid)."""
    return [] if d.when is None else [[[n, list(vs)] for n, vs in d.when.when]]


def row_identity(row: Sequence[Cell]) -> str:
    """Equal for two rows exactly when they are the same point (null for absent)."""
    return canonical_json([None if v is None else identity(v) for v in row])
