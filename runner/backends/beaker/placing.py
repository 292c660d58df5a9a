"""`runner.backends.placing.Placing` on Beaker: clusters, a workspace's maximum priority and its
live workloads, each one (paged) call, through the backend's error translation.

Listings are reads: beaker-py retries them on UNAVAILABLE (a lost reply too) and nothing is
acted on until one has answered whole, so a retried listing changes nothing.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from beaker import beaker_pb2 as pb2
from beaker.types import BeakerWorkloadStatus

from runner.backends.beaker.client import Client
from runner.backends.beaker.duplicates import Call
from runner.backends.beaker.states import STATES
from runner.backends.placing import Cluster, Workload
from runner.core.model import Priority

LIVE = tuple(
    BeakerWorkloadStatus(pb2.WorkloadStatus.Value(name)) for name, s in STATES.items() if s.live
)
"""What holds (or waits for) machines: every status before the workload ends (`states`)."""
_CLUSTER = pb2.JobPlacementConstraintType.JOB_PLACEMENT_CONSTRAINT_TYPE_CLUSTER


def gpu_type_name(value: int) -> str:
    """`GPU_TYPE_NVIDIA_H100` as gantry shows it: `NVIDIA H100` (empty when unspecified)."""
    if not value:
        return ""
    return str(pb2.GpuType.Name(value)).removeprefix("GPU_TYPE_").replace("_", " ")


def priority_of(value: int) -> Priority | None:
    """`JOB_PRIORITY_URGENT` as the manifest says it: `urgent` (None when unspecified)."""
    if not value:
        return None
    return Priority(pb2.JobPriority.Name(value).removeprefix("JOB_PRIORITY_").lower())


def cluster(found: pb2.Cluster) -> Cluster:
    """gantry's reading: a cluster whose maximum task timeout is set to 0 takes no tasks."""
    closed = found.HasField("max_task_timeout") and found.max_task_timeout.ToNanoseconds() == 0
    org = found.organization_name
    return Cluster(
        org=org,
        name=found.name.removeprefix(f"{org}/"),
        aliases=tuple(a.removeprefix(f"{org}/") for a in found.aliases),
        tags=tuple(found.tags),
        gpu_type=gpu_type_name(found.node_shape.gpu_type),
        takes_tasks=not closed,
    )


def workload(found: pb2.Workload) -> Workload:
    """What a listed workload holds: its tasks' GPUs (each replica is a task of its own), the
    clusters they may run on and their priority (the highest of its tasks)."""
    tasks = found.experiment.tasks
    priorities = [p for t in tasks if (p := priority_of(t.system_details.priority))]
    clusters = {
        value
        for t in tasks
        for c in t.system_details.placement_constraints
        if c.type == _CLUSTER
        for value in c.values
    }
    gpus = sum(int(t.container_spec.resource_request.gpu_count) for t in tasks)
    top = max(priorities, key=list(Priority).index) if priorities else None
    return Workload(top, tuple(sorted(clusters)), gpus)


class BeakerPlacing:
    """The Beaker backend's `Placing`, over its client, its `call` and its workspace cache."""

    def __init__(
        self, client: Client, call: Call[Any], workspace: Callable[[str], pb2.Workspace]
    ) -> None:
        self.client = client
        self.call = call
        self.workspace = workspace

    def clusters(self, orgs: Sequence[str]) -> list[Cluster]:
        found: list[Cluster] = []
        for org in orgs:

            def listed(org: str = org) -> list[pb2.Cluster]:
                return list(self.client.cluster.list(org=self.client.resolved_org(org)))

            clusters: list[pb2.Cluster] = self.call(f"list clusters of {org}", listed)
            found += [cluster(c) for c in clusters]
        return found

    def maximum_priority(self, workspace: str) -> Priority | None:
        return priority_of(self.workspace(workspace).maximum_workload_priority)

    def live_workloads(self, workspace: str) -> list[Workload]:
        found = self.workspace(workspace)
        org = workspace.split("/", 1)[0]

        def listed() -> list[pb2.Workload]:
            return list(
                self.client.workload.list(
                    org=self.client.resolved_org(org), workspace=found, statuses=LIVE
                )
            )

        workloads: list[pb2.Workload] = self.call(f"list workloads of {workspace}", listed)
        return [workload(w) for w in workloads]
