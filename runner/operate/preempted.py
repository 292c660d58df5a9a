"""Resuming what the platform ended: a point Beaker preempted, or lost to a node failure, is
restarted in place by the next plain `submit` (the workflow's schedule, no flag), and counted
in its ledger entry as `preemptions`, never as `restarts`: a preemption is not the run's
failure, so neither `max_restarts` nor `max_failures` counts it. A point Beaker resumed by
itself (`auto_resume`: it is queued or running again) is left alone and only counted. Past
`max_preemptions` a point stays as it is, and says why. A resume takes a `max_running` slot as
a new point does: beyond the free slots a point waits for a later submit.

Exactly once per preemption: the entry's `resuming` records the experiment's job generation
before the request (`runner.operate.restarting`), a lost reply is looked up and never sent
again, and the next submit counts a resume a stopped run sent without recording it. Each
sweep's one look of the phase (`Observer.look`, with why each experiment ended) is read.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, replace

from runner import ledger
from runner.backends import (
    Backend,
    Capability,
    EndCause,
    Experiment,
    Rejected,
    Transient,
    runs,
)
from runner.core.values import StrEnum
from runner.ledger.store import LedgerStore
from runner.observe.looks import Observer, chosen
from runner.observe.model import awaits_resume, preemptions_seen, within
from runner.operate import Candidate, RestartVerdict, canceled_on_request, occupancy
from runner.operate.restarting import RESUMING, restart_once
from runner.plan import PlanStatus, Row, SweepPlan
from runner.render.code import Code, at_commit, uses_code


class ResumeVerdict(StrEnum):
    """What a submit does (or did) to a point the platform ended."""

    RESUMED = "resumed"
    COUNTED = "counted"
    """Beaker resumed it by itself: only its preemptions are counted (as soon as a look reads
    them: a look sees an experiment running again only if it saw it go back, so mostly once it
    has ended; `runner.backends.beaker.endings`)."""
    WAITING = "waiting"
    """No `max_running` slot is free: a later submit resumes it."""
    CAPPED = "capped"
    """`max_preemptions` reached: it stays as it is."""
    SKIPPED = "skipped"
    """It was no longer failed or canceled when the request was to be sent."""
    FAILED = "failed"
    """Beaker refused the restart or did not answer: its intent stays, the next submit checks."""


@dataclass(frozen=True)
class Resume:
    """What a submit did (or, in a dry run, would do) to one point the platform ended."""

    sweep: str
    name: str
    verdict: ResumeVerdict
    detail: str
    preemptions: int
    """Its preemptions after this (or, in a dry run, after it would be resumed)."""


def watched(plan: SweepPlan) -> bool:
    """A sweep a submit looks at for its preempted points: one with a point it submitted that
    `cancel` did not cancel (an orphan's experiment is no longer the manifest's)."""
    submitted = (PlanStatus.SUBMITTED, PlanStatus.DRIFTED)
    return any(r.entry and r.status in submitted and not r.entry.canceled for r in plan.rows)


def preempts(backend: Backend) -> bool:
    """Whether the backend's machines are shared, where a platform preempts work (Beaker); a
    run on this machine is never preempted, so the local backend is never looked at for it."""
    return Capability.SHARED in backend.capabilities


def watching(backend: Backend) -> Callable[[SweepPlan], bool]:
    """Whether a submit's look at a sweep (`Observer`'s `wants_results`) reads why its
    experiments ended: a `watched` sweep, where the platform preempts."""
    shared = preempts(backend)
    return lambda plan: shared and watched(plan)


@dataclass(frozen=True)
class _Due:
    """A point to resume (or, Beaker having resumed it, to count), with its preemptions after."""

    candidate: Candidate
    count: int

    def said(self, verdict: ResumeVerdict, detail: str = "") -> Resume:
        plan, row = self.candidate.plan, self.candidate.row
        return Resume(plan.sweep.name, row.experiment, verdict, detail, self.count)


@dataclass(frozen=True)
class Found:
    """What a submit resumes, what it only counts, and what it says of the others."""

    due: list[_Due] = dataclasses.field(default_factory=list)
    counted: list[_Due] = dataclasses.field(default_factory=list)
    said: list[Resume] = dataclasses.field(default_factory=list)


def planned(observer: Observer, plans: Sequence[SweepPlan]) -> Found:
    """What to resume (each within its sweep's free `max_running` slots), to count (resumed by
    Beaker) and to say (waiting for a slot, past `max_preemptions`); nothing is changed."""
    out = Found()
    if not preempts(observer.backend):
        return out
    for plan in plans:
        if not watched(plan) or not runs(observer.backend, plan.sweep):
            continue
        seen = observer.look(plan)
        found = chosen(seen.listed, seen.mine, resumes=False)
        limit, running = plan.sweep.limits.max_running, 0
        if limit is not None:
            running, _ = occupancy(plan, seen.listed)
        for due, verdict in _decided(plan, found):
            if verdict is ResumeVerdict.COUNTED:
                out.counted.append(due)
            elif verdict is not ResumeVerdict.RESUMED:
                out.said.append(due.said(verdict, due.candidate.detail))
            elif due.candidate.found.state.live:  # an interrupted resume took effect: no slot
                out.due.append(due)
            elif limit is None or running < limit:
                running += 1
                out.due.append(due)
            else:
                wait = f"waiting: max_running {limit} ({running} queued or running)"
                out.said.append(due.said(ResumeVerdict.WAITING, wait))
    return out


def _decided(plan: SweepPlan, found: dict[str, Experiment]) -> Iterator[tuple[_Due, ResumeVerdict]]:
    """Each of the plan's points the platform ended (or Beaker resumed), with what to do."""
    for row in plan.rows:
        experiment = found.get(row.experiment)
        if row.entry is None or experiment is None or experiment.key != row.key:
            continue
        if row.status in (PlanStatus.SUBMITTED, PlanStatus.DRIFTED):
            decided = _decide(plan, row, experiment)
            if decided is not None:
                yield decided


