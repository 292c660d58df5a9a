"""Immutable records the fake Beaker keeps: users, workspaces, experiments, jobs and groups."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

JOB_STATUSES = ("queued", "running", "succeeded", "failed", "canceled")
FINAL_STATUSES = frozenset({"succeeded", "failed", "canceled"})
RESTARTABLE_STATUSES = frozenset({"failed", "canceled"})


def overall_status(statuses: list[str]) -> str:
    """An experiment's status from its current jobs': queued/running while any job is not
    final (running if any runs), else failed, canceled or succeeded in that order."""
    live = [s for s in statuses if s not in FINAL_STATUSES]
    if live:
        return "running" if "running" in live else "queued"
    for status in ("failed", "canceled"):
        if status in statuses:
            return status
    return "succeeded"


@dataclass(frozen=True)
class UserRecord:
    id: str
    name: str


@dataclass(frozen=True)
class WorkspaceRecord:
    id: str
    org: str
    short_name: str
    org_id: str
    created: float
    maximum_priority: str = ""
    """The highest job priority it accepts ("": not capped)."""

    @property
    def full_name(self) -> str:
        return f"{self.org}/{self.short_name}"


@dataclass(frozen=True)
class TaskRecord:
    id: str
    name: str
    spec: str  # the task's JSON object, re-serialised from the posted body
    replicas: int = 1
    spec_name: str = ""
    """The name of the spec task it runs (its own name may differ: one replica of it)."""
    group: str = ""
    """Its replica group, when the spec task's replicas are tasks of their own; "" otherwise."""
    rank: int = 0
    """Its replica's rank in `group`."""

    @property
    def ranks(self) -> range:
        """The replicas this task runs: one job each per attempt."""
        return range(self.rank, self.rank + 1) if self.group else range(self.replicas)


@dataclass(frozen=True)
class JobRecord:
    """One run of one replica of a task. ``attempt`` is 0, then 1 after the first restart."""

    id: str
    task_id: str
    replica: int
    replicas: int
    attempt: int
    created: float
    status: str = "queued"
    exit_code: int | None = None
    status_changed: float = 0.0
    started: float | None = None
    """When it started running (None: never): kept through later statuses, as Beaker keeps
    `status.started`; a job moved straight to succeeded or failed started then."""
    canceled_code: str = ""
    """Why it was canceled, as beaker-py's `BeakerCancelationCode` names it (`manual`,
    `system_preemption`, `timeout`, ...); "" unless canceled."""
    canceled_for: str = ""
    """Beaker's words for that cancel."""
    failed_scheduling_message: str = ""
    """Why Beaker cannot place it (queued), or could not (canceled `impossible_to_schedule`)."""
    retry_ancestor: str = ""
    """The job it resumes (Beaker's `retry_ancestor_id`): the preempted job an auto-resume
    replaced; "" for a first attempt or a restart."""

    @property
    def finalized(self) -> bool:
        return self.status in FINAL_STATUSES


@dataclass(frozen=True)
class Experiment:
    """One created experiment, as a test sees it. ``spec`` is the body exactly as posted."""

    seq: int
    id: str
    name: str
    workspace: str  # full name, e.g. "ai2/sweeps-test"
    workspace_id: str
    author: str
    author_id: str
    description: str
    spec_json: str
    tasks: tuple[TaskRecord, ...]
    created: float
    jobs: tuple[JobRecord, ...] = ()  # every job ever, in creation order
    status: str = "queued"
    status_changed: float = 0.0

    @property
    def spec(self) -> dict[str, Any]:
        """A fresh copy of the posted spec."""
        value: dict[str, Any] = json.loads(self.spec_json)
        return value

    @property
    def full_name(self) -> str:
        return f"{self.author}/{self.name}"

    @property
    def finalized(self) -> bool:
        return self.status in FINAL_STATUSES

    def task(self, task_id: str) -> TaskRecord:
        return next(t for t in self.tasks if t.id == task_id)

    def current_jobs(self, task_id: str | None = None) -> list[JobRecord]:
        """The latest attempt's jobs (one per replica) of every task, or of one task."""
        out: list[JobRecord] = []
        for task in self.tasks:
            if task_id is not None and task.id != task_id:
                continue
            jobs = [j for j in self.jobs if j.task_id == task.id]
            last = max(j.attempt for j in jobs)
            out.extend(j for j in jobs if j.attempt == last)
        return out

    def task_status(self, task_id: str) -> str:
        return overall_status([j.status for j in self.current_jobs(task_id)])

    @property
    def env_vars(self) -> dict[str, str]:
        """Env vars of the first task: literal values, or ``secret:NAME`` for secret refs."""
        first = json.loads(self.tasks[0].spec) if self.tasks else {}
        out: dict[str, str] = {}
        for var in first.get("envVars") or []:
            if var.get("secret") is not None:
                out[var["name"]] = f"secret:{var['secret']}"
            else:
                out[var["name"]] = str(var.get("value", ""))
        return out


@dataclass(frozen=True)
class GroupRecord:
    id: str
    name: str
    description: str
    workspace_id: str
    author: UserRecord
    experiment_ids: tuple[str, ...]
    created: float
    modified: float
    archived: bool = False

    @property
    def full_name(self) -> str:
        return f"{self.author.name}/{self.name}"


class ApiError(Exception):
    """A request the fake rejects the way Beaker would: an HTTP status and a message."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
