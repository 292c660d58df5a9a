"""What a test feeds the fake about running jobs (metrics per task, log lines per job) and what
the fake counts about lifecycle calls (restarts and cancels per experiment)."""

from __future__ import annotations

import threading
import time
from collections import Counter
from collections.abc import Iterable
from typing import Any


class Telemetry:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._changed = threading.Condition(self._lock)
        self._metrics: dict[str, dict[str, Any]] = {}
        self._logs: dict[str, list[tuple[int, bytes]]] = {}
        self.restarts: Counter[str] = Counter()
        self.cancels: Counter[str] = Counter()

    # Counters (by experiment id), bumped by the servicer only after a change commits.

    def count_restart(self, experiment_id: str) -> None:
        with self._lock:
            self.restarts[experiment_id] += 1

    def count_cancel(self, experiment_id: str) -> None:
        with self._lock:
            self.cancels[experiment_id] += 1

    # Metrics, by task id.

    def set_metrics(self, task_id: str, metrics: dict[str, Any]) -> None:
        with self._lock:
            self._metrics[task_id] = dict(metrics)

    def metrics(self, task_id: str) -> dict[str, Any]:
        with self._lock:
            return dict(self._metrics.get(task_id, {}))

    # Logs, by job id: (unix nanoseconds, bytes) with strictly increasing timestamps.

    def add_logs(self, job_id: str, lines: Iterable[str | bytes], replace: bool) -> None:
        with self._changed:
            log = [] if replace else self._logs.get(job_id, [])
            last = log[-1][0] if log else 0
            for line in lines:
                last = max(time.time_ns(), last + 1000)  # 1 µs apart at least
                log.append((last, line.encode() if isinstance(line, str) else line))
            self._logs[job_id] = log
            self._changed.notify_all()

    def logs(self, job_id: str, since_ns: int = 0) -> list[tuple[int, bytes]]:
        with self._lock:
            return [entry for entry in self._logs.get(job_id, []) if entry[0] >= since_ns]

    def wait_for_logs(self, timeout: float) -> None:
        """Block until some log changes or ``timeout`` passes (for following streams)."""
        with self._changed:
            self._changed.wait(timeout)
