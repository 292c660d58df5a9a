"""Replay: recompute every automatic round of a sweep from its manifest and what each round
recorded it read, and say which does not come out the same. Pure (no backend, no ledger).

A lock's digest catches an accident, not a forgery: anyone can recompute it. What makes a round
nobody reviewed trustworthy is that it follows from what was reviewed. For each decision
(`runner.core.locked.Decision`), oldest first: it must belong to this search (the sample's
digest, or the rungs' `of`: another space, method or fidelity is another envelope); the search
(`runner.search.rounds.advance`), given the lock as it was before the round and the points the
round recorded, must choose the same points, byte for byte; the lock must hold those points
where the round appended them; and every point so far with the round's must stay within the
envelope's GPU-hours (`runner.plan.envelope`). `submit` refuses to create a point of a sweep
whose rounds do not all replay; `sweep-runner replay` says the same.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, replace

from runner.core.locked import Decision
from runner.core.model import Sweep
from runner.core.sample import row_identity
from runner.ledger import Ledger
from runner.locking import decision as records
from runner.manifest import Loaded
from runner.plan import SweepPlan, build, cost
from runner.plan.envelope import Envelope, envelope, spent
from runner.search.rounds import RoundVerdict, SoFar, advance
from runner.search.rungs import SuccessiveHalving, halving_of


@dataclass(frozen=True)
class Replayed:
    """One automatic round, recomputed: `why` it does not replay (empty: it does)."""

    decision: Decision
    why: str = ""

    @property
    def ok(self) -> bool:
        return not self.why

    @property
    def name(self) -> str:
        return f"round {self.decision.round} (after {self.decision.before} point(s))"


def replay(loaded: Loaded) -> tuple[Replayed, ...]:
    """Every automatic round of the sweep, recomputed; none when its lock records none."""
    sweep = loaded.sweep
    lock = sweep.search.lock
    if lock is None or not lock.decisions:
        return ()
    plan = build(sweep, Ledger(sweep.name, {}), loaded.renderer)
    judged = envelope(plan)
    halving = halving_of(sweep)
    return tuple(Replayed(d, _why(plan, judged, halving, d)) for d in lock.decisions)


def first_failure(loaded: Loaded) -> Replayed | None:
    return next((r for r in replay(loaded) if not r.ok), None)


def _why(plan: SweepPlan, judged: Envelope, halving: SuccessiveHalving | None, d: Decision) -> str:
    sweep = plan.sweep
    search = sweep.search
    lock = search.lock
    assert lock is not None
    if d.of != records.belonging(search, halving):
        return "it belongs to another search (its space, method or fidelity changed since)"
    if d.before > records.before_of(lock, halving):
        return f"the lock holds fewer than the {d.before} point(s) it read"
    before = replace(sweep, search=replace(search, lock=records.prefix(lock, halving, d.before)))
    try:
        said = tuple(map(records.told, d.told))
    except ValueError as exc:
        return f"it recorded what it read in a form no round writes ({exc})"
    step = advance(before, SoFar(said))
    again = records.chosen(step, d.before) if step.verdict is RoundVerdict.PROPOSED else ()
    if not records.same(again, d.chose):
        return (
            f"recomputed from what it read, it chooses {_said(again)}, not {_said(d.chose)}"
            " as recorded"
        )
    if not records.same(records.appended(lock, halving, d), d.chose):
        return f"the lock's points of this round are not the {_said(d.chose)} it chose"
    sample = search.sample
    if halving is None and sample is not None and d.seed != sample.seed + step.number:
        return f"its sampler's seed is recorded as {d.seed}, not {sample.seed + step.number}"
    hours = spent(_so_far(plan, halving, d))
    if not _equal(hours, d.gpu_hours):
        return f"it recorded {_hours(d.gpu_hours)} GPU-hours so far, recomputed {_hours(hours)}"
    if hours > judged.limit:
        return (
            f"it leaves the envelope: {_hours(hours)} GPU-hours with the points before it, over"
            f" {_hours(judged.limit)}"
        )
    return ""


def _so_far(plan: SweepPlan, halving: SuccessiveHalving | None, d: Decision) -> SweepPlan:
    """The plan's points up to the decision's round: rung 0 and the promotions before and in
    it (a halving), or the lock's first points (an adaptive search)."""
    wanted = set(_identities(plan.sweep, halving, d.before + len(d.chose)))
    names = _told_names(plan.sweep, halving)
    rows = tuple(
        r for r in plan.rows if row_identity(tuple(dict(r.params).get(n) for n in names)) in wanted
    )
    return replace(plan, rows=rows)


def _identities(sweep: Sweep, halving: SuccessiveHalving | None, end: int) -> list[str]:
    """The identities of the search's points up to the lock's `end`-th entry, as the search
    tells them (a halving's: configuration, budget and rung)."""
    lock = sweep.search.lock
    assert lock is not None
    if halving is not None:
        promoted = lock.rungs.promoted[:end] if lock.rungs is not None else ()
        ladder = halving.ladder
        every = [(0, row) for row in halving.configurations] + list(promoted)
        return [row_identity((*row, ladder.values[k], k)) for k, row in every]
    return [row_identity(row) for row in lock.rows[:end]]


def _told_names(sweep: Sweep, halving: SuccessiveHalving | None) -> tuple[str, ...]:
    if halving is not None:
        return halving.told
    sample = sweep.search.sample
    return sample.names if sample is not None else ()


def _equal(a: float, b: float | None) -> bool:
    if b is None:
        return math.isinf(a)
    return math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-9)


def _hours(value: float | None) -> str:
    return "unbounded" if value is None or math.isinf(value) else cost.number(value)


def _said(chose: Sequence[tuple[int, tuple[object, ...]]]) -> str:
    if not chose:
        return "nothing"
    shown = ", ".join(f"{k}:{list(row)}" for k, row in chose[:4])
    return shown + (f" and {len(chose) - 4} more" if len(chose) > 4 else "")
