"""One contract for the Backend port: the same test bodies run on the local adapter and on the
Beaker adapter (over the wire fake), so each call means the same on both."""

from __future__ import annotations

import dataclasses
import fcntl
import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from runner import operate
from runner.backends import (
    Backend,
    BackendKind,
    EndCause,
    ExperimentState,
    LogQuery,
    NameTaken,
    WriteAhead,
    recorded,
)
from runner.backends.beaker import BeakerBackend
from runner.backends.local import LocalBackend
from runner.backends.local.rundir import Replica, RunDir, elapsed_seconds, new_state
from runner.observe.looks import Observer
from runner.plan import SweepPlan
from tests.helpers import MINIMAL, only_plan

# The minimal sweep (two points), with a command that also runs on this machine.
SWEEP = MINIMAL.format(name="contract").replace(
    "command: [python, train.py]", "command: [python, -c, \"print('trained')\"]"
)
assert "print('trained')" in SWEEP


@pytest.fixture(params=[BackendKind.LOCAL, BackendKind.BEAKER])
def opened(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Backend]:
    backend: Backend
    if request.param == BackendKind.BEAKER:
        request.getfixturevalue("fake_beaker")
        backend = BeakerBackend()
    else:
        backend = LocalBackend(tmp_path, lambda text: None)
    try:
        yield backend
    finally:
        backend.close()


def _plan(root: Path, backend: Backend, text: str = SWEEP) -> SweepPlan:
    return only_plan(root, backend.layout, text, "contract.yaml")


def test_experiments_lists_what_create_made_by_name_with_its_state(
    opened: Backend, tmp_path: Path
) -> None:
    plan = _plan(tmp_path, opened)
    first, second = (row.rendered for row in plan.rows)
    assert first is not None and second is not None
    names = [first.name, second.name]
    assert opened.experiments(plan.sweep, names) == {}
    made = opened.create(plan.sweep, first)
    listed = opened.experiments(plan.sweep, names)
    assert list(listed) == [first.name]  # only names that have an experiment
    (found,) = listed[first.name]
    assert (found.name, found.id, found.key) == (made.name, made.id, first.key)
    assert isinstance(found.state, ExperimentState)
    assert found.exit_code is None or not found.state.live  # a code only once it has exited
    assert opened.experiments(plan.sweep, [first.name]) == listed  # a look-up is a list of one


def test_a_recorded_id_is_the_point_the_ledger_says_whatever_the_experiment_says(
    opened: Backend, tmp_path: Path
) -> None:
    """`recorded` (the ledger's id -> key) decides an experiment's key on every adapter, in
    `experiments` and `results` alike; without it, each reads the key the run itself carries."""
    plan = _plan(tmp_path, opened)
    first, second = (row.rendered for row in plan.rows)
    assert first is not None and second is not None
    made = opened.create(plan.sweep, first)
    ledger_says = recorded([(first.name, made.id, second.key)])
    (found,) = opened.experiments(plan.sweep, [first.name], ledger_says)[first.name]
    assert (found.id, found.key) == (made.id, second.key)
    assert opened.results(plan.sweep, [first.name], ledger_says).experiments[first.name].key == (
        second.key
    )
    (own,) = opened.experiments(plan.sweep, [first.name])[first.name]
    assert own.key == first.key and isinstance(own.description, str)


def test_cancel_cancels_exactly_the_live_ones_and_says_which(
    opened: Backend, tmp_path: Path
) -> None:
    plan = _plan(tmp_path, opened)
    point = plan.rows[0].rendered
    assert point is not None
    opened.create(plan.sweep, point)
    (before,) = opened.experiments(plan.sweep, [point.name])[point.name]
    canceled = opened.cancel(plan.sweep, [before])
    assert canceled == ([point.name] if before.state.live else [])
    (after,) = opened.experiments(plan.sweep, [point.name])[point.name]
    assert not after.state.live and after.id == before.id


