"""A local run as the port shows it: its state file read (and whether a live runner holds it),
and the `Experiment` that state is."""

from __future__ import annotations

from runner.backends import EndCause, Ended, Experiment, ExperimentState
from runner.backends.local.rundir import CANCELED, FAILED, RUNNING, SUCCEEDED, RunDir, RunState

ENDINGS: dict[str, EndCause] = {
    SUCCEEDED: EndCause.SUCCEEDED,
    FAILED: EndCause.FAILED,
    CANCELED: EndCause.CANCELED,
}
"""Why a finished local run ended: it exited (0 or not), or `cancel` stopped it. A run its runner
left (interrupted, or stale) has not ended: the next submit resumes it."""


def seen(run: RunDir) -> tuple[RunState | None, bool]:
    """A run's state and whether a live runner is running it right now."""
    state = run.read()
    if state is None or state.status != RUNNING:
        return state, False
    if run.supervised():
        return state, True
    state = run.read()  # it may have finished, or been taken over, since the first read
    return state, state is not None and state.status == RUNNING and run.supervised()


def as_experiment(run: RunDir, state: RunState, live: bool) -> Experiment:
    """A stale or interrupted run shows as 'canceled' (submit again resumes it)."""
    return Experiment(
        name=state.experiment,
        id=state.experiment,
        url=run.url,
        key=state.key,
        state=ExperimentState(state.status) if state.finished or live else ExperimentState.CANCELED,
        exit_code=state.exit_code if state.status in (SUCCEEDED, FAILED) else None,
        metrics=run.metrics(),
        unfinished=not (state.finished or live),
        ended=_ended(state),
    )


def _ended(state: RunState) -> Ended | None:
    cause = ENDINGS.get(state.status)
    if cause is None:
        return None
    failed = f"replica {state.cause} exited {state.exit_code}" if state.cause else ""
    return Ended(cause, failed if cause is EndCause.FAILED else "", preemptions=0)
