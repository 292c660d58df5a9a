"""The submit step that keeps a sweep's own stops: a failure budget (`max_failures`), a target
(`stop_when`), a stepping search's point taken out of it and a point Beaker could not schedule,
judged by `runner.observe.stops` from the sweep's observation of this phase.

A stopped sweep creates no new points: its `+` points stay in the plan, each held with the
reason. Nothing running is ever canceled. Raising `max_failures` or changing `stop_when` in a
reviewed change resumes the sweep.
"""

from __future__ import annotations

from collections.abc import Sequence

from runner.backends import runs
from runner.observe.looks import Observer
from runner.observe.model import SweepStop
from runner.observe.stops import guarded
from runner.plan import Hold, HoldReason, PlanStatus, SweepPlan, hold


def stopped(plan: SweepPlan, stop: SweepStop) -> SweepPlan:
    """The plan with every pending point held, the stop as its reason (shown as the row's note)."""
    why = Hold(HoldReason.GUARDRAIL, stop.reason)
    (held,) = hold([plan], why, lambda p: {r.key for r in p.rows}).plans
    return held


def apply_stops(observer: Observer, plans: Sequence[SweepPlan]) -> list[SweepPlan]:
    """Each guarded sweep with points to submit, stopped when it should be (from the sweep's
    observation of this phase); a stopped plan says why in its rows' holds."""
    out: list[SweepPlan] = []
    for plan in plans:
        if not can_stop(plan) or not plan.to_submit_on(runs(observer.backend, plan.sweep)):
            out.append(plan)
            continue
        stop = observer.observation(plan).stop
        out.append(plan if stop is None else stopped(plan, stop))
    return out


def can_stop(plan: SweepPlan) -> bool:
    """Whether the sweep may be stopped: a guarded one (a limit, a stepping search), or one with
    a point submitted (which may have been one Beaker could not schedule)."""
    return guarded(plan.sweep) or any(r.entry is not None for r in plan.rows)


def reads_results(plan: SweepPlan) -> bool:
    """A guarded sweep with points to submit: its stops read results (a sweep with nothing to
    create is never stopped, so a `--restart-failed` of it lists only)."""
    return guarded(plan.sweep) and any(r.status == PlanStatus.SUBMIT for r in plan.rows)
