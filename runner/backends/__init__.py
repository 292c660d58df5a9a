"""Where experiments run. The planner and the submit protocol only know this interface.

A backend creates one experiment per point under its deterministic name and can look an
experiment up by that name. It translates its own failures into the three errors below, which
is all the retry protocol in `runner.submit` needs to know.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Protocol

from runner.model import Sweep
from runner.spec import Rendered


@dataclass(frozen=True)
class Experiment:
    """An experiment as the backend reports it."""

    name: str
    id: str
    url: str
    key: str | None
    """The idempotency key recorded in the experiment (env SWEEP_POINT_KEY or description)."""
    state: str = "unknown"
    """queued | running | succeeded | failed | canceled | unknown"""
    exit_code: int | None = None
    metrics: Mapping[str, object] = field(default_factory=dict)


class Transient(Exception):
    """Worth retrying. `maybe_committed`: the request may have taken effect before it failed."""

    def __init__(
        self, message: str, maybe_committed: bool = True, retry_after: float | None = None
    ):
        super().__init__(message)
        self.maybe_committed = maybe_committed
        self.retry_after = retry_after


class NameTaken(Exception):
    """Creating failed because an experiment of that name exists (HTTP 409)."""


class Rejected(Exception):
    """A client error: retrying cannot help (invalid spec, permission, unknown workspace)."""


class Backend(Protocol):
    kind: str
    """'beaker' or 'local': selects the ledger the runs are recorded in."""

    def create(self, sweep: Sweep, point: Rendered) -> Experiment:
        """Create the point's experiment under point.name; never under another name."""
        ...

    def find(self, sweep: Sweep, name: str) -> Experiment | None:
        """Look an experiment up by name; None when there is none."""
        ...

    def existing(self, sweep: Sweep, names: Iterable[str]) -> Mapping[str, Experiment]:
        """Those of names that exist, found with as few calls as the backend allows."""
        ...

    def states(self, sweep: Sweep, names: Iterable[str]) -> Mapping[str, Experiment]:
        """Live state of the named experiments (with exit codes of finished ones), in bulk."""
        ...

    def close(self) -> None: ...
