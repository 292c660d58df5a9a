"""The budget policy applied to plans: what breaches it, whether the label approves it, and, on
merge, holding back the over-budget points of a plan that was not approved.

A pull request is judged by its base branch's policy (as Atlantis keeps policy server-side): a
pull request that raises a limit is judged by the old one. The approval is the pull request's
label (`approval_label`); the plan comment's pins carry it (`approved=budget`), so the submit
job runs the over-budget points of a sweep only when an approved pin covers them, and holds
back the rest, listed in the job summary.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from runner.core.errors import Problem
from runner.core.model import Sweep
from runner.plan import Row, SweepPlan, cost, policy
from runner.plan.policy import Policy
from runner.repo import review


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


def figure(sweep: Sweep, spent: cost.Cost) -> float:
    """What the limits judge: the expected GPU-hours where the sweep declares expected_runtime,
    else the up-to figure (infinite when unbounded)."""
    if sweep.placement.expected_runtime is not None:
        return spent.expected
    return math.inf if spent.unbounded else spent.up_to


def _hours(value: float) -> str:
    return "unbounded" if math.isinf(value) else cost.number(value)


def _at(sweep: Sweep, path: tuple[str | int, ...], message: str) -> Problem:
    return Problem.at(sweep.marks, str(sweep.path), path, message)


def _hours_path(sweep: Sweep) -> tuple[str, ...]:
    return ("beaker", "expected_runtime" if sweep.placement.expected_runtime else "timeout")


def breaches(plans: Sequence[SweepPlan], rules: Policy) -> list[Breach]:
    """One breach per limit a sweep (or the merge) goes over; only sweeps with points to submit."""
    found: list[Breach] = []
    # Every `+` point counts, those waiting under max_running too: the schedule submits them.
    costs = [(p, cost.plan_cost(p)) for p in plans if not p.sweep.draft]
    live = [(p, c) for p, c in costs if c.rows]
    where = f"({rules.source})"
    merge = 0.0
    for plan, spent in live:
        sweep, total = plan.sweep, spent.total
        merge += figure(sweep, total)
        found += [Breach(sweep.name, p) for p in _sweep_breaches(sweep, total, rules, where)]
    limit = rules.max_gpu_hours_per_merge
    if limit is not None and merge > limit:
        message = (
            f"this merge may use {_hours(merge)} GPU-hours, over max_gpu_hours_per_merge"
            f" {cost.number(limit)} {where}"
        )
        found += [
            Breach(p.sweep.name, _at(p.sweep, _hours_path(p.sweep), message)) for p, _ in live
        ]
    return found


def _sweep_breaches(sweep: Sweep, total: cost.Cost, rules: Policy, where: str) -> Iterator[Problem]:
    limit, hours = rules.max_gpu_hours_per_sweep, figure(sweep, total)
    if limit is not None and hours > limit:
        yield _at(
            sweep,
            _hours_path(sweep),
            f"sweep {sweep.name} may use {_hours(hours)} GPU-hours, over max_gpu_hours_per_sweep"
            f" {cost.number(limit)} {where}",
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
    for i, cluster in enumerate(sweep.placement.clusters):
        if cluster in rules.approval_clusters:
            yield _at(sweep, ("beaker", "clusters", i), f"cluster {cluster} needs approval {where}")


# -- a pull request's plan ------------------------------------------------------------------


def judge_pull_request(
    root: Path, plans: Sequence[SweepPlan], base: str | None, labels: Sequence[str] | None
) -> Verdict:
    """The plans judged by the base commit's policy (the working tree's without a base).

    `labels` None: the approval was decided on the pull request (a merge queue's run, whose
    event has no labels), so the breaches are shown but do not block; submit still holds back
    the points of a plan that was not approved."""
    if base is None:
        rules = policy.read(root)
    else:
        from runner.repo import gitrepo

        text = gitrepo.file_at(root, base, policy.POLICY_PATH)
        rules = policy.parse(text, f"{policy.POLICY_PATH}@{base}")
    approved = labels is None or rules.approval_label in labels
    return Verdict(rules, tuple(breaches(plans, rules)), approved)


def approve_pins(pins: Sequence[review.Pin], verdict: Verdict) -> list[review.Pin]:
    """The pins a plan comment carries: marked approved when the approval label is set."""
    return [dataclasses.replace(p, approved=verdict.approved) for p in pins]


def markdown(verdict: Verdict) -> str:
    """The comment's budget section: nothing without a policy file."""
    rules = verdict.policy
    if not rules.limits_anything:
        return ""
    label = f"`{rules.approval_label}`"
    if not verdict.breaches:
        return f"\n**Budget:** within the policy ({rules.source}).\n"
    lines = sorted({str(b.problem) for b in verdict.breaches})
    if verdict.approved:
        head = f"**Budget: over the policy, approved** by the label {label}:"
    else:
        head = (
            f"**Budget: over the policy ({len(lines)} breach(es)).** This check fails until"
            f" someone with triage rights adds the label {label}; merged without it, the"
            " over-budget points are held back:"
        )
    return "\n" + head + "\n\n" + "".join(f"- {line}\n" for line in lines)


