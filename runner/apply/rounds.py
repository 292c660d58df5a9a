"""Round after round on this machine: `submit` of an automatic search (`advance: auto`) runs
as the schedule would, where every run ends inside `create` (the local backend), until each
search completes, stops or would leave its envelope."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from runner.apply import Applied, ApplyListener, ApplyOptions, apply
from runner.backends import Backend, Capability
from runner.plan import SweepPlan
from runner.submit import OutcomeStatus


def apply_rounds(
    plans: Sequence[SweepPlan],
    backend: Backend,
    options: ApplyOptions,
    listener: ApplyListener,
    replan: Callable[[], Sequence[SweepPlan]],
) -> Applied:
    """`apply`, and, where a run ends inside `create` (this machine: `RUNS_DRAFTS`), again
    with the sweeps planned anew (`replan`: their manifests and the locks written) while an
    automatic search wrote a round and nothing failed: round after round, as the schedule
    would, until each search completes, stops or would leave its envelope."""
    applied = last = apply(plans, backend, options, listener)
    local = Capability.RUNS_DRAFTS in backend.capabilities
    while local and not options.dry_run and _progressed(last):
        last = apply(replan(), backend, options, listener)
        applied = applied.then(last)
    return applied


def _progressed(applied: Applied) -> bool:
    """Whether a pass wrote a round or created points of an automatic search, and nothing
    stopped it or was refused: another pass may find the next round."""
    if applied.stop is not None or any(
        o.status.incomplete or o.status in (OutcomeStatus.REJECTED, OutcomeStatus.CANCELED)
        for o in applied.outcomes
    ):
        return False
    auto = {p.sweep.name for p in applied.plans if p.sweep.search.auto}
    return bool(applied.advanced) or any(
        o.status.submitted and o.sweep in auto for o in applied.outcomes
    )
