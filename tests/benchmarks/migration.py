"""8. What users do today, side by side: a mason/gantry-style loop against `python -m runner submit`.

mason.py and gantry launch one experiment per invocation: a fresh Python process that imports
beaker-py, builds a `BeakerExperimentSpec` and calls `experiment.create` (unnamed, so nothing
stops a re-run from launching it twice), one point after another. The runner submits the same
points from one process, named, concurrently. Both talk to the same fake Beaker, in its own
process, at the same latency, each with a sweep of its own.
"""

from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path

from runner.plan import catalog
from tests.benchmarks.common import (
    PROJECT,
    WORKSPACE,
    Config,
    Row,
    bytecode_cached_env,
    manifest_text,
    python,
    ratio,
    seconds,
    write_sweep,
)
from tests.benchmarks.submission import LATENCY, calls_text, fake_beaker

SIZES = (12, 200)
QUICK_SIZES = (12, 40)

# One point, as a mason/gantry user's script launches it: import, build the spec, create.
_ONE_POINT = """\
import json, sys
from beaker import Beaker, BeakerExperimentSpec
spec = BeakerExperimentSpec.from_json(json.load(open(sys.argv[1])))
with Beaker.from_env(check_for_upgrades=False) as beaker:
    beaker.experiment.create(spec=spec, workspace=beaker.workspace.get(sys.argv[2]))
"""


def _shape(points: int) -> tuple[int, ...]:
    return (points // 4, 4) if points % 4 == 0 else (points,)


def _loop(config: Config, root: Path) -> float:
    """Render the points (untimed, as a user's script would have its configs), then launch each
    in a fresh process, sequentially; the wall time of the loop."""
    plans = catalog.load(root, []).plans()
    specs = []
    for plan in plans:
        for row in plan.rows:
            assert row.rendered is not None
            path = config.workdir / f"{row.name}.json"
            path.write_text(row.rendered.spec_json, encoding="utf-8")
            specs.append(path)
    env = bytecode_cached_env()
    started = time.perf_counter()
    for path in specs:
        subprocess.run(
            python("-c", _ONE_POINT, str(path), WORKSPACE), cwd=PROJECT, env=env, check=True
        )
    return time.perf_counter() - started


def _runner(root: Path) -> float:
    """`python -m runner submit` in a fresh process: load, plan, submit, record; wall time."""
    env = bytecode_cached_env()
    started = time.perf_counter()
    done = subprocess.run(
        python("-m", "runner", "-C", str(root), "submit", "--backend", "beaker"),
        cwd=PROJECT,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    elapsed = time.perf_counter() - started
    if done.returncode != 0:
        raise RuntimeError(f"runner submit failed: {done.stderr[-2000:]}")
    return elapsed


def run(config: Config) -> list[Row]:
    rows = []
    sizes = QUICK_SIZES if config.quick else SIZES
    with fake_beaker(config, LATENCY) as server:
        for points in sizes:
            loop_root = config.workdir / f"loop-{points}"
            ours_root = config.workdir / f"ours-{points}"
            for root, name in ((loop_root, f"loop{points}"), (ours_root, f"ours{points}")):
                write_sweep(root, name, manifest_text(name, _shape(points)))
            before = server.stats()
            loop = _loop(config, loop_root)
            loop_calls = server.stats() - before
            before = server.stats()
            ours = _runner(ours_root)
            our_calls = server.stats() - before
            config.note(
                f"{points} points: the loop made {sum(loop_calls.values()) / points:.1f} API calls"
                f" a point ({calls_text(loop_calls)}); `runner submit` made"
                f" {sum(our_calls.values()) / points:.2f} ({calls_text(our_calls)}), including its"
                f" start-up look-ups and the bulk listing that makes a re-run safe."
                f" {os.cpu_count()} cores."
            )
            rows.append(
                Row(
                    "8",
                    f"submit {points} points: `python -m runner submit` (one process, named,"
                    " concurrency 8)",
                    seconds(ours),
                    f"mason/gantry-style loop (a process and an unnamed create per point,"
                    f" sequential): {seconds(loop)}",
                    f"{ratio(loop, ours)} faster",
                    "",
                    "",
                )
            )
    return rows
