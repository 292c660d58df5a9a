"""A local run's directory: its state file, its lock, per-replica logs and its results.

`<root>/.runs/<sweep>/<experiment>/` holds `state.json` (written atomically at every change),
`replica-<rank>.log` per replica, `results/` (the replicas' RESULTS_DIR) and `.lock`. The runner
supervising the run holds an exclusive flock on `.lock` for as long as it runs; the kernel drops
it when that process dies, however it dies. So a state file that says "running" while nobody holds
the lock was left by a crashed runner: the run is stale and may be started again.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import fcntl
import json
import os
import shutil
import socket
import threading
from collections.abc import Iterator, Mapping
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

from runner.core.errors import RunnerError
from runner.core.files import write_atomic
from runner.core.invoked import invoked
from runner.core.values import StrEnum

STATE_FORMAT = 1


class RunStatus(StrEnum):
    """A local run's state file's `status` (`interrupted`: its runner stopped it; resumable;
    `canceled`: `cancel` stopped it; final, as on Beaker)."""

    RUNNING = "running"
    SUCCEEDED = "succeeded"
    FAILED = "failed"
    INTERRUPTED = "interrupted"
    CANCELED = "canceled"


RUNNING, SUCCEEDED, FAILED, INTERRUPTED, CANCELED = RunStatus
FINISHED = (SUCCEEDED, FAILED, CANCELED)
ATTEMPT = "attempt-"
"""Prefix of the directories that keep a restarted run's earlier attempts."""
STATE_FILE = "state.json"
ABOUT = (
    "State of one local run, written by `{} submit` (local backend) at every change; do not"
    " edit. Delete the sweep's .runs/<sweep>/ directory to run it again."
)


class Stopping(Exception):
    """The runner is shutting down; the run was left (or never started) and can be resumed."""


STOP_ALL = 0
"""What `cancel` records as signalled for a run still starting its replicas (no replica's pid was
recorded yet, so it could signal none): no process has pid 0, so the runner starts no more
replicas and sends SIGTERM to every one it started."""


@dataclass(frozen=True)
class Replica:
    task: str
    rank: int
    log: str
    """File name of its log, in the run directory."""
    pid: int | None = None
    pid_started: int | None = None
    """The process's start time (clock ticks since boot, Linux); tells a reused pid apart."""
    exit_code: int | None = None
    gpus: int = 0
    """The GPUs its task declared (its spec's `gpuCount`), whatever this machine has."""


@dataclass(frozen=True)
class RunState:
    sweep: str
    experiment: str
    key: str
    status: str
    runner_pid: int
    runner_host: str
    started_at: str
    finished_at: str | None = None
    exit_code: int | None = None
    """The first failing replica's exit code (128 + signal when killed), or 0."""
    cause: str | None = None
    """Which replica failed first, as 'task/rank'."""
    replicas: tuple[Replica, ...] = field(default_factory=tuple)

    @property
    def finished(self) -> bool:
        return self.status in FINISHED

    def to_json(self) -> str:
        data = {"state": STATE_FORMAT, "about": ABOUT.format(invoked()), **asdict(self)}
        return json.dumps(data, indent=2, ensure_ascii=False) + "\n"

    @classmethod
    def from_json(cls, text: str) -> RunState:
        data = json.loads(text)
        if data.pop("state", None) != STATE_FORMAT:
            raise ValueError(f"state format is not {STATE_FORMAT}")
        data.pop("about", None)
        data["replicas"] = tuple(Replica(**r) for r in data.get("replicas", ()))
        return cls(**data)


def new_state(sweep: str, experiment: str, key: str, replicas: tuple[Replica, ...]) -> RunState:
    return RunState(
        sweep=sweep,
        experiment=experiment,
        key=key,
        status=RUNNING,
        runner_pid=os.getpid(),
        runner_host=socket.gethostname(),
        started_at=run_time(),
        replicas=replicas,
    )


