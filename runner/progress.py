"""Progress on stderr: a live bar on a terminal, one line per experiment in CI logs.

Results (each created experiment with its URL) go to stdout, so they can be piped.
"""

from __future__ import annotations

import sys
import threading
from collections import Counter
from typing import TextIO

from runner.submit import Outcome


class Progress:
    """The `runner.submit.Listener` of the command line."""

    def __init__(
        self, out: TextIO | None = None, err: TextIO | None = None, live: bool | None = None
    ) -> None:
        self.out = out or sys.stdout
        self.err = err or sys.stderr
        self.live = self.err.isatty() if live is None else live
        self.total = 0
        self.counts: Counter[str] = Counter()
        self._lock = threading.Lock()

    def start(self, total: int) -> None:
        self.total = total
        if total:
            self.note(f"submitting {total} experiment(s)")

    def note(self, text: str) -> None:
        with self._lock:
            self._clear()
            print(text, file=self.err, flush=True)
            self._bar()

    def done(self, outcome: Outcome) -> None:
        with self._lock:
            self.counts[outcome.status] += 1
            self._clear()
            if outcome.experiment is not None:
                print(
                    f"{outcome.status} {outcome.point.name} {outcome.experiment.url}",
                    file=self.out,
                    flush=True,
                )
            if not self.live:
                finished = sum(self.counts.values())
                detail = outcome.experiment.url if outcome.experiment else outcome.error
                print(
                    f"[{finished}/{self.total}] {outcome.status} {outcome.point.name}: {detail}",
                    file=self.err,
                    flush=True,
                )
            self._bar()

    def finish(self) -> None:
        with self._lock:
            self._clear()

    def _bar(self) -> None:
        if not self.live or not self.total:
            return
        finished = sum(self.counts.values())
        width = 30
        filled = width * finished // self.total
        parts = " ".join(f"{k} {v}" for k, v in sorted(self.counts.items()))
        self.err.write(
            f"\r[{'#' * filled}{'.' * (width - filled)}] {finished}/{self.total} {parts}"
        )
        self.err.flush()

    def _clear(self) -> None:
        if self.live and self.total:
            self.err.write("\r\033[K")
