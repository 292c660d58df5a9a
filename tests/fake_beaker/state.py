"""The fake Beaker's in-memory database. Every method is atomic under one lock."""

from __future__ import annotations

import dataclasses
import itertools
import json
import threading
import time
from collections import Counter
from collections.abc import Callable
from typing import Any, Literal

from .records import ApiError, Experiment, JobRecord, TaskRecord, UserRecord, WorkspaceRecord

SPEC_VERSIONS = ("v2", "v2-alpha")
NameScope = Literal["workspace", "author"]


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
        replicas = task.get("replicas")
        if replicas is not None and (not isinstance(replicas, int) or replicas < 1):
            raise ApiError(400, f"invalid experiment spec: tasks[{i}].replicas must be >= 1")
    names = [t["name"] for t in tasks if t.get("name")]
    if len(names) != len(set(names)):
        raise ApiError(400, "invalid experiment spec: task names must be unique")
    return spec


class State:
    def __init__(self, user_name: str, org: str, token: str = "fake-token") -> None:
        self._lock = threading.RLock()
        self._ids = itertools.count(1)
        self._seqs = itertools.count(1)
        self._orgs: dict[str, str] = {}
        self._workspaces: dict[str, WorkspaceRecord] = {}
        self._experiments: dict[str, Experiment] = {}
        self._names: dict[tuple[str, str], set[str]] = {}  # (workspace id, name) -> author ids
        self._by_job: dict[str, str] = {}
        self._by_task: dict[str, str] = {}
        self._tokens: dict[str, UserRecord] = {}
        self.name_scope: NameScope = "workspace"
        self.replica_tasks = True
        """A spec task with `replicas: N` becomes N tasks of one replica group (real Beaker, as
        beaker-py v1 and gantry show), listed out of rank order under names that do not say
        the rank; False: one task with N jobs (how this fake modelled it before)."""
        """Where experiment names must be unique: per workspace, or per author in a workspace."""
        self.listed_specs = True
        """ListWorkloads fills each task's container_spec (env included); False: it leaves them
        out, as a service that lists workloads without their specs would (GetExperimentYamlSpec
        still answers)."""
        self.user = self.add_user(user_name, token)
        self.default_org = org
        self.add_org(org)

    def new_id(self, kind: str) -> str:
        # Shaped like Beaker's 26-character ULIDs, but readable and deterministic per instance.
        return f"01FAKE{kind}{next(self._ids):017d}"

    # Users: each token authenticates one user.

    def add_user(self, name: str, token: str) -> UserRecord:
        if not _valid_name(name):
            raise ValueError(f"invalid user name {name!r}")
        with self._lock:
            if token in self._tokens:
                raise ValueError(f"token {token!r} is taken")
            if self.find_user(name) is not None:
                raise ValueError(f"user {name!r} exists")
            record = UserRecord(id=self.new_id("USR"), name=name)
            self._tokens[token] = record
            return record

    def user_for_token(self, token: str) -> UserRecord | None:
        with self._lock:
            return self._tokens.get(token)

    def find_user(self, id_or_name: str) -> UserRecord | None:
        with self._lock:
            return next((u for u in self._tokens.values() if id_or_name in (u.id, u.name)), None)

    # Organizations and workspaces.

    def add_org(self, name: str) -> str:
        with self._lock:
            return self._orgs.setdefault(name, self.new_id("ORG"))

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
                id=self.new_id("WSP"),
                org=org,
                short_name=short,
                org_id=self.add_org(org),
                created=time.time(),
            )
            self._workspaces[record.id] = record
            return record

    def set_maximum_priority(self, full_name: str, priority: str) -> None:
        with self._lock:
            record = self.add_workspace(full_name)
            self._workspaces[record.id] = dataclasses.replace(record, maximum_priority=priority)

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

    def _task_records(self, index: int, task: dict[str, Any]) -> list[TaskRecord]:
        name = str(task.get("name") or f"task{index}")
        spec, replicas = json.dumps(task, sort_keys=True), int(task.get("replicas") or 1)
        if replicas == 1 or not self.replica_tasks:
            return [TaskRecord(self.new_id("TSK"), name, spec, replicas, name)]
        group = self.new_id("RG")
        records = [
            TaskRecord(self.new_id("TSK"), "", spec, replicas, name, group, rank)
            for rank in range(replicas)
        ]
        # Names that do not give the rank away, listed highest rank first.
        named = [dataclasses.replace(r, name=f"{name}-{r.id[-4:].lower()}") for r in records]
        return named[::-1]

    def create_experiment(
        self, workspace_id: str, name: str | None, body: bytes, author: UserRecord | None = None
    ) -> Experiment:
        """Validate and commit a create, atomically. Raises ApiError (404, 400, 409)."""
        author = author or self.user
        with self._lock:
            workspace = self._workspaces.get(workspace_id)
            if workspace is None:
                raise ApiError(404, f"workspace {workspace_id!r} not found")
            spec = parse_spec(body)
            if name is not None and not _valid_name(name):
                raise ApiError(400, f"invalid experiment name {name!r}")
            authors = self._names.setdefault((workspace_id, name or ""), set())
            if name is not None and (
                author.id in authors if self.name_scope == "author" else authors
            ):
                raise ApiError(409, f"experiment name {name!r} is already in use in workspace")
            exp_id = self.new_id("EXP")
            tasks = tuple(
                record
                for i, task in enumerate(spec["tasks"])
                for record in self._task_records(i, task)
            )
            now = time.time()
            jobs = tuple(
                JobRecord(self.new_id("JOB"), t.id, r, t.replicas, 0, now, status_changed=now)
                for t in tasks
                for r in t.ranks
            )
            record = Experiment(
                seq=next(self._seqs),
                id=exp_id,
                name=name or "",
                workspace=workspace.full_name,
                workspace_id=workspace_id,
                author=author.name,
                author_id=author.id,
                description=str(spec.get("description") or ""),
                spec_json=body.decode(),
                tasks=tasks,
                jobs=jobs,
                created=now,
                status_changed=now,
            )
            self._experiments[exp_id] = record
            if name is not None:
                authors.add(author.id)
            for task_record in tasks:
                self._by_task[task_record.id] = exp_id
            self._index_jobs(record)
            return record

    def _index_jobs(self, record: Experiment) -> None:
        for job in record.jobs:
            self._by_job[job.id] = record.id

    def update_experiment(
        self, experiment_id: str, change: Callable[[Experiment], Experiment]
    ) -> Experiment:
        """Replace an experiment with ``change(it)`` atomically; raise KeyError if unknown.
        ``change`` may raise (e.g. ApiError) to leave the experiment as it was."""
        with self._lock:
            record = self._experiments.get(experiment_id)
            if record is None:
                raise KeyError(f"no experiment with id {experiment_id!r}")
            updated = change(record)
            self._experiments[experiment_id] = updated
            self._index_jobs(updated)
            return updated

    def update_workload(
        self, experiment_id: str, name: str | None, description: str | None
    ) -> Experiment:
        """UpdateWorkload: a new name (as a rename in Beaker's UI; the id stays) and/or a new
        description (as a job writes it). Raises KeyError if unknown, ApiError (400, 409)."""
        with self._lock:
            record = self._experiments.get(experiment_id)
            if record is None:
                raise KeyError(f"no experiment with id {experiment_id!r}")
            changes: dict[str, Any] = {}
            if description is not None:
                changes["description"] = description
            if name is not None and name != record.name:
                if not _valid_name(name):
                    raise ApiError(400, f"invalid experiment name {name!r}")
                authors = self._names.setdefault((record.workspace_id, name), set())
                if record.author_id in authors if self.name_scope == "author" else authors:
                    raise ApiError(409, f"experiment name {name!r} is already in use in workspace")
                self._names.get((record.workspace_id, record.name), set()).discard(record.author_id)
                authors.add(record.author_id)
                changes["name"] = name
            updated = dataclasses.replace(record, **changes)
            self._experiments[experiment_id] = updated
            return updated

    def experiment(self, experiment_id: str) -> Experiment | None:
        with self._lock:
            return self._experiments.get(experiment_id)

    def resolve_experiment(self, author: str, name: str) -> Experiment | None:
        """The newest experiment by ``author`` (a name or id) called ``name``."""
        with self._lock:
            matches = [
                e
                for e in self._experiments.values()
                if e.name == name and author in (e.author, e.author_id)
            ]
            return matches[-1] if matches else None

    def experiments(self) -> list[Experiment]:
        with self._lock:
            return list(self._experiments.values())

    def delete_experiment(self, experiment_id: str) -> None:
        """Forget an experiment as Beaker does once it is deleted: gone from every listing and
        look-up (its jobs and tasks with it)."""
        with self._lock:
            del self._experiments[experiment_id]
            for index in (self._by_job, self._by_task):
                for key in [k for k, v in index.items() if v == experiment_id]:
                    del index[key]

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