def _decide(plan: SweepPlan, row: Row, found: Experiment) -> tuple[_Due, ResumeVerdict] | None:
    entry, ended, cap = row.entry, found.ended, plan.sweep.limits.max_preemptions
    assert entry is not None
    awaiting = awaits_resume(found.state, ended, canceled_on_request(entry, found))
    count = preemptions_seen(entry.preemptions, ended, awaiting)

    def due(detail: str, after: int = count) -> _Due:
        return _Due(Candidate(plan, row, found, RestartVerdict.RESTARTED, detail), after)

    if entry.resuming:  # sent, or about to be, by a run stopped before its record
        said = f"{found.state}; a resume was interrupted before its record"
        return due(said, max(count, entry.preemptions + 1)), ResumeVerdict.RESUMED
    if awaiting and ended is not None and within(count, cap):
        return due(_cause(ended.cause, ended.text)), ResumeVerdict.RESUMED
    if awaiting:
        said = f"preempted {count}x; max_preemptions {cap} reached: left as it is"
        said += f" (`submit --restart --points {row.experiment}` runs it again)"
        return due(said), ResumeVerdict.CAPPED
    if count > entry.preemptions:  # seen running again, or once it ended
        said = f"{found.state}: Beaker resumed it by itself (auto_resume)"
        return due(said), ResumeVerdict.COUNTED
    return None


def _cause(cause: EndCause, text: str) -> str:
    said = "preempted" if cause is EndCause.PREEMPTED else "lost its node"
    return said + (f" ({text})" if text else "")


def would_resume(observer: Observer, plans: Sequence[SweepPlan]) -> list[Resume]:
    """What a submit would do to the points the platform ended: nothing is changed."""
    found = planned(observer, plans)
    resumed = [d.said(ResumeVerdict.RESUMED, d.candidate.detail) for d in found.due]
    counted = [d.said(ResumeVerdict.COUNTED, d.candidate.detail) for d in found.counted]
    return resumed + counted + found.said


def resume(observer: Observer, plans: Sequence[SweepPlan], store: LedgerStore) -> list[Resume]:
    """Resume every point of the plans the platform ended, within `max_preemptions` and
    `max_running`, exactly once each; count those Beaker resumed. The observer is told each."""
    found = planned(observer, plans)
    done = [_resume_one(observer, d, store) for d in found.due]
    by_sweep: dict[str, list[ledger.Entry]] = {}
    for due in found.counted:  # one write per sweep
        entry = due.candidate.row.entry
        assert entry is not None
        by_sweep.setdefault(due.candidate.plan.sweep.name, []).append(
            replace(entry, preemptions=due.count)
        )
    for sweep, entries in by_sweep.items():
        store.record(sweep, entries)
    counted = [d.said(ResumeVerdict.COUNTED, d.candidate.detail) for d in found.counted]
    return done + counted + found.said


def _resume_one(observer: Observer, due: _Due, store: LedgerStore) -> Resume:
    candidate = due.candidate
    row, sweep = candidate.row, candidate.plan.sweep
    entry, point = row.entry, row.rendered
    assert entry is not None and point is not None
    if uses_code(sweep):  # the commit it ran: a resume goes on with the same run
        point = at_commit(point, Code(entry.commit))
    try:
        restarted = restart_once(observer, sweep, (entry, candidate.found), store, RESUMING, point)
    except (Transient, Rejected) as exc:
        return replace(due, count=entry.preemptions).said(ResumeVerdict.FAILED, str(exc))
    if restarted is None:
        detail = "no longer failed or canceled (resumed elsewhere?)"
        return replace(due, count=entry.preemptions).said(ResumeVerdict.SKIPPED, detail)
    store.record(sweep.name, [replace(entry, preemptions=due.count, resuming="")])
    return due.said(
        ResumeVerdict.RESUMED, f"{candidate.detail}: {candidate.found.state} -> {restarted.state}"
    )
