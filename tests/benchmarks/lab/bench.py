"""16. A search that runs itself inside what was reviewed (issue 47), in a simulated lab: how
soon `advance: auto` reaches the point the reviewed synchronous search ends on, and at what
cost in GPU-hours, over 20 seeds of two learning-curve families.

Halving: 81 configurations (Sobol, the seed's), eta 3, 100 to 8 100 steps (5 rungs). The
reviewed search opens a pull request per rung (`next_rung` at the hourly Propose run, merged 4 h
later); `advance: auto` decides at every Submit run, with synchronous promotion (the same
`next_rung`) or asynchronous (`asha.step`). TPE: 8 rounds of 16 points at 8 100 steps
(`next_round` with Optuna), a pull request per round against `advance: auto`. Every search
decides with the runner's own functions; `tests.benchmarks.lab.world` is the lab and
`tests.benchmarks.lab.figures` says what "reached" means.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

from tests.benchmarks.common import Config, Row, count, verdict
from tests.benchmarks.lab.families import FAMILIES, Family, spearman
from tests.benchmarks.lab.figures import (
    Reach,
    hours,
    median,
    paired,
    ratios,
    reach,
    spread,
    target,
)
from tests.benchmarks.lab.searches import (
    MAX_STEPS,
    MIN_STEPS,
    AsyncHalving,
    Rounds,
    SyncHalving,
    halving_of,
    xs,
)
from tests.benchmarks.lab.world import HOUR, Lab, Mode, Run, Search, simulate

SEEDS, QUICK_SEEDS = 20, 3
CONFIGURATIONS, ETA, BATCH, ROUNDS = 81, 3, 16, 8
LAB = Lab(full=12 * HOUR)
"""12 h at 8 100 steps (the mean): the issue gives no run time; with it the reviewed halving
takes about the issue's 46 h."""
WALL, GPU, SHARE = 0.6, 1.2, 0.9
"""The issue's target for `advance: auto` with async promotion."""


@dataclass(frozen=True)
class Strategy:
    name: str
    mode: Mode
    search: Callable[[Family, int], Search]


HALVINGS = (
    Strategy(
        "a pull request per rung",
        Mode.REVIEWED,
        lambda f, s: SyncHalving(halving_of(CONFIGURATIONS, s, ETA), f.loss, s),
    ),
    Strategy(
        "`advance: auto`, sync promotion",
        Mode.AUTO,
        lambda f, s: SyncHalving(halving_of(CONFIGURATIONS, s, ETA), f.loss, s),
    ),
    Strategy(
        "`advance: auto`, async promotion",
        Mode.AUTO,
        lambda f, s: AsyncHalving(halving_of(CONFIGURATIONS, s, ETA), f.loss, s),
    ),
)
TPES = (
    Strategy("a pull request per round", Mode.REVIEWED, lambda f, s: Rounds(f.loss, s, BATCH)),
    Strategy("`advance: auto`", Mode.AUTO, lambda f, s: Rounds(f.loss, s, BATCH)),
)


def measure(
    lab: Lab, strategies: Sequence[Strategy], family: Family, seeds: range
) -> tuple[list[list[Reach]], list[list[Run]]]:
    """Each strategy's reach of each seed, against the first (reviewed) strategy's target."""
    reaches: list[list[Reach]] = [[] for _ in strategies]
    runs: list[list[Run]] = [[] for _ in strategies]
    for seed in seeds:
        goal = 0.0
        for i, strategy in enumerate(strategies):
            run = simulate(lab, strategy.search(family, seed), strategy.mode, seed)
            goal = target(run) if i == 0 else goal
            reaches[i].append(reach(run, goal))
            runs[i].append(run)
    return reaches, runs


def _rows(
    what: str, strategies: Sequence[Strategy], reaches: Sequence[Sequence[Reach]], judged: int
) -> list[Row]:
    """The reviewed search's row, then each automatic one's against it (`judged`: the index of
    the strategy the issue's target is for, -1 for none)."""
    reviewed = reaches[0]
    wall, gpu = median([r.wall for r in reviewed]), median([r.gpu for r in reviewed])
    out = [
        Row(
            "16",
            f"{what}, {strategies[0].name}",
            f"its best reached in median {hours(wall)}, {gpu:.1f} GPU-h;"
            f" {_actions(reviewed[0].humans)}",
        )
    ]
    for i, (strategy, found) in enumerate(zip(strategies, reaches, strict=True)):
        if i == 0:
            continue
        walls, gpus = paired(found, reviewed)
        share = sum(f.reached for f in found) / len(found)
        humans = max(f.humans for f in found)
        met = median(walls) <= WALL and median(gpus) <= GPU and share >= SHARE and humans == 1
        out.append(
            Row(
                "16",
                f"{what}, {strategy.name}",
                f"median {hours(median([f.wall for f in found]))},"
                f" {median([f.gpu for f in found]):.1f} GPU-h; reached in"
                f" {sum(f.reached for f in found)} of {len(found)}; {_actions(humans)}",
                f"the reviewed search: {hours(wall)}, {gpu:.1f} GPU-h",
                f"{spread(walls)} time, {spread(gpus)} GPU-h",
                f"≤ {WALL}× time at ≤ {GPU}× GPU-h, ≥ {SHARE:.0%} reached, 1 human action"
                if i == judged
                else "",
                verdict(met) if i == judged else "",
            )
        )
    return out


def _actions(count: int) -> str:
    return f"{count} human action{'s' if count != 1 else ''}"


