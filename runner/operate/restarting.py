"""A restart in place, exactly once, whatever it is for (a failure, `submit --restart-failed`;
a preemption, `runner.operate.preempted`): the ledger entry's write-ahead field for it records
the experiment's job generation before the request, and one already there is checked first."""

from __future__ import annotations

import dataclasses

from runner import ledger
from runner.backends import Experiment, WriteAhead
from runner.core.model import Rendered, Sweep
from runner.ledger.store import LedgerStore
from runner.observe.looks import Observer

RESTARTING, RESUMING = "restarting", "resuming"
"""The ledger entry's write-ahead of a restart after a failure, and of one after a preemption."""


def restart_once(
    observer: Observer,
    sweep: Sweep,
    recorded: tuple[ledger.Entry, Experiment],
    store: LedgerStore,
    intent: str,
    point: Rendered,
) -> Experiment | None:
    """Restart a point's experiment in place, exactly once (`recorded`: its ledger entry and
    the experiment as found): the entry's `intent` field (`RESTARTING`, `RESUMING`) records the job generation before the request is
    sent, and an intent already there is checked first (a restart that took effect is counted,
    never sent again). The restarted experiment (the observer is told); None when there was
    nothing to restart (the intent is cleared). Raises what the backend raises; the intent then
    stays, for the next run to check."""
    entry, found = recorded

    def written(token: str) -> None:  # write-ahead: recorded before the request is sent
        store.set_intents(sweep.name, [_intending(entry, intent, token)], (intent,))

    since = entry.restarting if intent == RESTARTING else entry.resuming
    restarted = observer.backend.restart(sweep, point, found, WriteAhead(since, written))
    if restarted is None:
        store.set_intents(sweep.name, [_intending(entry, intent, "")], (intent,))
        return None
    observer.restarted(sweep, restarted)
    return restarted


def _intending(entry: ledger.Entry, intent: str, token: str) -> ledger.Entry:
    if intent == RESTARTING:
        return dataclasses.replace(entry, restarting=token)
    return dataclasses.replace(entry, resuming=token)
