"""The plan: each point of a sweep compared with its ledger, Terraform style.

`+` to submit, `=` already submitted, `~` submitted but the rendered spec changed since (kept as
it is unless `revision` is bumped), `-` orphan (in the ledger, no longer in the manifest; reported,
never cancelled). The same function feeds `expand --plan` and `submit`.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Mapping, Sequence

from runner.core.model import Rendered, Sweep
from runner.ledger import Entry, Ledger
from runner.plan import drift
from runner.plan.holds import Held as Held
from runner.plan.holds import hold as hold
from runner.plan.model import HELD_BACK as HELD_BACK
from runner.plan.model import STATUS_WORDS as STATUS_WORDS
from runner.plan.model import Cap
from runner.plan.model import Hold as Hold
from runner.plan.model import HoldReason as HoldReason
from runner.plan.model import PlanStatus as PlanStatus
from runner.plan.model import Row as Row
from runner.plan.model import SweepPlan as SweepPlan
from runner.plan.rendering import collector_paused
from runner.plan.rendering import render_sweep as render_sweep
from runner.render import Renderer

COMMENT_MARKER = "<!-- beaker-sweep-runner:plan -->"
"""The first line of the plan comment: how `runner.repo.review` tells the bot's plan comments apart."""


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
