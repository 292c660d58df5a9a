"""What a plan costs in GPU-hours: per point, per sweep and per merge.

A point uses, summed over its tasks, replicas × GPUs × hours, all three read from the spec that
would be submitted, so replicas and GPUs that a parameter drives are counted at each point's own
values. Up to: hours is the spec's `timeout`, the bound Beaker enforces (a successive halving's
rung point has its rung's share of `beaker.timeout`, `Ladder.timeout`), never a figure computed
beside it. Expected: hours is `beaker.expected_runtime` where the manifest declares it (an
estimate, never in the spec: a rung point's is its share, `value / max`), never above the
spec's timeout; else the up-to figure. A task with GPUs and no timeout has no upper bound: the
point is "unbounded", and so is every total it is part of.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from runner.core.ladder import Ladder
from runner.core.model import Point, Rendered, Sweep
from runner.core.values import Value
from runner.plan import SweepPlan
from runner.render import Renderer
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


def point_cost(sweep: Sweep, rendered: Rendered) -> Cost:
    """The GPU-hours of one rendered point, read from its spec (module docstring)."""
    expected_hours = _expected_hours(sweep, rendered.params)
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
        hours = expected_hours
        if timeout is None:
            unbounded = 1
        else:
            bound = timeout / _NANOS_PER_HOUR
            up_to += per_node * replicas * bound
            hours = bound if hours is None else min(hours, bound)
        expected += per_node * replicas * (hours or 0.0)
    return Cost(up_to, expected, gpus, unbounded, 1, " + ".join(parts), _image(rendered.spec))


def _expected_hours(sweep: Sweep, params: Sequence[tuple[str, Value]]) -> float | None:
    """`expected_runtime` in hours (None when not declared); a rung point's share of it."""
    text = sweep.placement.expected_runtime
    if text is None:
        return None
    ladder = sweep.space.ladder
    share = 1 if ladder is None else ladder.share(ladder.rung(dict(params)))
    return float(to_nanoseconds(text) * share) / _NANOS_PER_HOUR


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
    if not _uses_gpus(plan.sweep):
        # No task asks for GPUs: nothing to read from the specs (0.2 s for 10 000 points).
        cpu = Cost(0.0, 0.0, 0, 0, 1, " + ".join("CPU" for _ in plan.sweep.tasks))
        return PlanCost(plan, {r.key: cpu for r in rows})
    price = _pricer(plan.sweep)
    return PlanCost(plan, {r.key: price(r.rendered) for r in rows if r.rendered})


def _uses_gpus(sweep: Sweep) -> bool:
    return any("gpus" in t.get("resources", {}) for t in sweep.tasks)


def _pricer(sweep: Sweep) -> Callable[[Rendered], Cost]:
    """`point_cost` of the sweep's points. Where no point's cost can differ from another's at
    the same rung, one spec is read per rung, not one per point (0.4 s for 10 000)."""
    if _varies(sweep):
        return lambda rendered: point_cost(sweep, rendered)
    ladder = sweep.space.ladder
    known: dict[int, Cost] = {}

    def price(rendered: Rendered) -> Cost:
        rung = 0 if ladder is None else ladder.rung(dict(rendered.params))
        found = known.get(rung)
        if found is None:
            found = known[rung] = point_cost(sweep, rendered)
        return found

    return price


def _varies(sweep: Sweep) -> bool:
    """Whether a point's cost can differ from another's of the same rung: a template in what
    it is made of (GPUs, replicas, the image); the timeout and expected runtime are the
    sweep's own, or its rung's."""
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
    timeout: int | None
    """Its points' spec `timeout` (ns); None: unbounded (no `beaker.timeout`)."""
    projected: bool = False
    """Not proposed yet: the costliest of rung 0's configurations, as many as the rung will
    hold, each priced from the spec it would have at this rung."""


@dataclass(frozen=True)
class HalvingCost:
    """A successive halving's GPU-hours: each rung's, and the grid's without halving."""

    rungs: tuple[RungCost, ...]
    full: Cost
    """Every configuration of rung 0 run at full length (priced from its spec at the last rung)."""

    @property
    def total(self) -> Cost:
        return total(r.cost for r in self.rungs)


