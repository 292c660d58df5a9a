"""The run's one writer to the ledger: successes recorded in batches, and always at the end."""

from __future__ import annotations

from collections.abc import Callable

from runner import ledger
from runner.backends import Experiment
from runner.core.errors import LedgerError
from runner.core.files import utc_now
from runner.core.model import Rendered
from runner.ledger.pending import Pending
from runner.ledger.store import LedgerStore
from runner.submit.outcome import Listener, Outcome


class Recorder:
    def __init__(
        self,
        store: LedgerStore,
        commit: str,
        every: float,
        progress: Listener,
        now: Callable[[], float],
    ) -> None:
        self.store = store
        self.commit = commit
        self.progress = progress
        self._unwritten = Pending(every, now)

    def add(self, outcome: Outcome) -> None:
        """Queue a created or adopted experiment's entry (later ones replace earlier ones)."""
        if outcome.experiment is not None and outcome.status.submitted:
            path = self.store.path(outcome.sweep)
            self._unwritten.add(path, outcome.sweep, self.entry(outcome.point, outcome.experiment))

    def due_in(self) -> float | None:
        return self._unwritten.due_in()

    def write(self) -> None:
        """Write what has accumulated; a failure mid-run is noted and retried at the next write."""
        try:
            self._unwritten.flush()
        except (OSError, LedgerError) as exc:
            self.progress.note(f"could not write the ledger ({exc}); trying again")

    def write_last(self) -> None:
        """The run's last write: a failure now is the run's error, and says what to do."""
        try:
            self._unwritten.flush()
        except (OSError, LedgerError) as exc:
            raise LedgerError(
                f"could not write the ledger: {exc}. The experiments exist on the backend;"
                " run submit again to adopt them into the ledger"
            ) from None

    def entry(self, point: Rendered, experiment: Experiment) -> ledger.Entry:
        return ledger.Entry.of(point, experiment.url, experiment.id, self.commit, utc_now())
