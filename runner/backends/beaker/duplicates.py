"""Two experiments for one point: which one is older.

Where Beaker scopes experiment names per author, two accounts submitting the same sweep at the
same time each create every point. `runner.submit.duplicates` keeps the older experiment and
has this run cancel the newer one when it created it, with the port's `cancel` (exactly once:
`runner.backends.beaker.lifecycle.cancel`).
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import TypeVar

from beaker import beaker_pb2 as pb2

T = TypeVar("T")
Call = Callable[[str, Callable[[], T]], T]

FINISHED = (
    pb2.WorkloadStatus.STATUS_CANCELED,
    pb2.WorkloadStatus.STATUS_SUCCEEDED,
    pb2.WorkloadStatus.STATUS_FAILED,
)


def age(workload: pb2.Workload) -> tuple[int, int, str]:
    """Sort key, oldest first: creation time, then id (a deterministic tie-break)."""
    created = workload.experiment.created
    return (created.seconds, created.nanos, workload.experiment.id)


def by_name(
    list_one: Callable[[str | None], list[pb2.Workload]],
    needles: Sequence[str | None],
    named: Collection[str],
) -> dict[str, list[pb2.Workload]]:
    """Each named experiment's workloads, oldest first, from one listing per needle; more than
    two needles (`identity.SHARD_AT`'s 16) are listed at once, each one's pages in turn."""
    listed: Iterable[list[pb2.Workload]] = map(list_one, needles)
    if len(needles) > 2:
        with ThreadPoolExecutor(len(needles)) as pool:
            listed = [*pool.map(list_one, needles)]
    found: dict[str, dict[str, pb2.Workload]] = {}
    for listing in listed:
        for workload in listing:
            if workload.experiment.name in named:
                found.setdefault(workload.experiment.name, {})[workload.experiment.id] = workload
    return {name: sorted(w.values(), key=age) for name, w in found.items()}