def halving_cost(plan: SweepPlan) -> HalvingCost | None:
    """Each rung's GPU-hours, and every configuration at full length; None for a sweep that is
    no halving or uses no GPUs. A rung not proposed yet is priced as the rung that may cost the
    most: the costliest of rung 0's configurations, as many as it will hold, each rendered at
    that rung."""
    sweep, ladder = plan.sweep, plan.sweep.space.ladder
    rendered = [r.rendered for r in plan.rows if r.rendered is not None]
    if ladder is None or not rendered or not _uses_gpus(sweep):
        return None
    price = _pricer(sweep)
    by_rung: dict[int, list[Rendered]] = {}
    for point in rendered:
        by_rung.setdefault(ladder.rung(dict(point.params)), []).append(point)
    at = _at_rung(sweep, ladder, by_rung.get(0, []), Renderer(sweep), price)
    last = len(ladder.values) - 1
    sizes = ladder.sizes(len(by_rung.get(0, [])))
    out = []
    for k, value in enumerate(ladder.values):
        known = by_rung.get(k)
        if known:
            out.append(RungCost(k, value, total(map(price, known)), _timeout(known[0])))
            continue
        priced = at(k)
        dearest = sorted(priced, key=lambda p: _dearness(p[1]), reverse=True)[: sizes[k]]
        timeout = _timeout(priced[0][0]) if priced else None
        out.append(RungCost(k, value, total(c for _, c in dearest), timeout, True))
    return HalvingCost(tuple(out), total(c for _, c in at(last)))


def _at_rung(
    sweep: Sweep,
    ladder: Ladder,
    zero: Sequence[Rendered],
    renderer: Renderer,
    price: Callable[[Rendered], Cost],
) -> Callable[[int], list[tuple[Rendered, Cost]]]:
    """Rung 0's configurations rendered and priced at a rung: each, or, where no point's cost
    can differ from another's of its rung, the first one standing for all."""
    varies = _varies(sweep)

    def at(rung: int) -> list[tuple[Rendered, Cost]]:
        if not zero:
            return []
        if not varies:
            first = renderer.render(Point(ladder.moved(zero[0].params, rung)))
            return [(first, price(first))] * len(zero)
        moved = [renderer.render(Point(ladder.moved(r.params, rung))) for r in zero]
        return [(r, price(r)) for r in moved]

    return at


def _dearness(spent: Cost) -> tuple[int, float, float]:
    return (spent.unbounded, spent.up_to, spent.expected)


def _timeout(rendered: Rendered) -> int | None:
    """The spec's timeout (every task has the sweep's, or its rung's); None when it has none."""
    timeout: int | None = rendered.spec["tasks"][0].get("timeout")
    return timeout


def rows_cost(plan: SweepPlan, keys: frozenset[str] | None = None) -> Cost:
    """The cost of the plan's points (of `keys` only, if given) whatever their status: what
    a search has spent and will spend (`runner.plan.envelope`)."""
    found = [r.rendered for r in plan.rows if r.rendered and (keys is None or r.key in keys)]
    price = _pricer(plan.sweep) if _uses_gpus(plan.sweep) else lambda _: NOTHING
    return total(map(price, found))


def figure(sweep: Sweep, spent: Cost) -> float:
    """What the limits judge: expected where `expected_runtime` is set, else up-to (or inf)."""
    if sweep.placement.expected_runtime is not None:
        return spent.expected
    return math.inf if spent.unbounded else spent.up_to


def merge_total(costs: Sequence[PlanCost]) -> Cost:
    return total(c.total for c in costs if c.counted)


def number(hours: float) -> str:
    """'2 304', '0.5': whole hours with spaces between thousands, a fraction when below 10.
    The planner's one piece of text: the budget's problems write hours as the plan shows them
    (`runner.report.cost` writes the rest)."""
    if hours < 10 and not float(hours).is_integer():
        return f"{hours:.1f}"
    return f"{math.ceil(hours - 1e-9):,}".replace(",", " ")
