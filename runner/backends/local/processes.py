"""The processes of a local run's replicas, as its state file records them: a pid is trusted
only while its recorded start time proves it is still the same process (not one that reused
the pid), so `cancel` and a resumed run never signal a stranger."""

from __future__ import annotations

import contextlib
import os
import signal
from pathlib import Path

from runner.backends.local.rundir import RunState


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
