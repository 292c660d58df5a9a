"""GPU time an experiment's jobs held, from Beaker's job listing (`Backend.usage`).

Beaker keeps one job per replica of each task, and a new one for each restart; each job says
when it started and exited and which GPUs it was assigned. An experiment's GPU-seconds are the sum
over every job that started of (its end − started) × its GPUs (those assigned, else those its
container asked for), a job still running counting up to now. Its end is the first of its exited,
failed, finalized and canceled stamps; a job that ended without any counts up to its start (never
to now: a finished point's GPU-hours must not grow look after look). beaker-py lists jobs by task only
(`job.list(task=…)`), so an experiment costs one paged listing per task: 8 experiments are
listed at once.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor

from beaker import beaker_pb2 as pb2

from runner.backends import ExperimentState, Usage
from runner.backends.beaker.client import Client
from runner.backends.beaker.duplicates import Call
from runner.backends.beaker.states import STATES

AT_ONCE = 8
"""Experiments whose jobs are listed at the same time."""


def _seconds(stamp: object) -> float:
    return float(stamp.ToNanoseconds()) / 1e9  # type: ignore[attr-defined]


def job_gpu_seconds(job: pb2.Job, now: float) -> float | None:
    """The job's GPU-seconds; None for one that never started."""
    status = job.status
    if not status.HasField("started"):
        return None
    stamps = (status.exited, status.failed, status.finalized, status.canceled)
    ends = [_seconds(s) for s in stamps if s.ToNanoseconds()]
    state = STATES.get(pb2.WorkloadStatus.Name(status.status), ExperimentState.UNKNOWN)
    running = state.live or state is ExperimentState.UNKNOWN
    end = min(ends) if ends else now if running else _seconds(status.started)
    gpus = len(job.assignment_details.resource_assignment.gpus) or int(
        job.container_spec.resource_request.gpu_count
    )
    return max(0.0, end - _seconds(status.started)) * gpus


def experiment_usage(client: Client, workload: pb2.Workload) -> Usage:
    """Every job of every task of the experiment (one listing per task)."""
    now, total, started = time.time(), 0.0, 0
    org = client.resolved_org()
    for task in workload.experiment.tasks:
        for job in client.job.list(org=org, task=task):
            seconds = job_gpu_seconds(job, now)
            if seconds is not None:
                total, started = total + seconds, started + 1
    return Usage(total, started)


def usages(
    client: Client, workloads: Sequence[pb2.Workload], call: Call[Usage]
) -> Mapping[str, Usage]:
    """Each workload's usage, by experiment id, AT_ONCE at a time."""

    def one(workload: pb2.Workload) -> Usage:
        name = workload.experiment.name or workload.experiment.id
        return call(f"jobs of {name}", lambda: experiment_usage(client, workload))

    with ThreadPoolExecutor(max_workers=AT_ONCE) as pool:
        found = list(pool.map(one, workloads))
    return {w.experiment.id: u for w, u in zip(workloads, found, strict=True)}
