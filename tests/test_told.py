"""A point a search is told of (`runner.analysis.told`): one a plain `submit` resumes after a
preemption is pending, never failed. So a halving's rung waits for it and promotes it once it
has finished, and an adaptive search does not hand it to Optuna as a failed trial; one past
`max_preemptions`, or past its timeout, has ended. On the fake at the port."""

from __future__ import annotations

import dataclasses
from pathlib import Path

from runner.analysis.told import told
from runner.apply import ApplyOptions, apply
from runner.backends import EndCause, Ended, Experiment, ExperimentState, Results
from runner.commands.propose import same_code
from runner.locking.proposing import proposals
from runner.manifest import Locks
from runner.observe import sweeps
from runner.observe.join import Seen, observation
from runner.plan import SweepPlan, catalog
from runner.search.points import Result
from runner.search.rounds import RoundVerdict
from tests.fake_backend import FakeBackend
from tests.helpers import TPE_SEARCH, Quiet, halving, head, write_manifest

SHOWN = "sweeps/halving.yaml"
LOSS: dict[tuple[float, float], float] = {
    (0.1, 0.0): 3.0, (0.1, 0.1): 2.8, (0.1, 0.2): 2.9,
    (0.01, 0.0): 0.7, (0.01, 0.1): 0.4, (0.01, 0.2): 0.6,
    (0.001, 0.0): 0.8, (0.001, 0.1): 0.5, (0.001, 0.2): 0.45,
}  # fmt: skip
BEST = (0.01, 0.1)


def _submit(root: Path, backend: FakeBackend) -> None:
    """A plain submit, as the schedule runs it."""
    apply(catalog.load(root, ()).plans(), backend, ApplyOptions(root), Quiet())


def _rung_0(root: Path, backend: FakeBackend) -> dict[tuple[float, float], str]:
    """Each rung-0 point's experiment, by (lr, wd)."""
    (plan,) = catalog.load(root, ()).plans()
    return {
        (float(p["lr"]), float(p["wd"])): row.name
        for row in plan.rows
        if (p := dict(row.params))["rung"] == 0
    }


def _step(root: Path, backend: FakeBackend) -> tuple[RoundVerdict, tuple[object, ...]]:
    cat = catalog.load(root, [SHOWN], Locks.MAY_BE_STALE)
    (proposed,) = proposals(cat, sweeps.observer(cat, backend), same_code(root))
    return proposed.done.step.verdict, proposed.done.step.new


def test_a_rung_with_a_preempted_point_waits_for_it_then_promotes_it(tmp_path: Path) -> None:
    write_manifest(tmp_path, halving(), "halving.yaml")
    backend = FakeBackend()
    _submit(tmp_path, backend)
    names = _rung_0(tmp_path, backend)
    for config, name in names.items():
        if config == BEST:
            backend.end(name, ExperimentState.RUNNING)
            backend.preempt(name)  # the best configuration, preempted halfway
        else:
            backend.end(name, ExperimentState.SUCCEEDED, metrics={"loss": LOSS[config]})

    verdict, new = _step(tmp_path, backend)
    assert verdict is RoundVerdict.WAITING and new == ()  # neither ranked last nor promoted

    _submit(tmp_path, backend)  # the schedule resumes it
    assert backend.restarted[names[BEST]] == 1
    assert backend.made[names[BEST]][-1].state is ExperimentState.QUEUED
    assert _step(tmp_path, backend)[0] is RoundVerdict.WAITING  # running again: still pending

    backend.end(names[BEST], ExperimentState.SUCCEEDED, metrics={"loss": LOSS[BEST]})
    verdict, new = _step(tmp_path, backend)
    assert verdict is RoundVerdict.PROPOSED
    assert new == (BEST, (0.001, 0.2), (0.001, 0.1))  # the resumed point is the best


def test_a_rung_ranks_a_point_past_max_preemptions_as_ended(tmp_path: Path) -> None:
    """Past `max_preemptions` nothing resumes a point: the rung does not wait for ever."""
    text = halving().replace("params:\n", "max_preemptions: 0\nparams:\n", 1)
    write_manifest(tmp_path, text, "halving.yaml")
    backend = FakeBackend()
    _submit(tmp_path, backend)
    for config, name in _rung_0(tmp_path, backend).items():
        if config == BEST:
            backend.preempt(name)
        else:
            backend.end(name, ExperimentState.SUCCEEDED, metrics={"loss": LOSS[config]})
    _submit(tmp_path, backend)
    assert sum(backend.restarted.values()) == 0
    verdict, new = _step(tmp_path, backend)
    assert verdict is RoundVerdict.PROPOSED and BEST not in new


ADAPTIVE = head("tpe") + '    command: [python, train.py, "--x={x}"]\n' + TPE_SEARCH


def _seen(root: Path, backend: FakeBackend) -> tuple[SweepPlan, dict[str, Experiment]]:
    (plan,) = catalog.load(root, ()).plans()
    return plan, {row.name: backend.made[row.name][-1] for row in plan.rows if row.entry}


def test_an_adaptive_search_is_told_a_resumed_point_is_pending_and_a_timeout_failed(
    tmp_path: Path,
) -> None:
    write_manifest(tmp_path, ADAPTIVE, "tpe.yaml")
    backend = FakeBackend()
    cat = catalog.load(tmp_path, [], Locks.MAY_BE_STALE)
    found = proposals(cat, sweeps.observer(cat, backend), same_code(tmp_path))
    assert found and found[0].round is not None  # round 0 proposed and written
    _submit(tmp_path, backend)
    plan, made = _seen(tmp_path, backend)
    preempted, resumed, slow, done = list(made)
    backend.preempt(preempted)
    backend.end(resumed, ExperimentState.RUNNING)
    backend.preempt(resumed, resume=True)  # Beaker queued it again by itself
    timeout = Ended(EndCause.TIMED_OUT, "exceeded its timeout", 3600.0, 0)
    backend.end(slow, ExperimentState.CANCELED, ended=timeout)
    backend.end(done, ExperimentState.SUCCEEDED, metrics={"loss": 0.5})
    _, made = _seen(tmp_path, backend)

    seen = observation(plan, Seen(Results(None, made)))
    by_name = {t.name: t.result for t in told(seen, ("x",))}
    assert by_name == {
        preempted: Result.PENDING,  # the next submit resumes it: not a failed trial
        resumed: Result.PENDING,
        slow: Result.FAILED,  # a timeout is the run's own failure
        done: Result.DONE,
    }
    capped = dataclasses.replace(
        plan.sweep, limits=dataclasses.replace(plan.sweep.limits, max_preemptions=0)
    )
    seen = observation(dataclasses.replace(plan, sweep=capped), Seen(Results(None, made)))
    assert {t.name: t.result for t in told(seen, ("x",))}[preempted] is Result.FAILED
