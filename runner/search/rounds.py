"""The next step of a search, as data: the one decision behind `lock` and `propose`.

Every method is a sequence of rounds whose points a proposer finds (the seam: `proposer`), or,
for a successive halving (`params.fidelity`), rungs whose points a finished rung promotes
(`runner.search.rungs`, the same step: `next_rung`):
a drawn sample (random, Sobol, Halton) is one round of `n` points, drawn once (growing `n`
appends), whose results are never read; an adaptive search (`tpe`, `gp`) proposes `batch`
points a round from the results so far. From the lock (every point so far and its round) and
what was observed of those points (each one's result, as `status` shows it, and the sweep's own
stop): once the last round has finished (`proceed` of it, by default all), the next round is
proposed. The same lock, results and seed propose the same points. Stops at `n`, at the sweep's
`stop_when` or `max_failures`, and says which. Nothing here reads the ledger or a backend:
`runner.locking.step` observes the sweep and writes the lock, and `runner.report.rounds`
turns a round into its line and its pull request.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, replace

from runner.core.aims import Aims
from runner.core.locked import Locked, Rows
from runner.core.model import Cell, Sweep
from runner.core.sample import Sample, row_identity
from runner.core.search import Adaptive, Drawn, Promotion, Search
from runner.core.values import StrEnum
from runner.manifest.seeds import Seeding
from runner.search import adaptive, asha, draw, rungs
from runner.search.judged import front_values, priors
from runner.search.pareto import front
from runner.search.points import Proposer, Result, Told
from runner.search.ranking import best
from runner.search.rungs import SuccessiveHalving


class RoundVerdict(StrEnum):
    """What `next_round` decided."""

    PROPOSED = "proposed"
    COMPLETE = "complete"
    """n points proposed already."""
    WAITING = "waiting"
    """Too few points of the last round have finished (`proceed`)."""
    STOPPED = "stopped"
    """The sweep's `max_failures` or `stop_when`."""
    EXHAUSTED = "exhausted"
    """No point left in the space that was not proposed already (after rounding)."""


@dataclass(frozen=True)
class SoFar:
    """What the backend says of a search's points so far, as `status` shows it."""

    told: tuple[Told, ...] = ()
    """Each point submitted, its row in the order of the sample's names; a point of the lock
    that is not among them (not submitted yet) is pending."""
    stop: str = ""
    """Why the sweep creates no new points (`max_failures`, `stop_when`); empty when it does."""
    seeding: Seeding | None = None
    """A warm start's prior points as read from the other sweeps, before round 0 (later rounds
    read the lock's copy)."""


@dataclass(frozen=True)
class Next:
    """The decision, and the lock's points after it."""

    verdict: RoundVerdict
    number: int
    """The round proposed; when waiting, the round waited for."""
    rows: Rows
    """Every point of the lock, the new ones last (None where a conditional parameter is absent)."""
    rounds: tuple[int, ...]
    """The round of each point."""
    new: Rows = ()
    previous: tuple[Told, ...] = ()
    """The points of the last round so far, with their results (none before round 0)."""
    best: Told | None = None
    """The best point so far (finished with the metric)."""
    finished: int = 0
    """The points so far that finished with the metric."""
    stop: str = ""
    seeding: Seeding | None = None
    """The prior points the search learned from (the lock keeps them), and those left out."""
    front: tuple[Told, ...] = ()
    """Two or more objectives: the Pareto set so far (of the feasible finished points)."""
    cuts: tuple[asha.Cut, ...] = ()
    """An asynchronous halving's decision on each rung below the last (`runner.search.asha`)."""

    @property
    def ended(self) -> int:
        """The points of the last round that ended (finished or failed)."""
        return sum(t.result != Result.PENDING for t in self.previous)


def so_far(sample: Sample, lock: Locked | None) -> tuple[Rows, tuple[int, ...]]:
    """The points in the sample's lock and the round of each (none for a new or changed sample)."""
    if lock is None or lock.sample != sample.digest:
        return (), ()
    return lock.rows, lock.rounds or (0,) * len(lock.rows)


def observes(search: Search) -> bool:
    """Whether the next step depends on results: an adaptive search whose lock holds points,
    fewer than n; a successive halving's next rung, always; a drawn sample's points, never."""
    strategy = search.strategy
    if isinstance(strategy, Drawn):
        return False
    if not isinstance(strategy, Adaptive):
        return True
    rows, _ = so_far(strategy.sample, search.lock)
    return 0 < len(rows) < strategy.sample.n