class RunDir:
    def __init__(self, path: Path) -> None:
        self.path = path
        self.state_file = path / STATE_FILE
        self.lock_file = path / ".lock"
        self.results = path / "results"
        self.cancel_file = path / "cancel-requested"
        """Written by `cancel` before it signals the replicas (empty), then with the pids it
        signalled (a JSON list): their runner records `canceled` and stops the others."""

    @property
    def url(self) -> str:
        return self.path.resolve().as_uri()

    def read(self) -> RunState | None:
        """The recorded state; None when there is none (never started, or started just now)."""
        try:
            return RunState.from_json(self.state_file.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return None
        except (ValueError, TypeError, KeyError) as exc:
            raise RunnerError(
                f"{self.state_file}: unreadable run state ({exc}); delete {self.path} to run it"
                " again"
            ) from None

    def write(self, state: RunState) -> None:
        write_atomic(self.state_file, state.to_json())

    def cancel_requested(self) -> bool:
        return self.cancel_file.exists()

    def request_cancel(self, signalled: list[int] | None = None) -> None:
        """`cancel`: first with None (about to signal), then with the pids it signalled
        ([STOP_ALL] when the run was still starting its replicas: its runner stops them all)."""
        write_atomic(self.cancel_file, "" if signalled is None else json.dumps(signalled))

    def cancel_signalled(self) -> list[int] | None:
        """The pids `cancel` signalled; [] while it is signalling; None when not canceled."""
        try:
            text = self.cancel_file.read_text(encoding="utf-8")
        except FileNotFoundError:
            return None
        try:
            pids = json.loads(text) if text else []
        except ValueError:
            return []
        return [p for p in pids if isinstance(p, int)] if isinstance(pids, list) else []

    def supervised(self) -> bool:
        """Whether a live runner holds this run's lock (so it is running it right now)."""
        try:
            fd = os.open(self.lock_file, os.O_RDWR)
        except FileNotFoundError:
            return False
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return True
        finally:
            os.close(fd)  # releases the lock if this probe took it
        return False

    @contextlib.contextmanager
    def claim(self, stop: threading.Event, poll: float = 0.2) -> Iterator[None]:
        """Hold the run's lock; waits while another runner holds it (raises Stopping on stop)."""
        self.path.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.lock_file, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            while True:
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                    break
                except BlockingIOError:
                    if stop.wait(poll):
                        raise Stopping(f"stopped while waiting for {self.path}") from None
            yield
        finally:
            os.close(fd)

    def attempts(self) -> list[Path]:
        """Directories of earlier attempts (kept by `archive`), oldest first."""
        found = [p for p in self.path.glob(f"{ATTEMPT}*") if p.name[len(ATTEMPT) :].isdigit()]
        return sorted(found, key=lambda p: int(p.name[len(ATTEMPT) :]))

    def archive(self) -> Path:
        """Move this attempt's state, logs and results into attempt-<n>/ before a restart."""
        target = self.path / f"{ATTEMPT}{len(self.attempts()) + 1}"
        target.mkdir()
        for child in self.path.iterdir():
            if child in (self.lock_file, target) or child.name.startswith(ATTEMPT):
                continue
            child.rename(target / child.name)
        return target

    def reset(self) -> None:
        """Empty the directory (keeping the lock and earlier attempts) for a fresh start;
        results/ is recreated."""
        for child in self.path.iterdir():
            if child == self.lock_file or child.name.startswith(ATTEMPT):
                continue
            if child.is_dir() and not child.is_symlink():
                shutil.rmtree(child)
            else:
                child.unlink()
        self.results.mkdir()

    def metrics(self) -> Mapping[str, object]:
        """The flat numbers and strings a run wrote to results/metrics.json; {} if none."""
        try:
            data: Any = json.loads((self.results / "metrics.json").read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {}
        if not isinstance(data, dict):
            return {}
        return {
            str(k): v for k, v in sorted(data.items()) if isinstance(v, int | float | str | bool)
        }


def with_replica(state: RunState, index: int, **changes: Any) -> RunState:
    replicas = list(state.replicas)
    replicas[index] = replace(replicas[index], **changes)
    return replace(state, replicas=tuple(replicas))


STAMP = "%Y-%m-%dT%H:%M:%S.%fZ"
"""A run state's times, to the millisecond (`2026-11-22T16:07:16.123Z`): a local run's
`gpu_hours` and duration are wall time, and a short point's seconds must not round to 0 or 1
(two-objective fronts of runs that take a second would tie). A state written before reads as
whole seconds (`2026-11-22T16:07:16Z`)."""


def run_time(at: dt.datetime | None = None) -> str:
    """The time (now by default) as a run state writes it, to the millisecond, in UTC."""
    at = at or dt.datetime.now(dt.timezone.utc)
    return at.strftime(STAMP)[:-4] + "Z"  # microseconds cut to milliseconds


def _read_time(text: str) -> dt.datetime:
    shape = STAMP if "." in text else "%Y-%m-%dT%H:%M:%SZ"
    return dt.datetime.strptime(text, shape)


def elapsed_seconds(started: str, finished: str | None) -> float | None:
    """Seconds between two of the run state's UTC timestamps (until now while it runs), to the
    millisecond (whole seconds for a state written before)."""
    try:
        start = _read_time(started)
        end = (
            _read_time(finished)
            if finished
            else dt.datetime.now(dt.timezone.utc).replace(tzinfo=None)
        )
    except (TypeError, ValueError):
        return None
    return max(0.0, (end - start).total_seconds())
