"""What every benchmark group shares: result rows, timers, formatting and sweep manifests."""

from __future__ import annotations

import contextlib
import math
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from runner.core.model import Sweep
from runner.manifest import load_manifest

if TYPE_CHECKING:
    from tests.fake_beaker.server import FakeBeaker

PROJECT = Path(__file__).resolve().parents[2]
WORKSPACE = "ai2/bench"


@dataclass(frozen=True)
class Row:
    """One line of the results table. `verdict` is computed from the figures, never asserted."""

    group: str
    name: str
    result: str
    compared: str = ""
    """The alternative or limit measured in the same run, with its figure."""
    ratio: str = ""
    target: str = ""
    verdict: str = ""


@dataclass
class Config:
    quick: bool
    workdir: Path
    notes: list[str] = field(default_factory=list)
    """Lines printed under the table: breakdowns, caveats, profiles."""

    def note(self, text: str) -> None:
        self.notes.append(text)


def verdict(met: bool) -> str:
    return "met" if met else "**missed**"


# -- timing ------------------------------------------------------------------------------------


def best_of(run: Callable[[], object], repeat: int) -> float:
    """Fastest of `repeat` wall-clock runs: the figure least disturbed by the rest of the machine."""
    times = []
    for _ in range(repeat):
        started = time.perf_counter()
        run()
        times.append(time.perf_counter() - started)
    return min(times)


@dataclass(frozen=True)
class ProcessTimes:
    best: float
    median: float
    runs: int


def bytecode_cached_env() -> dict[str, str]:
    """This environment, but letting Python write its bytecode cache (`__pycache__`).

    Some machines (this project's CI among them) set PYTHONDONTWRITEBYTECODE=1, which makes every
    start compile each of our modules from source: ~70 ms that no installed copy pays. Start-up
    is measured as users see it, with the cache the warm-up run writes.
    """
    return {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}


def run_as_user(argv: Sequence[str], cwd: Path) -> str:
    """A command run as a researcher runs it, without Beaker credentials (so the runner uses the
    local backend) and with this interpreter's scripts on PATH; its stdout, or RuntimeError."""
    env = {k: v for k, v in bytecode_cached_env().items() if not k.startswith("BEAKER_")}
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    done = subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(argv)} exited {done.returncode}: {done.stderr.strip()}")
    return done.stdout


def time_process(argv: Sequence[str], repeat: int, cwd: Path = PROJECT) -> ProcessTimes:
    """Wall time of a fresh process (after one unmeasured warm-up run that fills caches)."""
    times = []
    env = bytecode_cached_env()
    for i in range(repeat + 1):
        started = time.perf_counter()
        done = subprocess.run(argv, cwd=cwd, env=env, capture_output=True, check=False)
        elapsed = time.perf_counter() - started
        if done.returncode != 0:
            raise RuntimeError(f"{' '.join(argv)} failed: {done.stderr.decode()[-2000:]}")
        if i:
            times.append(elapsed)
    return ProcessTimes(min(times), statistics.median(times), len(times))


# -- formatting --------------------------------------------------------------------------------


def seconds(value: float) -> str:
    """A duration with a unit that keeps three significant figures."""
    if value >= 1:
        return f"{value:.2f} s"
    if value >= 1e-3:
        return f"{value * 1e3:.3g} ms"
    return f"{value * 1e6:.3g} µs"


def ratio(value: float, reference: float) -> str:
    return f"{value / reference:.2f}×" if reference > 0 else "n/a"


def count(n: int) -> str:
    """1000 -> '1 000'; powers of ten above that -> '1e5'."""
    exponent = math.log10(n) if n > 0 else 0.0
    if n >= 100_000 and exponent.is_integer():
        return f"1e{int(exponent)}"
    return f"{n:,}".replace(",", " ")


def table(rows: Sequence[Row]) -> str:
    head = ["#", "benchmark", "result", "compared with (same run)", "ratio", "target", "verdict"]
    lines = ["| " + " | ".join(head) + " |", "|" + "|".join("---" for _ in head) + "|"]
    for row in rows:
        cells = [row.group, row.name, row.result, row.compared, row.ratio, row.target, row.verdict]
        lines.append("| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |")
    return "\n".join(lines)


# -- sweeps ------------------------------------------------------------------------------------

MANIFEST = """\
version: 1
name: {name}
description: Benchmark sweep, {points} points.
beaker:
  workspace: {workspace}
  budget: ai2/oe-training
  clusters: [ai2/jupiter, ai2/ceres]
  priority: normal
  preemptible: true
  retries: 1
  timeout: 12h
tasks:
  - name: train
    image: {{beaker: petew/olmo-torch26-cuda12}}
    command: [torchrun, --nproc-per-node=8, scripts/train.py, configs/olmo-1b.yaml]
    arguments:
{arguments}
      - --run_name={{run_name}}
      - --save_folder=/results/checkpoints
    env:
      OMP_NUM_THREADS: 8
      WANDB_PROJECT: olmo-1b-sweeps
    secrets:
      WANDB_API_KEY: wandb-api-key
    resources: {{gpus: 8, shared_memory: 64GiB}}
params:
  grid:
{axes}
  derived:
    run_name: "{run_name}"
{max_points}"""


def axis_values(index: int, size: int) -> list[float | int]:
    """Axis 0 is a learning rate (floats), the others integers (batch sizes, seeds...)."""
    if index == 0:
        return [round((i + 1) * 1e-4, 6) for i in range(size)]
    return [(i + 1) * 16 for i in range(size)] if index == 1 else list(range(size))


AXIS_NAMES = ("lr", "batch_size", "seed", "warmup", "layers", "heads")


def manifest_text(
    name: str, sizes: Sequence[int], *, max_points: int | None = None, workspace: str = WORKSPACE
) -> str:
    """A realistic single-node training sweep (like sweeps/lr-batch-grid.yaml) over `sizes`."""
    names = AXIS_NAMES[: len(sizes)]
    axes = "\n".join(
        f"    {n}: [{', '.join(repr(v) for v in axis_values(i, s))}]"
        for i, (n, s) in enumerate(zip(names, sizes, strict=True))
    )
    return MANIFEST.format(
        name=name,
        points=math.prod(sizes),
        workspace=workspace,
        arguments="\n".join(f"      - --{n}={{{n}}}" for n in names),
        axes=axes,
        run_name="-".join(f"{n[:2]}{{{n}}}" for n in names),
        max_points="" if max_points is None else f"  max_points: {max_points}\n",
    )


def write_sweep(root: Path, name: str, text: str) -> Path:
    path = root / "sweeps" / f"{name}.yaml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def load_sweep(root: Path, path: Path) -> Sweep:
    return load_manifest(path, path.relative_to(root).as_posix())


def python(*args: str) -> list[str]:
    return [sys.executable, *args]


@contextlib.contextmanager
def fake_beaker(tmp: Path) -> Iterator[FakeBeaker]:
    """A fake Beaker (its own CA, listings paged 50 at a time) with WORKSPACE, and this
    process's environment pointed at it: a probe's set-up, in a fresh process."""
    from tests.fake_beaker.certs import mint_bundle
    from tests.fake_beaker.server import FakeBeaker

    certs = mint_bundle(tmp / "certs")
    os.environ.update(certs.client_env())
    with FakeBeaker(certs=certs, workdir=tmp / "fake", page_size=50) as fake:
        fake.add_workspace(WORKSPACE)
        os.environ.update(fake.env)
        yield fake
