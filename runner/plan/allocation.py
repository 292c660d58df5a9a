"""A team's priority allocation (`priority_allocation` in the base branch's policy): at most N
GPUs of a workspace's queued and running work at a priority on a cluster.

Beaker has priorities and per-workspace caps but no team allocation, so labs demote urgent work
by hand (or by cron) once a team is over its slots. Here a submit holds the points that would
not fit: what the workspace holds now (one listing, `runner.apply.allocation`) plus this run's
points, in plan order, must stay within every allotment a point counts against (one per cluster
it lists, at its priority). A held point waits, as under max_running: a later submit creates it
once GPUs free. Pure: the usage now is given.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from runner.core.model import Priority
from runner.plan import Held, Hold, HoldReason, SweepPlan, cost, hold
from runner.plan.policy import Allotment

Slot = tuple[str, Priority]
"""(cluster, priority): what an allotment limits."""


def counted(plan: SweepPlan, allotments: Sequence[Allotment]) -> list[Slot]:
    """The allotments the sweep's points count against: one per cluster it lists (the lock's
    for a selector) that has an allotment at its priority."""
    priority = plan.sweep.placement.priority
    if priority is None or plan.sweep.draft:
        return []
    limited = {(a.cluster, a.priority) for a in allotments}
    return [
        slot for c in plan.sweep.placement.clusters if (slot := (c, Priority(priority))) in limited
    ]


def allot(
    plans: Sequence[SweepPlan], allotments: Sequence[Allotment], used: Mapping[Slot, int]
) -> Held:
    """The plans with each point to submit now that would not fit its allotments held (it
    waits); `used`: GPUs of the workspaces' queued and running work per (cluster, priority)."""
    limits = {(a.cluster, a.priority): a.gpus for a in allotments}
    taken = dict(used)
    held: dict[str, set[str]] = {}
    full: set[Slot] = set()
    for plan in plans:
        slots = counted(plan, allotments)
        rows = [r for r in plan.rows if r.to_submit] if slots else []
        costs = cost.plan_cost(plan).rows if rows else {}
        for row in rows:
            gpus = costs[row.key].gpus if row.key in costs else 0
            over = [s for s in slots if taken.get(s, 0) + gpus > limits[s]]
            if over:
                held.setdefault(plan.sweep.name, set()).add(row.key)
                full.update(over)
                continue
            for slot in slots:
                taken[slot] = taken.get(slot, 0) + gpus
    said = "; ".join(
        f"{p} allocation {c}: {taken.get((c, p), 0)} of {limits[(c, p)]} GPUs in use"
        for c, p in sorted(full)
    )
    why = Hold(HoldReason.ALLOCATION, f"waiting: {said}")
    return hold(plans, why, lambda plan: held.get(plan.sweep.name, ()))
