"""The plan: each point of a sweep compared with its ledger, Terraform style.

`+` to submit, `=` already submitted, `~` submitted but the rendered spec changed since (kept as
it is unless `revision` is bumped), `-` orphan (in the ledger, no longer in the manifest; reported,
never cancelled). The same function feeds `expand --plan` and `submit`.
"""

from __future__ import annotations

import dataclasses
import json
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from runner.core.model import Rendered, Sweep
from runner.core.values import StrEnum, Value
from runner.ledger import Entry, Ledger
from runner.plan import drift
from runner.plan.drift import FieldChange
from runner.plan.holds import HELD_BACK as HELD_BACK
from runner.plan.holds import Held as Held
from runner.plan.holds import Hold as Hold
from runner.plan.holds import HoldReason as HoldReason
from runner.plan.holds import hold as hold
from runner.plan.rendering import collector_paused
from runner.plan.rendering import render_sweep as render_sweep
from runner.render import Renderer

COMMENT_MARKER = "<!-- beaker-sweep-runner:plan -->"
"""The first line of the plan comment: how `runner.repo.review` tells the bot's plan comments apart."""


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


def build(sweep: Sweep, ledger: Ledger, renderer: Renderer | None = None) -> SweepPlan:
    """The plan of a sweep against its ledger. Points match entries by key, which is their
    identity: a point whose experiment name changed (a new `experiment_name` template) keeps its
    entry and shows `~` with the name change."""
    renderer = renderer or Renderer(sweep)
    with collector_paused():
        return _compare(sweep, render_sweep(sweep, renderer), ledger, renderer.legacy_env)


def _compare(
    sweep: Sweep, rendered: list[Rendered], ledger: Ledger, legacy_env: Sequence[Sequence[str]]
) -> SweepPlan:
    rows: list[Row] = []
    seen: set[str] = set()
    for item in rendered:
        entry = ledger.entries.get(item.key)
        seen.add(item.key)
        if entry is None:
            rows.append(Row(PlanStatus.SUBMIT, item.name, item.key, item.params, item, entry))
        elif drift.matches(entry, item, legacy_env) and entry.experiment == item.name:
            rows.append(Row(PlanStatus.SUBMITTED, item.name, item.key, item.params, item, entry))
        else:
            changes, note = drift.changes(entry, item)
            if entry.experiment != item.name:
                names = (json.dumps(entry.experiment), json.dumps(item.name))
                renamed = drift.FieldChange("(experiment name)", *names)
                changes = (renamed, *changes)
            row = Row(
                PlanStatus.DRIFTED,
                item.name,
                item.key,
                item.params,
                item,
                entry,
                changes=changes,
                note=note,
            )
            rows.append(row)
    for key in sorted(set(ledger.entries) - seen):
        entry = ledger.entries[key]
        params = tuple(entry.params.items())
        rows.append(Row(PlanStatus.ORPHAN, entry.experiment, key, params, None, entry))
    return SweepPlan(sweep, tuple(rows), group=ledger.group)


def capped(plan: SweepPlan, running: int | None, taken: frozenset[str] = frozenset()) -> SweepPlan:
    """The plan under the sweep's max_running: with `running` of its experiments queued or
    running, only the first `max_running - running` pending points (manifest order) are
    submitted; the rest stay `+`, held with the reason they wait (decided again on each call).
    The points keyed in `taken` (their names held by another experiment: the backend refuses
    them) are tried without taking a slot, so they report their own error and never stall the
    sweep. A point held back for good (not reviewed, over the budget), or by a stop, takes no
    slot. A plan without max_running is returned as is."""
    limit = plan.sweep.limits.max_running
    if limit is None:
        return plan
    free = max(0, limit - (running or 0))
    wait = Hold(HoldReason.MAX_RUNNING, f"waiting: {max(limit, running or 0)}/{limit} running")
    (held,) = hold([plan], wait, lambda p: _past_the_slots(p, free, taken)).plans
    return dataclasses.replace(held, cap=Cap(limit, running))


def _past_the_slots(plan: SweepPlan, free: int, taken: frozenset[str]) -> list[str]:
    """The keys of the pending points that would take a slot, past the first `free` of them."""
    free_to_run = (r for r in plan.rows if r.hold is None or r.held_for(HoldReason.MAX_RUNNING))
    return [r.key for r in free_to_run if r.pending and r.key not in taken][free:]


def reread(plan: SweepPlan, entries: Mapping[str, Entry]) -> SweepPlan:
    """The plan with its rows' ledger entries as `entries` (by key) has them now: after a run
    recorded restarts or new experiments, without planning again. A `+` row now recorded is
    submitted."""
    rows = tuple(
        dataclasses.replace(
            row,
            entry=entry,
            status=PlanStatus.SUBMITTED if row.status == PlanStatus.SUBMIT else row.status,
            hold=None if row.status == PlanStatus.SUBMIT else row.hold,
        )
        if (entry := entries.get(row.key)) is not None and entry != row.entry
        else row
        for row in plan.rows
    )
    return dataclasses.replace(plan, rows=rows)