# -- on merge ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class Held:
    plans: tuple[SweepPlan, ...]
    held: tuple[tuple[str, Row], ...]
    breaches: tuple[Breach, ...]


def hold_unapproved(plans: Sequence[SweepPlan], pins: Sequence[review.Pin], rules: Policy) -> Held:
    """Keep the points of over-budget sweeps that an approved pin covers; hold back the rest."""
    found = breaches(plans, rules)
    over = {b.sweep for b in found}
    kept: list[SweepPlan] = []
    held: list[tuple[str, Row]] = []
    for plan in plans:
        rows = review.pending(plan)  # those waiting under max_running too, as pins count them
        approved = [p for p in pins if p.approved and p.sweep == plan.sweep.name]
        if plan.sweep.name not in over or any(p.digest == review.digest(rows) for p in approved):
            kept.append(plan)
            continue
        tokens = frozenset().union(*(p.tokens for p in approved))
        out = {r.key for r in rows if review.token(r) not in tokens}
        held += [(plan.sweep.name, r) for r in rows if r.key in out]
        kept.append(dataclasses.replace(plan, rows=tuple(r for r in plan.rows if r.key not in out)))
    return Held(tuple(kept), tuple(held), tuple(found))


def held_markdown(result: Held, limit: int = 200) -> str:
    if not result.held:
        return ""
    lines = [
        "## Held back: over the budget policy, not approved",
        "",
        f"**{len(result.held)} point(s) held back**: their sweep is over the budget policy and"
        " no approved plan (a pull request with the approval label) showed them.",
        "",
        *sorted({f"- {b.problem}" for b in result.breaches}),
        "",
        "| sweep | experiment | key |",
        "|---|---|---|",
    ]
    lines += [f"| `{s}` | `{r.name}` | `{r.key[:12]}` |" for s, r in result.held[:limit]]
    if len(result.held) > limit:
        lines.append(f"\n…and {len(result.held) - limit} more.")
    return "\n".join(lines) + "\n\n"


def hold_over_budget(plans: Sequence[SweepPlan], root: Path, pins: Sequence[review.Pin]) -> Held:
    """The submit step: the plans without the over-budget points no approved plan showed (judged
    by the policy at HEAD, the base every merged pull request was judged by), and what it held."""
    return hold_unapproved(plans, pins, policy.read(root))


def held_line(result: Held) -> str:
    return f"{len(result.held)} point(s) held back: over the budget policy, not approved"


def event_labels() -> tuple[str, ...] | None:
    """The pull request's labels, from the workflow's event (none outside GitHub Actions);
    None in a merge queue, where the pull request's check has decided."""
    import os

    from runner.repo import github

    if not os.environ.get("GITHUB_EVENT_PATH"):
        return ()
    event = github.read_event()
    return None if event.name == "merge_group" else event.labels