def _waits(runs: Sequence[Run]) -> tuple[float, float]:
    """Median hours a reviewed halving spent in review, and waiting for the hourly Propose run
    after a rung's last point ended."""
    review, propose = [], []
    for run in runs:
        review.append(sum(r.merged - r.opened for r in run.reviews) / HOUR)
        ends = [
            max(j.ended for j in run.jobs if j.point.rung == k) for k in range(len(run.reviews))
        ]
        propose.append(sum(r.opened - e for r, e in zip(run.reviews, ends, strict=True)) / HOUR)
    return median(review), median(propose)


def _sizes(runs: Sequence[Run]) -> str:
    rungs = max(j.point.rung for run in runs for j in run.jobs) + 1
    each = [
        median([sum(j.point.rung == k for j in run.jobs) for run in runs]) for k in range(rungs)
    ]
    return " → ".join(f"{n:g}" for n in each)


def _correlation(family: Family, seeds: range) -> float:
    """The median over seeds of the rank correlation of the 81 configurations' losses at 100
    steps and at 8 100."""
    found = []
    for seed in seeds:
        rows = halving_of(CONFIGURATIONS, seed, ETA).configurations
        early = [family.loss(xs(r), MIN_STEPS, seed) for r in rows]
        late = [family.loss(xs(r), MAX_STEPS, seed) for r in rows]
        found.append(spearman(early, late))
    return median(found)


def _variants(config: Config, family: Family, seeds: range) -> None:
    """The async halving's ratios when the lab is changed one way at a time."""
    said = []
    changes = {
        "promoted points placed first (a priority per rung)": replace(LAB, promoted_first=True),
        "a merge submitted by the next scheduled Submit run": replace(LAB, submit_on_merge=False),
        "run times twice as spread (σ 1)": replace(LAB, sigma=1.0),
        "full-length runs of 6 h": replace(LAB, full=6 * HOUR),
        "full-length runs of 24 h": replace(LAB, full=24 * HOUR),
    }
    for name, lab in changes.items():
        reaches, _ = measure(lab, (HALVINGS[0], HALVINGS[2]), family, seeds)
        walls, gpus = ratios(reaches[1], reaches[0])
        share = sum(f.reached for f in reaches[1])
        said.append(f"{name}: {walls:.2f}× time, {gpus:.2f}× GPU-h, reached in {share}")
    config.note(
        f"Lab (16), {family.name}, async against reviewed when one thing changes: "
        + "; ".join(said)
        + "."
    )


def _halvings(config: Config, family: Family, seeds: range) -> list[Row]:
    what = f"{family.name}: halving of {CONFIGURATIONS} configurations, η {ETA}"
    reaches, runs = measure(LAB, HALVINGS, family, seeds)
    review, propose = _waits(runs[0])
    config.note(
        f"Lab (16), {family.name} ({family.said}): the reviewed halving's"
        f" {median([r.end for r in reaches[0]]):.1f} h (median) include {review:.1f} h of"
        f" review and {propose:.1f} h waiting for the hourly Propose run; rung sizes"
        f" (median) synchronous {_sizes(runs[1])}, asynchronous {_sizes(runs[2])}; the rank"
        f" correlation of the configurations' losses at {MIN_STEPS} and"
        f" {count(MAX_STEPS)} steps is {_correlation(family, seeds):.2f} (median); GPU-hours"
        " of the whole search, to its last point's end (median): "
        + "; ".join(
            f"{s.name}: {median([r.spent for r in found]):.1f}"
            for s, found in zip(HALVINGS, reaches, strict=True)
        )
        + "."
    )
    return _rows(what, HALVINGS, reaches, 2)


def _tpe(config: Config, family: Family, seeds: range) -> list[Row]:
    what = f"{family.name}: TPE, {ROUNDS} rounds of {BATCH}"
    reaches, runs = measure(LAB, TPES, family, seeds)
    same = sum(
        [j.point.row for j in a.jobs] == [j.point.row for j in b.jobs]
        for a, b in zip(*runs, strict=True)
    )
    config.note(
        f"Lab (16), {family.name}, TPE: in {same} of {len(seeds)} seeds `advance: auto`"
        " proposed exactly the reviewed search's points (a round waits for the last: the"
        " same results, the same proposals); only the waiting differs."
    )
    return _rows(what, TPES, reaches, -1)


def run(config: Config) -> list[Row]:
    seeds = range(QUICK_SEEDS if config.quick else SEEDS)
    started = time.perf_counter()
    rows: list[Row] = []
    for family in FAMILIES:
        rows += _halvings(config, family, seeds)
        rows += _tpe(config, family, seeds)
        _variants(config, family, seeds)
    config.note(
        f"Lab (16): {len(seeds)} seeds; {LAB.gpus} GPUs, a point on one; a queue delay of mean"
        f" {LAB.queue:g} min; a point's run time its share of {LAB.full / HOUR:g} h (the mean"
        f" at {count(MAX_STEPS)} steps) times a log-normal factor of mean 1, σ {LAB.sigma:g};"
        f" Submit every {LAB.submit_every:g} min, Propose hourly at :{LAB.propose_at:02g}; a"
        f" review {LAB.review / HOUR:g} h; {time.perf_counter() - started:.0f} s of simulation."
        " Ratios are medians of each seed's ratio (quartiles in brackets); a search that never"
        " reaches the target counts as infinitely slow."
    )
    return rows
