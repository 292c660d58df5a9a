"""`.runs/<sweep>/`: one sweep's place on this machine, which the local backend owns: a run
directory per point (`runner.backends.local.rundir`), the sweep's local ledger beside them
(`LAYOUT`, never the committed one) and the mark a whole-sweep `cancel` leaves."""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path

from runner.backends.local.rundir import RunDir
from runner.ledger import Layout

RUNS_DIR = ".runs"
"""Under the repository root: one directory per sweep, one per point's run in it (ignored by git)."""
LAYOUT = Layout(RUNS_DIR + "/{sweep}/ledger.jsonl")
"""The local ledger of each sweep, beside its runs."""
CANCELED_MARKER = ".canceled"
"""When `cancel` last canceled the whole sweep (seconds since the epoch)."""


@dataclass(frozen=True)
class SweepDir:
    root: Path
    sweep: str

    @property
    def path(self) -> Path:
        return self.root / RUNS_DIR / self.sweep

    def run(self, name: str) -> RunDir:
        return RunDir(self.path / name)

    def mark_canceled(self) -> None:
        """`cancel` of the whole sweep: a submit running it now starts no more of its points."""
        if self.path.is_dir():  # else no submit has run the sweep here yet
            (self.path / CANCELED_MARKER).write_text(f"{time.time()!r}\n", encoding="utf-8")

    def canceled_since(self, opened: float) -> bool:
        """Whether `cancel` canceled the whole sweep since `opened` (seconds since the epoch)."""
        try:
            since = float((self.path / CANCELED_MARKER).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return False
        return since >= opened
