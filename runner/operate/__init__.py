"""Acting on a running sweep: restart its failed points, find a point by name, count what holds
its max_running slots; canceling is in `runner.operate.cancels`.

Each keeps the product's invariant: one experiment per point. A restart restarts the point's
failed tasks in the same experiment (same name, key, URL and group); a cancel touches only
experiments that record the point's key. Both are recorded in the ledger entry of the point,
written at once after each change (not batched), so a crash can lose at most the one record
being written. The count of restarts bounded by `max_restarts` is the ledger's: Beaker cannot
tell our restarts apart from its own task retries (`retries`), which also make new jobs.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from runner import ledger
from runner.backends import (
    Capability,
    Experiment,
    ExperimentState,
    Rejected,
    Transient,
    runs,
)
from runner.core.files import utc_now
from runner.core.values import StrEnum
from runner.ledger.store import LedgerStore
from runner.observe.looks import Listed, Observer, chosen
from runner.operate import causes
from runner.operate.finding import find_point as find_point
from runner.operate.restarting import RESTARTING, restart_once
from runner.plan import PlanStatus, Row, SweepPlan, capped
from runner.render.code import Code, at_commit, uses_code


class RestartVerdict(StrEnum):
    """What `--restart-failed` does (or did) to a failed or canceled point."""

    RESTARTED = "restarted"
    SKIPPED = "skipped"
    FAILED = "failed"
    """The restart failed, or the experiment does not record the point's key."""


@dataclass(frozen=True)
class Restart:
    """What `--restart-failed` did to one failed point."""

    sweep: str
    name: str
    status: RestartVerdict
    detail: str
    restarts: int
    """Restarts recorded for the point after this one."""


def restart_candidates(
    observer: Observer, plans: Sequence[SweepPlan], only: Sequence[str] | None = None
) -> list[Candidate]:
    """Every recorded point of the plans whose experiment failed or was canceled, with what
    `--restart-failed` decides for it; nothing is changed (the sweep's one look per phase).
    `only`: the points `--restart --points` names (canceled with `cancel` or not; each must
    exist)."""
    named = {id(row) for ref in only or () for _, row in find_point(plans, ref)}
    capabilities = observer.backend.capabilities
    found: list[Candidate] = []
    for plan in plans:
        if not runs(observer.backend, plan.sweep):
            continue
        submitted = (PlanStatus.SUBMITTED, PlanStatus.DRIFTED)
        rows = [r for r in plan.rows if r.status in submitted and r.entry]
        if only is not None:
            rows = [r for r in rows if id(r) in named]
        if not rows:
            continue
        seen = observer.look(plan)
        live = chosen(seen.listed, seen.mine, Capability.RESUMES in capabilities)
        reruns = only is not None and Capability.RERUNS in capabilities
        decided = [
            _decide(plan, row, experiment, chosen=only is not None, reruns=reruns)
            for row in rows
            if (experiment := live.get(row.experiment)) is not None
            and (experiment.state.restartable or _interrupted(row) or only is not None)
        ]
        found += _within_cap(plan, decided, seen.listed)
    return found


def _within_cap(plan: SweepPlan, found: list[Candidate], listed: Listed) -> list[Candidate]:
    """A restart takes a slot under max_running as a new point does: beyond the free slots
    (the sweep's experiments queued or running now), a point to restart waits for a later run.
    An interrupted restart whose experiment is live again took effect and already holds its
    slot; one whose experiment is still failed never reached Beaker and needs one."""
    limit = plan.sweep.limits.max_running
    chosen = [
        c
        for c in found
        if c.verdict == RestartVerdict.RESTARTED
        and not (_interrupted(c.row) and c.found.state.live)
    ]
    if limit is None or not chosen:
        return found
    running, _ = occupancy(plan, listed)
    waiting = {id(c) for c in chosen[max(0, limit - running) :]}
    detail = f"waiting: max_running {limit} ({running} queued or running)"
    return [
        dataclasses.replace(c, verdict=RestartVerdict.SKIPPED, detail=f"{c.detail}; {detail}")
        if id(c) in waiting
        else c
        for c in found
    ]


def restart_failed(
    observer: Observer,
    plans: Sequence[SweepPlan],
    store: LedgerStore,
    now: Callable[[], str] = utc_now,
    only: Sequence[str] | None = None,
    code: Code | None = None,
) -> list[Restart]:
    """Restart every recorded point of the plans whose experiment failed or was canceled, in
    place, at most `max_restarts` times each; points canceled with `cancel` are left alone,
    unless `only` names them (`--restart --points`). `code`: the commit checked out now, which
    a `code:` point runs when the backend reruns (`Capability.RERUNS`); elsewhere a restart
    runs the commit the point ran. The observer is told each restart."""
    return [
        _restart_one(observer, c, store, now, code)
        if c.verdict == RestartVerdict.RESTARTED
        else c.outcome()
        for c in restart_candidates(observer, plans, only)
    ]


@dataclass(frozen=True)
class Candidate:
    """A failed or canceled point, and whether `--restart-failed` restarts it."""

    plan: SweepPlan
    row: Row
    found: Experiment
    verdict: RestartVerdict
    """RESTARTED: to be restarted."""
    detail: str

    def outcome(
        self, status: RestartVerdict | None = None, detail: str = "", restarts: int = -1
    ) -> Restart:
        assert self.row.entry is not None
        return Restart(
            self.plan.sweep.name,
            self.row.experiment,
            status or self.verdict,
            detail or self.detail,
            self.row.entry.restarts if restarts < 0 else restarts,
        )


