"""What a sweep weighs, parsed once for the whole sweep (`runner.core.aims.Aims`): the objectives
its sample section names (`metric: [loss, gpu_hours]`, `goal`), else its halving's (`params.fidelity`'s
`metric` and `goal`), else the direction its `stop_when` says (below: lower is better); and the
constraints of its sample section (`peak_mem_gb <= 78`).
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from typing import Any

from runner.core.aims import Aim, Aims, Bound, Constraint, Goal
from runner.core.marks import Document, KeyPath
from runner.manifest.conditions import Add

_CONSTRAINT = re.compile(r"^\s*([A-Za-z_][\w.\-/]*)\s*(<=|>=)\s*(\S+)\s*$")
SAMPLE: KeyPath = ("params", "sample")


def sweep_aims(doc: Document, add: Add) -> Aims:
    """The sweep's objectives and constraints, from a schema-valid document; problems go to
    `add(path, message, key)`. A halving's metric and the sample's must agree
    (`runner.manifest.fidelity` says so when they do not)."""
    params: Mapping[str, Any] = doc.data.get("params") or {}
    sample, fidelity = params.get("sample"), params.get("fidelity")
    objectives: tuple[Aim, ...] = ()
    constraints: tuple[Constraint, ...] = ()
    if isinstance(sample, Mapping):
        objectives, constraints = parse_aims(sample, SAMPLE, add)
    if not objectives and isinstance(fidelity, Mapping):
        objectives = (Aim(str(fidelity["metric"]), Goal(fidelity.get("goal", Goal.MINIMIZE))),)
    target = doc.data.get("stop_when")
    if not objectives and isinstance(target, Mapping):
        goal = Goal.MINIMIZE if "below" in target else Goal.MAXIMIZE
        objectives = (Aim(str(target["metric"]), goal),)
    return Aims(objectives, constraints)


def parse_aims(
    raw: Mapping[str, Any], base: KeyPath, add: Add
) -> tuple[tuple[Aim, ...], tuple[Constraint, ...]]:
    """A section's objectives (none without `metric`) and constraints."""
    metrics = raw.get("metric", [])
    metrics = [metrics] if isinstance(metrics, str) else list(metrics)
    goals = raw.get("goal", Goal.MINIMIZE)
    if isinstance(goals, str):
        goals = [goals] * len(metrics)
    elif len(goals) != len(metrics):
        add(
            (*base, "goal"),
            f"{len(goals)} goal(s) for {len(metrics)} metric(s): write one goal per metric, in"
            " the same order (or one goal for all)",
            False,
        )
        goals = [Goal.MINIMIZE] * len(metrics)
    aims = tuple(Aim(m, Goal(g)) for m, g in zip(metrics, goals, strict=True))
    constraints = []
    for i, text in enumerate(raw.get("constraints", ())):
        parsed = constraint(text)
        if parsed is None:
            add(
                (*base, "constraints", i),
                f"{text!r} is not a constraint: write `metric <= number` or `metric >= number`"
                " (e.g. `peak_mem_gb <= 78`)",
                False,
            )
        else:
            constraints.append(parsed)
    return aims, tuple(constraints)


def constraint(text: str) -> Constraint | None:
    """A constraint as written (`name <= limit`, `name >= limit`); None when it is not one."""
    found = _CONSTRAINT.match(text)
    if found is None:
        return None
    try:
        limit = float(found.group(3))
    except ValueError:
        return None
    if not math.isfinite(limit):
        return None
    return Constraint(found.group(1), Bound(found.group(2)), limit)
