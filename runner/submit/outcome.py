"""What a submit run reports: each point's outcome, why the run stopped early, duplicates it
found, and who is told as it goes (`Listener`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from runner.backends import Experiment, ExperimentState
from runner.core.model import Rendered
from runner.core.values import StrEnum


class OutcomeStatus(StrEnum):
    """What became of one point in a submit run."""

    CREATED = "created"
    """Submitted: this run created the experiment."""
    ADOPTED = "adopted"
    """Submitted: found on the backend with the point's key."""
    REJECTED = "rejected"
    """The backend refused it (invalid spec, permission, a name taken by another experiment):
    a rerun does the same until the manifest or the workspace changes."""
    FAILED = "failed"
    """Gave up after retries, or a bug: a rerun tries again."""
    NOT_STARTED = "not-started"
    """The run stopped (deadline, Beaker unreachable, signal) before it tried this point."""
    UNKNOWN = "unknown"
    """Its create was in flight when the run stopped: it may exist; the next run adopts it if so."""

    @property
    def submitted(self) -> bool:
        return self in (OutcomeStatus.CREATED, OutcomeStatus.ADOPTED)

    @property
    def incomplete(self) -> bool:
        """A rerun continues it (exit 5)."""
        return self in (OutcomeStatus.FAILED, OutcomeStatus.NOT_STARTED, OutcomeStatus.UNKNOWN)


class StopKind(StrEnum):
    """Why a run stopped early."""

    DEADLINE = "deadline"
    UNREACHABLE = "unreachable"
    SIGINT = "SIGINT"
    SIGTERM = "SIGTERM"
    POLICY = "policy"
    """A step before the creates refused the run (`runner.apply`): a rerun does the same."""

    @property
    def signal(self) -> bool:
        return self in (StopKind.SIGINT, StopKind.SIGTERM)


@dataclass(frozen=True)
class Outcome:
    sweep: str
    point: Rendered
    status: OutcomeStatus
    experiment: Experiment | None = None
    error: str = ""

    @property
    def run_failed(self) -> bool:
        """Submitted, and its run has already failed: the local backend runs a point to its
        end inside `create`, so its outcome knows (a Beaker create returns it queued)."""
        return self.status.submitted and (
            self.experiment is not None and self.experiment.state == ExperimentState.FAILED
        )

    @property
    def run_note(self) -> str:
        """What became of a local run that ended inside `create`: ' failed (exit N)', or
        ' canceled' (`cancel` stopped it while it ran); '' otherwise."""
        if self.run_failed:
            assert self.experiment is not None
            return f" failed (exit {self.experiment.exit_code})"
        created = self.experiment if self.status == OutcomeStatus.CREATED else None
        return " canceled" if created and created.state == ExperimentState.CANCELED else ""


@dataclass(frozen=True)
class Stop:
    """Why a run stopped before every point had an outcome."""

    kind: StopKind
    reason: str
    """One line, e.g. 'Beaker at https://... unreachable for 3m (connection refused)'."""


@dataclass(frozen=True)
class Duplicate:
    """A point with more than one experiment carrying its key (two accounts, author-scoped names)."""

    sweep: str
    name: str
    kept: Experiment
    """The oldest: recorded in the ledger."""
    others: tuple[Experiment, ...]
    canceled: tuple[str, ...]
    """Ids of the others this run created and canceled (each run cancels only its own)."""
    problem: str = ""
    """Why a cancel failed, if one did (cancel it by hand)."""

    def text(self) -> str:
        ids = ", ".join(e.id for e in self.others)
        line = (
            f"DUPLICATE {self.sweep}/{self.name}: {1 + len(self.others)} experiments carry this"
            f" point's key; kept the oldest, {self.kept.id} ({self.kept.url}); newer: {ids}"
        )
        if self.canceled:
            line += f"; canceled ours: {', '.join(self.canceled)}"
        else:
            line += " (created by another run, which cancels its own)"
        return line + (f"; {self.problem}" if self.problem else "")


class Listener(Protocol):
    """Who is told what happens during a run (the terminal or CI log: `runner.report.progress`)."""

    def start(self, total: int) -> None: ...

    def note(self, text: str) -> None: ...

    def wait(self, text: str) -> None:
        """A call is being retried ('Beaker unavailable (...), retrying in 4 s, attempt 3/8')."""
        ...

    def started(self, outcome: Outcome) -> None:
        """A point's run has started inside its create (the local backend: `RunsInCreate`);
        its `done` comes when it ends."""
        ...

    def done(self, outcome: Outcome) -> None: ...

    def finish(self) -> None: ...
