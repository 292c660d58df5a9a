"""Running a CLI command in a thread while a test drives the backend, with every wait bounded."""

from __future__ import annotations

import io
import threading
import time
from collections.abc import Callable
from pathlib import Path

from runner.cli import main

WAIT = 60.0
"""Seconds any wait may take before the test fails instead of hanging (not a speed claim)."""


class Sink(io.TextIOBase):
    """A stdout that a command writes from its thread while the test reads it."""

    def __init__(self) -> None:
        self._parts: list[str] = []
        self._lock = threading.Lock()

    def write(self, text: str) -> int:
        with self._lock:
            self._parts.append(text)
        return len(text)

    def text(self) -> str:
        with self._lock:
            return "".join(self._parts)


def wait_for(condition: Callable[[], bool], what: str, timeout: float = WAIT) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"gave up after {timeout:.0f} s waiting for {what}")
        time.sleep(0.02)


class Command:
    """`python -m runner -C root ARGS...` in a daemon thread (it cannot outlive the tests)."""

    def __init__(self, root: Path, *args: str) -> None:
        self._code: list[int] = []
        self._thread = threading.Thread(
            target=lambda: self._code.append(main(["-C", str(root), *args])), daemon=True
        )
        self._thread.start()

    @property
    def running(self) -> bool:
        return self._thread.is_alive()

    def join(self, timeout: float = WAIT) -> int:
        self._thread.join(timeout)
        assert not self._thread.is_alive(), f"the command still runs after {timeout:.0f} s"
        return self._code[0]