def reads_others(search: Search) -> bool:
    """Whether the next step reads other sweeps: a warm start whose lock holds no point of this
    sample yet (round 0 copies what it learns from into the lock; later rounds read that)."""
    strategy = search.strategy
    if not isinstance(strategy, Adaptive) or not strategy.sample.seed_from:
        return False
    rows, _ = so_far(strategy.sample, search.lock)
    return not rows


def proposer(sample: Sample) -> Proposer:
    """Who finds the points of the sample's method: Optuna's samplers for an adaptive search,
    else the seeded quantile draw."""
    return adaptive.propose if sample.adaptive else draw.propose


def advance(sweep: Sweep, observed: SoFar, stale: bool = False) -> Next:
    """A stepping search's next step (`Search.steps`), from its search (its strategy, aims and
    lock) and what was observed: an adaptive search's next round; a successive halving's next
    rung (`stale`: the load found its lock out of date). ValueError for another search (a
    drawn sample's points are `drawn`'s, all at once)."""
    search = sweep.search
    halving = rungs.halving_of(sweep, stale)
    if halving is not None:
        return next_rung(halving, search.lock, observed)
    strategy = search.strategy
    if isinstance(strategy, Adaptive):
        return next_round(strategy.sample, search.aims, search.lock, observed)
    raise ValueError(f"{sweep.name}: {search.method} does not advance step by step")


def drawn(sample: Sample, aims: Aims, lock: Locked | None) -> Next:
    """A drawn sample's points: those locked kept, then new ones drawn up to `n`."""
    rows, _ = so_far(sample, lock)
    kept = rows[: sample.n]
    known = () if kept else sample.enqueue[: sample.n]  # the known points come first
    taken = tuple(Told(row, Result.PENDING) for row in kept[len(sample.enqueue) :])
    count = sample.n - len(kept) - len(known)
    new = (*known, *proposer(sample)(sample, aims, taken, count, 0))
    changed = bool(new) or len(kept) < len(rows) or lock is None or lock.sample != sample.digest
    verdict = RoundVerdict.PROPOSED if changed else RoundVerdict.COMPLETE
    every = (*kept, *new)
    return Next(verdict, 0, every, (0,) * len(every), new)


def next_round(sample: Sample, aims: Aims, lock: Locked | None, observed: SoFar) -> Next:
    """An adaptive search's next round, toward the sweep's `aims`."""
    rows, rounds = so_far(sample, lock)
    if len(rows) >= sample.n:
        return Next(RoundVerdict.COMPLETE, max(rounds, default=0), rows, rounds)
    told = told_rows(rows, observed.told)
    last = max(rounds, default=-1)
    mine = tuple(t for t, k in zip(told, rounds, strict=True) if k == last)
    seeding = observed.seeding
    if rows and lock is not None:
        seeding = None if lock.seeds is None else Seeding(lock.seeds)
    done = [t for t in told if t.result == Result.DONE and t.value is not None]
    top, pareto = _best(aims, [t for t in done if t.feasible])
    waits = Next(
        RoundVerdict.WAITING, last, rows, rounds, (), mine, top, len(done), observed.stop, seeding
    )
    waits = replace(waits, front=pareto)
    if rows and observed.stop:  # a stop is said at once: a held point would never end
        return replace(waits, verdict=RoundVerdict.STOPPED)
    if rows and waits.ended < math.ceil(sample.proceed * len(mine)):
        return waits
    known = () if rows else sample.enqueue  # round 0 starts with the known points
    count = min(max(sample.batch, len(known)), sample.n - len(rows))
    pending = tuple(Told(row, Result.PENDING) for row in known)
    asked = count - len(known)
    prior = priors(aims, seeding.seeds if seeding is not None else None)
    found = proposer(sample)(sample, aims, (*prior, *told, *pending), asked, last + 1)
    return appended(waits, (*known, *found))


def appended(waits: Next, new: Rows) -> Next:
    """The step that proposes `new` as the round (or rung) after the one `waits` waited for;
    exhausted when there is none."""
    if not new:
        return replace(waits, verdict=RoundVerdict.EXHAUSTED)
    number = waits.number + 1
    return replace(
        waits,
        verdict=RoundVerdict.PROPOSED,
        number=number,
        rows=(*waits.rows, *new),
        rounds=(*waits.rounds, *(number,) * len(new)),
        new=new,
    )


