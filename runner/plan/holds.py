"""Why a `+` point of a plan is not submitted now: one concept, one field (`Row.hold`).

Five things hold a point back: its sweep's max_running (`runner.plan.capped`), a team's
priority allocation (`runner.plan.allocation`), a guardrail (`runner.apply.guardrails`), plan
pinning (`hold_back`) and the budget approval (`hold_unapproved`). The held point stays in its
plan, marked (a point held back for good takes no max_running slot and no cost); `hold` is the
one function that marks them, and everything said about them (the waiting count, the stop, the
points a hold held) is read back from the rows; `runner.report.held` shows them. The values
(`Hold`, `HoldReason`) are `runner.plan.model`'s.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass

from runner.plan.model import Hold, HoldReason, Row, SweepPlan

Pick = Callable[[SweepPlan], Collection[str]]
"""Which of a plan's pending points a hold holds: their keys."""


@dataclass(frozen=True)
class Held:
    """Plans after one hold: the points it held stay in their plan, marked (`Row.hold`)."""

    plans: tuple[SweepPlan, ...]
    reason: HoldReason
    because: tuple[str, ...] = ()
    """What made the hold, one line each (the breaches of the budget policy)."""

    @property
    def held(self) -> tuple[tuple[str, Row], ...]:
        """(sweep name, row) of each point these plans hold for this hold's reason."""
        return tuple(
            (plan.sweep.name, row)
            for plan in self.plans
            for row in plan.rows
            if row.held_for(self.reason)
        )


def hold(plans: Sequence[SweepPlan], why: Hold, pick: Pick, because: Sequence[str] = ()) -> Held:
    """Hold points back: in each plan, the pending points whose keys `pick` names get `why` and
    stay in the plan, marked; a pending point it does not name is no longer held for `why`'s
    reason (a wait is decided again each time: max_running's, once a slot frees). The rest of
    the plan stays as it was (its group and cap; a point held back for good stays held)."""
    kept = []
    for plan in plans:
        out = frozenset(pick(plan))
        rows = tuple(_marked(row, why, row.key in out) for row in plan.rows)
        kept.append(dataclasses.replace(plan, rows=rows))
    return Held(tuple(kept), why.reason, tuple(because))


def _marked(row: Row, why: Hold, picked: bool) -> Row:
    if not row.pending:
        return row
    if picked:
        return row if row.hold == why else dataclasses.replace(row, hold=why)
    if row.held_for(why.reason):
        return dataclasses.replace(row, hold=None)
    return row


def hold_back(plans: Sequence[SweepPlan], uncovered: Pick) -> Held:
    """Plan pinning: hold back the pending points no pin covers (`uncovered`, by
    `runner.repo.review`; drafts submit nothing anyway)."""
    return hold(plans, Hold.back(HoldReason.UNREVIEWED), uncovered)


def hold_unapproved(
    plans: Sequence[SweepPlan], over: Collection[str], because: Sequence[str], unapproved: Pick
) -> Held:
    """The budget on merge: hold back the pending points of the sweeps `over` names (those
    `runner.plan.budget.breaches` found, `because` what each breach says) that `unapproved`
    names (those no approved pin covers)."""
    return hold(
        plans,
        Hold.back(HoldReason.OVER_BUDGET),
        lambda plan: unapproved(plan) if plan.sweep.name in over else (),
        sorted(set(because)),
    )
