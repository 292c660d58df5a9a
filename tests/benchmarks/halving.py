"""14. Successive halving: from the 27 configurations of a 3 × 3 × 3 grid of the learning curve
(`runner.examples.objectives curve`), η = 3 over 4 rungs (100, 300, 900, 2 700 steps), over 10 seeds
of the function: how often the search ends on the configuration that is best at full length, and
its GPU-hours against the full grid's.

Every search runs as a researcher would run it, through the local backend in a git repository of
its own: `sweeps/halving.yaml` with the seed in its command; `submit`, commit, `propose`, four
times; then the points from `status --format json` (the configuration of the last rung, the loss
each point reported) and the GPU-hours from the plan's own figures (`expand --plan --format json`:
each rung's points priced from their specs, whose timeout is the rung's `steps / 2700` of the full
one, at least `min_timeout`; and the grid at full length).
The same halving is also run in-process (`runner.search.rungs.promote` told the curve directly):
the two must end on the same configuration, which shows that the figure measures the search and
not the plumbing. Each seed also counts the pairs of configurations whose order at 100 steps is
not their order at 2 700 (the curves cross)."""

from __future__ import annotations

import itertools
import json
import statistics
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from runner.core.aims import Aim, Goal
from runner.core.ladder import Ladder
from runner.core.model import Cell
from runner.examples.objectives import curve
from runner.search import rungs
from runner.search.points import Result, Told
from tests.benchmarks.common import (
    PROJECT,
    Config,
    Row,
    run_as_user,
    seconds,
    verdict,
)

SEEDS, QUICK_SEEDS = 10, 2
VALUES = (0.1, 0.5, 0.9)
STEPS = (100, 300, 900, 2700)
LADDER = Ladder("steps", STEPS, 3)
FOUND_TARGET, SHARE_TARGET = 8, 0.20
GRID = tuple(itertools.product(VALUES, repeat=3))


def _manifest(seed: int) -> str:
    text = (PROJECT / "sweeps" / "halving.yaml").read_text(encoding="utf-8")
    return text.replace("curve, --metric, loss]", f"curve, --metric, loss, --seed, '{seed}']")


def _search_locally(root: Path, seed: int) -> tuple[tuple[float, ...], float, list[int]]:
    """One whole halving through the local backend: the configuration of its last rung, its
    GPU-hours as a share of the full grid's (the plan's figures), and each rung's points."""
    repo = root / f"halving-{seed}"
    (repo / "sweeps").mkdir(parents=True)
    (repo / "sweeps" / "halving.yaml").write_text(_manifest(seed), encoding="utf-8")
    git = ["git", "-c", "user.name=bench", "-c", "user.email=bench@example.com"]
    run_as_user(["git", "init", "-q"], repo)
    runner = [sys.executable, "-m", "runner"]
    for _ in LADDER.values:
        run_as_user(["git", "add", "-A"], repo)
        run_as_user([*git, "commit", "-qm", "a rung", "--allow-empty"], repo)
        run_as_user([*runner, "submit", "--backend", "local", "sweeps/halving.yaml"], repo)
        run_as_user([*runner, "propose", "--backend", "local", "sweeps/halving.yaml"], repo)
    status = json.loads(run_as_user([*runner, "status", "--format", "json"], repo))
    points: list[dict[str, Any]] = status["sweeps"][0]["points"]
    if any("loss" not in p["metrics"] for p in points):
        raise RuntimeError(f"{repo}: a point has no loss")
    sizes = [sum(p["params"]["rung"] == k for p in points) for k in range(len(LADDER.values))]
    (last,) = [p for p in points if p["params"]["rung"] == len(LADDER.values) - 1]
    plan = json.loads(run_as_user([*runner, "expand", "--plan", "--format", "json"], repo))
    halving = plan["sweeps"][0]["halving"]
    if any(r["projected"] for r in halving["rungs"]):
        raise RuntimeError(f"{repo}: the search did not reach its last rung")
    share = halving["total"]["expected"] / halving["full"]["expected"]
    return tuple(float(last["params"][x]) for x in ("x1", "x2", "x3")), share, sizes


def _search_in_process(seed: int) -> tuple[Cell, ...]:
    """The same halving with the curve told directly: its last rung's configuration."""
    loss = Aim("loss", Goal.MINIMIZE)
    halving = rungs.SuccessiveHalving(LADDER, loss, ("x1", "x2", "x3"), GRID, "")
    configurations: list[tuple[Cell, ...]] = list(GRID)
    for steps in STEPS[:-1]:
        told = [
            Told(row, Result.DONE, curve([float(v or 0) for v in row], steps, seed), _key(row))
            for row in configurations
        ]
        configurations = rungs.promote(halving, told)
    (last,) = configurations
    return last


def _key(row: Sequence[Cell]) -> str:
    return ",".join(str(v) for v in row)  # a stand-in for the point's key (ties only)


def _crossings(seed: int) -> int:
    early = {x: curve(x, STEPS[0], seed) for x in GRID}
    late = {x: curve(x, STEPS[-1], seed) for x in GRID}
    return sum(
        (early[a] < early[b]) != (late[a] < late[b]) for a, b in itertools.combinations(GRID, 2)
    )


def run(config: Config) -> list[Row]:
    seeds = range(QUICK_SEEDS if config.quick else SEEDS)
    started = time.perf_counter()
    found, shares, agree, sizes, ranks = 0, [], 0, set(), []
    for seed in seeds:
        last, share, sized = _search_locally(config.workdir, seed)
        best = min(GRID, key=lambda x: curve(x, STEPS[-1], seed))
        early = sorted(GRID, key=lambda x: curve(x, STEPS[0], seed))
        ranks.append(early.index(best) + 1)
        found += last == best
        agree += last == _search_in_process(seed)
        shares.append(share)
        sizes.add(tuple(sized))
    elapsed = (time.perf_counter() - started) / len(seeds)
    crossings = sorted(_crossings(s) for s in seeds)
    pairs = len(GRID) * (len(GRID) - 1) // 2
    target = -(-FOUND_TARGET * len(seeds) // SEEDS)  # 8 of 10, scaled for --quick
    config.note(
        f"Successive halving: {agree} of {len(seeds)} searches through the local backend ended on"
        " the configuration of the same halving run in-process; rung sizes"
        f" {', '.join(' → '.join(map(str, s)) for s in sorted(sizes))}; the curves cross in"
        f" {crossings[0]}–{crossings[-1]} of the {pairs} pairs of configurations (median"
        f" {statistics.median(crossings):g}): their order at 100 steps is not their order at 2 700;"
        f" the configuration best at 2 700 steps ranked {', '.join(map(str, ranks))} of 27 at 100"
        " steps (by seed), so the search does not just keep rung 0's leader."
    )
    return [
        Row(
            "14",
            f"successive halving of 27 configurations, η 3, 4 rungs ({len(seeds)} seeds)",
            f"ended on the best configuration at full length in {found} of {len(seeds)}",
            f"{seconds(elapsed)} per search through the local backend",
            "",
            f"≥ {target} of {len(seeds)}",
            verdict(found >= target),
        ),
        Row(
            "14",
            "successive halving's GPU-hours, as the plan prices them",
            f"{max(shares):.1%} of the full grid's (27 configurations at 2 700 steps)",
            "the full grid",
            f"{max(shares):.3f}",
            f"≤ {SHARE_TARGET:.0%}",
            verdict(max(shares) <= SHARE_TARGET),
        ),
    ]
