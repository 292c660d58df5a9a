"""The next round of an adaptive search (`params.sample.method: tpe`), into the sweep's lock.

Read the lock (every point so far and its round) and each point's result, the same as `status`
reads (a finished point's metric; a failed one; one queued, running or not submitted yet is
pending). Once the last round has finished (`proceed` of it, by default all), ask Optuna for the
next `batch` points (`runner.manifest.adaptive`) and append them to the lock as the next round;
a pull request then shows and submits them like any edit. The same lock, results and seed
propose the same points. Stops at `n`, at the sweep's `stop_when` or `max_failures`, and says
which. `runner.report.rounds` turns a round into its pull request.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from runner.core.invoked import invoked
from runner.core.model import Cell

if TYPE_CHECKING:
    from runner.backends import Backend
    from runner.core.model import Sweep
    from runner.manifest.adaptive import Told
    from runner.manifest.sample import Sample
    from runner.operate.results import SweepResults


@dataclass(frozen=True)
class Round:
    """A round proposed: what the pull request that carries it needs."""

    sweep: str
    lock: str
    """The lock's path in the repository."""
    text: str
    """The lock's new content."""
    number: int
    new: tuple[tuple[Cell, ...], ...]
    """None where a conditional parameter is absent."""
    names: tuple[str, ...]
    best: str
    """The best point so far, as a line; empty before any result."""
    digest: str
    previous: tuple[Told, ...] = ()
    """The points of the round before, with their results (none for round 0)."""
    metric: str = ""


def next_round(
    root: Path, path: Path, shown: str, sample: Sample, backend: Backend
) -> tuple[str, Round | None]:
    """One sweep's next round: a line saying what was done, and the round when one was proposed
    (then written into the lock)."""
    from runner import manifest
    from runner.core import files
    from runner.manifest import adaptive
    from runner.manifest.sample import lock_path, lock_text

    rows, rounds = _so_far(path, sample)
    if len(rows) >= sample.n:
        return f"{shown}: search complete: {len(rows)} of n={sample.n} points proposed", None
    told: list[Told] = []
    mine: list[Told] = []
    if rows:
        sweep, results = _results(root, path, shown, backend)
        told = _told(sample, rows, results)
        last = max(rounds)
        mine = [t for t, k in zip(told, rounds, strict=True) if k == last]
        done = sum(t.result != adaptive.Result.PENDING for t in mine)
        if done < math.ceil(sample.proceed * len(mine)):
            waits = f"{shown}: round {last} has {done} of {len(mine)} point(s) finished: the next"
            return waits + " round waits for it", None
        from runner.apply.guardrails import stop_of

        stop = stop_of(sweep, results)
        if stop is not None:
            return f"{shown}: the search {stop.reason}: no round proposed", None
    round_ = max(rounds) + 1 if rows else 0
    count = min(sample.batch, sample.n - len(rows))
    new = adaptive.propose(sample, told, count, round_)
    if not new:
        return f"{shown}: no new point left in the space after rounding: search complete", None
    text = lock_text(
        sample, [*rows, *new], f"{invoked()} propose {shown}", [*rounds, *[round_] * len(new)]
    )
    files.write_atomic(lock_path(path), text)
    sweep = manifest.load(path, shown).sweep  # the manifest with its new lock must be valid
    total = len(rows) + len(new)
    line = f"{shown}: round {round_}: proposed {len(new)} point(s), {total} of n={sample.n}"
    lock = lock_path(path).relative_to(root).as_posix()
    best = _best(sample, told)
    names = sample.names
    return line, Round(
        sweep.name,
        lock,
        text,
        round_,
        tuple(new),
        names,
        best,
        sample.digest,
        previous=tuple(mine),
        metric=sample.metric,
    )


def _so_far(path: Path, sample: Sample) -> tuple[tuple[tuple[Cell, ...], ...], tuple[int, ...]]:
    """The points in the sample's lock and the round of each (none for a new or changed sample)."""
    from runner.manifest.sample import lock_path, read_lock

    before = read_lock(lock_path(path), sample.names)
    if before is None or before.sample != sample.digest:
        return (), ()
    return before.rows, before.rounds or (0,) * len(before.rows)


def _best(sample: Sample, told: Sequence[Told]) -> str:
    from runner.manifest.adaptive import Result
    from runner.manifest.ranking import Goal
    from runner.manifest.ranking import best as pick

    done = [t for t in told if t.result == Result.DONE and t.value is not None]
    best = pick(done, lambda t: t.value, Goal(sample.goal))
    if best is None:
        return ""
    where = " ".join(
        f"{n}={v}" for n, v in zip(sample.names, best.row, strict=True) if v is not None
    )
    return f"{sample.metric} {best.value:g} at {where} ({len(done)} point(s) finished)"


def _results(root: Path, path: Path, shown: str, backend: Backend) -> tuple[Sweep, SweepResults]:
    """What `status` shows of the sweep: its plan against its ledger, joined with the backend."""
    from runner import manifest
    from runner.ledger import LedgerStore
    from runner.operate.results import collect
    from runner.plan import build, capped

    loaded = manifest.load(path, shown)  # refuses a grid, zip or include beside the sample
    sweep = loaded.sweep
    record = LedgerStore(root, backend.kind).read(sweep.name)
    plan = capped(build(sweep, record, loaded.renderer), running=None)
    return sweep, collect(plan, backend, root)


def _told(sample: Sample, rows: Sequence[tuple[Cell, ...]], results: SweepResults) -> list[Told]:
    from runner.backends import ExperimentState
    from runner.manifest.adaptive import Result, Told
    from runner.manifest.sample import row_identity

    by_values = {
        row_identity([dict(p.params).get(n) for n in sample.names]): p for p in results.points
    }
    told = []
    for row in rows:
        point = by_values.get(row_identity(row))
        state = point.state if point is not None else ""
        if state == ExperimentState.SUCCEEDED:
            value = point.number(sample.metric) if point is not None else None
            result = Result.DONE if value is not None else Result.FAILED
            told.append(Told(tuple(row), result, value))
        elif state in (ExperimentState.FAILED, ExperimentState.CANCELED):
            told.append(Told(tuple(row), Result.FAILED))
        else:
            told.append(Told(tuple(row), Result.PENDING))
    return told
