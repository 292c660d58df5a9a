"""A sweep's search, as one value on the sweep (`Sweep.search`): how its points are found (the
strategy: written out, drawn once, proposed round by round, or halved in rungs over one of the
first two), what it weighs (`Aims`: objectives and constraints, spelled once) and its lock as
read. Every reader of a sweep sees the same search because it is part of the sweep: nothing
beside the manifest decides what is better, what a round is or which rung a point is at.

`runner.manifest` builds it; `runner.search` gives each strategy its behaviour (a proposer finds
new points, a promoter decides which go on); the readers rank by its aims.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from runner.core.aims import Aims
from runner.core.ladder import Ladder
from runner.core.locked import Locked
from runner.core.sample import Sample, row_identity
from runner.core.values import StrEnum


@dataclass(frozen=True)
class Grid:
    """Every point written out (grid, zip, include): nothing is searched."""


@dataclass(frozen=True)
class Drawn:
    """A sample drawn once (random, sobol, halton): `lock` writes its `n` points."""

    sample: Sample


@dataclass(frozen=True)
class Adaptive:
    """A sample proposed round by round from the results so far (tpe, gp): `propose`."""

    sample: Sample


class Promotion(StrEnum):
    """When a successive halving promotes a rung's points."""

    SYNC = "sync"
    """Once every point of the rung has ended (successive halving as written)."""
    ASYNC = "async"
    """As soon as a point ranks in the top `1/eta` of the rung's ended points (ASHA)."""


@dataclass(frozen=True)
class Halving:
    """Successive halving (`params.fidelity`) over a grid or a drawn sample: every configuration
    runs at rung 0's budget, the best of each rung again at the next one's."""

    base: Grid | Drawn
    ladder: Ladder
    promotion: Promotion = Promotion.SYNC


Strategy = Grid | Drawn | Adaptive | Halving


class Mode(StrEnum):
    """Who approves a stepping search's next round (`advance:`)."""

    REVIEW = "review"
    """A person: each round is a pull request (`propose`), merged by a reviewer."""
    AUTO = "auto"
    """The envelope the sweep's pull request approved: the schedule (and `submit`) advances
    every round inside it, each recorded so that anyone can recompute it."""

    @property
    def auto(self) -> bool:
        return self is Mode.AUTO


@dataclass(frozen=True)
class Advance:
    """`advance:`: who approves each round, and (`auto`) the most GPU-hours the whole search
    may use; None: the plan's projection of the whole search (`runner.plan.envelope`)."""

    mode: Mode = Mode.REVIEW
    max_gpu_hours: float | None = None


def strategy(sample: Sample | None, ladder: Ladder | None) -> Strategy:
    """How a sweep's points are found, from its sample (if any) and its halving's rungs (if
    any): written out, drawn, proposed, or halved over one of the first two."""
    base: Strategy = (
        Grid() if sample is None else Adaptive(sample) if sample.adaptive else Drawn(sample)
    )
    if ladder is None:
        return base
    return Halving(base if isinstance(base, Grid | Drawn) else Grid(), ladder)


@dataclass(frozen=True)
class Search:
    """The sweep's search: its strategy, its aims and its lock as the manifest loaded them."""

    strategy: Strategy = field(default_factory=Grid)
    aims: Aims = field(default_factory=Aims)
    lock: Locked | None = None
    """The lock as read (its sample part may belong to an older sample section); None when
    there is none, or it could not be read."""
    advance: Advance = field(default_factory=Advance)
    """Who approves each round (a stepping search's only: `steps`)."""

    @property
    def sample(self) -> Sample | None:
        """The sampled space (a drawn or adaptive sample, or the one a halving halves)."""
        strategy = self.strategy
        if isinstance(strategy, Halving):
            strategy = strategy.base
        return strategy.sample if isinstance(strategy, Drawn | Adaptive) else None

    @property
    def halving(self) -> Halving | None:
        return self.strategy if isinstance(self.strategy, Halving) else None

    @property
    def adaptive(self) -> bool:
        return isinstance(self.strategy, Adaptive)

    @property
    def steps(self) -> bool:
        """Whether it advances step by step from results (`propose`): an adaptive search, or a
        successive halving's rungs."""
        return isinstance(self.strategy, Adaptive | Halving)

    @property
    def auto(self) -> bool:
        """Whether its rounds advance inside its reviewed envelope, without a pull request."""
        return self.steps and self.advance.mode.auto

    @property
    def method(self) -> str:
        """How it is said: `grid`, a sample's method, or `halving over …`."""
        strategy = self.strategy
        base = strategy.base if isinstance(strategy, Halving) else strategy
        said = base.sample.method.value if isinstance(base, Drawn | Adaptive) else "grid"
        return f"halving over {said}" if isinstance(strategy, Halving) else said

    def rounds(self) -> dict[str, int]:
        """An adaptive search's round of each locked point, by `row_identity` of its values;
        empty for another search (all its points are one draw)."""
        lock, sample = self.lock, self.sample
        if not self.adaptive or sample is None or lock is None or not lock.rounds:
            return {}
        if lock.sample != sample.digest:
            return {}
        return {row_identity(row): k for row, k in zip(lock.rows, lock.rounds, strict=True)}
