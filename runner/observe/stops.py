"""A sweep's own stops, as a rule over its observation: a failure budget (`max_failures`) and a
target (`stop_when`). Once N of a sweep's points have failed for good, or a finished point has
reached the target, no new point of it is created (`runner.apply.guardrails` holds them); the
plan, `status`, `propose` and the notices all read the stop from the sweep's observation.

"Failed for good" is the state after any restarts: `submit --restart-failed` restarts before
the stops are judged, so a point it restarted is running again and does not count.
"""

from __future__ import annotations

from collections.abc import Sequence

from runner.backends import ExperimentState
from runner.core.model import Sweep
from runner.observe.model import PointResult, SweepStop


def guarded(sweep: Sweep) -> bool:
    return sweep.limits.max_failures is not None or sweep.limits.stop_when is not None


def stop_of(sweep: Sweep, points: Sequence[PointResult]) -> SweepStop | None:
    """Why the sweep creates no new points, or None. The failure budget is checked first."""
    limit = sweep.limits.max_failures
    if limit is not None:
        failed = sum(1 for p in points if p.state == ExperimentState.FAILED and not p.canceled_at)
        if failed >= limit:
            reason = f"stopped: {failed} failed (max_failures {limit})"
            return SweepStop(sweep.name, reason, str(limit))
    target = sweep.limits.stop_when
    if target is None:
        return None
    for point in points:  # manifest order: the first that reached it is named
        value = point.finished(target.metric)
        if value is not None and target.reached(value):
            reason = (
                f"stopped: {point.experiment} reached {target.metric} {value:g}"
                f" (stop_when {target})"
            )
            return SweepStop(sweep.name, reason, str(target), point.experiment)
    return None
