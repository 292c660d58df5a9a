"""Batched ledger writes for a submit: entries kept until they are due, then one write per file."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from runner.ledger import Entry, Written, record_file


class Pending:
    """Entries not yet written, by ledger file, written together once `every` seconds have
    passed since the oldest of them arrived.

    `submit` records its successes through this: writing a file re-reads, merges and fsyncs
    it, so once per experiment it cost more than the experiment's own request. What it wrote
    last is kept, so a file nobody else touched since is neither parsed nor re-encoded again:
    otherwise each write would cost time in proportion to the whole ledger.
    """

    def __init__(self, every: float, now: Callable[[], float]) -> None:
        """`now`: the run's clock (`runner.submit.Clock.now`), which every wait of it reads."""
        self.every = every
        self.now = now
        self._files: dict[tuple[Path, str], list[Entry]] = {}
        self._due: float | None = None
        self._written: dict[tuple[Path, str], Written] = {}

    def add(self, path: Path, sweep: str, entry: Entry) -> None:
        self._files.setdefault((path, sweep), []).append(entry)
        if self._due is None:
            self._due = self.now() + self.every

    def due_in(self) -> float | None:
        """Seconds until the entries should be written (0.0 when overdue); None when none wait."""
        return None if self._due is None else max(0.0, self._due - self.now())

    def flush(self) -> None:
        """Write every waiting entry, one write per file; on failure the rest wait for a retry."""
        try:
            while self._files:
                file, entries = next(iter(self._files.items()))
                self._written[file] = record_file(*file, entries, self._written.get(file))
                del self._files[file]
        finally:
            self._due = self.now() + self.every if self._files else None
