"""What ended a failed or canceled point says of restarting it: `--restart-failed` restarts the
run's own failures, never a timeout (a restart would run into it again, at the same cost) nor a
preemption or a lost node (a plain `submit` resumes those: `runner.operate.preempted`)."""

from __future__ import annotations

from runner.backends import EndCause, Experiment
from runner.observe.model import preemptions_seen, within
from runner.plan import Row, SweepPlan
from runner.render.durations import elapsed_text


def left_alone(plan: SweepPlan, row: Row, found: Experiment) -> str:
    """Why `--restart-failed` leaves a failed or canceled point alone for what ended it (empty:
    it restarts it): a timeout would be hit again, at the same cost; a preemption or a lost
    node is a plain `submit`'s to resume (`runner.operate.preempted`), not a restart."""
    ended, entry = found.ended, row.entry
    if ended is None or entry is None:
        return ""
    if ended.cause is EndCause.TIMED_OUT:
        limit = f" of {elapsed_text(ended.timeout)}" if ended.timeout else ""
        return (
            f"timed out after its timeout{limit}: a restart would run into it again; raise"
            f" `beaker.timeout` (or `submit --restart --points {row.experiment}` as it is)"
        )
    if not ended.cause.resumable:
        return ""
    count = preemptions_seen(entry.preemptions, ended, awaiting=True)
    cap = plan.sweep.limits.max_preemptions
    if within(count, cap):
        return f"{ended.cause}: a plain `submit` resumes it (a preemption is not a restart)"
    return (
        f"{ended.cause} ({count}x); max_preemptions {cap} reached: left as it is"
        f" (`submit --restart --points {row.experiment}` runs it again)"
    )
