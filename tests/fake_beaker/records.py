"""Immutable records the fake Beaker keeps: users, workspaces, experiments and their jobs."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

JOB_STATUSES = ("queued", "running", "succeeded", "failed", "canceled")
FINAL_STATUSES = frozenset({"succeeded", "failed", "canceled"})


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

    @property
    def full_name(self) -> str:
        return f"{self.org}/{self.short_name}"


@dataclass(frozen=True)
class TaskRecord:
    id: str
    name: str
    job_id: str
    spec: str  # the task's JSON object, re-serialised from the posted body


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
    status: str = "queued"
    exit_code: int | None = None
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


class ApiError(Exception):
    """A request the fake rejects the way Beaker would: an HTTP status and a message."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
