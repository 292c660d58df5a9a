"""Edits of a ledger's header line: the group's URL and the notifications sent, under the lock."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from runner.core.files import locked, write_atomic
from runner.ledger import NOTIFY_SENT, Ledger, parse, render


def set_group(path: Path, sweep: str, url: str) -> bool:
    """Record the sweep's group URL in the ledger's header; True when the file changed."""
    with locked(path.parent):
        try:
            text = path.read_text(encoding="utf-8")
        except FileNotFoundError:
            return False  # no experiment recorded yet: nothing to group
        current = parse(text, str(path), sweep)
        if current.group == url:
            return False
        write_atomic(path, render(Ledger(sweep, current.entries, url, current.notified)))
    return True


def set_notified(path: Path, sweep: str, updates: Mapping[str, str | None]) -> None:
    """Record notification states in the ledger's header (None forgets one), under the lock."""
    with locked(path.parent):
        current = parse(path.read_text(encoding="utf-8"), str(path), sweep)
        notified = {**current.notified, **{k: v for k, v in updates.items() if v is not None}}
        for key in [k for k, v in updates.items() if v is None]:
            notified.pop(key, None)
        if notified != current.notified:
            ledger = Ledger(sweep, current.entries, current.group, notified)
            write_atomic(path, render(ledger))


def keep_header(path: Path, sweep: str, ours: Ledger) -> None:
    """Merge the header of `ours` into the ledger at `path` (a push race rebuilt it on another
    runner's): a group URL it lacks, and every notification, 'sent' on either side winning."""
    with locked(path.parent):
        current = parse(path.read_text(encoding="utf-8"), str(path), sweep)
        notified = dict(current.notified)
        for event, state in ours.notified.items():
            if notified.get(event) != NOTIFY_SENT:
                notified[event] = state
        group = current.group or ours.group
        if (group, notified) != (current.group, current.notified):
            write_atomic(path, render(Ledger(sweep, current.entries, group, notified)))
