"""What a plan costs in GPU-hours: per point, per sweep and per merge.

A point uses, summed over its tasks, replicas × GPUs × hours. Hours is the sweep's `timeout`
(`beaker.timeout`, an upper bound Beaker enforces) and, when the manifest declares it,
`beaker.expected_runtime` (an estimate). Both are read from the rendered spec, so replicas and
GPUs that a parameter drives are counted at each point's own values. A task with GPUs and no
timeout has no upper bound: the point is "unbounded", and so is every total it is part of.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from runner.core.model import Rendered, Sweep
from runner.core.values import Value
from runner.plan import SweepPlan
from runner.render.durations import to_nanoseconds

_NANOS_PER_HOUR = 3600 * 10**9
UNBOUNDED = "unbounded"


@dataclass(frozen=True)
class Cost:
    """GPU-hours of one point, or the sum over several."""

    up_to: float
    """Replicas × GPUs × timeout, over the tasks that have a timeout."""
    expected: float
    """Replicas × GPUs × expected_runtime where declared, else the up-to figure."""
    gpus: int
    """GPUs the point holds at once (all tasks, all replicas); for a sum, the largest point's."""
    unbounded: int = 0
    """Points with a GPU task and no timeout (their up-to figure is infinite)."""
    points: int = 1
    resources: str = ""
    """'8 GPU × 2 nodes' (tasks joined by ' + '); empty for a sum."""
    image: str = ""

    @property
    def uses_gpus(self) -> bool:
        return self.gpus > 0

    def scaled(self, share: float) -> Cost:
        """The cost of running `share` of the length (a halving's rung: `value / max`)."""
        if share == 1.0:
            return self
        return replace(self, up_to=self.up_to * share, expected=self.expected * share)

    def __add__(self, other: Cost) -> Cost:
        return Cost(
            self.up_to + other.up_to,
            self.expected + other.expected,
            max(self.gpus, other.gpus),
            self.unbounded + other.unbounded,
            self.points + other.points,
        )


NOTHING = Cost(0.0, 0.0, 0, 0, 0)


def total(costs: Iterable[Cost]) -> Cost:
    out = NOTHING
    for cost in costs:
        out = out + cost
    return out


def _runtime_hours(text: str | None) -> float | None:
    return None if text is None else to_nanoseconds(text) / _NANOS_PER_HOUR


def point_cost(sweep: Sweep, rendered: Rendered) -> Cost:
    """The GPU-hours of one rendered point (a halving's rung point: `value / max` of its
    full-length estimate)."""
    return full_cost(sweep, rendered).scaled(_share(sweep, rendered))


def _share(sweep: Sweep, rendered: Rendered) -> float:
    ladder = sweep.space.ladder
    return 1.0 if ladder is None else ladder.fraction(dict(rendered.params))


def full_cost(sweep: Sweep, rendered: Rendered) -> Cost:
    """The GPU-hours of one rendered point at its full length."""
    expected_hours = _runtime_hours(sweep.placement.expected_runtime)
    up_to = expected = 0.0
    gpus = unbounded = 0
    parts = []
    for task in rendered.spec["tasks"]:
        replicas = int(task.get("replicas", 1))
        per_node = int(task.get("resources", {}).get("gpuCount", 0))
        parts.append(_resources(per_node, replicas))
        if not per_node:
            continue
        gpus += per_node * replicas
        timeout = task.get("timeout")
        if timeout is None:
            unbounded = 1
        else:
            up_to += per_node * replicas * timeout / _NANOS_PER_HOUR
        hours = expected_hours
        if hours is None and timeout is not None:
            hours = timeout / _NANOS_PER_HOUR
        expected += per_node * replicas * (hours or 0.0)
    return Cost(up_to, expected, gpus, unbounded, 1, " + ".join(parts), _image(rendered.spec))


def _resources(gpus: int, replicas: int) -> str:
    text = f"{gpus} GPU" if gpus else "CPU"
    return f"{text} × {replicas} nodes" if replicas > 1 else text


def _image(spec: Mapping[str, Any]) -> str:
    images = [next(iter(t["image"].values())) for t in spec["tasks"]]
    return ", ".join(dict.fromkeys(images))


@dataclass(frozen=True)
class PlanCost:
    """A sweep plan's `+` points with their cost, and the sweep's total."""

    plan: SweepPlan
    rows: Mapping[str, Cost]
    """Cost by point key, for each `+` row."""

    @property
    def total(self) -> Cost:
        return total(self.rows.values())

    @property
    def counted(self) -> bool:
        """Whether the merge's total counts it: drafts are never submitted."""
        return not self.plan.sweep.draft


