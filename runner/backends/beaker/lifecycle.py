"""Acting on experiments that exist: restart their failed tasks, cancel them, read job logs.

beaker-py never retries a mutation (RestartExperimentTasks, CancelWorkloads), and a reply can be
lost after Beaker committed it. So a mutation is retried only after the experiment has been
looked up again: a restart took effect when the experiment has a new latest job (a restarted
experiment is queued again with new jobs); a cancel took effect when it is no longer queued or
running. Nothing is ever sent twice for a change that was already made.

Every call goes through the backend's `Gateway`: look-ups as reads (retried there), the
mutations and a log stream's reads once each; the retry loops here stop at its deadline.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any

from beaker import BeakerSortOrder
from beaker import beaker_pb2 as pb2

from runner.backends import LogQuery, NotStarted, Rejected, Transient
from runner.backends.beaker.client import Client
from runner.backends.beaker.gateway import Gateway, Patience
from runner.core import retry
from runner.core.retry import RetryPolicy

CANCELED = "STATUS_CANCELED"
RESTARTABLE = ("STATUS_FAILED", CANCELED)
LIVE = frozenset(
    {
        "STATUS_SUBMITTED",
        "STATUS_QUEUED",
        "STATUS_READY_TO_START",
        "STATUS_INITIALIZING",
        "STATUS_RUNNING",
        "STATUS_STOPPING",
        "STATUS_UPLOADING_RESULTS",
    }
)
CANCEL_BATCH = 100
"""Workloads per CancelWorkloads request."""


def status_name(workload: pb2.Workload) -> str:
    return str(pb2.WorkloadStatus.Name(workload.status))


def latest_job(client: Client, task: pb2.Task) -> pb2.Job | None:
    """beaker-py's `workload.get_latest_job`, in the organization resolved once."""
    jobs = client.job.list(
        org=client.resolved_org(),
        task=task,
        sort_field="created",
        sort_order=BeakerSortOrder.descending,
        limit=1,
    )
    return next(iter(jobs), None)


def rank(client: Client, task_id: str) -> int:
    """The replica rank of a task's latest job (0 for a task without replicas)."""
    job = latest_job(client, pb2.Task(id=task_id))
    return 0 if job is None else int(job.system_details.replica_group_details.rank)


def _latest_jobs(gateway: Gateway, workload: pb2.Workload) -> tuple[str, ...]:
    """The id of each task's latest job: a restart adds new ones, nothing else does."""
    client = gateway.client

    def ids() -> tuple[str, ...]:
        jobs = (latest_job(client, t) for t in workload.experiment.tasks)
        return tuple(job.id if job is not None else "" for job in jobs)

    return gateway.read(f"jobs of {workload.experiment.name}", ids)


def restart(
    gateway: Gateway,
    experiment_id: str,
    policy: RetryPolicy,
    since: str = "",
    intent: Callable[[str], None] = lambda token: None,
) -> pb2.Workload | None:
    """Restart the failed or canceled tasks of one experiment, exactly once.

    None when it is not failed or canceled now (nothing to restart), or when another runner
    restarted it meanwhile. Every retry first checks whether the last request took effect.
    The job generation (each task's latest job) goes to `intent` before the request; with
    `since`, a generation that moved on since means the interrupted restart took effect.
    """

    client = gateway.client

    def get() -> pb2.Workload:
        return gateway.read(f"look up {experiment_id}", lambda: client.workload.get(experiment_id))

    workload = get()
    before = _latest_jobs(gateway, workload)
    if since and ",".join(before) != since:
        return workload  # restarted by the run that recorded `since`, before it was stopped
    if status_name(workload) not in RESTARTABLE:
        return None
    intent(",".join(before))
    what = f"restart {workload.experiment.name}"
    sent = False

    def attempt() -> pb2.Workload | None:
        nonlocal sent
        if sent:  # the last request may have been committed with its reply lost
            now = get()
            if _latest_jobs(gateway, now) != before:
                return now
        sent = True
        try:
            return gateway.once(what, lambda: client.experiment.restart_tasks(workload))
        except Rejected:
            if _latest_jobs(gateway, get()) != before:
                return None  # restarted by someone else between our look-up and our request
            raise

    result: pb2.Workload | None = retry.retrying(policy, gateway.left, Transient)(attempt)
    return result


def cancel(
    gateway: Gateway,
    workloads: Sequence[pb2.Workload],
    refresh: Callable[[], Mapping[str, pb2.Workload]],
    policy: RetryPolicy,
) -> list[str]:
    """Cancel the queued or running ones among workloads, in bulk, exactly once; their ids.

    After a failed request the workloads are listed again (`refresh`: by experiment id) and only
    those still live are sent again. Of the others, only those whose status says canceled count
    as canceled by this call (the failed request may have been committed); one that finished on
    its own meanwhile (succeeded or failed) is left out, never claimed.
    """
    live = {w.experiment.id: w for w in workloads if status_name(w) in LIVE}
    canceled: list[str] = []
    sent = False

    def attempt() -> None:
        nonlocal sent, live
        if sent:
            now = refresh()
            for workload_id in list(live):
                fresh = now.get(workload_id)
                if fresh is None or status_name(fresh) in LIVE:
                    continue
                if status_name(fresh) == CANCELED:
                    canceled.append(workload_id)
                del live[workload_id]
        while live:
            batch = list(live.values())[:CANCEL_BATCH]
            sent = True
            what = f"cancel {len(batch)} experiment(s)"
            gateway.once(what, functools.partial(_cancel, gateway.client, batch))
            for workload in batch:
                canceled.append(workload.experiment.id)
                del live[workload.experiment.id]

    retry.retrying(policy, gateway.left, Transient)(attempt)
    return canceled


