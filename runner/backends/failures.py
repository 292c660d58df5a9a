"""The failures every backend translates its own into (all `runner.core.errors.BackendError`,
each with its exit code): all the retry protocol in `runner.submit` needs to know."""

from __future__ import annotations

from runner.core.errors import BackendError, Exit

__all__ = ["Canceled", "NameTaken", "NotStarted", "Rejected", "Transient"]


class Transient(BackendError):
    """Worth retrying (exit 5 if it reaches the CLI). `maybe_committed`: the request may have
    taken effect before it failed. `unreachable`: why the service could not be reached at all
    (e.g. 'connection refused')."""

    exit_code = Exit.INCOMPLETE
    again = False
    """The client library would have sent it again (it announced a retry, which the Beaker
    gateway ends to retry a read itself, on the command's clock)."""

    def __init__(
        self,
        message: str,
        maybe_committed: bool = True,
        retry_after: float | None = None,
        *,
        unreachable: str | None = None,
    ):
        super().__init__(message)
        self.maybe_committed = maybe_committed
        self.retry_after = retry_after
        self.unreachable = unreachable


class NameTaken(BackendError):
    """Creating failed because an experiment of that name exists (HTTP 409)."""

    exit_code = Exit.REJECTED


class Rejected(BackendError):
    """A client error: retrying cannot help (invalid spec, permission, unknown workspace)."""

    exit_code = Exit.REJECTED


class Canceled(BackendError):
    """The point's sweep was canceled (`cancel --yes`) while this submit ran: it was not started
    (the local backend, whose submit runs the points); the next submit starts it (exit 5)."""

    exit_code = Exit.INCOMPLETE


class NotStarted(BackendError):
    """The job whose logs were asked for has not started yet (queued, or never scheduled)."""

    exit_code = Exit.INCOMPLETE
