"""Canceling a sweep's points, exactly once: the intent is written before the request, the
result recorded from what the backend says was canceled, and an interrupted cancel reconciled."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from runner import ledger
from runner.backends import Backend, Experiment, ExperimentState, RunsInCreate, recorded
from runner.core.files import utc_now
from runner.ledger.store import LedgerStore
from runner.observe.looks import Observer
from runner.operate.finding import find_point
from runner.plan import PlanStatus, Row, SweepPlan


@dataclass(frozen=True)
class CancelTarget:
    """A queued or running experiment of one of the sweep's points (its key checked)."""

    plan: SweepPlan
    row: Row
    experiment: Experiment


def cancel_targets(
    backend: Backend, plans: Sequence[SweepPlan], orphans: bool, points: Sequence[str]
) -> list[CancelTarget]:
    """The experiments `cancel` would cancel: every point's, the orphans', or the named ones';
    only those queued or running, and only those that record the point's key."""
    chosen = {id(plan): list(plan.rows) for plan in plans}
    if orphans:
        chosen = {
            i: [r for r in rows if r.status == PlanStatus.ORPHAN] for i, rows in chosen.items()
        }
    elif points:
        wanted = {id(row) for ref in points for _, row in find_point(plans, ref)}
        chosen = {i: [r for r in rows if id(r) in wanted] for i, rows in chosen.items()}
    targets = []
    for plan in plans:
        rows = chosen[id(plan)]
        mine = recorded(r.record for r in rows)
        listed = backend.experiments(plan.sweep, [r.experiment for r in rows], mine) if rows else {}
        for row in rows:
            # the recorded one, else the oldest: the point's if its spec carries the point's key
            copies = listed.get(row.experiment, ())
            found = next((e for e in copies if e.id in mine.keys), next(iter(copies), None))
            if found is not None and found.state.live and found.key == row.key:
                targets.append(CancelTarget(plan, row, found))
    return targets


def stop_starting(backend: Backend, plans: Sequence[SweepPlan]) -> None:
    """A whole-sweep cancel, on a backend whose submit runs the points (the local one): a submit
    running them now starts no more (on Beaker, the points it has not created yet stay `+`)."""
    if isinstance(backend, RunsInCreate):
        for plan in plans:
            backend.stop_starting(plan.sweep)


def cancel(
    backend: Backend,
    targets: Sequence[CancelTarget],
    store: LedgerStore,
    now: Callable[[], str] = utc_now,
    commit: str = "uncommitted",
) -> list[CancelTarget]:
    """Cancel the targets, one bulk request per sweep; record each in its ledger entry.

    A point the ledger does not record yet (its entry was never written, or it is still running
    locally) gets its entry now, with `canceled_at`: otherwise the next submit would adopt it
    without, and `--restart-failed` would restart what was canceled on request. `commit` is
    the commit the manifests were read at, recorded in such a new entry.
    """
    canceled: list[CancelTarget] = []
    plans = {id(t.plan): t.plan for t in targets}  # plans are not hashable; each is one object
    for plan in plans.values():
        mine = [t for t in targets if t.plan is plan]
        stamp = now()
        # Write-ahead, before the request: for points the ledger records (a point recorded by
        # nobody yet, running locally for another runner, gets its entry only once canceled).
        intents = [_canceled(t, stamp, commit, intent=True) for t in mine if t.row.entry]
        if intents:
            store.record(plan.sweep.name, intents)
        names = set(backend.cancel(plan.sweep, [t.experiment for t in mine]))
        done = [t for t in mine if t.experiment.name in names]
        canceled += done
        if done:
            store.record(plan.sweep.name, [_canceled(t, stamp, commit) for t in done])
        left = {t.experiment.id for t in mine if t not in done}
        cleared = [dataclasses.replace(e, canceling="") for e in intents if e.id in left]
        store.set_intents(plan.sweep.name, cleared)
    return canceled


def reconcile_cancels(
    backend: Backend,
    plans: Sequence[SweepPlan],
    store: LedgerStore,
    observer: Observer | None = None,
) -> int:
    """Cancels a stopped run sent but never recorded: an experiment canceled since its intent
    gets canceled_at (the intent's time); any other intent is dropped. How many were recorded.
    `observer`: read the sweep's look of this phase instead of listing its own."""
    count = 0
    for plan in plans:
        rows = [r for r in plan.rows if r.entry is not None and r.entry.canceling]
        if not rows:
            continue
        ours = recorded(r.record for r in rows)
        if observer is not None:
            listed = observer.look(plan).listed
        else:
            listed = backend.experiments(plan.sweep, [r.experiment for r in rows], ours)
        done, dropped = [], []
        for row in rows:
            entry = row.entry
            assert entry is not None
            mine = [e for e in listed.get(row.experiment, ()) if e.id == entry.id]
            if mine and mine[0].state == ExperimentState.CANCELED:
                done.append(dataclasses.replace(entry, canceled_at=entry.canceling))
            else:
                dropped.append(dataclasses.replace(entry, canceling=""))
        if done:
            store.record(plan.sweep.name, done)
        store.set_intents(plan.sweep.name, dropped)
        count += len(done)
    return count


def _canceled(target: CancelTarget, at: str, commit: str, intent: bool = False) -> ledger.Entry:
    """The entry recording the cancel (or, with `intent`, that it is being sent)."""
    entry = target.row.entry
    if entry is None:
        point = target.row.rendered
        assert point is not None  # a row without an entry is a manifest point
        # submitted_at: when it was recorded; its creation time is the backend's to tell
        entry = ledger.Entry.of(point, target.experiment.url, target.experiment.id, commit, at)
    if intent:
        return dataclasses.replace(entry, canceling=at)
    return dataclasses.replace(entry, canceled_at=at, canceling="")
