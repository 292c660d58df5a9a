"""GPU time a local run held (`Backend.usage`): its wall time × the GPUs its spec declared.

A run's replicas are processes on this machine, started and ended together by its supervisor,
so each attempt (the run now, and each earlier one a restart archived) counts from its start to
its end (to now while it runs) × the GPUs every replica declared, whatever this machine has.
"""

from __future__ import annotations

from pathlib import Path

from runner.backends import Usage
from runner.backends.local.rundir import STATE_FILE, RunDir, RunState, elapsed_seconds


def run_usage(run: RunDir) -> Usage | None:
    """The run's usage over its attempts; None when it never started here."""
    states = [s for s in (_state(p / STATE_FILE) for p in run.attempts()) if s is not None]
    current = run.read()
    states += [current] if current is not None else []
    if not states:
        return None
    total = 0.0
    for state in states:
        seconds = elapsed_seconds(state.started_at, state.finished_at) or 0.0
        total += seconds * sum(r.gpus for r in state.replicas)
    return Usage(total, sum(len(s.replicas) for s in states))


def _state(path: Path) -> RunState | None:
    try:
        return RunState.from_json(path.read_text(encoding="utf-8"))
    except (OSError, ValueError, TypeError):
        return None
