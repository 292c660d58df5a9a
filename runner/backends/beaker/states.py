"""Beaker's workload statuses in the port's words (`runner.backends.ExperimentState`): the one
table the adapter reads an experiment's state from."""

from __future__ import annotations

from runner.backends import ExperimentState

STATES: dict[str, ExperimentState] = {
    "STATUS_SUBMITTED": ExperimentState.QUEUED,
    "STATUS_QUEUED": ExperimentState.QUEUED,
    "STATUS_READY_TO_START": ExperimentState.QUEUED,
    "STATUS_INITIALIZING": ExperimentState.RUNNING,
    "STATUS_RUNNING": ExperimentState.RUNNING,
    "STATUS_STOPPING": ExperimentState.RUNNING,
    "STATUS_UPLOADING_RESULTS": ExperimentState.RUNNING,
    "STATUS_SUCCEEDED": ExperimentState.SUCCEEDED,
    "STATUS_FAILED": ExperimentState.FAILED,
    "STATUS_CANCELED": ExperimentState.CANCELED,
}
