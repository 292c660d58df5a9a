"""Progress on stderr: a live bar on a terminal, one line per experiment in CI logs.

Results (each created experiment with its URL) go to stdout, so they can be piped.
"""

from __future__ import annotations

import shutil
import sys
import threading
import time
from collections import Counter
from typing import TYPE_CHECKING, TextIO

from runner.submit import Outcome

if TYPE_CHECKING:  # annotations only: the apply step imports the whole submit path
    from runner.apply import Applied

WAIT_LINES_EVERY = 10.0
"""In CI logs (no live line), at most one retry line per this many seconds: with every worker
retrying every 2 s through an outage, one line each would bury the log."""


class Progress:
    """The `runner.apply.ApplyListener` of the command line."""

    def __init__(
        self, out: TextIO | None = None, err: TextIO | None = None, live: bool | None = None
    ) -> None:
        self.out = out or sys.stdout
        self.err = err or sys.stderr
        self.live = self.err.isatty() if live is None else live
        self.total = 0
        self.counts: Counter[str] = Counter()
        self.running: set[tuple[str, str]] = set()
        """Points whose run has started and not ended (the local backend runs them in create)."""
        self._lock = threading.Lock()
        self._waiting = ""
        self._waited_at: float | None = None

    def planned(self, applied: Applied) -> None:
        """The restarts, the points held back, the stops and the plan table, before anything
        is created (the job summary says the same: `runner.report.apply.job_summary`)."""
        from runner.report import apply as shown
        from runner.report import plan as report

        for line in shown.planned_lines(applied):
            self.note(line)
        self.note(report.table(applied.plans))

    def start(self, total: int) -> None:
        self.total = total
        if total:
            self.note(f"submitting {total} experiment(s)")

    def note(self, text: str) -> None:
        with self._lock:
            self._clear()
            print(text, file=self.err, flush=True)
            self._bar()

    def wait(self, text: str) -> None:
        """A retry: on the live line until the next outcome; in logs, one line now and then."""
        with self._lock:
            if self.live:
                self._waiting = text
                self._clear()
                self._bar()
                return
            now = time.monotonic()
            if self._waited_at is None or now - self._waited_at >= WAIT_LINES_EVERY:
                self._waited_at = now
                print(text, file=self.err, flush=True)

    def started(self, outcome: Outcome) -> None:
        """`started NAME` (in CI logs with the count so far), and one more running."""
        with self._lock:
            self.running.add((outcome.sweep, outcome.point.key))
            self._clear()
            if not self.live:
                print(
                    f"[{self._counted()}] started {outcome.point.name}", file=self.err, flush=True
                )
            self._bar()

    def _counted(self) -> str:
        """`0/6 done, 2 running`: ended points of all, and those running now."""
        running = f", {len(self.running)} running" if self.running else ""
        return f"{sum(self.counts.values())}/{self.total} done{running}"

    def done(self, outcome: Outcome) -> None:
        with self._lock:
            self._waiting = ""
            self.running.discard((outcome.sweep, outcome.point.key))
            self.counts[outcome.status] += 1
            self._clear()
            failed = ""
            if outcome.experiment is not None:
                failed = outcome.run_note
                print(
                    f"{outcome.status} {outcome.point.name} {outcome.experiment.url}{failed}",
                    file=self.out,
                    flush=True,
                )
            if not self.live:
                finished = sum(self.counts.values())
                detail = outcome.experiment.url if outcome.experiment else outcome.error
                print(
                    f"[{finished}/{self.total}] {outcome.status} {outcome.point.name}: {detail}"
                    + failed,
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
        waiting = f" | {self._waiting}" if self._waiting else ""
        bar = f"[{'#' * filled}{'.' * (width - filled)}]"
        line = f"{bar} {self._counted()}" + (f": {parts}" if parts else "")
        line += waiting
        columns = shutil.get_terminal_size().columns
        self.err.write("\r" + line[: max(columns - 1, 40)])  # one row, or \r cannot clear it
        self.err.flush()

    def _clear(self) -> None:
        if self.live and self.total:
            self.err.write("\r\033[K")
