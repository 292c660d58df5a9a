"""What a backend's calls say about reaching its service, for the submit loop and the progress line.

A backend reports each wait it sits out (a retry, its own or its client library's) and each
call that succeeded. The submit loop reads `down()` to stop early when the service has been
unreachable for too long, and shows each `Wait` on the progress line. Thread-safe: workers
report, the loop reads.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass


@dataclass(frozen=True)
class Wait:
    """A call failed and is tried again after `seconds`."""

    what: str
    """The call, e.g. 'create exact-3f2a' or 'list experiments of exact'."""
    reason: str
    """Why, in a few words: 'connection refused', 'HTTP 503', 'gRPC UNAVAILABLE'."""
    seconds: float
    attempt: int | None = None
    """The attempt that comes next (2 after the first failure); None when not counted."""
    attempts: int | None = None
    """How many attempts are allowed; None: the client library retries without end."""
    unreachable: bool = False
    """The service could not be reached or served nothing (as opposed to a reply it gave)."""

    def text(self, service: str) -> str:
        """E.g. 'Beaker unavailable (connection refused), retrying in 4 s, attempt 3/8: create x'."""
        state = "unreachable" if self.unreachable else "unavailable"
        count = ""
        if self.attempt is not None:
            count = f", attempt {self.attempt}" + (f"/{self.attempts}" if self.attempts else "")
        text = f"{service} {state} ({self.reason}), retrying in {self.seconds:.0f} s{count}"
        return f"{text}: {self.what}" if self.what else text


HealthListener = Callable[[Wait | None], None]
"""Told of each wait, and (None) when the service answers again after being unreachable."""


class Health:
    def __init__(self, service: str, address: str) -> None:
        self.service = service
        """'Beaker' or 'local'."""
        self.address = address
        """Where the service was expected to answer, for messages."""
        self._lock = threading.Lock()
        self._down: str | None = None
        self._listeners: list[HealthListener] = []

    def listen(self, listener: HealthListener) -> None:
        with self._lock:
            self._listeners.append(listener)

    def ok(self) -> None:
        """A call succeeded: the service is reachable."""
        with self._lock:
            if self._down is None:
                return
            self._down = None
            listeners = list(self._listeners)
        for listener in listeners:
            listener(None)

    def waiting(self, wait: Wait) -> None:
        """A call failed and will be tried again; an `unreachable` one marks the service down."""
        with self._lock:
            if wait.unreachable:
                self._down = wait.reason
            listeners = list(self._listeners)
        for listener in listeners:
            listener(wait)

    def down(self) -> str | None:
        """Why the service is unreachable (the last failure said so, no call succeeded since);
        None when it is not known to be."""
        with self._lock:
            return self._down