def _cancel(client: Client, batch: Sequence[pb2.Workload]) -> list[str]:
    return list(client.workload.cancel(*batch))


def _rank(job: pb2.Job) -> int:
    return int(job.system_details.replica_group_details.rank)


def replica_job(
    gateway: Gateway, workload: pb2.Workload, query: LogQuery, spec_tasks: Sequence[str]
) -> pb2.Job:
    """The latest job of the asked replica of the asked task (`spec_tasks`: the manifest's task
    names, the first by default); NotStarted before it runs.

    A task with `replicas: N` may be N tasks on Beaker, one per replica (as gantry's `logs
    --replica` and its per-replica status show), or one task with N jobs. Either way a replica
    is found by the rank on its job, never by a task's name or place in the list: the tasks of
    a manifest task are the one of its name and those in the same replica group."""
    name = workload.experiment.name
    tasks = list(workload.experiment.tasks)
    if not tasks:
        raise NotStarted(f"{name} has no tasks yet")
    wanted = query.task or spec_tasks[0]
    if wanted not in spec_tasks:
        raise Rejected(f"{name} has no task {wanted!r} (its tasks: {', '.join(spec_tasks)})")
    client = gateway.client

    def jobs_of(task: pb2.Task) -> list[pb2.Job]:
        def listed() -> list[pb2.Job]:
            return list(client.job.list(org=client.resolved_org(), task=task))

        return gateway.read(f"jobs of {name}", listed)

    newest = {t.id: jobs_of(t) for t in tasks}
    mine = tasks if len(spec_tasks) == 1 else _tasks_of(tasks, newest, wanted)
    jobs = [j for t in mine for j in newest[t.id]]  # each task's newest first
    if not jobs:
        raise NotStarted(f"{name} task {wanted}: no job has been scheduled yet (queued)")
    size = max(max(1, int(j.system_details.replica_group_details.size)) for j in jobs)
    if not 0 <= query.replica < size:
        raise Rejected(
            f"{name} task {wanted} has {size} replica(s): choose --replica 0 to {size - 1}"
        )
    job = next((j for j in jobs if _rank(j) == query.replica), None)
    where = f"{name} task {wanted} replica {query.replica}"
    if job is None:
        raise NotStarted(f"{where}: no job has been scheduled yet (queued)")
    if not job.status.HasField("started"):
        status = pb2.WorkloadStatus.Name(job.status.status).removeprefix("STATUS_").lower()
        raise NotStarted(f"{where}: its job {job.id} has not started yet ({status})")
    return job


def _tasks_of(
    tasks: Sequence[pb2.Task], newest: Mapping[str, Sequence[pb2.Job]], wanted: str
) -> list[pb2.Task]:
    """The tasks running manifest task `wanted`: those of its name (or derived from it, as
    `wanted-<suffix>`) and every task in the same replica group as one of them."""
    named = [t for t in tasks if t.name == wanted or t.name.startswith(f"{wanted}-")]
    groups = {_group(j) for t in named for j in newest[t.id][:1]} - {""}
    return [t for t in tasks if t in named or any(_group(j) in groups for j in newest[t.id][:1])]


def _group(job: pb2.Job) -> str:
    return str(job.system_details.replica_group_details.id)


def log_lines(gateway: Gateway, job: pb2.Job, query: LogQuery) -> Iterator[str]:
    """The job's log lines, decoded. A read is one StreamJobLogs request: a stream cut off ends
    it with Transient (the gateway ends beaker-py's resuming it), never a second request. A
    followed stream (`logs --follow`) waits for its lines as long as it takes within the
    deadline, and one cut off is asked again from just after its last line (as beaker-py
    would), after a wait on the command's clock: every line once, in order."""
    what, follow = f"logs of job {job.id}", Patience.FOLLOW if query.follow else Patience.ONCE
    after: Any = None  # a protobuf Timestamp, which beaker-py puts in the request as it is
    attempt = 0
    while True:
        tail = query.tail or None if after is None else None
        asked = gateway.client.job.logs(
            job, tail_lines=tail, follow=query.follow or None, since=after
        )
        stream: Iterator[Any] = iter(asked)
        nxt = functools.partial(next, stream, None)
        try:
            while (entry := gateway.once(what, nxt, follow)) is not None:
                after, attempt = _just_after(entry.timestamp), 0
                yield entry.message.decode("utf-8", errors="replace")
            return
        except Transient as exc:
            if follow is not Patience.FOLLOW:
                raise
            attempt += 1
            gateway.pause(what, exc, attempt)


def _just_after(stamp: Any) -> Any:
    """The first moment after a log line's (a protobuf Timestamp), for a stream asked again
    from there."""
    found = type(stamp)()
    found.FromNanoseconds(stamp.ToNanoseconds() + 1)
    return found
