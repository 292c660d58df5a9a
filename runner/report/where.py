"""Where a sweep's points run, as the plan says it under each sweep's summary: the clusters a
selector resolved to (the lock's), the Beaker group, and the code `code:` points check out."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from runner.backends import group_name
from runner.plan import SweepPlan


def where_lines(
    plan: SweepPlan, group: Callable[[SweepPlan], str] | None = None
) -> tuple[str, ...]:
    """The lines that apply to this sweep; `group`: how the group is said (`linked_group`
    in markdown), by default `group_line`'s text."""
    lines = (clusters_line(plan), (group or group_line)(plan), code_line(plan))
    return tuple(line for line in lines if line)


def linked_group(plan: SweepPlan) -> str:
    """`group_line` with the group as a markdown link."""
    return group_line(plan, link=True)


def clusters_line(plan: SweepPlan) -> str:
    """A cluster selector's sweep: the clusters its lock resolved it to, each with its GPU
    type, and what was asked; empty for a sweep that names its clusters."""
    placement = plan.sweep.placement
    asked = placement.selector
    if asked is None:
        return ""
    named = ", ".join(f"{c.name} ({c.gpu_type or 'no GPUs'})" for c in placement.locked)
    fields = [(k, v) for k, v in asked.as_json().items() if v]
    said = "; ".join(f"{k} {', '.join(v)}" for k, v in fields)
    return f"Clusters: {named} (the lock's, resolved from {said})"


def clusters_json(plan: SweepPlan) -> dict[str, Any] | None:
    """The same, for `--format json`: None for a sweep that names its clusters."""
    placement = plan.sweep.placement
    if placement.selector is None:
        return None
    resolved = [{"name": c.name, "gpu_type": c.gpu_type} for c in placement.locked]
    return {"selector": placement.selector.as_json(), "resolved": resolved}


def code_line(plan: SweepPlan) -> str:
    """`code:` sweeps: what their new points run; empty for the others."""
    repos = {task["code"].get("repo", "") for task in plan.sweep.tasks if "code" in task}
    if not repos:
        return ""
    where = ", ".join(sorted(r or "this repository" for r in repos))
    return f"code: {where} at the commit that submits (each point's is in the ledger)"


def group_line(plan: SweepPlan, link: bool = False) -> str:
    """Where the sweep's experiments are grouped on Beaker; empty for drafts and opt-outs."""
    if plan.sweep.draft or not plan.sweep.placement.group:
        return ""
    name = group_name(plan.sweep)
    if not plan.group:
        return f"Beaker group: {name} (made by the first submit)"
    return f"Beaker group: [{name}]({plan.group})" if link else f"Beaker group: {name} {plan.group}"
