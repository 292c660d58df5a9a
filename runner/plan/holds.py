"""Why a `+` point of a plan is not submitted now: one concept, one field (`Row.hold`).

Four things hold a point back: its sweep's max_running (`runner.plan.capped`), a guardrail
(`runner.apply.guardrails`), plan pinning and the budget approval (`runner.repo.review`). The
held point stays in its plan, marked (a point held back for good takes no max_running slot and
no cost); `runner.plan.hold` marks them, and `runner.report.held` shows them.
"""

from __future__ import annotations

from dataclasses import dataclass

from runner.core.values import StrEnum


class HoldReason(StrEnum):
    """Why a `+` point is not submitted now. The first two wait: a later run submits the point
    by itself (a slot frees, the stop is lifted by a reviewed change); the last two refuse: no
    run of this merge may submit it."""

    MAX_RUNNING = "max_running"
    GUARDRAIL = "guardrail"
    UNREVIEWED = "unreviewed"
    OVER_BUDGET = "over_budget"

    @property
    def waits(self) -> bool:
        return self in (HoldReason.MAX_RUNNING, HoldReason.GUARDRAIL)


HELD_BACK = {
    HoldReason.UNREVIEWED: "not in a reviewed plan",
    HoldReason.OVER_BUDGET: "over the budget policy, not approved",
}
"""Why a refused point is held back, in words."""


@dataclass(frozen=True)
class Hold:
    reason: HoldReason
    text: str
    """Shown as the row's note: 'waiting: 16/16 running', 'stopped: 5 failed (max_failures 5)',
    'held back: not in a reviewed plan'."""

    @classmethod
    def back(cls, reason: HoldReason) -> Hold:
        """A refusing hold, with its words (`HELD_BACK`)."""
        return cls(reason, f"held back: {HELD_BACK[reason]}")
