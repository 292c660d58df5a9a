"""An automatic search's envelope as the plan shows it: what merging approves once (a line under
the sweep's plan, and its JSON), and who approved each round so far (`status`, `report`)."""

from __future__ import annotations

import math
from typing import Any

from runner.core.search import Search
from runner.locking.decision import Approval, history
from runner.plan import SweepPlan
from runner.plan.cost import number
from runner.plan.envelope import envelope


def envelope_line(plan: SweepPlan) -> str:
    """The plan's line for an automatic search (`advance: auto`); empty for another."""
    search = plan.sweep.search
    if not search.auto:
        return ""
    found = envelope(plan)
    source = (
        "advance.max_gpu_hours"
        if found.max_gpu_hours is not None
        else "the plan's projection of the whole search"
    )
    return (
        f"Automatic search (advance: auto): merging approves its envelope {found.short}"
        f" ({_what(search)}), at most {_hours(found.limit)} GPU-hours for the whole search"
        f" ({source}; projected {_hours(found.projected)}). Each round inside it is then"
        " submitted by the schedule without another review, its decision recorded in the lock"
        " (`replay` recomputes it); a round past it opens a pull request."
    )


def envelope_json(plan: SweepPlan) -> dict[str, Any] | None:
    if not plan.sweep.search.auto:
        return None
    found = envelope(plan)
    return {
        "digest": found.digest,
        "projected": None if math.isinf(found.projected) else found.projected,
        "max_gpu_hours": found.max_gpu_hours,
        "limit": None if math.isinf(found.limit) else found.limit,
    }


def _what(search: Search) -> str:
    halving, sample = search.halving, search.sample
    parts = [search.method]
    if halving is not None:
        ladder = halving.ladder
        parts.append(
            f"{ladder.param} {ladder.values[0]} to {ladder.values[-1]}, eta {ladder.eta},"
            f" {halving.promotion} promotion"
        )
    if sample is not None and sample.adaptive:
        parts.append(f"n={sample.n}, batch {sample.batch}, seed {sample.seed}")
    return ", ".join(parts)


def _hours(value: float) -> str:
    return "unbounded" if math.isinf(value) else number(value)


def approvals(search: Search) -> str:
    """Who approved each round (or rung) so far, in a few words: `round 0: a person; rounds 1,
    2: the envelope`; empty for a search without rounds."""
    if not search.steps:
        return ""
    word = "rung" if search.halving is not None else "round"
    by_whom: dict[Approval, list[int]] = {}
    for k, who in history(search).items():
        by_whom.setdefault(who, []).append(k)
    said = []
    for approver, numbers in sorted(by_whom.items(), key=lambda item: item[1][0]):
        plural = "s" if len(numbers) > 1 else ""
        name = "the envelope" if approver is Approval.ENVELOPE else "a person"
        said.append(f"{word}{plural} {', '.join(map(str, numbers))}: {name}")
    return "; ".join(said)


def approved_json(search: Search) -> dict[str, str] | None:
    """Who approved each round (or rung), by its number (`person` or `envelope`), for an
    automatic search or one whose lock records automatic rounds; None for another."""
    if not (search.auto or (search.lock is not None and search.lock.decisions)):
        return None
    return {str(k): who for k, who in history(search).items()}


def approved_line(search: Search) -> str:
    """`Approved: rung 0: a person; rungs 1, 2: the envelope.` (`approved_json`'s cases)."""
    return f"Approved: {approvals(search)}." if approved_json(search) is not None else ""
