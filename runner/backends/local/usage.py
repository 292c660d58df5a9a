"""GPU time a local run held (`Backend.usage`): its wall time × the GPUs its spec declared.

A run's replicas are processes on this machine, started and ended together by its supervisor,
so each attempt (the run now, and each earlier one a restart archived) counts from its start to
its end (to now while it runs) × the GPUs every replica declared, whatever this machine has.
"""

from __future__ import annotations

from runner.backends import Usage
from runner.backends.local.rundir import RunDir, elapsed_seconds


def run_usage(run: RunDir) -> Usage | None:
    """The run's usage over its attempts; None when it never started here."""
    read = [RunDir(p).read() for p in run.attempts()] + [run.read()]
    states = [s for s in read if s is not None]
    if not states:
        return None
    total = 0.0
    for state in states:
        seconds = elapsed_seconds(state.started_at, state.finished_at) or 0.0
        total += seconds * sum(r.gpus for r in state.replicas)
    return Usage(total, sum(len(s.replicas) for s in states))
