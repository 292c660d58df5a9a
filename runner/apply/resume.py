"""Local runs left unfinished are planned again (the submit step `resume_local_runs`).

A local run is recorded in the ledger when it starts, as a Beaker experiment is once created,
so `status` shows it running. A runner that dies (killed, a crash) or is stopped (Ctrl-C)
leaves such a run recorded but unfinished; the local backend reports it as `canceled`. The next
`submit` runs it again in its run directory (`LocalBackend.create` resumes it), so those rows
go back to `+`. A run stopped with `cancel` is final: its state file says `canceled`, its ledger
entry records `canceled_at`, and it stays as it is.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

from runner.backends import Backend, Capability
from runner.plan import PlanStatus, SweepPlan


def unfinished(backend: Backend, plans: Sequence[SweepPlan]) -> list[SweepPlan]:
    """The plans with each recorded local run that never finished marked `+` again (one look
    at the run directories per sweep); unchanged on any other backend."""
    if Capability.RESUMES not in backend.capabilities:
        return list(plans)
    out = []
    for plan in plans:
        recorded = [
            row.name
            for row in plan.rows
            if row.status == PlanStatus.SUBMITTED
            and row.entry is not None
            and row.entry.canceled_at is None
        ]
        found = backend.experiments(plan.sweep, recorded) if recorded else {}
        again = {name for name, exps in found.items() if exps and exps[-1].unfinished}
        rows = tuple(
            dataclasses.replace(row, status=PlanStatus.SUBMIT)
            if row.name in again and row.status == PlanStatus.SUBMITTED
            else row
            for row in plan.rows
        )
        out.append(dataclasses.replace(plan, rows=rows) if again else plan)
    return out