def _decide(
    plan: SweepPlan, row: Row, found: Experiment, chosen: bool = False, reruns: bool = False
) -> Candidate:
    """What a restart does to this point; `chosen`: named by `--restart --points`, so a point
    canceled with `cancel` is restarted too; `reruns`: and, on a backend that reruns finished
    runs (`Capability.RERUNS`), a succeeded one."""
    entry, limit = row.entry, plan.sweep.limits.max_restarts
    assert entry is not None
    if found.key != row.key:
        detail = f"records key {found.key or 'none'}, not {row.key}: left alone"
        return Candidate(plan, row, found, RestartVerdict.FAILED, detail)
    if entry.restarting:  # within max_restarts when it was sent: count it, or send it now
        detail = f"{found.state}; a restart was interrupted before its record"
        return Candidate(plan, row, found, RestartVerdict.RESTARTED, detail)
    rerun = reruns and found.state == ExperimentState.SUCCEEDED
    if not found.state.restartable and not entry.restarting and not rerun:
        detail = f"{found.state}: only a failed or canceled experiment restarts"
        return Candidate(plan, row, found, RestartVerdict.SKIPPED, detail)
    canceled = canceled_on_request(entry, found)
    if canceled and not chosen:
        detail = f"canceled with `cancel` at {canceled}: left alone"
        return Candidate(plan, row, found, RestartVerdict.SKIPPED, detail)
    left = None if chosen else causes.left_alone(plan, row, found)
    if left:
        return Candidate(plan, row, found, RestartVerdict.SKIPPED, left)
    if limit is not None and entry.restarts >= limit:
        return Candidate(
            plan, row, found, RestartVerdict.SKIPPED, f"{found.state}; max_restarts {limit} reached"
        )
    return Candidate(plan, row, found, RestartVerdict.RESTARTED, found.state)


def _restart_one(
    observer: Observer,
    candidate: Candidate,
    store: LedgerStore,
    now: Callable[[], str],
    code: Code | None = None,
) -> Restart:
    backend, row, sweep = observer.backend, candidate.row, candidate.plan.sweep
    entry = row.entry
    assert entry is not None and row.rendered is not None
    point, commit = row.rendered, entry.commit
    if uses_code(sweep):  # the commit it ran; where a restart reruns, the one checked out now
        if code is not None and Capability.RERUNS in backend.capabilities:
            commit = code.commit
        point = at_commit(point, Code(commit))
    try:
        restarted = restart_once(
            observer, sweep, (entry, candidate.found), store, RESTARTING, point
        )
    except (Transient, Rejected) as exc:
        return candidate.outcome(RestartVerdict.FAILED, str(exc))  # the intent stays: checked next
    if restarted is None:
        return candidate.outcome(
            RestartVerdict.SKIPPED, "no longer failed or canceled (restarted elsewhere?)"
        )
    count = entry.restarts + 1
    store.record(sweep.name, [_restarted(entry, count, now())])
    if entry.canceled_at:  # a point canceled with `cancel`, named by `--restart --points`
        store.set_intents(sweep.name, [dataclasses.replace(entry, canceled_at=None)], CANCEL)
    if commit != entry.commit:  # a rerun at a newer commit: the entry says which ran last
        store.set_intents(sweep.name, [dataclasses.replace(entry, commit=commit)], ("commit",))
    return candidate.outcome(
        RestartVerdict.RESTARTED, f"{candidate.found.state} -> {restarted.state}", count
    )


CANCEL = ("canceled_at",)


def _restarted(entry: ledger.Entry, count: int, at: str) -> ledger.Entry:
    return dataclasses.replace(entry, restarts=count, restarted_at=at, restarting="")


def canceled_on_request(entry: ledger.Entry, found: Experiment) -> str | None:
    """When `cancel` canceled it (or was canceling it when stopped), unless it was restarted
    since (`--restart --points` runs a canceled point again)."""
    if entry.canceling and found.state == ExperimentState.CANCELED:
        return entry.canceling
    return entry.canceled


def _interrupted(row: Row) -> bool:
    """A restart of this point was sent (or about to be) by a run stopped before its record."""
    return row.entry is not None and bool(row.entry.restarting)


def live_caps(observer: Observer, plans: Sequence[SweepPlan]) -> list[SweepPlan]:
    """Each plan under its max_running, counting the sweep's experiments queued or running now
    (the sweep's one look per phase)."""
    out = []
    for plan in plans:
        pending = any(r.pending for r in plan.rows) and runs(observer.backend, plan.sweep)
        if plan.sweep.limits.max_running is None or not pending:
            out.append(plan)
            continue
        running, taken = occupancy(plan, observer.look(plan).listed)
        out.append(capped(plan, running, taken))
    return out


def occupancy(plan: SweepPlan, listed: Listed) -> tuple[int, frozenset[str]]:
    """What holds the sweep's max_running slots: its own experiments queued or running (those
    carrying one of its keys; someone else's experiment of the same name is not the sweep's),
    and the keys of `+` points whose name another experiment already holds, which Beaker
    refuses every time: they must not hold a slot either."""
    keys = {row.key for row in plan.rows}
    running = sum(1 for found in listed.values() for e in found if e.key in keys and e.state.live)
    taken = frozenset(
        row.key
        for row in plan.rows
        if row.status == PlanStatus.SUBMIT
        and (found := listed.get(row.name))
        and all(e.key != row.key for e in found)
    )
    return running, taken
