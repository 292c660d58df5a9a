"""Asynchronous promotion (`runner.search.asha`): a rung's points go on as soon as they rank in
the top floor(m / eta) of the m ended, never a pending or failed one, never taken back; over
time it may promote more than synchronous halving (at most m - eta + 1), always what the
synchronous rule keeps once the rung has ended, exactly that when the best end first; and a
rung too small for the rule is cut as a whole once it can get no more points."""

from __future__ import annotations

import dataclasses
import random
from collections.abc import Sequence
from dataclasses import dataclass

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from runner.core.aims import Aim, Goal
from runner.core.ladder import Ladder
from runner.core.locked import Locked, Rows, RungLock
from runner.core.model import Cell
from runner.core.sample import row_identity
from runner.search import asha, rungs
from runner.search.points import Result, Told
from runner.search.rounds import RoundVerdict, SoFar, next_rung
from runner.search.rungs import SuccessiveHalving

FAILED, NO_METRIC = "failed", "no metric"
Outcome = float | str
"""How a point ends: its metric, or failed, or finished without the metric."""


def _halving(n: int, eta: int = 3, goal: Goal = Goal.MINIMIZE) -> SuccessiveHalving:
    ladder = Ladder("steps", (1, eta, eta * eta), eta)
    configurations = tuple((float(i),) for i in range(n))
    return SuccessiveHalving(ladder, Aim("loss", goal), ("x",), configurations, "of")


def _told(halving: SuccessiveHalving, outcomes: dict[int, Outcome]) -> list[Told]:
    """Rung 0's points as the rule is told them: those in `outcomes` ended, the rest pending."""
    out = []
    for i, row in enumerate(halving.configurations):
        key, outcome = f"key-{i:03d}", outcomes.get(i)
        if outcome is None:
            out.append(Told(row, Result.PENDING, key=key))
        elif outcome == FAILED:
            out.append(Told(row, Result.FAILED, key=key))
        elif outcome == NO_METRIC:
            out.append(Told(row, Result.DONE, key=key))
        else:
            out.append(Told(row, Result.DONE, float(outcome), key))
    return out


def _ids(rows: Sequence[tuple[Cell, ...]]) -> set[str]:
    return {row_identity(r) for r in rows}


def _x(row: Sequence[Cell]) -> float:
    """A configuration's one value (configuration i is `(float(i),)`)."""
    assert isinstance(row[0], float)
    return row[0]


@dataclass(frozen=True)
class Life:
    """A rung's life: how each point ends, the order they end in, and after how many endings
    the scheduled run decides (always once all have)."""

    halving: SuccessiveHalving
    outcomes: tuple[Outcome, ...]
    order: tuple[int, ...]
    decisions: tuple[int, ...]


outcomes = st.one_of(
    st.sampled_from([0.1, 0.2, 0.5, 0.9]),  # ties
    st.floats(0, 1, allow_nan=False),
    st.just(FAILED),
    st.just(NO_METRIC),
)


@st.composite
def lives(draw: st.DrawFn) -> Life:
    n = draw(st.integers(1, 24))
    eta = draw(st.integers(2, 4))
    goal = draw(st.sampled_from(list(Goal)))
    ends = tuple(draw(st.lists(outcomes, min_size=n, max_size=n)))
    order = tuple(draw(st.permutations(range(n))))
    decisions = draw(st.sets(st.integers(0, n), max_size=n))
    return Life(_halving(n, eta, goal), ends, order, tuple(sorted({*decisions, n})))


def _run(life: Life) -> tuple[set[str], list[tuple[list[Told], set[str], asha.Cut]]]:
    """The rung's life decided at each decision point: what is in the next rung at the end, and
    each decision with what it was told and what was above before it."""
    above: set[str] = set()
    seen = []
    for count in life.decisions:
        ended = {i: life.outcomes[i] for i in life.order[:count]}
        told = _told(life.halving, ended)
        decided = asha.cut(life.halving, 0, told, above)
        seen.append((told, set(above), decided))
        above |= _ids(decided.promoted)
    return above, seen


