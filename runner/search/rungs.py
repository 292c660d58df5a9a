"""Successive halving's promotions: which points of a finished rung go on to the next. Pure.

A rung's points are ranked by the metric toward the goal, a failed point (or one that ended
without the metric) after every finished one, ties broken by key, so the choice is reproducible;
the best `max(1, n // eta)` of those that finished go on, each the same configuration at the next
rung's budget. `runner.search.rounds` makes a step of it, as it does of a proposer's points.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from runner.core.aims import Aim
from runner.core.ladder import RUNG, Ladder
from runner.core.locked import Locked, Rows
from runner.core.model import Cell, Sweep
from runner.core.sample import row_identity
from runner.core.search import Promotion
from runner.manifest.fidelity import belonging, configuration_names, rung_zero
from runner.search import ranking
from runner.search.points import Result, Told


@dataclass(frozen=True)
class SuccessiveHalving:
    """A successive halving as its promoter sees it (Optuna's SuccessiveHalvingPruner is the
    same seam, beside the sampler): its rungs (`ladder`), the objective that
    ranks a rung, rung 0's configurations (rows of `names`, in manifest order) and what the
    lock's rungs belong to."""

    ladder: Ladder
    aim: Aim
    names: tuple[str, ...]
    """A configuration's parameters: the sweep's, but the fidelity parameter and the rung."""
    configurations: Rows
    of: str
    """`runner.manifest.fidelity.belonging` of this section and rung 0."""
    stale: bool = False
    """The lock exists but its rungs could not be read for this section (edited by hand, or
    another kind of lock): `propose` writes them again, as it does rungs of another `of`."""
    promotion: Promotion = Promotion.SYNC

    @property
    def told(self) -> tuple[str, ...]:
        """The parameters each observed point is told by: its configuration, budget and rung."""
        return (*self.names, self.ladder.param, RUNG)

    @property
    def last(self) -> int:
        """The last rung's number (it runs at `max`)."""
        return len(self.ladder.values) - 1

    def kept(self, points: int) -> int:
        """How many of a rung of `points` go on (`Ladder.kept`)."""
        return self.ladder.kept(points)


def halving_of(sweep: Sweep, stale: bool = False) -> SuccessiveHalving | None:
    """The sweep's successive halving as its promoter sees it (rung 0 from its space); None for
    a sweep that does not halve. `stale`: the load found the lock out of date."""
    strategy, aim = sweep.search.halving, sweep.search.aims.first
    if strategy is None or aim is None:
        return None
    names, configurations = configuration_names(sweep.space), rung_zero(sweep.space)
    of = belonging(strategy.ladder, aim, names, configurations)
    return SuccessiveHalving(
        strategy.ladder, aim, names, configurations, of, stale, strategy.promotion
    )


def so_far(halving: SuccessiveHalving, lock: Locked | None) -> tuple[Rows, tuple[int, ...]]:
    """The configurations promoted so far and the rung of each: none when the lock has no
    rungs, or rungs that belong to another fidelity section or another rung 0."""
    rungs = lock.rungs if lock is not None else None
    if rungs is None or replaced(halving, lock):
        return (), ()
    kept = [(k, row) for k, row in rungs.promoted if 0 < k <= halving.last]
    return tuple(row for _, row in kept), tuple(k for k, _ in kept)


def replaced(halving: SuccessiveHalving, lock: Locked | None) -> bool:
    """Whether the lock holds rungs of another fidelity section or rung 0, or rungs that could
    not be read (out of date)."""
    rungs = lock.rungs if lock is not None else None
    if halving.stale:
        return True
    return rungs is not None and (rungs.of != halving.of or rungs.names != halving.names)


def rung_told(
    halving: SuccessiveHalving,
    promoted: tuple[Rows, tuple[int, ...]],
    observed: Sequence[Told],
    rung: int,
) -> tuple[Told, ...]:
    """Each point of rung `rung` as observed (rows of its configuration), in the rung's order;
    pending where no point of that configuration, budget and rung was observed."""
    rows, rungs = promoted
    members = (
        halving.configurations
        if rung == 0
        else tuple(row for row, k in zip(rows, rungs, strict=True) if k == rung)
    )
    value = halving.ladder.values[rung]
    seen = {row_identity(t.row): t for t in observed}
    out = []
    for row in members:
        found = seen.get(row_identity((*row, value, rung)))
        out.append(
            Told(row, found.result, found.value, found.key, found.name)
            if found is not None
            else Told(row, Result.PENDING)
        )
    return tuple(out)


def ranked(halving: SuccessiveHalving, told: Sequence[Told]) -> list[Told]:
    """A rung's points best first: those finished with the metric by it (toward the goal),
    then the others; ties broken by key."""
    by_key = sorted(told, key=lambda t: t.key)
    done = ranking.ranked(
        by_key,
        lambda t: t.value if t.result == Result.DONE else None,
        halving.aim.goal,
    )
    chosen = {id(t) for t in done}
    return [*done, *(t for t in by_key if id(t) not in chosen)]


def promote(halving: SuccessiveHalving, told: Sequence[Told]) -> list[tuple[Cell, ...]]:
    """The configurations that go on to the next rung: the best `kept(n)` of a finished
    rung's points that finished with the metric (fewer when fewer finished)."""
    top = [t for t in ranked(halving, told) if t.result == Result.DONE and t.value is not None]
    return [t.row for t in top[: halving.kept(len(told))]]
