"""The plan as values: each row's status (`+ = ~ -`), why a `+` point is held (`Hold`), a row,
a sweep's max_running (`Cap`) and the sweep's plan (`SweepPlan`). Built by `runner.plan.build`;
held by `runner.plan.holds`.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass

from runner.core.model import Rendered, Sweep
from runner.core.values import StrEnum, Value
from runner.ledger import Entry
from runner.plan.drift import FieldChange


class HoldReason(StrEnum):
    """Why a `+` point is not submitted now. The first three wait: a later run submits the
    point by itself (a slot frees, a team's allocation has GPUs again, the stop is lifted by a
    reviewed change); the last two refuse: no run of this merge may submit it."""

    MAX_RUNNING = "max_running"
    ALLOCATION = "allocation"
    GUARDRAIL = "guardrail"
    UNREVIEWED = "unreviewed"
    OVER_BUDGET = "over_budget"

    @property
    def waits(self) -> bool:
        return self in (HoldReason.MAX_RUNNING, HoldReason.ALLOCATION, HoldReason.GUARDRAIL)


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


class PlanStatus(StrEnum):
    """A point's place in the plan, shown as its symbol (`+ = ~ -`)."""

    SUBMIT = "+"
    SUBMITTED = "="
    DRIFTED = "~"
    ORPHAN = "-"


STATUS_WORDS = {
    PlanStatus.SUBMIT: "to submit",
    PlanStatus.SUBMITTED: "already submitted",
    PlanStatus.DRIFTED: "drifted",
    PlanStatus.ORPHAN: "orphaned",
}


@dataclass(frozen=True)
class Row:
    status: PlanStatus
    name: str
    key: str
    params: tuple[tuple[str, Value], ...]
    rendered: Rendered | None
    """None for orphans."""
    entry: Entry | None
    """The ledger entry, when there is one."""
    hold: Hold | None = None
    """Why a `+` point is not submitted now; None: it is."""
    changes: tuple[FieldChange, ...] = ()
    """For `~`: what changed, field by field, since the entry was submitted."""
    note: str | None = None
    """For `~` without a field diff: why there is none."""

    @property
    def to_submit(self) -> bool:
        """A point this run submits: `+` and not held."""
        return self.status == PlanStatus.SUBMIT and self.hold is None

    @property
    def pending(self) -> bool:
        """A point this run or a later one submits: `+`, held at most to wait (max_running, a
        stop), as a merge approves it, pins cover it and its cost counts."""
        return self.status == PlanStatus.SUBMIT and (self.hold is None or self.hold.reason.waits)

    def held_for(self, reason: HoldReason) -> bool:
        return self.hold is not None and self.hold.reason == reason

    @property
    def experiment(self) -> str:
        """The name of the point's experiment on the backend: the recorded one once submitted
        (editing `experiment_name` renames the point, never its experiment), else `name`."""
        return self.entry.experiment if self.entry is not None else self.name

    @property
    def record(self) -> tuple[str, str, str] | None:
        """(experiment name, id, key) as the ledger recorded them: what makes an experiment
        this point's, whatever its name or description says now; None before its entry exists."""
        entry = self.entry
        return None if entry is None else (entry.experiment, entry.id, entry.key)


@dataclass(frozen=True)
class Cap:
    """A sweep's max_running applied to its plan."""

    limit: int
    running: int | None
    """Its experiments queued or running now; None when not looked up (the offline plan
    assumes none, so it shows the most the next submit may start). The points waiting for a
    slot are its plan's rows held for it (`SweepPlan.waiting`)."""


@dataclass(frozen=True)
class SweepPlan:
    sweep: Sweep
    rows: tuple[Row, ...]
    cap: Cap | None = None
    group: str = ""
    """The URL of the sweep's group, as the ledger's header records it (empty before one)."""

    @property
    def waiting(self) -> int:
        """Its points waiting for a max_running slot (held by `capped`)."""
        return sum(1 for r in self.rows if r.held_for(HoldReason.MAX_RUNNING))

    @property
    def stopped(self) -> str:
        """Why no new points are created, as its held rows say (`runner.apply.guardrails`):
        e.g. 'stopped: 5 failed (max_failures 5)'; empty when it is not stopped."""
        stops = (r.hold for r in self.rows if r.hold and r.held_for(HoldReason.GUARDRAIL))
        return next((stop.text for stop in stops), "")

    @property
    def counts(self) -> Mapping[PlanStatus, int]:
        counts = Counter(row.status for row in self.rows)
        return {status: counts.get(status, 0) for status in STATUS_WORDS}

    @property
    def to_submit(self) -> tuple[Row, ...]:
        """What `submit` would create on Beaker now: nothing for a draft."""
        return self.to_submit_on(runs=not self.sweep.draft)

    def to_submit_on(self, runs: bool) -> tuple[Row, ...]:
        """What a run creates now on a backend that runs this sweep or not
        (`runner.backends.runs`: a draft runs only where drafts do)."""
        return tuple(r for r in self.rows if r.to_submit) if runs else ()

    @property
    def pending(self) -> tuple[Row, ...]:
        """Every point a merge approves: those waiting under max_running or a stop too, which
        later runs submit (a draft: none, it never goes to Beaker)."""
        return () if self.sweep.draft else tuple(r for r in self.rows if r.pending)

    def summary(self) -> str:
        counts = self.counts
        text = (
            f"Plan: {counts[PlanStatus.SUBMIT]} to submit, {counts[PlanStatus.SUBMITTED]} already submitted,"
            f" {counts[PlanStatus.DRIFTED]} drifted, {counts[PlanStatus.ORPHAN]} orphaned"
        )
        if self.cap is not None:
            now = "not checked" if self.cap.running is None else f"{self.cap.running} running now"
            text += f"; max_running {self.cap.limit}: {self.waiting} waiting ({now})"
        allotted = [r.hold for r in self.rows if r.hold and r.held_for(HoldReason.ALLOCATION)]
        if allotted:
            text += f"; {len(allotted)} {allotted[0].text}"
        if stopped := self.stopped:
            text += f"; {stopped}"
        held = Counter(r.hold.reason for r in self.rows if r.hold and not r.hold.reason.waits)
        text += "".join(f"; {n} held back ({HELD_BACK[why]})" for why, n in sorted(held.items()))
        if self.sweep.draft:
            text += " (draft: never submitted to Beaker; delete `draft: true` to launch on merge)"
        return text
