"""This machine's CPUs and GPUs, shared by the local runs going on at once."""

from __future__ import annotations

import contextlib
import os
import subprocess
import threading
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, replace

from runner.backends.local.rundir import Stopping
from runner.backends.local.supervisor import Launch


class Machine:
    """CPUs and GPUs shared by the points running at once."""

    def __init__(self, cpus: int, gpus: Sequence[str]) -> None:
        self.cpus, self.gpus = cpus, tuple(gpus)
        self._free_cpus, self._free_gpus = cpus, list(gpus)
        self._changed = threading.Condition()

    @classmethod
    def detect(cls) -> Machine:
        cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
        visible = os.environ.get("CUDA_VISIBLE_DEVICES")
        if visible is not None:
            gpus = [g for g in visible.split(",") if g.strip()]
        else:
            gpus = [str(i) for i in range(_nvidia_gpu_count())]
        return cls(max(1, cpus or 1), gpus)

    @contextlib.contextmanager
    def reserve(self, cpus: int, gpus: int, stop: threading.Event) -> Iterator[tuple[str, ...]]:
        """Wait for the CPUs and GPUs (capped at what exists); yields the GPU ids reserved."""
        cpus, gpus = min(cpus, self.cpus), min(gpus, len(self.gpus))
        with self._changed:
            while self._free_cpus < cpus or len(self._free_gpus) < gpus:
                if stop.is_set():
                    raise Stopping("stopped while waiting for free CPUs or GPUs")
                self._changed.wait(0.2)
            self._free_cpus -= cpus
            taken = tuple(self._free_gpus[:gpus])
            del self._free_gpus[:gpus]
        try:
            yield taken
        finally:
            with self._changed:
                self._free_cpus += cpus
                self._free_gpus += taken
                self._changed.notify_all()


def _nvidia_gpu_count() -> int:
    try:
        listing = subprocess.run(
            ["nvidia-smi", "-L"], capture_output=True, text=True, timeout=20, check=True
        ).stdout
    except (OSError, subprocess.SubprocessError):
        return 0
    return sum(line.startswith("GPU ") for line in listing.splitlines())


@dataclass(frozen=True)
class ReplicaPlan:
    """A replica to launch, with what it needs from the machine."""

    launch: Launch
    cpus: int
    gpus: int


def assign_gpus(
    replicas: Sequence[ReplicaPlan], ids: Sequence[str], has_gpus: bool
) -> list[Launch]:
    """Each replica's slice of the reserved GPUs (shared round-robin when there are too few)."""
    launches, offset = [], 0
    for replica in replicas:
        mine = (
            [ids[(offset + i) % len(ids)] for i in range(min(replica.gpus, len(ids)))]
            if ids
            else []
        )
        offset += replica.gpus
        env = {**replica.launch.env, "BEAKER_ASSIGNED_GPU_COUNT": str(len(mine))}
        if has_gpus:
            env["CUDA_VISIBLE_DEVICES"] = ",".join(mine)
        launches.append(replace(replica.launch, env=env))
    return launches
