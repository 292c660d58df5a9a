"""The lab (tests/benchmarks/lab): its own truths (a point never runs on a busy GPU nor before
Beaker may place it, first come first served, the clock never goes back, a review delays
exactly the steps after it, the same seed gives the same figures), that each strategy decides
with the runner's functions (every Submit or Propose run's points recomputed from the record
with `next_rung`, `asha.step` and `next_round`), and what "reached" measures. Figures are the
benchmark's (`python -m tests.benchmarks --only lab`); nothing here bounds a time."""

from __future__ import annotations

import dataclasses
import itertools
import math

import pytest

from runner.core.locked import Locked, RungLock
from runner.core.model import Cell
from runner.search import asha, rungs
from runner.search.points import Result, Told
from runner.search.rounds import RoundVerdict, SoFar, next_round, next_rung
from runner.search.rungs import SuccessiveHalving
from tests.benchmarks.lab.families import curve, saturating, spearman
from tests.benchmarks.lab.figures import Reach, busy, reach, reached_at, target
from tests.benchmarks.lab.searches import AsyncHalving, Rounds, SyncHalving, halving_of
from tests.benchmarks.lab.world import HOUR, Job, Lab, Mode, Point, Run, simulate

LAB = Lab(full=12 * HOUR)


def _halving(seed: int = 1, configurations: int = 81) -> SuccessiveHalving:
    return halving_of(configurations, seed)


def _runs(lab: Lab = LAB, seed: int = 1) -> dict[str, Run]:
    halving = _halving(seed)
    return {
        "reviewed": simulate(lab, SyncHalving(halving, curve, seed), Mode.REVIEWED, seed),
        "sync": simulate(lab, SyncHalving(halving, curve, seed), Mode.AUTO, seed),
        "async": simulate(lab, AsyncHalving(halving, saturating, seed), Mode.AUTO, seed),
    }


def _timeline(run: Run) -> list[tuple[float, float, int, str]]:
    return [(j.created, j.started, j.gpu, j.key) for j in run.jobs]


def test_a_point_never_runs_on_a_busy_gpu_nor_before_it_may_be_placed() -> None:
    for name, run in _runs().items():
        assert all(not j.live for j in run.jobs), name
        by_gpu: dict[int, list[Job]] = {}
        for job in run.jobs:
            assert job.created <= job.eligible <= job.started < job.ended, name
            assert math.isclose(job.ended - job.started, job.duration), name
            by_gpu.setdefault(job.gpu, []).append(job)
        assert set(by_gpu) <= set(range(LAB.gpus)), name
        for jobs in by_gpu.values():
            ordered = sorted(jobs, key=lambda j: j.started)
            assert all(a.ended <= b.started for a, b in itertools.pairwise(ordered)), name


def test_a_point_waits_its_turn_and_only_while_every_gpu_is_busy() -> None:
    run = _runs()["async"]
    for a in run.jobs:
        for b in run.jobs:
            if a.eligible < b.eligible:
                assert a.started <= b.started  # first come, first served
        if a.started > a.eligible:  # it waited: all GPUs were busy until it started
            busy_then = [b for b in run.jobs if b.started <= a.eligible < b.ended]
            assert len(busy_then) == LAB.gpus


def test_with_promoted_points_first_a_higher_rung_never_waits_behind_a_lower() -> None:
    run = _runs(dataclasses.replace(LAB, promoted_first=True))["async"]
    for b in run.jobs:
        passed = [
            a
            for a in run.jobs
            if a.point.rung > b.point.rung and a.eligible <= b.started < a.started
        ]
        assert passed == []
    assert any(j.point.rung > 0 for j in run.jobs)


def test_the_clock_never_goes_back_and_the_search_ends_when_its_last_point_does() -> None:
    for run in _runs().values():
        assert list(run.clock) == sorted(run.clock) and run.clock[0] >= 0
        assert run.clock[-1] == run.end == max(j.ended for j in run.jobs)


