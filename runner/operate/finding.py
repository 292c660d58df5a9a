"""A point named on the command line (`--points`, `logs NAME`): by its experiment name, or a
prefix of its key, across the plans; exactly one, or an error naming the candidates."""

from __future__ import annotations

from collections.abc import Sequence

from runner.core.errors import RunnerError
from runner.plan import Row, SweepPlan


def find_point(plans: Sequence[SweepPlan], ref: str) -> list[tuple[SweepPlan, Row]]:
    """The one point named `ref` (an experiment name, or a prefix of its key) across the plans;
    a RunnerError naming the candidates when there is none or more than one."""
    rows = [(plan, row) for plan in plans for row in plan.rows]
    exact = [(p, r) for p, r in rows if ref in (r.name, r.experiment, r.key)]
    found = exact or [(p, r) for p, r in rows if ref and r.key.startswith(ref.lower())]
    if not found:
        raise RunnerError(
            f"no point is named {ref!r} or has a key starting with it"
            f" (in {', '.join(p.sweep.name for p in plans) or 'no sweep'})"
        )
    if len(found) > 1:
        names = ", ".join(r.name for _, r in found[:5]) + (", ..." if len(found) > 5 else "")
        raise RunnerError(
            f"{ref!r} matches {len(found)} points ({names}): give more of the key, or the name"
        )
    return found
