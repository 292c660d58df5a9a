"""FakeBeaker's placement controls: clusters, a workspace's maximum priority, and workloads that
hold GPUs (a team's urgent jobs), which a submit's allocation counts."""

from __future__ import annotations

import json
from collections.abc import Sequence

from . import lifecycle
from .clusters import ClusterStore
from .records import Experiment
from .state import State

PRIORITIES = ("low", "normal", "high", "urgent", "immediate")


class PlacementControls:
    _state: State
    _clusters: ClusterStore

    def add_cluster(
        self,
        name: str,
        gpu_type: str = "h100",
        *,
        aliases: Sequence[str] = (),
        tags: Sequence[str] = (),
        max_task_timeout: float | None = None,
    ) -> str:
        """A cluster `org/name` whose nodes have `gpu_type` (`h100`, `a100`, `b200`, ...; ""
        for none), with aliases (names within its org), tags, and a maximum task timeout in
        seconds (0: it takes no batch tasks; None: unset). Its id."""
        record = self._clusters.add(
            name,
            gpu_type=gpu_type,
            aliases=tuple(aliases),
            tags=tuple(tags),
            max_task_timeout=max_task_timeout,
        )
        return record.id

    def rename_cluster(self, name: str, new_name: str) -> None:
        """`org/name` is called `org/new_name` from now on (the old name answers nothing)."""
        self._clusters.rename(name, new_name)

    def set_maximum_priority(self, workspace: str, priority: str | None) -> None:
        """The highest priority the workspace accepts (GetWorkspace's
        maximum_workload_priority); None: not capped."""
        if priority is not None and priority not in PRIORITIES:
            raise ValueError(f"priority must be one of {PRIORITIES}, got {priority!r}")
        self._state.set_maximum_priority(workspace, priority or "")

    def run_workload(
        self,
        workspace: str,
        name: str,
        *,
        gpus: int,
        priority: str,
        clusters: Sequence[str],
        replicas: int = 1,
        status: str = "running",
    ) -> Experiment:
        """An experiment someone launched by hand in `workspace`, holding `gpus` per replica at
        `priority` on `clusters`, in `status` (queued or running)."""
        task = {
            "name": "main",
            "image": {"beaker": "someone/image"},
            "resources": {"gpuCount": gpus},
            "context": {"priority": priority},
            "constraints": {"cluster": list(clusters)},
            **({"replicas": replicas} if replicas > 1 else {}),
        }
        body = json.dumps({"version": "v2", "tasks": [task]}).encode()
        record = self._state.add_workspace(workspace)
        made = self._state.create_experiment(record.id, name, body)
        return self._state.update_experiment(made.id, lifecycle.set_status(status, None, None))
