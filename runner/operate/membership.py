"""After the creates: each sweep's group holds every experiment of the sweep, level-triggered.

Run once the submissions are over, so it can never block or fail them: every sweep's recorded
experiments of the current revision (the ledger, which now holds this run's creates and adoptions
too) are handed to `Backend.ensure_group`, which finds or creates the group exactly once and adds
only the missing ones. A failure is reported (with a note that the next submit repairs it) and
never changes the run's exit code; the group's URL is written to the ledger's header.
"""

from __future__ import annotations

import functools
import queue
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from runner.backends import Backend, Group, runs
from runner.core.errors import LedgerError
from runner.ledger.store import LedgerStore
from runner.plan import PlanStatus, SweepPlan

SECONDS = 120.0
"""Longest the whole group step may take (beaker-py retries a listing through an outage forever)."""


@dataclass(frozen=True)
class GroupOutcome:
    sweep: str
    group: Group | None
    error: str = ""

    def line(self) -> str:
        if self.group is not None:
            g = self.group
            text = f"group {g.name} {g.url} ({g.members} experiment(s), {g.added} added)"
            return text + (f"; {self.error}" if self.error else "")
        return (
            f"group of {self.sweep} not updated: {self.error}; the experiments are submitted, and"
            " the next submit adds them to the group"
        )


def wanted(plan: SweepPlan, store: LedgerStore) -> list[str]:
    """Ids of the sweep's recorded experiments of this revision (orphans belong elsewhere)."""
    record = store.read(plan.sweep.name)
    current = {row.key for row in plan.rows if row.status != PlanStatus.ORPHAN}
    return [e.id for key, e in sorted(record.entries.items()) if key in current]


def ensure_groups(
    backend: Backend,
    plans: Sequence[SweepPlan],
    store: LedgerStore,
    deadline: float | None = None,
    now: Callable[[], float] = time.monotonic,
) -> list[GroupOutcome]:
    """Every grouped sweep's experiments in its group; failures reported, never raised.
    `deadline` is a `now()` value: the submit's one deadline, on its clock."""
    outcomes = []
    for plan in plans:
        sweep = plan.sweep
        if not sweep.placement.group or not runs(backend, sweep):
            continue
        try:
            ids = wanted(plan, store)
        except (OSError, LedgerError) as exc:
            outcomes.append(GroupOutcome(sweep.name, None, str(exc)))
            continue
        if not ids:
            continue  # the group is created with the sweep's first experiments
        limit = SECONDS if deadline is None else min(SECONDS, deadline - now())
        if limit <= 0:
            outcomes.append(GroupOutcome(sweep.name, None, "the run's deadline has passed"))
            continue
        result = _bounded(functools.partial(backend.ensure_group, sweep, ids), limit)
        if isinstance(result, Group):
            try:
                store.set_group(sweep.name, result.url)
            except (OSError, LedgerError) as exc:
                outcomes.append(GroupOutcome(sweep.name, result, f"ledger not updated: {exc}"))
                continue
            outcomes.append(GroupOutcome(sweep.name, result))
        else:
            outcomes.append(GroupOutcome(sweep.name, None, result))
    return outcomes


def _bounded(call: Callable[[], Group], seconds: float) -> Group | str:
    """The call's group, or why there is none (its error, or that it took too long)."""
    box: queue.Queue[Group | str] = queue.Queue()

    def target() -> None:
        try:
            box.put(call())
        except Exception as exc:  # any failure is reported, never raised: submissions are done
            box.put(f"{type(exc).__name__}: {exc}" if not str(exc) else str(exc))

    threading.Thread(target=target, daemon=True, name="sweep-group").start()
    try:
        return box.get(timeout=max(seconds, 0.0))
    except queue.Empty:
        return f"no answer within {seconds:.0f} s"
