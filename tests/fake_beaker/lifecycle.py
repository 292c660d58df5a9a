"""How an experiment's jobs move: statuses a test sets, restarts and cancels.

Pure functions from one immutable Experiment to the next; State.update_experiment applies them
atomically. A restart adds a new attempt (one new job per replica) for each failed or canceled
task and keeps the old jobs, as Beaker does.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable

from .records import (
    JOB_STATUSES,
    RESTARTABLE_STATUSES,
    ApiError,
    Experiment,
    JobRecord,
    overall_status,
)

Times = tuple[float | None, float | None]
"""(when jobs started, when their new status began): each None for now."""


def _with_jobs(record: Experiment, jobs: tuple[JobRecord, ...], now: float) -> Experiment:
    current = {j.id for t in record.tasks for j in _current(jobs, t.id)}
    status = overall_status([j.status for j in jobs if j.id in current])
    changed = now if status != record.status else record.status_changed
    return dataclasses.replace(record, jobs=jobs, status=status, status_changed=changed)


def _current(jobs: tuple[JobRecord, ...], task_id: str) -> list[JobRecord]:
    mine = [j for j in jobs if j.task_id == task_id]
    last = max(j.attempt for j in mine)
    return [j for j in mine if j.attempt == last]


RAN = ("running", "succeeded", "failed")
"""Statuses of a job that has started."""


MANUAL = "manual"
"""The cancelation code of a job a person canceled (CancelWorkloads, or a test's `canceled`)."""


def set_status(
    status: str,
    exit_code: int | None,
    job_ids: set[str] | None = None,
    at: Times = (None, None),
    why: tuple[str, str] = (MANUAL, ""),
) -> Callable[[Experiment], Experiment]:
    """Move the current jobs (of every task, or those of ``job_ids``) to ``status``; ``at``:
    (when they started, when this status began), each None for now (a job that has started
    keeps its start); ``why``: a cancel's (code, text)."""
    if status not in JOB_STATUSES:
        raise ValueError(f"status must be one of {JOB_STATUSES}, got {status!r}")
    if exit_code is None and status in ("succeeded", "failed"):
        exit_code = 0 if status == "succeeded" else 1
    code, text = why if status == "canceled" else ("", "")

    def change(record: Experiment) -> Experiment:
        started, now = at[0], at[1] if at[1] is not None else time.time()
        current = {j.id for j in record.current_jobs()}
        targets = current if job_ids is None else current & job_ids
        jobs = tuple(
            dataclasses.replace(
                j,
                status=status,
                exit_code=exit_code,
                status_changed=now,
                started=started or j.started or (now if status in RAN else None),
                canceled_code=code,
                canceled_for=text or (f"canceled ({code.replace('_', ' ')})" if code else ""),
            )
            if j.id in targets
            else j
            for j in record.jobs
        )
        return _with_jobs(record, jobs, now)

    return change


def cancel_jobs(
    code: str, text: str, job_ids: set[str], *, scheduling: str = ""
) -> Callable[[Experiment], Experiment]:
    """Cancel those of ``job_ids`` that are current and not finished, as Beaker does for
    ``code`` (a `BeakerCancelationCode` name), saying ``text``; ``scheduling``: why it could not
    be placed (`failed_scheduling_message`)."""

    def change(record: Experiment) -> Experiment:
        now = time.time()
        live = {j.id for j in record.current_jobs() if not j.finalized} & job_ids
        jobs = tuple(
            dataclasses.replace(
                j,
                status="canceled",
                status_changed=now,
                canceled_code=code,
                canceled_for=text,
                failed_scheduling_message=scheduling or j.failed_scheduling_message,
            )
            if j.id in live
            else j
            for j in record.jobs
        )
        return _with_jobs(record, jobs, now)

    return change


def cannot_place(message: str, job_ids: set[str]) -> Callable[[Experiment], Experiment]:
    """The queued ones of ``job_ids`` say why Beaker cannot place them yet, and stay queued."""

    def change(record: Experiment) -> Experiment:
        queued = {j.id for j in record.current_jobs() if j.status == "queued"} & job_ids
        jobs = tuple(
            dataclasses.replace(j, failed_scheduling_message=message) if j.id in queued else j
            for j in record.jobs
        )
        return _with_jobs(record, jobs, time.time())

    return change


def resume(new_id: Callable[[], str], task_ids: set[str]) -> Callable[[Experiment], Experiment]:
    """Beaker's auto-resume: a new queued attempt of each of ``task_ids`` whose current jobs
    ended, each new job naming the one of its replica it replaces (`retry_ancestor_id`)."""

    def change(record: Experiment) -> Experiment:
        now, added = time.time(), []
        for task in record.tasks:
            current = record.current_jobs(task.id)
            if task.id not in task_ids or not all(j.finalized for j in current):
                continue
            before = {j.replica: j.id for j in current}
            for replica in task.ranks:
                job = JobRecord(
                    new_id(), task.id, replica, task.replicas, current[0].attempt + 1, now
                )
                added.append(
                    dataclasses.replace(job, status_changed=now, retry_ancestor=before[replica])
                )
        return _with_jobs(record, (*record.jobs, *added), now)

    return change


def restart(new_id: Callable[[], str]) -> Callable[[Experiment], Experiment]:
    """RestartExperimentTasks: a new queued attempt for each failed or canceled task.

    Raises ApiError(412) while the experiment still runs or when no task failed or was
    canceled (Beaker refuses both; the fake answers FAILED_PRECONDITION).
    """

    def change(record: Experiment) -> Experiment:
        if not record.finalized:
            raise ApiError(412, f"experiment {record.id} is {record.status}, not finished")
        restart_tasks = [
            t
            for t in record.tasks
            if any(j.status in RESTARTABLE_STATUSES for j in record.current_jobs(t.id))
        ]
        if not restart_tasks:
            raise ApiError(412, f"experiment {record.id} has no failed or canceled tasks")
        now = time.time()
        added = []
        for task in restart_tasks:
            attempt = record.current_jobs(task.id)[0].attempt + 1
            for replica in task.ranks:
                job = JobRecord(new_id(), task.id, replica, task.replicas, attempt, now)
                added.append(dataclasses.replace(job, status_changed=now))
        return _with_jobs(record, (*record.jobs, *added), now)

    return change


def cancel(by: str) -> Callable[[Experiment], Experiment]:
    """CancelWorkloads by user ``by``: queued and running jobs become canceled (`manual`);
    finished ones stay."""

    def change(record: Experiment) -> Experiment:
        now = time.time()
        jobs = tuple(
            dataclasses.replace(
                j,
                status="canceled",
                status_changed=now,
                canceled_code=MANUAL,
                canceled_for=f"canceled by {by}",
            )
            if not j.finalized  # only current jobs can be unfinished
            else j
            for j in record.jobs
        )
        return _with_jobs(record, jobs, now)

    return change
