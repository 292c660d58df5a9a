"""A sweep's own stops, as a rule over its observation: a failure budget (`max_failures`), a
target (`stop_when`) and, for a search that steps from results (an adaptive search, a successive
halving), a point a person took out of it. Once N of a sweep's points have failed for good, a
finished point has reached the target, or one of a search's points was canceled with `cancel` or
is recorded but gone from the backend, no new point of it is created (`runner.apply.guardrails`
holds them) and no round or rung is proposed; the plan, `status`, `propose`, `wait` and the
notices all read the stop from the sweep's observation.

"Failed for good" is the state after any restarts: `submit --restart-failed` restarts before
the stops are judged, so a point it restarted is running again and does not count. A search
stopped by a canceled point goes on once that point runs again (`submit --restart --points`).
"""

from __future__ import annotations

from collections.abc import Sequence

from runner.backends import ExperimentState
from runner.core.aims import feasibility
from runner.core.invoked import invoked
from runner.core.model import Sweep
from runner.observe.model import Absent, PointResult, SweepStop
from runner.plan import PlanStatus


def guarded(sweep: Sweep) -> bool:
    """Whether the sweep can stop by itself: a limit, or a search that steps from results."""
    limits = sweep.limits
    return limits.max_failures is not None or limits.stop_when is not None or sweep.search.steps


def stop_of(sweep: Sweep, points: Sequence[PointResult]) -> SweepStop | None:
    """Why the sweep creates no new points, or None. The failure budget is checked first, then
    the target, then a stepping search's points."""
    return _limits(sweep, points) or (_taken_out(sweep, points) if sweep.search.steps else None)


def _taken_out(sweep: Sweep, points: Sequence[PointResult]) -> SweepStop | None:
    """A stepping search cannot rank a point a person canceled, nor one gone from the backend:
    it stops there rather than decide without it (or wait for it forever)."""
    for point in points:
        if point.status == PlanStatus.ORPHAN:  # a point of an earlier search: not this one's
            continue
        if point.canceled_at:
            reason = (
                f"stopped: {point.experiment} was canceled with `cancel`; the search goes on once"
                f" it runs again ({invoked()} submit --restart --points {point.experiment})"
            )
            return SweepStop(sweep.name, reason, point=point.experiment)
        if point.state == Absent.MISSING:
            reason = (
                f"stopped: {point.experiment} is recorded in the ledger but not found on the"
                " backend (deleted?); the search cannot rank it"
            )
            return SweepStop(sweep.name, reason, point=point.experiment)
    return None


def _limits(sweep: Sweep, points: Sequence[PointResult]) -> SweepStop | None:
    """The failure budget, then the target."""
    limit = sweep.limits.max_failures
    if limit is not None:
        failed = sum(1 for p in points if p.state == ExperimentState.FAILED and not p.canceled_at)
        if failed >= limit:
            reason = f"stopped: {failed} failed (max_failures {limit})"
            return SweepStop(sweep.name, reason, str(limit))
    target = sweep.limits.stop_when
    if target is None:
        return None
    limits = sweep.search.aims.constraints  # a point that breaks one reaches nothing
    kept = (p for p in points if feasibility(limits, p.number).counts)
    for point in kept:  # manifest order: the first that reached it is named
        value = point.finished(target.metric)
        if value is not None and target.reached(value):
            reason = (
                f"stopped: {point.experiment} reached {target.metric} {value:g}"
                f" (stop_when {target})"
            )
            return SweepStop(sweep.name, reason, str(target), point.experiment)
    return None
