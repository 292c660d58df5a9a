"""Beaker's words in the port's: a workload's status as an `ExperimentState` (`STATES`), and a
job's cancelation code as an `EndCause` (`CAUSES`): the one table each is read from."""

from __future__ import annotations

from runner.backends import EndCause, ExperimentState

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

CAUSES: dict[str, EndCause] = {
    "CANCELATION_CODE_UNSPECIFIED": EndCause.CANCELED,  # no reason given: not the run's fault
    "CANCELATION_CODE_SYSTEM_PREEMPTION": EndCause.PREEMPTED,
    "CANCELATION_CODE_USER_PREEMPTION": EndCause.PREEMPTED,
    "CANCELATION_CODE_IDLE": EndCause.IDLE,
    "CANCELATION_CODE_MANUAL": EndCause.CANCELED,
    "CANCELATION_CODE_TIMEOUT": EndCause.TIMED_OUT,
    "CANCELATION_CODE_NODE_UNAVAILABLE": EndCause.NODE_FAILURE,
    "CANCELATION_CODE_IMPOSSIBLE_TO_SCHEDULE": EndCause.UNSCHEDULABLE,
    "CANCELATION_CODE_SIBLING_TASK_FAILED": EndCause.FAILED,
    "CANCELATION_CODE_SIBLING_TASK_PREEMPTION": EndCause.PREEMPTED,
    "CANCELATION_CODE_HEALTHCHECK_FAILED": EndCause.NODE_FAILURE,
    "CANCELATION_CODE_SIBLING_TASK_RETRY": EndCause.FAILED,  # a task beside it failed, retried
    "CANCELATION_CODE_NODE_UNHEALTHY": EndCause.NODE_FAILURE,
}
"""Why Beaker canceled a job (its `canceled_code`), in the port's words."""

SIBLINGS = frozenset(
    {
        "CANCELATION_CODE_SIBLING_TASK_FAILED",
        "CANCELATION_CODE_SIBLING_TASK_PREEMPTION",
        "CANCELATION_CODE_SIBLING_TASK_RETRY",
    }
)
"""Codes of a job canceled because of another job of its experiment: that job says why."""