@settings(max_examples=300, deadline=None)
@given(lives())
def test_a_decision_promotes_only_ended_finished_points_at_most_m_over_eta_and_never_again(
    life: Life,
) -> None:
    eta = life.halving.ladder.eta
    for told, above, decided in _run(life)[1]:
        finished = {
            row_identity(t.row) for t in told if t.result == Result.DONE and t.value is not None
        }
        m = sum(t.result != Result.PENDING for t in told)
        new = _ids(decided.promoted)
        assert new <= finished and not new & above  # never pending, failed, nor promoted twice
        assert len(decided.promoted) == len(new) <= (m // eta if m >= eta else 0)
        assert decided.ended == m and decided.pending == len(told) - m
        assert asha.promotable(life.halving, 0, told, above) == list(decided.promoted)
        # after it, every point of the top floor(m / eta) is in the next rung
        assert _ids([t.row for t in decided.top]) <= above | new
        assert len(decided.top) == min(decided.keep, len(finished))


@settings(max_examples=300, deadline=None)
@given(lives())
def test_over_a_rungs_life_at_most_m_minus_eta_plus_one_go_on_and_all_that_sync_keeps(
    life: Life,
) -> None:
    above, seen = _run(life)
    n, eta = len(life.outcomes), life.halving.ladder.eta
    assert len(above) <= max(0, n - eta + 1)
    everything = seen[-1][0]
    synchronous = _ids(rungs.promote(life.halving, everything))
    if n >= eta:
        assert synchronous <= above  # the same ranking, once every point has ended
    else:
        assert above == set()  # fewer than eta never promote by the rule alone (see `step`)


@settings(max_examples=200, deadline=None)
@given(lives())
def test_when_the_best_end_first_it_promotes_exactly_what_sync_keeps(life: Life) -> None:
    everything = _told(life.halving, dict(enumerate(life.outcomes)))
    best_first = [int(_x(t.row)) for t in rungs.ranked(life.halving, everything)]
    above, _ = _run(dataclasses.replace(life, order=tuple(best_first)))
    if len(everything) >= life.halving.ladder.eta:
        assert above == _ids(rungs.promote(life.halving, everything))


@settings(max_examples=200, deadline=None)
@given(lives(), st.randoms(use_true_random=False))
def test_the_order_points_are_told_in_never_matters(life: Life, shuffler: random.Random) -> None:
    for told, above, decided in _run(life)[1]:
        shuffled = list(told)
        shuffler.shuffle(shuffled)
        again = asha.cut(life.halving, 0, shuffled, above)
        assert again == decided


def test_the_bound_is_reached_when_each_point_ends_better_than_all_before() -> None:
    # 9 points, eta 3, ending worst first and decided after each ending: from the 3rd on, each
    # newcomer is the best so far and goes on: 7 promoted, where synchronous halving keeps 3
    halving = _halving(9)
    life = Life(halving, tuple(float(9 - i) for i in range(9)), tuple(range(9)), tuple(range(10)))
    above, seen = _run(life)
    assert [len(c.promoted) for _, _, c in seen] == [0, 0, 0, 1, 1, 1, 1, 1, 1, 1]
    assert len(above) == 7 and len(rungs.promote(halving, seen[-1][0])) == 3


def test_ties_break_by_key_then_the_cut_ranks_failed_and_metricless_points_last() -> None:
    halving = _halving(6)
    # keys key-000..key-005; 2 and 4 tie at 0.2 (key-002 first); 0 failed; 1 has no metric
    told = _told(halving, {0: FAILED, 1: NO_METRIC, 2: 0.2, 3: 0.7, 4: 0.2, 5: 0.3})
    decided = asha.cut(halving, 0, list(reversed(told)), set())
    assert [t.row[0] for t in decided.ranked] == [2.0, 4.0, 5.0, 3.0, 0.0, 1.0]
    assert decided.keep == 2 and decided.promoted == ((2.0,), (4.0,))
    # a point already above is not promoted again, and does not make room for another
    assert asha.promotable(halving, 0, told, {row_identity((2.0,))}) == [(4.0,)]
    maximize = dataclasses.replace(halving, aim=Aim("acc", Goal.MAXIMIZE))
    assert asha.promotable(maximize, 0, told, set()) == [(3.0,), (5.0,)]


def test_fewer_than_eta_ended_promotes_nothing_however_good() -> None:
    halving = _halving(9)
    told = _told(halving, {0: 0.01, 1: 0.02})
    decided = asha.cut(halving, 0, told, set())
    assert decided.keep == 0 and decided.promoted == () and decided.pending == 7
    assert [t.row for t in decided.ranked] == [(0.0,), (1.0,)]


def test_the_last_rung_promotes_nowhere() -> None:
    halving = _halving(9)
    with pytest.raises(ValueError, match="rung 2: only a rung below the last"):
        asha.promotable(halving, halving.last, [], set())


# -- step: every rung at once, and the settled rung -----------------------------------------


def _observed(halving: SuccessiveHalving, ends: dict[tuple[int, float], float]) -> list[Told]:
    """Points observed as (rung, configuration) -> metric: rows of configuration, budget, rung."""
    return [
        Told((x, halving.ladder.values[k], k), Result.DONE, v, f"key-{k}-{x}")
        for (k, x), v in ends.items()
    ]


def _promoted(pairs: Sequence[tuple[int, float]]) -> tuple[Rows, tuple[int, ...]]:
    return tuple((x,) for _, x in pairs), tuple(k for k, _ in pairs)


def test_a_rung_too_small_for_the_rule_is_cut_as_a_whole_once_it_can_get_no_more() -> None:
    # 4 configurations, eta 3: rung 0 promotes 1 (floor(4/3)); rung 1 then holds one point,
    # which the rule alone would never promote (1 < eta): the halving would stall
    halving = _halving(4)
    loss = {(0, 0.0): 0.4, (0, 1.0): 0.1, (0, 2.0): 0.3, (0, 3.0): 0.2}
    first = asha.step(halving, ((), ()), _observed(halving, loss))
    assert first[0].promoted == ((1.0,),) and first[0].settled and first[1].promoted == ()
    promoted = _promoted([(1, 1.0)])
    told = {**loss, (1, 1.0): 0.05}
    assert asha.promotable(halving, 1, rungs.rung_told(halving, promoted, [], 1), set()) == []
    second = asha.step(halving, promoted, _observed(halving, told))
    assert second[0].promoted == () and second[1].settled and second[1].promoted == ((1.0,),)


def test_a_rung_is_not_settled_while_the_rung_below_may_promote_into_it() -> None:
    halving = _halving(4)
    promoted = _promoted([(1, 1.0)])
    # rung 0 still has a pending point: rung 1's lone ended point waits
    early = {(0, 0.0): 0.4, (0, 1.0): 0.1, (0, 2.0): 0.3, (1, 1.0): 0.05}
    cuts = asha.step(halving, promoted, _observed(halving, early))
    assert not cuts[0].settled and cuts[0].pending == 1
    assert not cuts[1].settled and cuts[1].promoted == ()


@settings(max_examples=60, deadline=None)
@given(
    st.integers(1, 30),
    st.integers(2, 4),
    st.lists(st.floats(0, 1, allow_nan=False), min_size=30 * 3, max_size=30 * 3),
)
def test_when_every_decision_sees_whole_rungs_async_is_sync(
    n: int, eta: int, values: list[float]
) -> None:
    """Decide only once everything submitted has ended: `step` promotes rung by rung exactly as
    `next_rung` does (the same ranking, `kept(n)` of each rung)."""
    halving = _halving(n, eta)
    loss = {(k, float(i)): values[k * 30 + i] for k in range(3) for i in range(n)}
    pairs: list[tuple[int, float]] = []
    sync: Locked | None = None
    for rung in range(halving.last):
        promoted = _promoted(pairs)
        ended = [*((0, float(i)) for i in range(n)), *pairs]
        observed = _observed(halving, {p: loss[p] for p in ended})
        cuts = asha.step(halving, promoted, observed)
        step = next_rung(halving, sync, SoFar(tuple(observed)))
        assert step.verdict is RoundVerdict.PROPOSED and step.number == rung + 1
        assert [c.promoted for c in cuts if c.promoted] == [step.new]
        pairs += [(rung + 1, _x(r)) for r in step.new]
        sync = Locked("", (), rungs=RungLock("of", ("x",), tuple((k, (x,)) for k, x in pairs)))
