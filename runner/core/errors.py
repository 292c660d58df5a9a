"""User-facing errors: one root class, one subclass per area, each with its exit code; and
every exit code of the command line (`Exit`), with the result word a submit reports for it.

Only the CLI entry point catches these (`runner.cli.main`, one handler): it prints ``str(error)``
and exits with the error's `exit_code`: 1 for what the user must fix, 4 for a request the backend
refused (`runner.backends.Rejected`), 5 for one it did not answer (`runner.backends.Transient`).
Anything else that reaches the CLI is a bug: exit 3. `--debug` shows the traceback of either.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import IntEnum

from runner.core.marks import KeyPath, Marks, field_path
from runner.core.values import StrEnum


class Exit(IntEnum):
    """Every exit code of `python -m runner` (docs/commands.md and docs/guarantees.md list them)."""

    OK = 0
    USER_ERROR = 1
    """The user must fix something (a manifest, credentials, git; `init`: files kept as they
    were): nothing was submitted for it."""
    WOULD_CHANGE = 2
    """A check found work: `expand --plan --detailed-exitcode` has points to submit, `cancel`
    without `--yes` has experiments to cancel."""
    UNEXPECTED = 3
    """A bug: rerun with `--debug`."""
    REJECTED = 4
    """Beaker refused a request (client error): running again does the same."""
    INCOMPLETE = 5
    """Beaker could not be reached, or did not finish in time: running again continues."""
    RUNS_FAILED = 6
    """`submit`: every point submitted, but local runs failed (they ran to their end inside it);
    `wait`: some awaited point failed or was canceled."""
    TIMED_OUT = 124
    """`wait`: the timeout came while awaited points were still queued or running (as
    coreutils' `timeout` exits)."""
    SIGINT = 130
    SIGTERM = 143

    @property
    def result(self) -> RunResult:
        """The word `submit` reports for it (the step output `result`, the JSON summary)."""
        return RESULTS.get(self, RunResult.ERROR)


class RunResult(StrEnum):
    """What a submit reports it did, beside its exit code (`Exit.result`)."""

    OK = "ok"
    REJECTED = "rejected"
    INCOMPLETE = "incomplete"
    RUNS_FAILED = "runs-failed"
    INTERRUPTED = "interrupted"
    ERROR = "error"
    """A user error or a bug: the run ended before it had a result."""


RESULTS = {
    Exit.OK: RunResult.OK,
    Exit.REJECTED: RunResult.REJECTED,
    Exit.INCOMPLETE: RunResult.INCOMPLETE,
    Exit.RUNS_FAILED: RunResult.RUNS_FAILED,
    Exit.SIGINT: RunResult.INTERRUPTED,
    Exit.SIGTERM: RunResult.INTERRUPTED,
}


class RunnerError(Exception):
    """A failure the user can act on; its message is shown without a traceback."""

    exit_code: int = Exit.USER_ERROR


class BackendError(RunnerError):
    """A backend failed a request (`runner.backends` defines the kinds, each with its exit code)."""


@dataclass(frozen=True, order=True)
class Problem:
    """One problem in one file, printed as ``path:line:col: field: message``."""

    path: str
    line: int
    col: int
    field: str
    message: str

    @classmethod
    def at(
        cls, marks: Marks, source: str, path: KeyPath, message: str, key: bool = False
    ) -> Problem:
        """A problem with the value at `path` (or, with `key`, its mapping key) of a document."""
        mark = marks.key(path) if key else marks.value(path)
        return cls(source, mark.line, mark.col, field_path(path), message)

    def __str__(self) -> str:
        where = f"{self.path}:{self.line}:{self.col}"
        return (
            f"{where}: {self.field}: {self.message}" if self.field else f"{where}: {self.message}"
        )


class ManifestError(RunnerError):
    """A manifest is invalid; carries every problem found, not just the first."""

    def __init__(self, problems: list[Problem] | tuple[Problem, ...]) -> None:
        self.problems = tuple(sorted(problems))
        super().__init__("\n".join(str(p) for p in self.problems))


class LedgerError(RunnerError):
    """A ledger file cannot be read or written."""


class SubmitError(RunnerError):
    """Submission could not start or finish (credentials, backend, deadline)."""


class GitError(RunnerError):
    """A git operation failed in a way the user must resolve."""


class MissingExtra(RunnerError):
    """An optional extra is not installed: `[search]` (scipy, for `lock`) or `[adaptive]`
    (Optuna, for `propose` and `report --optuna-storage`)."""
