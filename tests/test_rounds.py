"""An adaptive search's next step as data (`runner.search.rounds.next_round`): a pure function of
the sample, its lock and what was observed, which proposes, waits, stops, ends at n or runs out
of points; and `propose`'s use case observing through the port (the fake at the port, no wire)."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

from runner.apply import ApplyOptions, apply
from runner.backends import ExperimentState
from runner.commands.propose import same_code
from runner.core.aims import Aim, Aims, Goal
from runner.core.locked import Locked
from runner.core.sample import Distribution, Kind, Method, Sample
from runner.core.search import Adaptive, Search
from runner.locking.proposing import proposals
from runner.manifest import Locks
from runner.observe import sweeps
from runner.plan import catalog
from runner.search import rounds
from runner.search.points import Result, Told
from runner.search.rounds import Next, Round, RoundVerdict, SoFar, next_round
from tests.fake_backend import FakeBackend
from tests.helpers import TPE_SEARCH, Quiet, head, write_manifest

SPACE = (Distribution("x", Kind.UNIFORM, (0.0, 1.0)), Distribution("k", Kind.INT, (1, 4)))
SAMPLE = Sample(Method.TPE, 8, 0, 4, SPACE, batch=4)
AIMS = Aims((Aim("loss", Goal.MINIMIZE),))


def _search(sample: Sample, lock: Locked | None) -> Search:
    return Search(Adaptive(sample), AIMS, lock)


def _first(sample: Sample = SAMPLE) -> tuple[Next, Locked]:
    """Round 0, proposed from nothing, and the lock it makes."""
    step = next_round(sample, AIMS, None, SoFar())
    return step, Locked(sample.digest, step.rows, step.rounds)


def _told(lock: Locked, *values: float | None) -> tuple[Told, ...]:
    """The lock's points observed: finished with each value given, failed for None."""
    return tuple(
        Told(row, Result.DONE, v) if v is not None else Told(row, Result.FAILED)
        for row, v in zip(lock.rows, values, strict=False)
    )


def test_round_0_is_proposed_from_nothing_and_asks_for_no_result() -> None:
    assert not rounds.observes(_search(SAMPLE, None))
    step, lock = _first()
    assert step.verdict is RoundVerdict.PROPOSED and step.number == 0
    assert len(step.new) == 4 and step.rows == step.new and step.rounds == (0,) * 4
    assert step.previous == () and step.best is None and step.finished == 0
    assert next_round(SAMPLE, AIMS, None, SoFar()) == step  # the same inputs, the same data
    assert rounds.observes(_search(SAMPLE, lock))


def test_a_round_waits_for_the_last_one_to_finish_then_the_next_follows() -> None:
    _, lock = _first()
    waits = next_round(SAMPLE, AIMS, lock, SoFar(_told(lock, 0.5)))  # 1 of 4 finished
    assert waits.verdict is RoundVerdict.WAITING and waits.number == 0
    assert waits.ended == 1 and len(waits.previous) == 4 and waits.new == ()
    assert waits.rows == lock.rows and waits.rounds == lock.rounds  # nothing to write

    half = dataclasses.replace(SAMPLE, proceed=0.5)
    assert next_round(half, AIMS, lock, SoFar(_told(lock, 0.5))).verdict is RoundVerdict.WAITING
    step = next_round(half, AIMS, lock, SoFar(_told(lock, 0.5, None)))  # a failure has ended too
    assert step.verdict is RoundVerdict.PROPOSED and step.number == 1
    assert step.rows[:4] == lock.rows and len(step.rows) == 8
    assert step.rounds == (0,) * 4 + (1,) * 4
    assert not set(step.new) & set(lock.rows)
    assert [t.result for t in step.previous] == [Result.DONE, Result.FAILED] + [Result.PENDING] * 2


def test_the_best_so_far_follows_the_goal() -> None:
    _, lock = _first()
    told = SoFar(_told(lock, 3.0, 1.0, None, 2.0))
    lowest = next_round(SAMPLE, AIMS, lock, told)
    assert lowest.best == told.told[1] and lowest.finished == 3
    highest = next_round(SAMPLE, Aims((Aim("loss", Goal.MAXIMIZE),)), lock, told)
    assert highest.best == told.told[0]


