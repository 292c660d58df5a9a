"""Run one point's replicas as local processes to completion, as Beaker would.

Each replica is started from its argv (never through a shell), in its own process group so that
stopping it also stops whatever it spawned (torchrun's workers, say), with its output in its own
log. Replicas are polled; when one fails and its task propagates failure, its siblings get
SIGTERM, then SIGKILL after a grace period. Every change is written to the run's state file, so
a crashed runner leaves a record the next one can act on.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from runner.backends.local.processes import process_started
from runner.backends.local.rundir import (
    CANCELED,
    FAILED,
    INTERRUPTED,
    SUCCEEDED,
    RunDir,
    RunState,
    Stopping,
    run_time,
    with_replica,
)

POLL_SECONDS = 0.05
NOT_STARTED = 127
"""Exit code recorded for a replica whose program could not be started (as a shell would)."""


@dataclass(frozen=True)
class Launch:
    """One replica to start."""

    task: str
    rank: int
    argv: tuple[str, ...]
    env: Mapping[str, str]
    log: str
    propagate_failure: bool
    """One replica failing stops the other replicas of the same task."""


def exit_code(returncode: int) -> int:
    """Popen's code as a container reports it: 128 + signal number for a killed process."""
    return returncode if returncode >= 0 else 128 - returncode


class Supervisor:
    def __init__(
        self,
        run: RunDir,
        state: RunState,
        launches: Sequence[Launch],
        cwd: Path,
        stop: threading.Event,
        grace: float,
    ) -> None:
        self.run_dir, self.state, self.launches = run, state, list(launches)
        self.cwd, self.stop, self.grace = cwd, stop, grace
        self.alive: dict[int, subprocess.Popen[bytes]] = {}
        self.kill_at: dict[int, float] = {}
        self.termed: set[int] = set()
        """Replicas this runner sent SIGTERM."""

    def run(self, started: Callable[[RunState], None] = lambda state: None) -> RunState:
        """Start every replica and wait for all of them; raises Stopping when asked to stop.
        `started` is called once the state file says the run is running."""
        self.run_dir.write(self.state)
        started(self.state)
        try:
            for index, launch in enumerate(self.launches):
                if self.run_dir.cancel_signalled() or not self._start(index, launch):
                    break  # canceled, or a replica that cannot start fails the run: no more
            while self.alive:
                if self.stop.is_set():
                    self._interrupt()
                signalled = self.run_dir.cancel_signalled()
                if signalled is not None:
                    self._canceled(signalled)
                self._reap()
                self._escalate()
                self.stop.wait(POLL_SECONDS)
        except BaseException:
            for index in self.alive:  # never leave replicas running unsupervised
                self._signal(index, signal.SIGKILL)
            raise
        codes = [r.exit_code for r in self.state.replicas]
        status = SUCCEEDED if codes and all(c == 0 for c in codes) else FAILED
        if self.run_dir.cancel_requested():  # `cancel` stopped it: canceled, as on Beaker
            status = CANCELED
        code = self.state.exit_code if self.state.exit_code is not None else 0
        final = replace(self.state, status=status, finished_at=run_time(), exit_code=code)
        self._record(final)
        return final

    def _start(self, index: int, launch: Launch) -> bool:
        with open(self.run_dir.path / launch.log, "wb") as log:
            try:
                proc = subprocess.Popen(
                    launch.argv,
                    cwd=self.cwd,
                    env=dict(launch.env),
                    stdin=subprocess.DEVNULL,
                    stdout=log,
                    stderr=subprocess.STDOUT,
                    start_new_session=True,
                )
            except OSError as exc:
                log.write(f"could not start {launch.argv[0]!r}: {exc}\n".encode())
                self._exited(index, NOT_STARTED)
                return False
        self.alive[index] = proc
        self._record(
            with_replica(self.state, index, pid=proc.pid, pid_started=process_started(proc.pid))
        )
        return True

    def _reap(self) -> None:
        for index, proc in list(self.alive.items()):
            code = proc.poll()
            if code is not None:
                del self.alive[index]
                self._exited(index, exit_code(code))

    def _exited(self, index: int, code: int) -> None:
        state = with_replica(self.state, index, exit_code=code)
        launch = self.launches[index]
        if code != 0 and state.cause is None:
            state = replace(state, exit_code=code, cause=f"{launch.task}/{launch.rank}")
        self._record(state)
        if code != 0 and launch.propagate_failure:
            for other in self.alive:
                if self.launches[other].task == launch.task:
                    self._terminate(other)

    def _terminate(self, index: int) -> None:
        if index in self.kill_at:
            return
        self.kill_at[index] = time.monotonic() + self.grace
        self.termed.add(index)
        self._signal(index, signal.SIGTERM)

    def _canceled(self, signalled: list[int]) -> None:
        """`cancel` stopped some replicas (`signalled`; [] while it is still sending): each
        replica gets the grace to stop, then SIGKILL, and one `cancel` did not reach (started
        since it read the state) gets its SIGTERM here; none gets a second one."""
        if not signalled:
            return  # `cancel` is still sending (or reached none, and withdraws its request)
        for index, proc in self.alive.items():
            if proc.pid not in signalled and index not in self.termed:
                self.termed.add(index)
                self._signal(index, signal.SIGTERM)
            self.kill_at.setdefault(index, time.monotonic() + self.grace)

    def _escalate(self) -> None:
        for index, deadline in self.kill_at.items():
            if index in self.alive and time.monotonic() >= deadline:
                self._signal(index, signal.SIGKILL)

    def _signal(self, index: int, sig: signal.Signals) -> None:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.alive[index].pid, sig)

    def _interrupt(self) -> None:
        """Stop every replica, record the run as interrupted (resumable) and raise Stopping."""
        for index in list(self.alive):
            self._terminate(index)
        while self.alive:
            self._reap()
            self._escalate()
            time.sleep(POLL_SECONDS)
        self._record(
            replace(
                self.state, status=INTERRUPTED, finished_at=run_time(), exit_code=None, cause=None
            )
        )
        raise Stopping(f"{self.state.experiment} was interrupted; submit again to resume it")

    def _record(self, state: RunState) -> None:
        self.state = state
        self.run_dir.write(state)