def test_a_review_delays_exactly_the_steps_after_it() -> None:
    seed, halving = 2, _halving(2)
    runs = {
        hours: simulate(
            dataclasses.replace(LAB, review=hours * HOUR),
            SyncHalving(halving, curve, seed),
            Mode.REVIEWED,
            seed,
        )
        for hours in (1, 4)
    }
    for hours, run in runs.items():
        assert len(run.reviews) == halving.last and run.human_actions == 1 + halving.last
        for k, review in enumerate(run.reviews):
            assert review.merged - review.opened == hours * HOUR
            last_end = max(j.ended for j in run.jobs if j.point.rung == k)
            ticks = (LAB.propose_at + i * LAB.propose_every for i in range(10_000))
            assert review.opened == next(t for t in ticks if t >= last_end)
            promoted = [j for j in run.jobs if j.point.rung == k + 1]
            assert {j.created for j in promoted} == {review.merged}
            assert len(promoted) == review.points
    # rung 0, which no review precedes, is the same; every later rung starts later
    early, late = (runs[h] for h in (1, 4))
    assert [j for j in early.jobs if j.point.rung == 0] == [
        j for j in late.jobs if j.point.rung == 0
    ]
    assert early.reviews[0].opened == late.reviews[0].opened
    later = [b.opened - a.opened for a, b in zip(early.reviews, late.reviews, strict=True)]
    assert all(later[k] > 3 * HOUR * k - LAB.propose_every for k in range(1, len(later)))
    # `advance: auto` opens no pull request: the review delays nothing
    auto = [
        simulate(
            dataclasses.replace(LAB, review=h * HOUR),
            SyncHalving(halving, curve, seed),
            Mode.AUTO,
            seed,
        )
        for h in (1, 4)
    ]
    assert auto[0] == auto[1] and auto[0].reviews == () and auto[0].human_actions == 1


def test_without_a_submit_on_merge_the_next_scheduled_submit_creates_the_merged_points() -> None:
    lab = dataclasses.replace(LAB, submit_on_merge=False)
    run = _runs(lab)["reviewed"]
    for k, review in enumerate(run.reviews):
        created = {j.created for j in run.jobs if j.point.rung == k + 1}
        (when,) = created
        assert when >= review.merged and when % LAB.submit_every == 0
        assert when - review.merged < LAB.submit_every


def test_the_same_seed_gives_the_same_figures_and_another_seed_others() -> None:
    first, again, other = _runs(seed=3), _runs(seed=3), _runs(seed=4)
    for name in first:
        assert _timeline(first[name]) == _timeline(again[name])
        assert reach(first[name], 0.3) == reach(again[name], 0.3)
        assert _timeline(first[name]) != _timeline(other[name])


def test_a_point_takes_the_same_time_in_every_strategy() -> None:
    runs = _runs()
    by_key = {j.key: (j.eligible - j.created, j.duration) for j in runs["reviewed"].jobs}
    for run in (runs["sync"], runs["async"]):
        shared = [j for j in run.jobs if j.key in by_key]
        assert len(shared) >= len(_halving().configurations)
        for job in shared:
            assert by_key[job.key] == pytest.approx((job.eligible - job.created, job.duration))


# -- each strategy decides with the runner's functions ----------------------------------------


def _observed_at(run: Run, time: float) -> list[Told]:
    """What a run at `time` saw: every point created before, done if it had ended by then."""
    return [
        Told(j.point.row, Result.DONE, j.point.value, j.key, j.key)
        if j.ended <= time
        else Told(j.point.row, Result.PENDING, None, j.key, j.key)
        for j in run.jobs
        if j.created < time
    ]


def _created_at(run: Run, time: float) -> list[Point]:
    return [j.point for j in run.jobs if j.created == time]


def test_the_synchronous_strategy_promotes_what_rungs_promote_on_the_same_results() -> None:
    halving, run = _halving(), _runs()["reviewed"]
    every = _observed_at(run, math.inf)
    rows: list[tuple[Cell, ...]] = []
    numbers: list[int] = []
    for k in range(halving.last):
        told = rungs.rung_told(halving, (tuple(rows), tuple(numbers)), every, k)
        kept = rungs.promote(halving, told)
        assert [j.point.row[:3] for j in run.jobs if j.point.rung == k + 1] == kept
        rows, numbers = [*rows, *kept], [*numbers, *(k + 1,) * len(kept)]


def test_every_automatic_step_is_next_rung_of_what_that_run_saw() -> None:
    halving, run = _halving(), _runs()["sync"]
    lock: Locked | None = None
    for time, count in run.runs[1:]:
        found = next_rung(halving, lock, SoFar(tuple(_observed_at(run, time))))
        assert found.verdict is RoundVerdict.PROPOSED
        assert [p.row[:3] for p in _created_at(run, time)] == list(found.new)
        assert count == len(found.new)
        promoted = tuple(zip(found.rounds, found.rows, strict=True))
        lock = Locked("", (), rungs=RungLock(halving.of, halving.names, promoted))


