"""A sweep's own stops, as a rule over its observation: a failure budget (`max_failures`), a
target (`stop_when`), for a search that steps from results (an adaptive search, a successive
halving) a point a person took out of it, and for any sweep a point Beaker could not schedule.
Once N of a sweep's points have failed for good, a finished point has reached the target, one of
a search's points was canceled with `cancel` or is recorded but gone from the backend, or a
point could not be placed as its sweep asks, no new point of it is created
(`runner.apply.guardrails` holds them) and no round or rung is proposed; the plan, `status`,
`propose`, `wait` and the notices all read the stop from the sweep's observation.

"Failed" is the point's own doing (`PointResult.failed`: it exited non-zero, ran past its
timeout, idled), never a preemption, a lost node or a cancel. "For good" is after any restarts
and resumes: `submit` resumes preempted points and `--restart-failed` restarts failed ones
before the stops are judged, so a point running again does not count. A search stopped by a
canceled point goes on once that point runs again (`submit --restart --points`); a sweep
stopped by an unschedulable point, once its manifest asks for what a cluster has (the point
then shows `~`) or the point runs again.
"""

from __future__ import annotations

from collections.abc import Sequence

from runner.backends import EndCause
from runner.core.aims import feasibility
from runner.core.invoked import invoked
from runner.core.model import Placement, Sweep
from runner.observe.model import Absent, PointResult, SweepStop
from runner.plan import PlanStatus


def guarded(sweep: Sweep) -> bool:
    """Whether the sweep can stop before it has submitted a point: a limit, or a search that
    steps from results (any sweep stops on a point it submitted that could not be scheduled)."""
    limits = sweep.limits
    return limits.max_failures is not None or limits.stop_when is not None or sweep.search.steps


def stop_of(sweep: Sweep, points: Sequence[PointResult]) -> SweepStop | None:
    """Why the sweep creates no new points, or None. The failure budget is checked first, then
    the target, then a stepping search's points, then a point that could not be scheduled."""
    taken = _taken_out(sweep, points) if sweep.search.steps else None
    return _limits(sweep, points) or taken or _unschedulable(sweep, points)


def _unschedulable(sweep: Sweep, points: Sequence[PointResult]) -> SweepStop | None:
    """Beaker could place a point nowhere as it asks: the sweep's next points ask the same, so
    none is created (a point that shows `~` or `-` asked for something else)."""
    point = next(
        (
            p
            for p in points
            if p.status == PlanStatus.SUBMITTED and p.ending is EndCause.UNSCHEDULABLE
        ),
        None,
    )
    if point is None:
        return None
    said = point.ended.text if point.ended is not None and point.ended.text else "no reason"
    wants = asked(sweep.placement)
    reason = (
        f"stopped: {point.experiment} could not be scheduled (Beaker: {said}); no cluster"
        f" meets what the sweep asks for: {wants}. Change that in a reviewed change, or run"
        f" the point again once a cluster can ({invoked()} submit --restart --points"
        f" {point.experiment})"
    )
    return SweepStop(sweep.name, reason, wants, point.experiment)


def asked(placement: Placement) -> str:
    """What a sweep's points ask of a cluster, as its manifest says: `cluster ai2/jupiter, GPU
    type h100, priority high`."""
    gpus = placement.selector.gpu_types if placement.selector is not None else ()
    gpus = gpus or tuple(dict.fromkeys(c.gpu_type for c in placement.locked if c.gpu_type))
    parts = [f"cluster {', '.join(placement.clusters) or 'any'}"]
    parts += [f"host {', '.join(placement.hostnames)}"] if placement.hostnames else []
    parts += [f"GPU type {', '.join(gpus)}"] if gpus else []
    return ", ".join([*parts, f"priority {placement.priority or 'the default'}"])


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
        failed = sum(1 for p in points if p.failed)
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
