"""A sweep's Beaker group: found or created exactly once, and kept holding every experiment.

beaker-py 2.8.1 cannot get a group by name (`group.get` takes an id), so a group is found by
listing the workspace's groups whose name contains the sweep's group name and keeping the exact
match. Creating follows the submit protocol's rule for experiments: look up before every
attempt, so a CreateGroup whose reply was lost (it committed, then UNAVAILABLE) or a second
runner that created it first (ALREADY_EXISTS) is found instead of doubled. Membership is
level-triggered: the experiments already in the group are read from its task metrics (paged),
and only the missing ones are added, in batches (`add_experiment_ids`). Adding an experiment
twice is a no-op on Beaker, so a lost UpdateGroup reply is retried as it is.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import TypeVar

import grpc
from beaker import beaker_pb2 as pb2

from runner.backends import Group, NameTaken, Rejected, Transient, group_name
from runner.backends.beaker.gateway import Gateway
from runner.core import retry
from runner.core.model import Sweep
from runner.core.retry import RetryPolicy

BATCH = 500
"""Experiment ids per CreateGroup/UpdateGroup request."""
T = TypeVar("T")
POLICY = RetryPolicy(attempts=5, per_point_seconds=120.0, initial_wait=1.0, max_wait=10.0)


def marker(name: str) -> str:
    """What the description of a group this runner made carries, so a look-up can tell."""
    return f"[sweep-group {name}]"


def description(sweep: Sweep) -> str:
    return (
        f"Experiments of sweep {sweep.name}, revision {sweep.revision} ({sweep.path}),"
        f" kept by beaker-sweep-runner {marker(group_name(sweep))}"
    )


class SweepGroups:
    """The group operations of the Beaker backend, through its gateway: listings as reads,
    CreateGroup and UpdateGroup once each (retried here, within the gateway's deadline)."""

    def __init__(
        self,
        gateway: Gateway,
        workspace: Callable[[str], pb2.Workspace],
        policy: RetryPolicy = POLICY,
    ) -> None:
        self.gateway = gateway
        self.client = gateway.client
        self._workspace = workspace
        self.policy = policy

    def url(self, group: pb2.Group) -> str:
        return self.client.group.url(group)

    def find(self, sweep: Sweep) -> pb2.Group | None:
        """The sweep's group, from one paged listing of the workspace's groups; None if none."""
        name = group_name(sweep)
        workspace = self._workspace(sweep.placement.workspace)

        org = sweep.placement.workspace.split("/", 1)[0]

        def listing() -> pb2.Group | None:
            groups = self.client.group.list(
                org=self.client.resolved_org(org), workspace=workspace, name_or_description=name
            )
            for group in groups:
                if group.name == name:
                    return group
            return None

        found = self.gateway.read(f"look up group {name}", listing)
        if found is not None and marker(name) not in found.description:
            raise Rejected(
                f"group {name} ({self.url(found)}) exists in {sweep.placement.workspace} but was not"
                " made by beaker-sweep-runner; it is left alone (rename it, or set"
                " `beaker.group: false` in the manifest to group by hand)"
            )
        return found

    def members(self, group: pb2.Group) -> set[str]:
        """Ids of the experiments in the group (those with tasks), from its paged task metrics."""
        return {m.experiment_id for m in self.task_metrics(group)}

    def task_metrics(self, group: pb2.Group) -> list[pb2.TaskMetrics]:
        return self.gateway.read(
            f"metrics of group {group.name}",
            lambda: list(self.client.group.list_task_metrics(group)),
        )

    def ensure(self, sweep: Sweep, experiment_ids: Sequence[str]) -> Group:
        """The sweep's group with every one of experiment_ids in it; Transient or Rejected."""
        wanted = list(dict.fromkeys(experiment_ids))
        group, created = self._find_or_create(sweep, wanted[:BATCH])
        present = set(wanted[:BATCH]) if created else self.members(group)
        missing = [i for i in wanted if i not in present]
        for start in range(0, len(missing), BATCH):
            self._add(group, missing[start : start + BATCH])
        added = len(missing) + (min(len(wanted), BATCH) if created else 0)
        return Group(group.name, self.url(group), len(present) + len(missing), added, created)

    def _find_or_create(self, sweep: Sweep, first: list[str]) -> tuple[pb2.Group, bool]:
        name = group_name(sweep)
        workspace = self._workspace(sweep.placement.workspace)

        def create() -> pb2.Group:
            try:
                return self.client.group.create(
                    name, workspace=workspace, description=description(sweep), experiment_ids=first
                )
            except grpc.RpcError as exc:
                if isinstance(exc, grpc.Call) and exc.code() == grpc.StatusCode.ALREADY_EXISTS:
                    raise NameTaken(name) from None
                raise

        def attempt() -> tuple[pb2.Group, bool]:
            found = self.find(sweep)  # before every attempt: a lost reply may have created it
            if found is not None:
                return found, False
            try:
                return self.gateway.once(f"create group {name}", create), True
            except NameTaken:
                raise Transient(f"group {name} was created meanwhile; looking it up") from None

        return self._retrying(attempt)

    def _add(self, group: pb2.Group, ids: list[str]) -> None:
        def update() -> None:
            self.gateway.once(
                f"add {len(ids)} experiment(s) to group {group.name}",
                lambda: self.client.group.update(group, add_experiment_ids=ids),
            )

        self._retrying(update)

    def _retrying(self, fn: Callable[[], T]) -> T:
        clock = self.gateway.clock
        started = clock.now()

        def remaining() -> float:
            left = self.policy.per_point_seconds - (clock.now() - started)
            deadline = self.gateway.left()
            return left if deadline is None else min(left, deadline)

        result: T = retry.retrying(self.policy, remaining, Transient)(fn)
        return result


def metrics_by_experiment(
    rows: Iterable[pb2.TaskMetrics], task: str, rank_of: Callable[[str], int] = lambda t: 0
) -> dict[str, dict[str, object]]:
    """Each experiment's metrics (by id): those of manifest task `task` (the task of that name,
    or its replicas' tasks, named `task-...`), else of its first task listed. Of several
    replicas that reported metrics, rank 0's: `rank_of(task_id)` looks the rank up (a job
    listing), only then."""
    by_experiment: dict[str, list[pb2.TaskMetrics]] = {}
    for row in rows:
        by_experiment.setdefault(row.experiment_id, []).append(row)
    out = {}
    for exp_id, found in by_experiment.items():
        mine = [r for r in found if r.task_name == task] or [
            r for r in found if r.task_name.startswith(f"{task}-")
        ]
        reported = [r for r in mine if r.metrics] or mine or found[:1]
        row = reported[0] if len(reported) == 1 else min(reported, key=lambda r: rank_of(r.task_id))
        out[exp_id] = {m.group_parameter.name: _value(m.value) for m in row.metrics}
    return out


def _value(value: object) -> object:
    kind = value.WhichOneof("kind")  # type: ignore[attr-defined]
    if kind == "number_value":
        number = float(value.number_value)  # type: ignore[attr-defined]
        return int(number) if number.is_integer() and abs(number) < 2**53 else number
    if kind in ("string_value", "bool_value"):
        return getattr(value, kind)
    return None
