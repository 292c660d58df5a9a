"""10. Adaptive search: the best value found after 64 points by TPE in rounds of 8 against a Sobol
and a random sample of 64, on Branin (2-D) and Hartmann-6 (6-D), over 10 seeds.

Every search runs as a researcher would run it, through the local backend in a git repository of
its own: a draft sweep whose task is `python -m runner.examples.objectives` (writing
`metrics.json`); for TPE, eight rounds of `propose`, commit, `submit`; for Sobol and random, `lock`,
commit, `submit`; then the best `value` from `status --format json`. The same search is also run
in-process (`propose`'s and `lock`'s functions told the objective directly): the two must find the
same best value, which shows that the figure measures the search and not the plumbing."""

from __future__ import annotations

import json
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from runner.core.aims import Aim, Aims, Goal
from runner.core.sample import Distribution, Kind, Method, Sample
from runner.examples.objectives import BRANIN_MIN, HARTMANN6_MIN, branin, hartmann6
from runner.search.adaptive import propose
from runner.search.draw import draw
from runner.search.points import Result, Told
from tests.benchmarks.common import Config, Row, run_as_user, seconds

POINTS, BATCH, SEEDS, DIGITS = 64, 8, 10, 6
QUICK_SEEDS = 1
METHODS = ("tpe", "sobol", "random")


@dataclass(frozen=True)
class Problem:
    name: str
    function: str
    space: tuple[Distribution, ...]
    f: Callable[[Sequence[float]], float]
    optimum: float


PROBLEMS = (
    Problem(
        "Branin",
        "branin",
        (
            Distribution("x1", Kind.UNIFORM, (-5.0, 10.0)),
            Distribution("x2", Kind.UNIFORM, (0.0, 15.0)),
        ),
        lambda x: branin(x[0], x[1]),
        BRANIN_MIN,
    ),
    Problem(
        "Hartmann-6",
        "hartmann6",
        tuple(Distribution(f"x{i}", Kind.UNIFORM, (0.0, 1.0)) for i in range(1, 7)),
        hartmann6,
        HARTMANN6_MIN,
    ),
)


def _manifest(problem: Problem, method: str, seed: int) -> str:
    arguments = ", ".join(f'--{d.name}, "{{{d.name}}}"' for d in problem.space)
    space = "".join(
        f"      {d.name}: {{uniform: [{d.bounds[0]}, {d.bounds[1]}]}}\n" for d in problem.space
    )
    adaptive = (
        f"    batch: {BATCH}\n    metric: value\n    goal: minimize\n" if method == "tpe" else ""
    )
    return (
        f"version: 1\nname: {problem.function}-{method}-{seed}\ndraft: true\n"
        "beaker: {workspace: ai2/bench, clusters: [ai2/jupiter]}\n"
        "tasks:\n  - name: objective\n    image: {docker: python:3.12-slim}\n"
        f"    command: [python, -m, runner.examples.objectives, {problem.function}]\n"
        f"    arguments: [{arguments}]\n"
        f"params:\n  sample:\n    method: {method}\n    n: {POINTS}\n{adaptive}"
        f"    seed: {seed}\n    digits: {DIGITS}\n    space:\n{space}"
    )


def _search_locally(root: Path, problem: Problem, method: str, seed: int) -> float:
    """One whole search through the local backend; its best value."""
    repo = root / f"{problem.function}-{method}-{seed}"
    (repo / "sweeps").mkdir(parents=True)
    manifest = repo / "sweeps" / "search.yaml"
    manifest.write_text(_manifest(problem, method, seed), encoding="utf-8")
    git = ["git", "-c", "user.name=bench", "-c", "user.email=bench@example.com"]
    run_as_user(["git", "init", "-q"], repo)
    runner = [sys.executable, "-m", "runner"]
    for _ in range(POINTS // BATCH if method == "tpe" else 1):
        run_as_user([*runner, "propose" if method == "tpe" else "lock", "sweeps/search.yaml"], repo)
        run_as_user(["git", "add", "-A"], repo)
        run_as_user([*git, "commit", "-qm", "a round"], repo)
        run_as_user([*runner, "submit", "--backend", "local", "sweeps/search.yaml"], repo)
    status = json.loads(
        run_as_user([*runner, "status", "--format", "json", "sweeps/search.yaml"], repo)
    )
    values = [p["metrics"]["value"] for p in status["sweeps"][0]["points"] if p.get("metrics")]
    if len(values) != POINTS:
        raise RuntimeError(f"{repo}: {len(values)} of {POINTS} points have a value")
    return float(min(values))


def _search_in_process(problem: Problem, method: str, seed: int) -> float:
    """The same search with the objective told directly."""
    sample = Sample(Method(method), POINTS, seed, DIGITS, problem.space, batch=BATCH)
    value = Aims((Aim("value", Goal.MINIMIZE),))
    if method != "tpe":
        return min(
            problem.f([float(v) for v in row if v is not None]) for row in draw(sample, 0, POINTS)
        )
    told: list[Told] = []
    for round_ in range(POINTS // BATCH):
        for row in propose(sample, value, told, BATCH, round_):
            told.append(Told(row, Result.DONE, problem.f([float(v) for v in row if v is not None])))
    return min(t.value for t in told if t.value is not None)


def run(config: Config) -> list[Row]:
    seeds = range(QUICK_SEEDS if config.quick else SEEDS)
    rows, agree, searches = [], 0, 0
    for problem in PROBLEMS:
        for method in METHODS:
            started = time.perf_counter()
            found = [_search_locally(config.workdir, problem, method, s) for s in seeds]
            elapsed = (time.perf_counter() - started) / len(found)
            searches += len(found)
            agree += sum(
                abs(v - _search_in_process(problem, method, s)) <= 1e-9 * max(1.0, abs(v))
                for v, s in zip(found, seeds, strict=True)
            )
            gaps = sorted(v - problem.optimum for v in found)
            q1, median, q3 = statistics.quantiles(gaps, n=4) if len(gaps) > 2 else (gaps[0],) * 3
            rows.append(
                Row(
                    "10",
                    f"{problem.name}: best after {POINTS} points, {method}"
                    + (f" in rounds of {BATCH}" if method == "tpe" else ""),
                    f"gap to the optimum: median {median:.3g} (quartiles {q1:.3g}–{q3:.3g},"
                    f" {len(gaps)} seed{'s' if len(gaps) != 1 else ''})",
                    f"{seconds(elapsed)} per search through the local backend",
                )
            )
    config.note(
        f"Adaptive search: {agree} of {searches} searches through the local backend found exactly"
        " the best value of the same search run in-process."
    )
    return rows
