"""The budget policy's judgement of plans: what breaches it, and whether the pull request's
label approves it. Pure: the policy (`runner.plan.policy`) and the labels are given.

A pull request is judged by its base branch's policy (as Atlantis keeps policy server-side): a
pull request that raises a limit is judged by the old one (`runner.commands.plan_comment` reads
it at the base commit). The approval is the pull request's label (`approval_label`); the plan
comment's pins carry it (`approved=budget`), so the submit job runs the over-budget points of a
sweep only when an approved pin covers them, and holds back the rest
(`runner.plan.holds.hold_unapproved`).
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from runner.core.errors import Problem
from runner.core.marks import KeyPath
from runner.core.model import Sweep
from runner.plan import SweepPlan, cost, envelope
from runner.plan.policy import Policy


@dataclass(frozen=True)
class Breach:
    sweep: str
    """The sweep it concerns; every sweep with points to submit for the merge-wide limit."""
    problem: Problem
    """Where it is annotated (a line of the manifest) and what it says."""


@dataclass(frozen=True)
class Verdict:
    policy: Policy
    breaches: tuple[Breach, ...]
    approved: bool
    """The pull request carries the policy's approval label."""

    @property
    def blocked(self) -> bool:
        return bool(self.breaches) and not self.approved


def judge(plans: Sequence[SweepPlan], rules: Policy, labels: Sequence[str] | None) -> Verdict:
    """The plans judged by `rules`. `labels` None: the approval was decided on the pull request
    (a merge queue's run, whose event has no labels), so the breaches are shown but do not
    block; submit still holds back the points of a plan that was not approved."""
    approved = labels is None or rules.approval_label in labels
    return Verdict(rules, tuple(breaches(plans, rules)), approved)


def _hours_text(value: float) -> str:
    return "unbounded" if math.isinf(value) else cost.number(value)


def _at(sweep: Sweep, path: KeyPath, message: str) -> Problem:
    return Problem.at(sweep.marks, str(sweep.path), path, message)


def _hours_path(sweep: Sweep) -> tuple[str, ...]:
    return ("beaker", "expected_runtime" if sweep.placement.expected_runtime else "timeout")


def breaches(plans: Sequence[SweepPlan], rules: Policy) -> list[Breach]:
    """One breach per limit a sweep (or the merge) goes over; only sweeps with points to submit."""
    found: list[Breach] = []
    # Every pending point counts, those waiting under max_running too: the schedule submits them.
    costs = [(p, cost.plan_cost(p)) for p in plans if not p.sweep.draft]
    live = [(p, c) for p, c in costs if c.rows]
    where = f"({rules.source})"
    merge = 0.0
    for plan, spent in live:
        sweep, total, hours = plan.sweep, spent.total, _hours(plan, spent.total)
        merge += hours
        said = _sweep_breaches(sweep, (total, hours), rules, where)
        found += [Breach(sweep.name, p) for p in said]
    limit = rules.max_gpu_hours_per_merge
    if limit is not None and merge > limit:
        message = (
            f"this merge may use {_hours_text(merge)} GPU-hours, over max_gpu_hours_per_merge"
            f" {cost.number(limit)} {where}"
        )
        found += [
            Breach(p.sweep.name, _at(p.sweep, _hours_path(p.sweep), message)) for p, _ in live
        ]
    return found


def _hours(plan: SweepPlan, total: cost.Cost) -> float:
    """What a sweep's limits judge: its `+` points' GPU-hours; an automatic search's, its
    envelope's (every round inside it runs without another review)."""
    if plan.sweep.search.auto:
        return envelope.envelope(plan).limit
    return cost.figure(plan.sweep, total)


def _sweep_breaches(
    sweep: Sweep, spent: tuple[cost.Cost, float], rules: Policy, where: str
) -> Iterator[Problem]:
    (total, hours), limit = spent, rules.max_gpu_hours_per_sweep
    if limit is not None and hours > limit:
        auto = sweep.search.auto
        yield _at(
            sweep,
            ("advance",) if auto else _hours_path(sweep),
            f"sweep {sweep.name} may use {_hours_text(hours)} GPU-hours"
            + (" in its envelope (advance: auto, every round)" if auto else "")
            + f", over max_gpu_hours_per_sweep {cost.number(limit)} {where}",
        )
    gpus = rules.max_gpus_per_point
    if gpus is not None and total.gpus > gpus:
        task = next((i for i, t in enumerate(sweep.tasks) if "gpus" in t.get("resources", {})), 0)
        yield _at(
            sweep,
            ("tasks", task, "resources", "gpus"),
            f"a point of sweep {sweep.name} holds {total.gpus} GPUs, over max_gpus_per_point"
            f" {gpus} {where}",
        )
    priority = sweep.placement.priority
    if priority in rules.approval_priorities:
        yield _at(sweep, ("beaker", "priority"), f"priority {priority} needs approval {where}")
    selected = sweep.placement.selector is not None  # the lock's clusters: no line of their own
    for i, cluster in enumerate(sweep.placement.clusters):
        if cluster in rules.approval_clusters:
            path = ("beaker", "clusters") if selected else ("beaker", "clusters", i)
            yield _at(sweep, path, f"cluster {cluster} needs approval {where}")
