"""9. Sampled search: `lock` of 10 000 Sobol points, and `expand --plan` of the locked sweep
beside a 10 000-point grid of the same manifest, both fresh processes in the same run."""

from __future__ import annotations

import statistics
import subprocess
import time
from pathlib import Path

from runner.manifest.lock import lock_path
from tests.benchmarks.common import (
    Config,
    Row,
    bytecode_cached_env,
    count,
    manifest_text,
    python,
    seconds,
    time_process,
    verdict,
    write_sweep,
)

POINTS = 10_000
QUICK_POINTS = 2_000
TARGET = 1.5
SAMPLE = """\
  sample:
    method: sobol
    n: {n}
    seed: 0
    digits: 6
    space:
      lr: {{log_uniform: [1e-5, 1e-2]}}
      batch_size: {{int: [16, 4096]}}
      seed: {{int: [0, 1000000]}}
"""


def _sampled_text(n: int) -> str:
    grid = manifest_text("sampled", (10, 10, n // 100), max_points=n)
    head, rest = grid.split("params:\n  grid:\n", 1)
    derived = rest[rest.index("  derived:") :]
    return head + "params:\n" + SAMPLE.format(n=n) + derived


def _timed_locks(root: Path, manifest: Path, repeat: int) -> list[float]:
    """Fresh `lock` processes, each drawing every point (the lock is removed before each)."""
    times = []
    for _ in range(repeat):
        lock_path(manifest).unlink(missing_ok=True)
        started = time.perf_counter()
        subprocess.run(
            [*python(), "-m", "runner", "-C", str(root), "lock"],
            env=bytecode_cached_env(),
            capture_output=True,
            check=True,
        )
        times.append(time.perf_counter() - started)
    return times


def run(config: Config) -> list[Row]:
    n = QUICK_POINTS if config.quick else POINTS
    sampled_root, grid_root = config.workdir / "search-sampled", config.workdir / "search-grid"
    manifest = write_sweep(sampled_root, "sampled", _sampled_text(n))
    write_sweep(grid_root, "grid", manifest_text("grid", (10, 10, n // 100), max_points=n))
    locks = _timed_locks(sampled_root, manifest, 3)
    plan = ["-m", "runner", "expand", "--plan"]
    sampled = time_process([*python(), *plan], 3, cwd=sampled_root)
    grid = time_process([*python(), *plan], 3, cwd=grid_root)
    ratio = sampled.median / grid.median
    size = f"{lock_path(manifest).stat().st_size / 1024:.0f} KiB"
    return [
        Row(
            "9",
            f"`lock` of {count(n)} Sobol points (3 parameters), fresh process",
            f"{seconds(statistics.median(locks))} (median of 3; best {seconds(min(locks))});"
            f" lock file {size}",
        ),
        Row(
            "9",
            f"`expand --plan` of a locked {count(n)}-point sampled sweep, fresh process",
            f"{seconds(sampled.median)} (median of {sampled.runs})",
            f"a {count(n)}-point grid of the same manifest: {seconds(grid.median)}",
            f"{ratio:.2f}×",
            f"≤ {TARGET}×",
            verdict(ratio <= TARGET),
        ),
    ]
