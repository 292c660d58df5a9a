"""The fake Beaker's in-memory database. Every method is atomic under one lock."""

from __future__ import annotations

import dataclasses
import itertools
import json
import threading
import time
from collections import Counter
from typing import Any

from .records import (
    JOB_STATUSES,
    ApiError,
    Experiment,
    TaskRecord,
    UserRecord,
    WorkspaceRecord,
)

SPEC_VERSIONS = ("v2", "v2-alpha")


def _valid_name(name: str) -> bool:
    # Same rule beaker-py applies client-side (ServiceClient._validate_beaker_name).
    stripped = name.replace("-", "").replace("_", "").replace(".", "")
    return bool(name) and not name.startswith("-") and stripped.isalnum()


def parse_spec(body: bytes) -> dict[str, Any]:
    """Check a posted experiment spec the way the API does, loosely; raise ApiError(400)."""
    try:
        spec = json.loads(body)
    except (UnicodeDecodeError, json.JSONDecodeError) as e:
        raise ApiError(400, f"invalid experiment spec: body is not JSON ({e})") from None
    if not isinstance(spec, dict):
        raise ApiError(400, "invalid experiment spec: expected a JSON object")
    if spec.get("version", "v2") not in SPEC_VERSIONS:
        raise ApiError(400, f"invalid experiment spec: unknown version {spec.get('version')!r}")
    tasks = spec.get("tasks")
    if not isinstance(tasks, list) or not tasks:
        raise ApiError(400, "invalid experiment spec: spec must contain at least one task")
    for i, task in enumerate(tasks):
        if not isinstance(task, dict):
            raise ApiError(400, f"invalid experiment spec: tasks[{i}] must be an object")
        image = task.get("image")
        if not isinstance(image, dict) or not (image.get("beaker") or image.get("docker")):
            raise ApiError(400, f"invalid experiment spec: tasks[{i}].image must name an image")
    names = [t["name"] for t in tasks if t.get("name")]
    if len(names) != len(set(names)):
        raise ApiError(400, "invalid experiment spec: task names must be unique")
    return spec


class State:
    def __init__(self, user_name: str, org: str) -> None:
        self._lock = threading.RLock()
        self._ids = itertools.count(1)
        self._seqs = itertools.count(1)
        self._orgs: dict[str, str] = {}
        self._workspaces: dict[str, WorkspaceRecord] = {}
        self._experiments: dict[str, Experiment] = {}
        self._by_workspace_name: dict[tuple[str, str], str] = {}
        self._by_job: dict[str, str] = {}
        self._by_task: dict[str, str] = {}
        self.user = UserRecord(id=self._new_id("USR"), name=user_name)
        self.default_org = org
        self.add_org(org)

    def _new_id(self, kind: str) -> str:
        # Shaped like Beaker's 26-character ULIDs, but readable and deterministic per instance.
        return f"01FAKE{kind}{next(self._ids):017d}"

    # Organizations and workspaces.

    def add_org(self, name: str) -> str:
        with self._lock:
            return self._orgs.setdefault(name, self._new_id("ORG"))

    def org_id(self, name: str) -> str | None:
        with self._lock:
            return self._orgs.get(name)

    def org_name(self, org_id: str) -> str | None:
        with self._lock:
            return next((n for n, i in self._orgs.items() if org_id in (i, n)), None)

    def add_workspace(self, full_name: str) -> WorkspaceRecord:
        org, sep, short = full_name.partition("/")
        if not sep or not _valid_name(org) or not _valid_name(short):
            raise ValueError(f"workspace must look like 'org/name', got {full_name!r}")
        with self._lock:
            existing = self.resolve_workspace(org, short)
            if existing is not None:
                return existing
            record = WorkspaceRecord(
                id=self._new_id("WSP"),
                org=org,
                short_name=short,
                org_id=self.add_org(org),
                created=time.time(),
            )
            self._workspaces[record.id] = record
            return record

    def workspace(self, workspace_id: str) -> WorkspaceRecord | None:
        with self._lock:
            return self._workspaces.get(workspace_id)

    def resolve_workspace(self, org: str, short_name: str) -> WorkspaceRecord | None:
        with self._lock:
            for record in self._workspaces.values():
                if (record.org, record.short_name) == (org, short_name):
                    return record
            return None

    # Experiments.

    def create_experiment(self, workspace_id: str, name: str | None, body: bytes) -> Experiment:
        """Validate and commit a create, atomically. Raises ApiError (404, 400, 409)."""
        with self._lock:
            workspace = self._workspaces.get(workspace_id)
            if workspace is None:
                raise ApiError(404, f"workspace {workspace_id!r} not found")
            spec = parse_spec(body)
            if name is not None and not _valid_name(name):
                raise ApiError(400, f"invalid experiment name {name!r}")
            if name is not None and (workspace_id, name) in self._by_workspace_name:
                raise ApiError(409, f"experiment name {name!r} is already in use in workspace")
            exp_id = self._new_id("EXP")
            tasks = tuple(
                TaskRecord(
                    id=self._new_id("TSK"),
                    name=str(task.get("name") or f"task{i}"),
                    job_id=self._new_id("JOB"),
                    spec=json.dumps(task, sort_keys=True),
                )
                for i, task in enumerate(spec["tasks"])
            )
            now = time.time()
            record = Experiment(
                seq=next(self._seqs),
                id=exp_id,
                name=name or "",
                workspace=workspace.full_name,
                workspace_id=workspace_id,
                author=self.user.name,
                author_id=self.user.id,
                description=str(spec.get("description") or ""),
                spec_json=body.decode(),
                tasks=tasks,
                created=now,
                status_changed=now,
            )
            self._experiments[exp_id] = record
            if name is not None:
                self._by_workspace_name[(workspace_id, name)] = exp_id
            for task_record in tasks:
                self._by_job[task_record.job_id] = exp_id
                self._by_task[task_record.id] = exp_id
            return record

    def experiment(self, experiment_id: str) -> Experiment | None:
        with self._lock:
            return self._experiments.get(experiment_id)

    def resolve_experiment(self, author: str, name: str) -> Experiment | None:
        """The newest experiment by ``author`` called ``name`` (names are per workspace)."""
        with self._lock:
            matches = [
                e for e in self._experiments.values() if (e.author, e.name) == (author, name)
            ]
            return matches[-1] if matches else None

    def experiments(self) -> list[Experiment]:
        with self._lock:
            return list(self._experiments.values())

    def count_by_name(self) -> Counter[str]:
        with self._lock:
            return Counter(e.name for e in self._experiments.values())

    def experiment_for_job(self, job_id: str) -> Experiment | None:
        with self._lock:
            exp_id = self._by_job.get(job_id)
            return None if exp_id is None else self._experiments[exp_id]

    def experiment_for_task(self, task_id: str) -> Experiment | None:
        with self._lock:
            exp_id = self._by_task.get(task_id)
            return None if exp_id is None else self._experiments[exp_id]

    def set_job_status(self, experiment_id: str, status: str, exit_code: int | None) -> None:
        """Move every job of an experiment to ``status`` (one of JOB_STATUSES)."""
        if status not in JOB_STATUSES:
            raise ValueError(f"status must be one of {JOB_STATUSES}, got {status!r}")
        if exit_code is None and status in ("succeeded", "failed"):
            exit_code = 0 if status == "succeeded" else 1
        with self._lock:
            record = self._experiments.get(experiment_id)
            if record is None:
                raise KeyError(f"no experiment with id {experiment_id!r}")
            self._experiments[experiment_id] = dataclasses.replace(
                record, status=status, exit_code=exit_code, status_changed=time.time()
            )
