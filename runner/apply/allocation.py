"""The placement steps of a submit, on a backend that places work on shared machines
(`runner.backends.placing`): the workspace's maximum priority, checked before anything is
created, and the team's priority allocation (`runner.plan.allocation`), from one listing of
each workspace's queued and running workloads."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from runner.backends import Backend, runs
from runner.backends.placing import Places, Workload
from runner.core.errors import Problem
from runner.core.model import Priority
from runner.plan import Held, SweepPlan
from runner.plan.allocation import Slot, allot, counted
from runner.plan.policy import Allotment


def refuse_over_maximum(backend: Backend, acting: Sequence[SweepPlan]) -> str | None:
    """Why the run is refused, in one line (`file:line:col: beaker.priority: ...`), when a
    sweep the run acts on (points to submit or to restart) asks for a priority above its
    workspace's maximum: Beaker would refuse every create. None: no sweep does. One call per
    workspace (the look-up a create makes anyway)."""
    if not isinstance(backend, Places):
        return None
    for plan in acting:
        sweep = plan.sweep
        asked = sweep.placement.priority
        if asked is None or not runs(backend, sweep):
            continue
        top = backend.placing.maximum_priority(sweep.placement.workspace)
        if top is not None and Priority(asked).above(top):
            said = (
                f"priority {asked} is above the maximum priority of workspace"
                f" {sweep.placement.workspace} ({top}): Beaker would refuse every point; lower it"
                " or ask the workspace's admins"
            )
            return str(Problem.at(sweep.marks, str(sweep.path), ("beaker", "priority"), said))
    return None


def allocate(
    backend: Backend, plans: Sequence[SweepPlan], allotments: Sequence[Allotment]
) -> Held | None:
    """The points that would not fit the team's allocation held (they wait); None when no
    point to submit counts against an allotment (nothing is listed)."""
    if not allotments or not isinstance(backend, Places):
        return None
    counting = [p for p in plans if runs(backend, p.sweep) and counted(p, allotments)]
    counting = [p for p in counting if any(r.to_submit for r in p.rows)]
    if not counting:
        return None
    workspaces = sorted({p.sweep.placement.workspace for p in counting})
    used = in_use(w for ws in workspaces for w in backend.placing.live_workloads(ws))
    return allot(plans, allotments, used)


def in_use(workloads: Iterable[Workload]) -> dict[Slot, int]:
    """GPUs per (cluster, priority): a workload that lists several clusters counts on each."""
    used: dict[Slot, int] = {}
    for workload in workloads:
        if workload.priority is None:
            continue
        for cluster in workload.clusters:
            slot = (cluster, workload.priority)
            used[slot] = used.get(slot, 0) + workload.gpus
    return used
