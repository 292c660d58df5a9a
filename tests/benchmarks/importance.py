"""11. `report`'s parameter importance on 1 000 finished points of 4 parameters (x matters most,
y a little, the other two not at all): the main-effect variance `report` uses without extras,
against fANOVA with the forest `report` fits (16 trees of depth 16) and with Optuna's default
(64 x 64). Each is timed once, in this process, after an untimed call that imports Optuna and
scikit-learn; the shares of x and y are printed beside the time, so a faster forest is seen to
agree."""

from __future__ import annotations

import importlib.util
import random
import time

from runner.search import adaptive, ranking
from tests.benchmarks.common import Config, Row, seconds

POINTS, QUICK_POINTS = 1_000, 200


def _data(n: int) -> tuple[list[tuple[float, ...]], list[float]]:
    rng = random.Random(0)
    rows = [tuple(rng.random() for _ in range(4)) for _ in range(n)]
    return rows, [10 * (r[0] - 0.3) ** 2 + 0.5 * r[1] + 0.01 * rng.random() for r in rows]


def _shares(imp: ranking.Importance) -> str:
    shares = dict(imp.shares)
    return f"x {shares.get('p0', 0):.3f}, y {shares.get('p1', 0):.3f}"


def run(config: Config) -> list[Row]:
    n = QUICK_POINTS if config.quick else POINTS
    rows, values = _data(n)
    names = [f"p{j}" for j in range(4)]
    started = time.perf_counter()
    plain = ranking.main_effects(names, rows, values)
    plain_s = time.perf_counter() - started
    out = [
        Row(
            "11",
            f"`report`'s importance: main effects, {n} points",
            f"{seconds(plain_s)} ({_shares(plain)})",
        )
    ]
    if not adaptive.fanova_available() or importlib.util.find_spec("sklearn") is None:
        config.note("importance: fANOVA not measured (needs optuna and scikit-learn)")
        return out
    space = [ranking.spanned(name, [r[j] for r in rows]) for j, name in enumerate(names)]
    adaptive.fanova(space, rows[:20], values[:20], 2)  # untimed: imports Optuna and scikit-learn
    timings = []
    for trees in (adaptive.FANOVA_TREES, 64):
        started = time.perf_counter()
        imp = adaptive.fanova(space, rows, values, trees)
        timings.append((trees, time.perf_counter() - started, imp))
    (ours, ours_s, ours_imp), (_, default_s, default_imp) = timings
    out.append(
        Row(
            "11",
            f"fANOVA {ours} x {ours}, {n} points",
            f"{seconds(ours_s)} ({_shares(ours_imp)})",
            f"64 x 64: {seconds(default_s)} ({_shares(default_imp)})",
            f"{default_s / ours_s:.1f}x faster",
        )
    )
    return out
