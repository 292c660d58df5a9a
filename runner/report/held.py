"""Points held back (`runner.plan.Held`), shown one way: a section of the job summary, and one
line for the log and the warning annotation."""

from __future__ import annotations

from collections.abc import Sequence

from runner.plan import HELD_BACK, Held, HoldReason, SweepPlan

LIMIT = 200
"""Held points listed in the job summary; the rest are counted."""

_SECTIONS = {
    HoldReason.UNREVIEWED: (
        "## Not in a reviewed plan",
        "no plan comment of a merged pull request showed them. Open a pull request that changes"
        " their sweep (its plan shows them), or dispatch Submit with `unreviewed` ticked to"
        " submit them as they are.",
    ),
    HoldReason.OVER_BUDGET: (
        "## Held back: over the budget policy, not approved",
        "their sweep is over the budget policy and no approved plan (a pull request with the"
        " approval label) showed them.",
    ),
}
"""The heading of a hold's section and why its points are held, by reason."""


def held_line(held: Held) -> str:
    """'3 point(s) held back: not in a reviewed plan'."""
    return f"{len(held.held)} point(s) held back: {HELD_BACK[held.reason]}"


def held_markdown(held: Held, limit: int = LIMIT) -> str:
    """The job summary's section of the points a hold held back; empty when there are none."""
    if not held.held:
        return ""
    heading, why = _SECTIONS[held.reason]
    lines = [heading, "", f"**{len(held.held)} point(s) held back**: {why}", ""]
    if held.because:
        lines += [*(f"- {line}" for line in held.because), ""]
    lines += ["| sweep | experiment | key | params |", "|---|---|---|---|"]
    for sweep, row in held.held[:limit]:
        params = " ".join(f"{k}={v}" for k, v in row.params).replace("|", "\\|")
        lines.append(f"| `{sweep}` | `{row.name}` | `{row.key[:12]}` | {params} |")
    if len(held.held) > limit:
        lines.append(f"\n…and {len(held.held) - limit} more.")
    return "\n".join(lines) + "\n\n"


def held_counts(plans: Sequence[SweepPlan]) -> tuple[int, int]:
    """(waiting, held back) of the plans' `+` points: those a later run submits (max_running, a
    stop) and those no run of this merge may (not reviewed, over the budget)."""
    holds = [r.hold for p in plans for r in p.rows if r.hold is not None]
    waiting = sum(h.reason.waits for h in holds)
    return waiting, len(holds) - waiting