def test_results_say_why_it_ended_a_cancel_or_how_it_finished(
    opened: Backend, tmp_path: Path
) -> None:
    """`ended` means the same on each adapter: a run `cancel` stopped was canceled (by a person,
    not a failure), one that finished says how."""
    plan = _plan(tmp_path, opened)
    point = plan.rows[0].rendered
    assert point is not None
    opened.create(plan.sweep, point)
    (before,) = opened.experiments(plan.sweep, [point.name])[point.name]
    canceled = opened.cancel(plan.sweep, [before])
    after = opened.results(plan.sweep, [point.name]).experiments[point.name]
    finished = {
        ExperimentState.SUCCEEDED: EndCause.SUCCEEDED,
        ExperimentState.FAILED: EndCause.FAILED,
    }
    assert after.ended is not None
    assert after.ended.cause is (EndCause.CANCELED if canceled else finished[after.state])
    assert not after.ended.cause.counts_as_failure or after.exit_code not in (None, 0)
    assert after.ended.preemptions == 0


def test_a_local_max_running_sweep_counts_its_running_runs(tmp_path: Path) -> None:
    """`existing` lists only finished local runs, so the cap counted none running and never held
    a point back locally; the count now comes from `experiments`, as on Beaker."""
    backend = LocalBackend(tmp_path, lambda text: None)
    plan = _plan(tmp_path, backend, SWEEP + "max_running: 1\n")
    row = plan.rows[0]
    run = RunDir(tmp_path / ".runs" / "contract" / row.name)
    run.path.mkdir(parents=True)
    lock = os.open(run.lock_file, os.O_RDWR | os.O_CREAT)
    try:
        fcntl.flock(lock, fcntl.LOCK_EX)  # as the live runner of this run does
        run.write(new_state("contract", row.name, row.key, (Replica("main", 0, "replica-0.log"),)))
        (capped,) = operate.live_caps(Observer(backend, lambda plan: False), [plan])
    finally:
        os.close(lock)
        backend.close()
    assert capped.cap is not None and capped.cap.running == 1
    assert [r.hold.text for r in capped.rows if r.hold] == ["waiting: 1/1 running"] * 2
    assert capped.to_submit_on(runs=True) == ()


def test_create_refuses_a_name_its_experiment_holds_already(
    opened: Backend, tmp_path: Path
) -> None:
    """A second create of a point whose experiment exists is NameTaken on both: the caller
    looks it up and adopts it, never makes a second one."""
    plan = _plan(tmp_path, opened)
    point = plan.rows[0].rendered
    assert point is not None
    opened.create(plan.sweep, point)
    with pytest.raises(NameTaken):
        opened.create(plan.sweep, point)
    assert len(opened.experiments(plan.sweep, [point.name])[point.name]) == 1


def test_ensure_group_twice_is_one_group_with_every_experiment(
    opened: Backend, tmp_path: Path
) -> None:
    plan = _plan(tmp_path, opened)
    ids = [opened.create(plan.sweep, row.rendered).id for row in plan.rows if row.rendered]
    first = opened.ensure_group(plan.sweep, ids[:1])
    again = opened.ensure_group(plan.sweep, ids)
    assert (again.name, again.url) == (first.name, first.url) and not again.created
    assert (first.members, again.members) == (1, 2)


