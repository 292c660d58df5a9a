"""10. Adaptive search: the best value found after 64 points by TPE in rounds of 8 (`propose`'s
code, told each round's results) against a Sobol and a random sample of 64 (`lock`'s code), on
Branin (2-D) and Hartmann-6 (6-D), over 10 seeds. The objective is evaluated in-process (the
same functions `runner.examples.objectives` runs as a task): 3 × 2 × 10 searches of 64 points
as local runs would take an hour and measure the machine, not the search."""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable, Sequence

from runner.examples.objectives import BRANIN_MIN, HARTMANN6_MIN, branin, hartmann6
from runner.manifest.adaptive import Result, Told, propose
from runner.manifest.sample import Distribution, Sample
from runner.manifest.sampling import draw
from tests.benchmarks.common import Config, Row, seconds

POINTS, BATCH, SEEDS = 64, 8, 10
QUICK_SEEDS = 3

PROBLEMS: dict[str, tuple[tuple[Distribution, ...], Callable[[Sequence[float]], float], float]] = {
    "Branin": (
        (Distribution("x1", "uniform", (-5.0, 10.0)), Distribution("x2", "uniform", (0.0, 15.0))),
        lambda x: branin(x[0], x[1]),
        BRANIN_MIN,
    ),
    "Hartmann-6": (
        tuple(Distribution(f"x{i}", "uniform", (0.0, 1.0)) for i in range(1, 7)),
        hartmann6,
        HARTMANN6_MIN,
    ),
}


def _best(
    method: str, space: tuple[Distribution, ...], f: Callable[[Sequence[float]], float], seed: int
) -> float:
    sample = Sample(method, POINTS, seed, 6, space, batch=BATCH, metric="value")
    if method != "tpe":
        return min(f([float(v) for v in row]) for row in draw(sample, 0, POINTS))
    told: list[Told] = []
    for round_ in range(POINTS // BATCH):
        for row in propose(sample, told, BATCH, round_):
            told.append(Told(row, Result.DONE, f([float(v) for v in row])))
    return min(t.value for t in told if t.value is not None)


def run(config: Config) -> list[Row]:
    seeds = range(QUICK_SEEDS if config.quick else SEEDS)
    rows = []
    for name, (space, f, optimum) in PROBLEMS.items():
        figures = {}
        for method in ("tpe", "sobol", "random"):
            started = time.perf_counter()
            gaps = sorted(_best(method, space, f, seed) - optimum for seed in seeds)
            elapsed = (time.perf_counter() - started) / len(gaps)
            q1, median, q3 = statistics.quantiles(gaps, n=4) if len(gaps) > 2 else (gaps[0],) * 3
            figures[method] = (median, q1, q3, elapsed)
        for method, (median, q1, q3, elapsed) in figures.items():
            rows.append(
                Row(
                    "10",
                    f"{name}: best after {POINTS} points, {method}"
                    + (f" in rounds of {BATCH}" if method == "tpe" else ""),
                    f"gap to the optimum: median {median:.3g} (quartiles {q1:.3g}–{q3:.3g},"
                    f" {len(gaps)} seeds)",
                    f"{seconds(elapsed)} per search",
                )
            )
    return rows
