"""Two experiments for one point: which one is older, and cancelling the newer exactly once.

Where Beaker scopes experiment names per author, two accounts submitting the same sweep at the
same time each create every point. `runner.submit.duplicates` keeps the older experiment and
has this run cancel the newer one when it created it. This is a private helper of the backend;
the general `cancel` of the lifecycle commands lives elsewhere.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

from beaker import Beaker
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


def cancel_once(client: Beaker, experiment_id: str, call: Call[None]) -> None:
    """Cancel the experiment unless it has finished or was canceled already.

    CancelWorkloads is never retried by beaker-py, and its reply can be lost after it took
    effect: the state is looked up first on every attempt, so a retry never cancels twice.
    """

    def attempt() -> None:
        workload = client.workload.get(experiment_id)
        if workload.status in FINISHED:
            return
        client.workload.cancel(workload)

    call(f"cancel duplicate {experiment_id}", attempt)