def test_a_stop_ends_the_search_at_once_even_while_its_round_runs() -> None:
    _, lock = _first()
    said = "stopped: 1 failed (max_failures 1)"
    step = next_round(SAMPLE, AIMS, lock, SoFar(_told(lock, None, 1.0, 1.0, 1.0), said))
    assert step.verdict is RoundVerdict.STOPPED and step.stop == said and step.new == ()
    # the round's other points not submitted yet: the stop holds them, so they never end; the
    # search says it stopped and why instead of waiting for them forever
    early = next_round(SAMPLE, AIMS, lock, SoFar(_told(lock, None), said))
    assert early.verdict is RoundVerdict.STOPPED and early.stop == said


def test_the_search_ends_at_n_and_when_the_space_runs_out() -> None:
    _, lock = _first()
    done = next_round(SAMPLE, AIMS, lock, SoFar(_told(lock, 1.0, 2.0, 3.0, 4.0)))
    full = Locked(SAMPLE.digest, done.rows, done.rounds)
    assert not rounds.observes(_search(SAMPLE, full))
    complete = next_round(SAMPLE, AIMS, full, SoFar())
    assert complete.verdict is RoundVerdict.COMPLETE and complete.rows == full.rows

    small = Sample(Method.TPE, 8, 0, 4, (Distribution("k", Kind.INT, (1, 3)),), batch=4)
    first, three = _first(small)
    assert len(first.new) == 3  # the space has only three points
    out = next_round(small, AIMS, three, SoFar(_told(three, 1.0, 2.0, 3.0)))
    assert out.verdict is RoundVerdict.EXHAUSTED and out.new == ()


def test_a_lock_of_another_sample_starts_afresh_and_unobserved_points_are_pending() -> None:
    _, lock = _first()
    other = dataclasses.replace(SAMPLE, seed=1)  # another digest: the lock is not its own
    assert not rounds.observes(_search(other, lock))
    assert next_round(other, AIMS, lock, SoFar()).number == 0
    matched = rounds.told_rows(lock.rows, (Told(lock.rows[2], Result.DONE, 0.1),))
    assert [t.result for t in matched] == [Result.PENDING] * 2 + [Result.DONE, Result.PENDING]


SEARCH = (
    head("search")
    + '    command: [python, train.py, "--x={x}", "--k={k}"]\n'
    + TPE_SEARCH
    + "      k: {int: [1, 4]}\n"
)


@pytest.mark.slow
def test_propose_observes_the_sweep_through_the_port_once_per_round(tmp_path: Path) -> None:
    write_manifest(tmp_path, SEARCH, "search.yaml")
    shown = "sweeps/search.yaml"
    backend = FakeBackend()

    def step() -> Round | None:
        backend.calls.clear()
        cat = catalog.load(tmp_path, [shown], Locks.MAY_BE_STALE)
        found = proposals(cat, sweeps.observer(cat, backend), same_code(tmp_path))
        return found[0].round if found else None

    first = step()
    assert first is not None and first.step.number == 0 and backend.calls == []
    assert first.lock == "sweeps/search.lock.json"
    assert (tmp_path / first.lock).read_text(encoding="utf-8") == first.text

    apply(catalog.load(tmp_path, ()).plans(), backend, ApplyOptions(tmp_path), Quiet())
    assert step() is None  # submitted, queued: round 0 waits
    assert [c for c, _ in backend.calls] == ["results", "list"]

    for i, name in enumerate(sorted(backend.made)):
        made = backend.made[name][-1]
        finished = ExperimentState.SUCCEEDED if i else ExperimentState.FAILED
        backend.made[name][-1] = dataclasses.replace(made, state=finished, metrics={"loss": i})
    second = step()
    assert second is not None and second.step.number == 1
    assert [c for c, _ in backend.calls] == ["results", "list"]  # one bulk look-up
    previous = sorted(t.result.name for t in second.step.previous)
    assert previous == ["DONE"] * 3 + ["FAILED"]  # one failed, three finished with a loss
    lock = json.loads((tmp_path / second.lock).read_text(encoding="utf-8"))
    assert lock["rounds"] == [0] * 4 + [1] * 4 and lock["points"][:4] == [
        list(r) for r in first.step.rows
    ]
