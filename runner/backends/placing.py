"""Where and at what priority work may run on shared machines: a small interface beside the
port, which only the Beaker adapter offers (the local backend has no clusters, priorities nor
allocations).

Not a point operation, so not one of the port's calls: `lock` asks it for the clusters a
selector resolves to (`runner.locking.clusters`), and a submit asks it, once per workspace,
for the workspace's maximum priority and its queued and running workloads, which a team's
allocation is counted from (`runner.apply.allocation`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from runner.core.errors import SubmitError
from runner.core.model import Priority


@dataclass(frozen=True)
class Cluster:
    """A cluster as the service lists it: what a selector is matched against."""

    org: str
    name: str
    """Its name within the organization (`jupiter`); `org/name` is what specs list."""
    aliases: tuple[str, ...] = ()
    tags: tuple[str, ...] = ()
    gpu_type: str = ""
    """Its nodes' GPU type as the service names it (`NVIDIA H100`); empty without GPUs."""
    takes_tasks: bool = True
    """False when its maximum task timeout is 0: it runs no batch jobs (sessions only)."""

    @property
    def full_name(self) -> str:
        return f"{self.org}/{self.name}"


@dataclass(frozen=True)
class Workload:
    """A queued or running workload of a workspace, as one listing shows it."""

    priority: Priority | None
    clusters: tuple[str, ...]
    """The clusters its tasks may run on (`org/name`, as its spec lists them)."""
    gpus: int
    """GPUs of every task and replica together."""


class Placing(Protocol):
    def clusters(self, orgs: Sequence[str]) -> list[Cluster]:
        """Every cluster of these organizations (one paged listing each). Raises Transient or
        Rejected."""
        ...

    def maximum_priority(self, workspace: str) -> Priority | None:
        """The highest priority the workspace accepts; None: not capped. One call per
        workspace for the whole run (the look-up a create makes anyway)."""
        ...

    def live_workloads(self, workspace: str) -> list[Workload]:
        """The workspace's queued and running workloads, whoever made them, in one paged
        listing."""
        ...


@runtime_checkable
class Places(Protocol):
    """A backend that offers `Placing` (the Beaker one)."""

    placing: Placing


def placing(backend: object, why: str) -> Placing:
    """The backend's `Placing`; SubmitError, naming `why`, on a backend without one."""
    if isinstance(backend, Places):
        return backend.placing
    raise SubmitError(
        f"{why} needs Beaker credentials (this machine has no clusters): set BEAKER_TOKEN, or"
        " run `beaker config set user_token ...`"
    )
