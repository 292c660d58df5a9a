"""A point's spec as processes on this machine: each task's replicas with Beaker's environment."""

from __future__ import annotations

import math
import os
import shutil
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Protocol

from runner.backends import Rejected
from runner.backends.local.machine import ReplicaPlan
from runner.backends.local.rundir import RunDir
from runner.backends.local.supervisor import Launch
from runner.backends.local.sweepdir import local_checkpoint
from runner.core.model import Rendered
from runner.render.argv import CODE_MARK
from runner.render.shape import CHECKPOINT_VARS

LOOPBACK = "127.0.0.1"
PYTHONS = ("python", "python3")
"""argv[0] values replaced by this interpreter, so a virtualenv's python runs the tasks."""


class Say(Protocol):
    def __call__(self, text: str, once: str | None = None) -> None: ...


def replica_plans(point: Rendered, run: RunDir, root: Path, say: Say) -> list[ReplicaPlan]:
    """The processes a point's spec asks for: one per replica of each task, with the environment
    Beaker gives replicas (rank, count, leader) and what each needs of this machine."""
    tasks: list[Mapping[str, Any]] = list(point.spec["tasks"])
    out = []
    for task in tasks:
        argv = [str(a) for a in (*task["command"], *task.get("arguments", ()))]
        argv[0] = program(root, point.name, argv[0])
        if CODE_MARK in argv[:4] and argv.index(CODE_MARK) + 1 < len(argv):
            after = argv.index(CODE_MARK) + 1  # `code:`: the task's own argv follows the mark
            argv[after] = sys.executable if argv[after] in PYTHONS else argv[after]
        env = {**os.environ, "PYTHONUNBUFFERED": os.environ.get("PYTHONUNBUFFERED", "1")}
        missing = []
        for var in task.get("envVars", ()):
            if "value" in var:
                env[var["name"]] = var["value"]
            elif var["name"] not in os.environ and var["name"] != "SWEEP_CODE_TOKEN":
                missing.append(var["name"])  # (the code's token: locally the checkout is cloned)
        given = {v["name"]: v["value"] for v in task.get("envVars", ()) if "value" in v}
        argv = kept_here(env, given, argv, run.path.parent)
        if missing:
            names = ", ".join(missing)
            say(
                f"secrets are not available locally; not set: {names} (export them to pass"
                " them through)",
                once=f"secrets {names}",
            )
        count = int(task.get("replicas", 1))
        resources = task.get("resources", {})
        for rank in range(count):
            contract = {
                "BEAKER_REPLICA_RANK": str(rank),
                "BEAKER_REPLICA_COUNT": str(count),
                "BEAKER_LEADER_REPLICA_HOSTNAME": LOOPBACK,
                "BEAKER_EXPERIMENT_ID": point.name,
                "RESULTS_DIR": str(run.results),
            }
            if "SWEEP_CODE_DIR" in env:  # `code:`: each replica clones this checkout's commit
                contract["SWEEP_CODE_SOURCE"] = str(root)
                contract["SWEEP_CODE_DIR"] = str(run.path / f"code-{task['name']}-{rank}")
            log = f"replica-{rank}.log" if len(tasks) == 1 else f"{task['name']}-replica-{rank}.log"
            launch = Launch(
                task["name"],
                rank,
                tuple(argv),
                {**env, **contract},
                log,
                bool(task.get("propagateFailure", False)),
            )
            cpus = max(1, math.ceil(resources.get("cpuCount", 1)))
            out.append(ReplicaPlan(launch, cpus, int(resources.get("gpuCount", 0))))
    return out


def kept_here(
    env: dict[str, str], spec: Mapping[str, str], argv: list[str], sweep: Path
) -> list[str]:
    """Checkpoints on this machine: mounts are not used here, so each checkpoint path the spec
    gives (`SWEEP_CHECKPOINT`, `SWEEP_PARENT_CHECKPOINT`) moves under the sweep's run directory
    (`local_checkpoint`), in the variable and wherever an argument names it (`{checkpoint}`,
    `{parent_checkpoint}`); the same path moves to the same place in every run, so a promoted
    point finds what its parent wrote. `spec`: the spec's variables; the new argv (`env` is
    changed in place)."""
    moved = {spec[n]: str(local_checkpoint(sweep, spec[n])) for n in CHECKPOINT_VARS if n in spec}
    for name in CHECKPOINT_VARS:
        if name in spec:
            env[name] = moved[spec[name]]
    for path in sorted(moved, key=len, reverse=True):  # a longer path before one it starts with
        argv = [item.replace(path, moved[path]) for item in argv]
    return argv


def program(root: Path, name: str, program: str) -> str:
    """argv[0] as this machine runs it: `python` is this interpreter, anything else must exist."""
    if program in PYTHONS:
        return sys.executable
    found = (root / program).is_file() if os.sep in program else shutil.which(program)
    if not found:
        raise Rejected(
            f"{name}: cannot run {program!r}: not found on this machine (the local backend"
            " runs each task's command here, without its image)"
        )
    return program
