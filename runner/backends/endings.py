"""Why an experiment ended, in the port's words (`Ended`, on `runner.backends.Experiment`): a
preemption is not a failure and a timeout is not a crash. Each adapter maps its own reasons onto
`EndCause` in one table (Beaker: `runner.backends.beaker.states.CAUSES`)."""

from __future__ import annotations

from dataclasses import dataclass

from runner.core.values import StrEnum


class EndCause(StrEnum):
    """What ended an experiment (or, for one running again, its latest attempt that ended)."""

    SUCCEEDED = "succeeded"
    FAILED = "failed"
    """The run failed: it exited non-zero (`Experiment.exit_code`), or a task beside it did."""
    TIMED_OUT = "timed-out"
    """It ran past its task's timeout and was stopped."""
    IDLE = "idle"
    """The platform stopped it for holding its machines without using them."""
    PREEMPTED = "preempted"
    """The platform took its machines for other work (a higher priority, maintenance)."""
    NODE_FAILURE = "node-failure"
    """Its machine failed, went away or failed a health check."""
    UNSCHEDULABLE = "unschedulable"
    """It could never be placed as asked (`Ended.text` says why)."""
    CANCELED = "canceled"
    """A person canceled it (`cancel`, Beaker's UI), or the platform gave no reason."""

    @property
    def resumable(self) -> bool:
        """Ended by the platform, not by the run: the same run again, as it is, may succeed."""
        return self in (EndCause.PREEMPTED, EndCause.NODE_FAILURE)

    @property
    def counts_as_failure(self) -> bool:
        """The run's own failure (the same run again would likely end the same way): it counts
        toward `max_restarts`, ranks as failed, is a failed trial."""
        return self in (EndCause.FAILED, EndCause.TIMED_OUT, EndCause.IDLE)

    @property
    def by_platform(self) -> bool:
        """Neither the run nor a person ended it, but where it ran (or could not run)."""
        return self in (EndCause.PREEMPTED, EndCause.NODE_FAILURE, EndCause.UNSCHEDULABLE)


@dataclass(frozen=True)
class Ended:
    """Why an experiment ended. On one queued or running again (the platform resumed it, or a
    restart), why its latest attempt that ended did: `PREEMPTED` on a running experiment is
    "preempted, resumed by the platform"."""

    cause: EndCause
    text: str = ""
    """The platform's own words (Beaker: the job's `canceled_for`, its scheduling failure, or
    its status message), "" when it gave none."""
    timeout: float | None = None
    """Its task's timeout in seconds, where the spec set one."""
    preemptions: int | None = None
    """How many times it was preempted (the replicas of one attempt count once); None where the
    backend did not read it (see each adapter's `results`)."""
