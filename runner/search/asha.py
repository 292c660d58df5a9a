"""Asynchronous successive halving (`params.fidelity.promotion: async`): which points of a rung
go on now, without waiting for the rest of the rung. Pure.

ASHA (Li et al., MLSys 2020) as Syne Tune's promotion type has it: once at least `eta` points of
a rung have ended (finished or failed; a pending point is not counted), a point that ranks in
the top `floor(m / eta)` of the `m` ended, by `rungs.ranked` (toward the goal; ties by key,
then by configuration), goes on, unless it already has: a promotion is never taken back, so
the next rung only grows.
Each decision is a `Cut`, the data a decision record shows (what had ended, how it ranked,
where the cut fell), so anyone can recompute it.

What is true of it (tests/test_asha.py checks each): a pending or failed point is never
promoted, nor one without the metric; a decision promotes at most `floor(m / eta)`; after it,
every point of the top `floor(m / eta)` is in the next rung; over a rung's life it promotes at
most `m - eta + 1` points, one for each ending from the `eta`-th (a rung whose points end in
improving order reaches that bound, so it may promote more than synchronous halving's
`kept(n)`); once every point of a rung of at least `eta` has ended and it is decided, the next
rung holds every point synchronous halving's `rungs.promote` keeps (it may hold more); when
the points end best first it holds exactly those; the order points are told in never matters.

A rung that can get no more points (rung 0, or one whose rung below is settled, has ended and
has nothing left to promote) is settled: once its last point has ended it is cut as
synchronous halving cuts a finished rung (`kept(n)`, at least one point). This only matters for
a rung of fewer than `eta` points, which the asynchronous rule alone would never promote from:
without it such a halving would stall forever (`step`).
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass, replace

from runner.core.locked import Rows
from runner.core.model import Cell
from runner.core.sample import row_identity
from runner.search import rungs
from runner.search.points import Result, Told
from runner.search.rungs import SuccessiveHalving


@dataclass(frozen=True)
class Cut:
    """One asynchronous decision on a rung, as a decision record shows it."""

    rung: int
    ranked: tuple[Told, ...]
    """The rung's ended points (finished or failed), best first (`rungs.ranked`)."""
    pending: int
    """The rung's points that had not ended: not counted, never promoted."""
    keep: int
    """How many of the best go on: `floor(m / eta)` once `m >= eta` of them have ended, else
    none (a settled rung whose every point has ended: synchronous halving's `kept(m)`)."""
    promoted: Rows
    """The configurations promoted now: the best `keep` that finished with the metric, less
    those already in the next rung."""
    settled: bool = False
    """Whether the rung could get no more points and every point had ended (cut as a whole)."""

    @property
    def ended(self) -> int:
        """`m`: the rung's points that have ended."""
        return len(self.ranked)

    @property
    def top(self) -> tuple[Told, ...]:
        """The best `keep` points that finished with the metric: all in the next rung after it."""
        return tuple(t for t in self.ranked if _finished(t))[: self.keep]


def promotable(
    halving: SuccessiveHalving, rung: int, told: Sequence[Told], above: Collection[str]
) -> list[tuple[Cell, ...]]:
    """The configurations of rung `rung` (below the last) to promote now: of the m points of the
    rung that have ended (Result.DONE or FAILED; pending ones are not counted), when m >= eta,
    the best floor(m / eta) of them by `rungs.ranked` that finished with the metric, less those
    whose `row_identity` is in `above` (already in rung + 1: a promotion is never taken back)."""
    return list(cut(halving, rung, told, above).promoted)


def cut(halving: SuccessiveHalving, rung: int, told: Sequence[Told], above: Collection[str]) -> Cut:
    """`promotable`'s decision with what it read: the ranking and where the cut fell."""
    return _cut(halving, rung, told, above, len(_ended(told)) // halving.ladder.eta)


def step(
    halving: SuccessiveHalving, promoted: tuple[Rows, tuple[int, ...]], observed: Sequence[Told]
) -> tuple[Cut, ...]:
    """Every rung's decision now, rung 0 first, from the configurations promoted so far and the
    rung of each (`rungs.so_far`) and every point as observed (rows of configuration, budget and
    rung). A settled rung whose every point has ended is cut as a whole (`kept(n)`); the next
    rung is settled when this one is, has ended and promotes nothing more now."""
    above_of = [
        {row_identity(row) for row, k in zip(*promoted, strict=True) if k == rung + 1}
        for rung in range(halving.last)
    ]
    cuts: list[Cut] = []
    settled = True  # rung 0's configurations are known up front
    for rung in range(halving.last):
        told = rungs.rung_told(halving, promoted, observed, rung)
        whole = settled and all(t.result != Result.PENDING for t in told)
        if whole:
            whole_cut = _cut(halving, rung, told, above_of[rung], halving.kept(len(told)))
            decided = replace(whole_cut, settled=True)
        else:
            decided = cut(halving, rung, told, above_of[rung])
        cuts.append(decided)
        settled = whole and not decided.promoted
    return tuple(cuts)


def _cut(
    halving: SuccessiveHalving,
    rung: int,
    told: Sequence[Told],
    above: Collection[str],
    keep: int,
) -> Cut:
    if not 0 <= rung < halving.last:
        raise ValueError(f"rung {rung}: only a rung below the last ({halving.last}) promotes")
    # by configuration first, so that points told without keys rank the same in any order
    ended = sorted(_ended(told), key=lambda t: row_identity(t.row))
    ranked = tuple(rungs.ranked(halving, ended))
    top = [t for t in ranked if _finished(t)][:keep]
    promoted = tuple(t.row for t in top if row_identity(t.row) not in above)
    return Cut(rung, ranked, len(told) - len(ended), keep, promoted)


def _ended(told: Sequence[Told]) -> list[Told]:
    return [t for t in told if t.result != Result.PENDING]


def _finished(told: Told) -> bool:
    return told.result == Result.DONE and told.value is not None
