"""The processes of a local run's replicas, as its state file records them: a pid is trusted
only while its recorded start time proves it is still the same process (not one that reused
the pid), so `cancel` and a resumed run never signal a stranger."""

from __future__ import annotations

import contextlib
import os
import signal
from pathlib import Path

from runner.backends.local.rundir import STOP_ALL, RunDir, RunState
from runner.backends.local.states import seen


def process_started(pid: int) -> int | None:
    """A process's start time in clock ticks since boot (Linux /proc), None if unknown or gone."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return int(stat.rsplit(")", 1)[1].split()[19])


def _recorded_alive(state: RunState) -> list[int]:
    """The pids of the replicas still running as recorded: a pid is only trusted when its
    recorded start time proves it is still the same process (not one that reused the pid)."""
    return [
        r.pid
        for r in state.replicas
        if r.pid is not None
        and r.exit_code is None
        and r.pid_started is not None
        and process_started(r.pid) == r.pid_started
    ]


def _signal_groups(pids: list[int], sig: signal.Signals) -> list[int]:
    sent = []
    for pid in pids:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(pid, sig)
            sent.append(pid)
    return sent


def stop_leftovers(state: RunState) -> list[int]:
    """Kill the replica process groups a crashed runner left running; returns their pids."""
    return _signal_groups(_recorded_alive(state), signal.SIGKILL)


def starting(state: RunState) -> bool:
    """Whether a replica of the run has neither a recorded pid nor an exit code: its runner is
    still starting it."""
    return any(r.pid is None and r.exit_code is None for r in state.replicas)


def terminate(state: RunState) -> list[int]:
    """SIGTERM to the process group of each replica still running (`cancel`); their pids."""
    return _signal_groups(_recorded_alive(state), signal.SIGTERM)


def cancel_run(run: RunDir, key: str | None) -> bool:
    """Stop the replicas of a run another runner is running now (SIGTERM to each process group
    whose recorded start time proves it is still that replica, or a request to stop them all
    while its runner is still starting them); that runner records how they ended. Whether it
    was canceled: at least one replica signalled (a pid now held by another process, or without
    a start time, is left alone)."""
    state, live = seen(run)
    if state is None or not live or state.key != key:
        return False
    run.request_cancel()  # first: its runner then records `canceled`, not `failed`
    signalled = terminate(state) or ([STOP_ALL] if starting(state) else [])
    if signalled:
        run.request_cancel(signalled)  # its runner stops any replica started since
        return True
    run.cancel_file.unlink(missing_ok=True)
    return False
