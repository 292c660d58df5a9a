"""A sweep's own stops: a failure budget (`max_failures`) and a target (`stop_when`).

Once N of a sweep's points have failed for good, or a finished point has reached the target,
`submit` (and so the scheduled top-up) creates no new points of that sweep: its `+` points stay
in the plan, each with the reason. Nothing running is ever canceled. The facts come from the
backend in one bulk look-up per sweep (`runner.operate.results`); the decision is a pure function of
them, shown by the plan, `status` and the job summary alike. Raising `max_failures` or changing
`stop_when` in a reviewed change resumes the sweep.

"Failed for good" is the state after any restarts: `submit --restart-failed` restarts before
the stops are judged, so a point it restarted is running again and does not count.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from runner.backends import ExperimentState, runs
from runner.backends.observed import Observer
from runner.core.model import Sweep
from runner.operate.results import SweepResults, collect
from runner.plan import Hold, HoldReason, SweepPlan, hold

FAILED, SUCCEEDED = ExperimentState.FAILED, ExperimentState.SUCCEEDED


@dataclass(frozen=True)
class SweepStop:
    sweep: str
    reason: str
    """'stopped: 5 failed (max_failures 5)'."""
    point: str = ""
    """The experiment that reached the target (stop_when)."""


def guarded(sweep: Sweep) -> bool:
    return sweep.limits.max_failures is not None or sweep.limits.stop_when is not None


def stop_of(sweep: Sweep, results: SweepResults) -> SweepStop | None:
    """Why the sweep creates no new points, or None. The failure budget is checked first."""
    limit = sweep.limits.max_failures
    if limit is not None:
        failed = sum(1 for p in results.points if p.state == FAILED and not p.canceled_at)
        if failed >= limit:
            return SweepStop(sweep.name, f"stopped: {failed} failed (max_failures {limit})")
    target = sweep.limits.stop_when
    if target is None:
        return None
    for point in results.points:  # manifest order: the first that reached it is named
        value = point.number(target.metric)
        if point.state == SUCCEEDED and value is not None and target.reached(value):
            reason = (
                f"stopped: {point.experiment} reached {target.metric} {value:g}"
                f" (stop_when {target})"
            )
            return SweepStop(sweep.name, reason, point.experiment)
    return None


def stopped(plan: SweepPlan, stop: SweepStop) -> SweepPlan:
    """The plan with every pending point held, the stop as its reason (shown as the row's note)."""
    why = Hold(HoldReason.GUARDRAIL, stop.reason)
    (held,) = hold([plan], why, lambda p: {r.key for r in p.rows}).plans
    return held


def apply_stops(observer: Observer, plans: Sequence[SweepPlan], root: Path) -> list[SweepPlan]:
    """The submit step: each guarded sweep with points to submit, stopped when it should be
    (from the sweep's one look per phase, which carries its results); a stopped plan says why
    in `stopped`."""
    out: list[SweepPlan] = []
    for plan in plans:
        if not guarded(plan.sweep) or not plan.to_submit_on(runs(observer.backend, plan.sweep)):
            out.append(plan)
            continue
        found = observer.observe(plan).results
        stop = stop_of(plan.sweep, collect(plan, observer.backend, root, found=found))
        out.append(plan if stop is None else stopped(plan, stop))
    return out


def noted(results: SweepResults, sweep: Sweep) -> SweepResults:
    """`status`: the sweep's results with its stop, if any, in the note."""
    stop = stop_of(sweep, results) if guarded(sweep) else None
    if stop is None:
        return results
    note = "; ".join(n for n in (stop.reason, results.note) if n)
    return dataclasses.replace(results, note=note)
