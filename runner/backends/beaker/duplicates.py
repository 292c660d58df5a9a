"""Two experiments for one point: which one is older.

Where Beaker scopes experiment names per author, two accounts submitting the same sweep at the
same time each create every point. `runner.submit.duplicates` keeps the older experiment and
has this run cancel the newer one when it created it, with the port's `cancel` (exactly once:
`runner.backends.beaker.lifecycle.cancel`).
"""

from __future__ import annotations

from collections.abc import Callable
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
