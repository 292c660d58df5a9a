"""Groups: named sets of experiments in a workspace, names unique per workspace.

Errors are ApiError with HTTP-style statuses; the gRPC layer maps them (404 -> NOT_FOUND,
409 -> ALREADY_EXISTS, 400 -> INVALID_ARGUMENT). Every change validates fully before it
commits, so a failed call leaves the group as it was.
"""

from __future__ import annotations

import dataclasses
import threading
import time
from collections.abc import Iterable

from .records import ApiError, GroupRecord, UserRecord
from .state import State, _valid_name


class GroupStore:
    def __init__(self, state: State) -> None:
        self.state = state
        self._lock = threading.Lock()
        self._groups: dict[str, GroupRecord] = {}

    def _check_name(self, workspace_id: str, name: str, group_id: str = "") -> None:
        if not _valid_name(name):
            raise ApiError(400, f"invalid group name {name!r}")
        for other in self._groups.values():
            if (other.workspace_id, other.name) == (workspace_id, name) and other.id != group_id:
                raise ApiError(409, f"group name {name!r} is already in use in workspace")

    def _experiment_ids(self, ids: Iterable[str], have: tuple[str, ...] = ()) -> tuple[str, ...]:
        """``have`` plus ``ids`` not in it yet, in order; 404 for an unknown experiment."""
        out = list(have)
        for exp_id in ids:
            if self.state.experiment(exp_id) is None:
                raise ApiError(404, f"experiment {exp_id!r} not found")
            if exp_id not in out:
                out.append(exp_id)
        return tuple(out)

    def create(
        self,
        workspace_id: str,
        name: str,
        description: str,
        experiment_ids: Iterable[str],
        author: UserRecord,
    ) -> GroupRecord:
        if self.state.workspace(workspace_id) is None:
            raise ApiError(404, f"workspace {workspace_id!r} not found")
        with self._lock:
            self._check_name(workspace_id, name)
            now = time.time()
            record = GroupRecord(
                id=self.state.new_id("GRP"),
                name=name,
                description=description,
                workspace_id=workspace_id,
                author=author,
                experiment_ids=self._experiment_ids(experiment_ids),
                created=now,
                modified=now,
            )
            self._groups[record.id] = record
            return record

    def get(self, group_id: str) -> GroupRecord | None:
        with self._lock:
            return self._groups.get(group_id)

    def all(self) -> list[GroupRecord]:
        with self._lock:
            return list(self._groups.values())

    def update(
        self,
        group_id: str,
        *,
        name: str | None = None,
        description: str | None = None,
        add_experiment_ids: Iterable[str] = (),
        archived: bool | None = None,
    ) -> GroupRecord:
        with self._lock:
            record = self._groups.get(group_id)
            if record is None:
                raise ApiError(404, f"group {group_id!r} not found")
            changes: dict[str, object] = {
                "experiment_ids": self._experiment_ids(add_experiment_ids, record.experiment_ids)
            }
            if name is not None:
                self._check_name(record.workspace_id, name, group_id)
                changes["name"] = name
            if description is not None:
                changes["description"] = description
            if archived is not None:
                changes["archived"] = archived
            updated = dataclasses.replace(record, modified=time.time(), **changes)  # type: ignore[arg-type]
            self._groups[group_id] = updated
            return updated

    def delete(self, group_ids: Iterable[str]) -> None:
        with self._lock:
            ids = list(group_ids)
            missing = [g for g in ids if g not in self._groups]
            if missing:
                raise ApiError(404, f"group {missing[0]!r} not found")
            for group_id in ids:
                del self._groups[group_id]