def test_every_asynchronous_step_is_asha_of_what_that_run_saw() -> None:
    halving, run = _halving(), _runs()["async"]
    for time, _ in run.runs[1:]:
        before = [j for j in run.jobs if j.created < time and j.point.rung > 0]
        promoted = (tuple(j.point.row[:3] for j in before), tuple(j.point.rung for j in before))
        cuts = asha.step(halving, promoted, _observed_at(run, time))
        new = [(c.rung + 1, row) for c in cuts for row in c.promoted]
        assert [(p.rung, p.row[:3]) for p in _created_at(run, time)] == new
    assert len(run.runs) > halving.last + 1  # it promoted in more runs than there are rungs


def test_an_asynchronous_halving_with_a_rung_smaller_than_eta_still_ends() -> None:
    # 27 configurations over 5 rungs: 27, 9, 3, 1, then 1 (a rung of one is cut as a whole)
    halving = _halving(5, 27)
    run = simulate(LAB, AsyncHalving(halving, curve, 5), Mode.AUTO, 5)
    assert [p for p in (j.point for j in run.jobs) if p.share == 1]
    assert max(j.point.rung for j in run.jobs) == halving.last


def test_tpe_in_rounds_proposes_with_next_round_and_the_same_points_either_way() -> None:
    seed = 1
    reviewed = simulate(LAB, Rounds(curve, seed, batch=4, rounds=3), Mode.REVIEWED, seed)
    auto = simulate(LAB, Rounds(curve, seed, batch=4, rounds=3), Mode.AUTO, seed)
    assert [j.point.row for j in reviewed.jobs] == [j.point.row for j in auto.jobs]
    assert reviewed.human_actions == 3 and auto.human_actions == 1
    assert auto.end < reviewed.end
    search = Rounds(curve, seed, batch=4, rounds=3)
    lock = None
    for time, _ in auto.runs:
        found = next_round(search.sample, search.aims, lock, SoFar(tuple(_observed_at(auto, time))))
        assert [p.row for p in _created_at(auto, time)] == list(found.new)
        lock = Locked(search.sample.digest, found.rows, found.rounds)


# -- what is measured ---------------------------------------------------------------------------


def _job(value: float, share: float, started: float, ended: float) -> Job:
    return Job(
        Point((value, share), share, value),
        f"{value}/{share}",
        0,
        0,
        ended - started,
        0,
        started,
        ended,
    )


def test_reached_is_the_first_full_budget_point_at_least_as_good_and_busy_counts_up_to_it() -> None:
    run = Run(
        (
            _job(0.1, 1 / 3, 0, 60),  # better, but not at the full budget
            _job(0.5, 1.0, 0, 120),  # full budget, worse
            _job(0.2, 1.0, 60, 240),  # reaches 0.2
            _job(0.15, 1.0, 120, 300),  # better, later
        ),
        (),
        (),
        (),
    )
    assert target(run) == 0.15
    assert reached_at(run, 0.2) == 240 and reached_at(run, 0.1) == math.inf
    assert busy(run, 240) == (60 + 120 + 180 + 120) / HOUR
    found = reach(run, 0.2)
    assert found == Reach(4.0, 8.0, 1, 5.0, busy(run, 300)) and found.reached
    never = reach(run, 0.01)
    assert not never.reached and never.gpu == math.inf


def test_the_second_family_is_deterministic_and_its_early_ranks_say_less() -> None:
    x = (0.3, 0.8, 0.5)
    assert saturating(x, 300, 2) == saturating(x, 300, 2) != saturating(x, 300, 3)
    assert spearman([1, 2, 3], [10, 20, 30]) == pytest.approx(1)
    assert spearman([1, 2, 3], [3, 2, 1]) == pytest.approx(-1)
    rows = _halving(0).configurations
    pairs = {
        f.__name__: spearman(
            [f([float(v or 0) for v in r], 100, 0) for r in rows],
            [f([float(v or 0) for v in r], 8100, 0) for r in rows],
        )
        for f in (curve, saturating)
    }
    assert pairs["saturating"] < pairs["curve"]
