"""One repository's ledgers for one backend (`LedgerStore`): where each sweep's file is, and
every read and write of it, built once per command from the root and the backend's layout."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

from runner.core.files import locked, write_atomic
from runner.ledger import COMMITTED, INTENTS, Entry, Layout, Ledger, headers, read, record, render


@dataclass(frozen=True)
class LedgerStore:
    """The ledgers of one repository for one backend: built once per command, from the root
    and the backend's layout, and handed to every step that reads or records; the one place
    that knows where each sweep's file is, and reads and writes it."""

    root: Path
    layout: Layout = COMMITTED

    def path(self, sweep: str) -> Path:
        return self.layout.path(self.root, sweep)

    def read(self, sweep: str) -> Ledger:
        return read(self.path(sweep), sweep)

    def record(self, sweep: str, entries: Iterable[Entry]) -> Ledger:
        return record(self.path(sweep), sweep, entries)

    def set_group(self, sweep: str, url: str) -> bool:
        """Record the sweep's group URL in its ledger's header; True when the file changed."""
        return headers.set_group(self.path(sweep), sweep, url)

    def set_notified(self, sweep: str, updates: Mapping[str, str | None]) -> None:
        """Record notification states in the sweep's ledger header (None forgets one)."""
        headers.set_notified(self.path(sweep), sweep, updates)

    def set_intents(
        self, sweep: str, entries: Iterable[Entry], fields: tuple[str, ...] = INTENTS
    ) -> None:
        """Write these entries' `fields` (the intents, by default) as they are (an empty one
        clears it), under the lock, for entries the ledger records; nothing else changes."""
        path, entries = self.path(sweep), list(entries)
        if not entries:
            return
        with locked(path.parent):
            current = read(path, sweep)
            changed = dict(current.entries)
            for entry in entries:
                if (old := changed.get(entry.key)) is not None and old.id == entry.id:
                    values = {name: getattr(entry, name) for name in fields}
                    changed[entry.key] = dataclasses.replace(old, **values)
            if changed != current.entries:
                write_atomic(path, render(dataclasses.replace(current, entries=changed)))