def _best(aims: Aims, done: Sequence[Told]) -> tuple[Told | None, tuple[Told, ...]]:
    """The best finished point (one objective), or the Pareto set (two or more)."""
    goals = [a.goal for a in aims.objectives]
    if len(goals) > 1:
        return None, tuple(front(done, front_values, goals))
    return (best(done, lambda t: t.value, goals[0]) if goals else None), ()


def next_rung(halving: SuccessiveHalving, lock: Locked | None, observed: SoFar) -> Next:
    """A successive halving's next rung, once every point of the last one has ended: its best
    `max(1, n // eta)` finished configurations (`runner.search.rungs`). Rows are the
    configurations promoted so far, rounds their rungs; `previous` the last rung's points.
    Rungs of another fidelity section or rung 0 are dropped (the lock is rewritten)."""
    step = _rung_step(halving, lock, observed)
    if step.verdict is not RoundVerdict.PROPOSED and rungs.replaced(halving, lock):
        return replace(step, verdict=RoundVerdict.PROPOSED)
    return step


def _rung_step(halving: SuccessiveHalving, lock: Locked | None, observed: SoFar) -> Next:
    if halving.promotion is Promotion.ASYNC:
        return _async_step(halving, lock, observed)
    promoted = rungs.so_far(halving, lock)
    rows, numbers = promoted
    last = max(numbers, default=0)
    mine = rungs.rung_told(halving, promoted, observed.told, last)
    done = [t for t in mine if t.result == Result.DONE and t.value is not None]
    top = best(done, lambda t: t.value, halving.aim.goal)
    waits = Next(RoundVerdict.WAITING, last, rows, numbers, (), mine, top, len(done), observed.stop)
    if last == halving.last:
        return replace(waits, verdict=RoundVerdict.COMPLETE)
    if observed.stop:  # said at once: a point the stop holds would never end
        return replace(waits, verdict=RoundVerdict.STOPPED)
    if waits.ended < len(mine):
        return waits
    return appended(waits, tuple(rungs.promote(halving, mine)))


def _async_step(halving: SuccessiveHalving, lock: Locked | None, observed: SoFar) -> Next:
    """ASHA (`runner.search.asha`): from every rung at once, the points that rank in the top
    `floor(m / eta)` of its `m` ended go on now; `number` is the highest rung reached, and
    `previous` its points. Complete once nothing is pending and the last rung holds a point."""
    rows, numbers = promoted = rungs.so_far(halving, lock)
    cuts = asha.step(halving, promoted, observed.told)
    new = [(c.rung + 1, row) for c in cuts for row in c.promoted]
    grown = ((*rows, *(r for _, r in new)), (*numbers, *(k for k, _ in new)))
    last = max(grown[1], default=0)
    mine = rungs.rung_told(halving, grown, observed.told, last)
    done = [t for t in mine if t.result == Result.DONE and t.value is not None]
    top = best(done, lambda t: t.value, halving.aim.goal)
    step = Next(RoundVerdict.WAITING, last, rows, numbers, (), mine, top, len(done), observed.stop)
    step = replace(step, cuts=cuts)
    if observed.stop:  # said at once: a point the stop holds would never end
        return replace(step, verdict=RoundVerdict.STOPPED)
    if new:
        added = tuple(row for _, row in new)
        return replace(
            step, verdict=RoundVerdict.PROPOSED, rows=grown[0], rounds=grown[1], new=added
        )
    if any(c.pending for c in cuts) or any(t.result == Result.PENDING for t in mine):
        return step
    ended = RoundVerdict.COMPLETE if halving.last in numbers else RoundVerdict.EXHAUSTED
    return replace(step, verdict=ended)


def told_rows(rows: Sequence[tuple[Cell, ...]], observed: Sequence[Told]) -> list[Told]:
    """Each point of the lock as observed: matched by its values; pending when not observed."""
    by_values = {row_identity(t.row): t for t in observed}
    return [
        replace(by_values[ident], row=tuple(row))
        if (ident := row_identity(row)) in by_values
        else Told(tuple(row), Result.PENDING)
        for row in rows
    ]


@dataclass(frozen=True)
class Round:
    """A round proposed and written into the lock: what the pull request that carries it needs."""

    sweep: Sweep
    """The sweep as the manifest loaded it, before this round (its search, its rung 0)."""
    lock: str
    """The lock's path in the repository."""
    text: str
    """The lock's new content."""
    step: Next
    """For a successive halving, a rung: `step.new` are the configurations promoted."""
    hours: tuple[float | None, ...] = ()
    """The GPU-hours the plan expects of each new point (None: no bound), when priced."""
