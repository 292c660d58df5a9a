"""`.runs/<sweep>/`: one sweep's place on this machine, which the local backend owns: a run
directory per point (`runner.backends.local.rundir`), the sweep's local ledger beside them
(`LAYOUT`, never the committed one), the mark a whole-sweep `cancel` leaves, and what each
submit running here has yet to start (a run is recorded only once it starts, so `wait` reads
these to wait for the rest)."""

from __future__ import annotations

import contextlib
import json
import os
import socket
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from runner.backends.local.processes import process_started
from runner.backends.local.rundir import RunDir
from runner.core.files import write_atomic
from runner.ledger import Layout

RUNS_DIR = ".runs"
"""Under the repository root: one directory per sweep, one per point's run in it (ignored by git)."""
LAYOUT = Layout(RUNS_DIR + "/{sweep}/ledger.jsonl")
"""The local ledger of each sweep, beside its runs."""
CANCELED_MARKER = ".canceled"
"""When `cancel` last canceled the whole sweep (seconds since the epoch)."""
CHECKPOINTS = "checkpoints"
"""Under a sweep's run directory: its points' checkpoints, each at its path on Beaker's storage
(`params.fidelity.checkpoint`), which mounts would give a job there (`local_checkpoint`)."""
STARTING = ".starting-{pid}.json"
"""The points a submit running here (this pid) runs: written before its first create, removed
when it ends; a runner that died leaves it, and its pid then proves it gone."""


def local_checkpoint(sweep: Path, path: str) -> Path:
    """Where a checkpoint the spec puts at `path` (an absolute path on mounted storage) is kept
    on this machine: under the sweep's run directory, at the same path."""
    return sweep / CHECKPOINTS / path.lstrip("/")


@dataclass(frozen=True)
class SweepDir:
    root: Path
    sweep: str

    @property
    def path(self) -> Path:
        return self.root / RUNS_DIR / self.sweep

    def run(self, name: str) -> RunDir:
        return RunDir(self.path / name)

    def mark_canceled(self) -> None:
        """`cancel` of the whole sweep: a submit running it now starts no more of its points."""
        if self.path.is_dir():  # else no submit has run the sweep here yet
            (self.path / CANCELED_MARKER).write_text(f"{time.time()!r}\n", encoding="utf-8")

    def canceled_since(self, opened: float) -> bool:
        """Whether `cancel` canceled the whole sweep since `opened` (seconds since the epoch)."""
        try:
            since = float((self.path / CANCELED_MARKER).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return False
        return since >= opened

    def will_start(self, names: Sequence[str]) -> Path:
        """Record that this process is about to run these points (the file written)."""
        pid = os.getpid()
        mark = {
            "pid": pid,
            "pid_started": process_started(pid),
            "host": socket.gethostname(),
            "points": sorted(names),
        }
        path = self.path / STARTING.format(pid=pid)
        self.path.mkdir(parents=True, exist_ok=True)
        write_atomic(path, json.dumps(mark, indent=2) + "\n")
        return path

    def starting(self) -> frozenset[str]:
        """The points a submit still running on this machine is to run (started or not)."""
        found: set[str] = set()
        for path in self.path.glob(STARTING.format(pid="*")):
            with contextlib.suppress(OSError, ValueError, KeyError, TypeError):
                mark = json.loads(path.read_text(encoding="utf-8"))
                if _alive(int(mark["pid"]), mark.get("pid_started"), str(mark["host"])):
                    found.update(str(n) for n in mark["points"])
        return frozenset(found)


def _alive(pid: int, started: int | None, host: str) -> bool:
    """Whether the process that wrote a mark still runs: on this host, the same pid started at
    the same time (where /proc tells it; else the pid alone)."""
    if host != socket.gethostname():
        return False
    now = process_started(pid)
    if started is not None or now is not None:
        return now is not None and now == started
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