def test_logs_read_the_lines_the_point_printed(
    opened: Backend, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    plan = _plan(tmp_path, opened)
    point = plan.rows[0].rendered
    assert point is not None
    opened.create(plan.sweep, point)
    if isinstance(opened, BeakerBackend):  # the fake's job prints what it is told to
        fake = request.getfixturevalue("fake_beaker")
        fake.set_job_status(point.name, "succeeded")
        fake.set_logs(point.name, ["trained\n"])
    assert "trained" in "".join(opened.logs(plan.sweep, point.name, LogQuery()))


def test_usage_is_each_job_s_time_times_the_gpus_it_held(
    opened: Backend, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    """Beaker: a job's (exited - started) × its GPUs; here: the run's wall time × the GPUs its
    spec declared (this machine has none); an experiment the backend has not is left out."""
    gpus = SWEEP.replace("command: [python, -c", "resources: {gpus: 2}\n    command: [python, -c")
    plan = _plan(tmp_path, opened, gpus)
    point = plan.rows[0].rendered
    assert point is not None and "gpus: 2" in gpus
    opened.create(plan.sweep, point)
    if isinstance(opened, BeakerBackend):
        fake = request.getfixturevalue("fake_beaker")
        fake.set_job_status(point.name, "succeeded", started=1_000.0, at=1_090.5)
        seconds = 90.5
    else:
        state = LocalBackend(tmp_path, print).run_dir("contract", point.name).read()
        assert state is not None and state.finished_at is not None
        seconds = elapsed_seconds(state.started_at, state.finished_at) or 0.0
    (done,) = opened.experiments(plan.sweep, [point.name])[point.name]
    gone = dataclasses.replace(done, name="contract-gone", id="gone")
    used = opened.usage(plan.sweep, [done, gone])
    assert list(used) == [done.id] and used[done.id].jobs == 1
    assert used[done.id].gpu_seconds == pytest.approx(seconds * 2)


class _Crash(Exception):
    """The runner dies right after writing its intent, before the request is sent."""


def test_restart_writes_its_intent_ahead_and_an_interrupted_one_is_sent_once(
    opened: Backend, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    plan = _plan(tmp_path, opened, SWEEP.replace("print('trained')", "raise SystemExit(3)"))
    point = plan.rows[0].rendered
    assert point is not None
    opened.create(plan.sweep, point)
    if isinstance(opened, BeakerBackend):
        request.getfixturevalue("fake_beaker").set_job_status(point.name, "failed", exit_code=3)
    (failed,) = opened.experiments(plan.sweep, [point.name])[point.name]
    assert failed.state == ExperimentState.FAILED
    tokens: list[str] = []

    def crash(token: str) -> None:
        tokens.append(token)
        raise _Crash

    with pytest.raises(_Crash):
        opened.restart(plan.sweep, point, failed, WriteAhead(intent=crash))
    # The intent never reached the backend: the generation has not moved, so it is sent now.
    restarted = opened.restart(plan.sweep, point, failed, WriteAhead(tokens[0], tokens.append))
    assert restarted is not None and tokens == [tokens[0]] * 2
    # It did reach it: the generation moved on, nothing is sent again (no intent either).
    again = opened.restart(plan.sweep, point, restarted, WriteAhead(tokens[0], tokens.append))
    assert again is not None and again.id == failed.id and len(tokens) == 2


def test_a_state_is_exactly_one_of_live_final_and_unknown() -> None:
    """`.final` names "it ended", which the notices and the findings each spelled as a tuple."""
    for state in ExperimentState:
        assert [state.live, state.final, state == ExperimentState.UNKNOWN].count(True) == 1, state
    ended = {ExperimentState.SUCCEEDED, ExperimentState.FAILED, ExperimentState.CANCELED}
    assert {state for state in ExperimentState if state.final} == ended
    assert all(state.final for state in ExperimentState if state.restartable)


def test_the_port_has_nine_calls_and_this_contract_exercises_each() -> None:
    """`retire` (a second exactly-once cancel, which the local backend always refused) is
    folded into `cancel`; `usage` (issue 40: GPU-hours measured) is the ninth; each is run on
    both adapters by this module."""
    calls = sorted(
        name
        for name, member in vars(Backend).items()
        if callable(member) and not name.startswith("_")
    )
    assert calls == [
        "cancel",
        "close",
        "create",
        "ensure_group",
        "experiments",
        "logs",
        "restart",
        "results",
        "usage",
    ]
    text = Path(__file__).read_text(encoding="utf-8")
    assert all(f"opened.{name}(" in text for name in calls if name != "close")
    assert "backend.close()" in text  # the fixture closes each adapter it opened
