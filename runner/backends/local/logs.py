"""A local run's logs: one file per replica in its run directory, read or followed."""

from __future__ import annotations

import collections
import time
from collections.abc import Iterator
from pathlib import Path

from runner.backends import LogQuery, NotStarted, Rejected
from runner.backends.local.rundir import RunDir, RunState

FOLLOW_POLL = 0.2
"""Seconds between looks at a followed log for new lines."""


def log_file(run: RunDir, state: RunState, query: LogQuery) -> Path:
    """The log of the asked replica of the asked task (default: the first task)."""
    tasks = list(dict.fromkeys(r.task for r in state.replicas))
    task = query.task if query.task is not None else (tasks[0] if tasks else None)
    if task not in tasks:
        raise Rejected(
            f"{state.experiment} has no task {query.task!r} (its tasks: {', '.join(tasks)})"
        )
    ranks = sorted(r.rank for r in state.replicas if r.task == task)
    replica = next((r for r in state.replicas if r.task == task and r.rank == query.replica), None)
    if replica is None:
        raise Rejected(
            f"{state.experiment} task {task} has {len(ranks)} replica(s): choose --replica 0 to"
            f" {len(ranks) - 1}"
        )
    path = run.path / replica.log
    if not path.exists():
        raise NotStarted(f"{state.experiment} task {task} replica {query.replica} has not started")
    return path


def read(run: RunDir, query: LogQuery) -> Iterator[str]:
    """The lines of one replica's log; with `follow`, until the run has finished."""
    state = run.read()
    if state is None:
        raise NotStarted(f"{run.path.name} has not started on this machine ({run.path} is empty)")
    path = log_file(run, state, query)
    return _lines(run, path, query)


def _lines(run: RunDir, path: Path, query: LogQuery) -> Iterator[str]:
    with path.open(encoding="utf-8", errors="replace") as handle:
        first = handle.readlines()
        yield from collections.deque(first, maxlen=query.tail) if query.tail else first
        if not query.follow:
            return
        partial = ""
        while True:
            state = run.read()
            # Decided before reading, so the lines written before the run ended are all read.
            done = state is None or state.finished or not run.supervised()
            chunk = handle.read()
            if chunk:
                lines = (partial + chunk).splitlines(keepends=True)
                partial = "" if lines[-1].endswith("\n") else lines.pop()
                yield from lines
            if done:
                if partial:
                    yield partial
                return
            time.sleep(FOLLOW_POLL)
