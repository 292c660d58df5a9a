"""The fake Beaker's clusters: what ListClusters, GetCluster and ResolveClusterName serve, set by
a test (`FakeBeaker.add_cluster`, `rename_cluster`)."""

from __future__ import annotations

import dataclasses
import itertools
import threading
from dataclasses import dataclass
from typing import Any

from beaker import beaker_pb2 as pb2

GPU_TYPES = {
    "h100": pb2.GpuType.GPU_TYPE_NVIDIA_H100,
    "h200": pb2.GpuType.GPU_TYPE_NVIDIA_H200,
    "a100": pb2.GpuType.GPU_TYPE_NVIDIA_A100_80GB,
    "a100-40gb": pb2.GpuType.GPU_TYPE_NVIDIA_A100_40GB,
    "b200": pb2.GpuType.GPU_TYPE_NVIDIA_B200,
    "l40s": pb2.GpuType.GPU_TYPE_NVIDIA_L40S,
    "": pb2.GpuType.GPU_TYPE_UNSPECIFIED,
}
"""The GPU types a test names, as Beaker's enum has them."""


@dataclass(frozen=True)
class ClusterRecord:
    id: str
    org: str
    name: str
    """Its name within the organization, as Beaker's Cluster.name carries it."""
    gpu_type: str = ""
    gpus_per_node: int = 8
    aliases: tuple[str, ...] = ()
    tags: tuple[str, ...] = ()
    max_task_timeout: float | None = None
    """Seconds; None: not set (no limit); 0: the cluster takes no batch tasks."""

    def message(self) -> pb2.Cluster:
        fields: dict[str, Any] = {}
        if self.max_task_timeout is not None:
            fields["max_task_timeout"] = {"seconds": int(self.max_task_timeout)}
        return pb2.Cluster(
            id=self.id,
            name=self.name,
            organization_name=self.org,
            aliases=list(self.aliases),
            tags=list(self.tags),
            node_shape=pb2.NodeShape(
                gpu_type=GPU_TYPES[self.gpu_type],
                gpu_count=self.gpus_per_node if self.gpu_type else 0,
            ),
            **fields,
        )


class ClusterStore:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._ids = itertools.count(1)
        self._clusters: dict[str, ClusterRecord] = {}

    def add(self, full_name: str, **fields: object) -> ClusterRecord:
        org, _, name = full_name.partition("/")
        if not org or not name:
            raise ValueError(f"a cluster is 'org/name', got {full_name!r}")
        gpu_type = str(fields.get("gpu_type", ""))
        if gpu_type not in GPU_TYPES:
            raise ValueError(f"unknown GPU type {gpu_type!r} (known: {sorted(GPU_TYPES)})")
        with self._lock:
            record = ClusterRecord(f"01FAKECLU{next(self._ids):017d}", org, name, **fields)  # type: ignore[arg-type]
            self._clusters[record.id] = record
            return record

    def rename(self, full_name: str, new_name: str) -> ClusterRecord:
        """The cluster gets another name; the old one is not kept as an alias."""
        with self._lock:
            record = self._find(full_name)
            if record is None:
                raise KeyError(f"no cluster {full_name!r}")
            renamed = dataclasses.replace(record, name=new_name.partition("/")[2] or new_name)
            self._clusters[record.id] = renamed
            return renamed

    def all(self, org_id: str | None = None, org_name: str | None = None) -> list[ClusterRecord]:
        """By name, as Beaker lists them by default; of one organization when given."""
        with self._lock:
            found = sorted(self._clusters.values(), key=lambda c: (c.org, c.name))
        return [c for c in found if org_name is None or c.org == org_name]

    def get(self, cluster_id: str) -> ClusterRecord | None:
        with self._lock:
            return self._clusters.get(cluster_id)

    def resolve(self, org: str, name: str) -> ClusterRecord | None:
        with self._lock:
            return self._find(f"{org}/{name}")

    def _find(self, full_name: str) -> ClusterRecord | None:
        org, _, name = full_name.partition("/")
        return next(
            (c for c in self._clusters.values() if c.org == org and name in (c.name, *c.aliases)),
            None,
        )