def plan_cost(plan: SweepPlan) -> PlanCost:
    """The cost of every pending point (those waiting under max_running too: a top-up submits
    them; not those held back for good)."""
    rows = [r for r in plan.rows if r.pending and r.rendered is not None]
    if not any("gpus" in t.get("resources", {}) for t in plan.sweep.tasks):
        # No task asks for GPUs: nothing to read from the specs (0.2 s for 10 000 points).
        cpu = Cost(0.0, 0.0, 0, 0, 1, " + ".join("CPU" for _ in plan.sweep.tasks))
        return PlanCost(plan, {r.key: cpu for r in rows})
    if rows and not _varies(plan.sweep):
        # Every point asks for the same: one spec read, not one per point (0.4 s for 10 000).
        same = full_cost(plan.sweep, rows[0].rendered)  # type: ignore[arg-type]
        return PlanCost(
            plan, {r.key: same.scaled(_share(plan.sweep, r.rendered)) for r in rows if r.rendered}
        )
    return PlanCost(plan, {r.key: point_cost(plan.sweep, r.rendered) for r in rows if r.rendered})


def _varies(sweep: Sweep) -> bool:
    """Whether a point's cost can differ from another's: a template in what it is made of
    (GPUs, replicas, the image); the timeout and expected runtime are the sweep's own."""
    for task in sweep.tasks:
        parts = [
            task.get("resources", {}).get("gpus"),
            task.get("replicas"),
            *task["image"].values(),
        ]
        if any(isinstance(part, str) and "{" in part for part in parts):
            return True
    return False


@dataclass(frozen=True)
class RungCost:
    """One rung of a successive halving: its budget, its points and their GPU-hours."""

    rung: int
    value: Value
    """The fidelity parameter's value at this rung."""
    cost: Cost
    """Its points' cost (`cost.points`: how many)."""
    projected: bool = False
    """Not proposed yet: as many points as the rung will hold, at rung 0's mean cost."""


@dataclass(frozen=True)
class HalvingCost:
    """A successive halving's GPU-hours: each rung's, and the grid's without halving."""

    rungs: tuple[RungCost, ...]
    full: Cost
    """Every configuration of rung 0 run at full length."""

    @property
    def total(self) -> Cost:
        return total(r.cost for r in self.rungs)


def halving_cost(plan: SweepPlan) -> HalvingCost | None:
    """Each rung's GPU-hours (those still to come projected from rung 0's points), and every
    configuration at full length; None for a sweep that is no halving or uses no GPUs."""
    sweep, ladder = plan.sweep, plan.sweep.space.ladder
    rows = [r for r in plan.rows if r.rendered is not None]
    if ladder is None or not rows or not any("gpus" in t.get("resources", {}) for t in sweep.tasks):
        return None
    same = None if _varies(sweep) else full_cost(sweep, rows[0].rendered)  # type: ignore[arg-type]
    by_rung: dict[int, list[Cost]] = {}
    full = NOTHING
    for row in rows:
        params = dict(row.params)
        whole = same or full_cost(sweep, row.rendered)  # type: ignore[arg-type]
        by_rung.setdefault(ladder.rung(params), []).append(whole.scaled(ladder.fraction(params)))
        full = full + whole if ladder.rung(params) == 0 else full
    sizes = ladder.sizes(full.points)
    out = []
    for k, value in enumerate(ladder.values):
        share = ladder.fraction({ladder.param: value}) * sizes[k] / max(1, full.points)
        known = by_rung.get(k)
        out.append(
            RungCost(k, value, total(known))
            if known
            else RungCost(k, value, replace(full.scaled(share), points=sizes[k]), True)
        )
    return HalvingCost(tuple(out), full)


def merge_total(costs: Sequence[PlanCost]) -> Cost:
    return total(c.total for c in costs if c.counted)


def number(hours: float) -> str:
    """'2 304', '0.5': whole hours with spaces between thousands, a fraction when below 10.
    The planner's one piece of text: the budget's problems write hours as the plan shows them
    (`runner.report.cost` writes the rest)."""
    if hours < 10 and not float(hours).is_integer():
        return f"{hours:.1f}"
    return f"{math.ceil(hours - 1e-9):,}".replace(",", " ")
