"""Why an experiment ended (`runner.backends.Ended`): the causes and their predicates, Beaker's
cancelation codes in the port's words (one table), and the Beaker adapter reading them against
the fake Beaker, in a bounded number of calls; the local backend's endings."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from pathlib import Path

import grpc
import pytest
from beaker import beaker_pb2 as pb2

from runner.backends import Backend, EndCause, Ended, Experiment, ExperimentState, Rejected
from runner.backends.beaker import BeakerBackend, endings
from runner.backends.beaker.states import CAUSES, SIBLINGS
from runner.backends.local import LocalBackend
from runner.backends.local.rundir import CANCELED, INTERRUPTED, RUNNING, RunDir, new_state
from runner.backends.local.states import as_experiment
from runner.plan import SweepPlan
from tests.fake_beaker import FakeBeaker
from tests.fake_beaker.cancelations import TEXTS
from tests.helpers import SWEEP, only_plan

ENDING = SWEEP.replace(
    "  clusters: [ai2/test-cluster]\n",
    "  clusters: [ai2/test-cluster]\n  timeout: 2h\n  auto_resume: false\n",
)
assert "timeout: 2h" in ENDING


def test_each_cause_is_resumable_a_failure_or_neither() -> None:
    resumable = {c for c in EndCause if c.resumable}
    failures = {c for c in EndCause if c.counts_as_failure}
    assert resumable == {EndCause.PREEMPTED, EndCause.NODE_FAILURE}
    assert failures == {EndCause.FAILED, EndCause.TIMED_OUT, EndCause.IDLE}
    assert not resumable & failures  # a preemption is not a failure
    assert {c for c in EndCause if c.by_platform} == resumable | {EndCause.UNSCHEDULABLE}
    neither = set(EndCause) - resumable - failures - {EndCause.UNSCHEDULABLE}
    assert neither == {EndCause.SUCCEEDED, EndCause.CANCELED}


def test_every_beaker_cancelation_code_has_its_cause_in_one_table() -> None:
    """A code a newer beaker-py adds fails here, not as a KeyError in someone's `status`."""
    assert set(CAUSES) == set(pb2.CancelationCode.keys())
    assert SIBLINGS.issubset(CAUSES)
    assert CAUSES["CANCELATION_CODE_SYSTEM_PREEMPTION"] is EndCause.PREEMPTED
    assert CAUSES["CANCELATION_CODE_USER_PREEMPTION"] is EndCause.PREEMPTED
    assert CAUSES["CANCELATION_CODE_TIMEOUT"] is EndCause.TIMED_OUT
    assert CAUSES["CANCELATION_CODE_MANUAL"] is EndCause.CANCELED
    assert CAUSES["CANCELATION_CODE_IMPOSSIBLE_TO_SCHEDULE"] is EndCause.UNSCHEDULABLE


@pytest.fixture
def backend(fake_beaker: FakeBeaker) -> Iterator[BeakerBackend]:
    opened = BeakerBackend()
    try:
        yield opened
    finally:
        opened.close()


def _plan(root: Path, backend: Backend, text: str = ENDING) -> SweepPlan:
    return only_plan(root, backend.layout, text, "ending.yaml")


def _created(
    root: Path, backend: BeakerBackend, text: str = ENDING
) -> tuple[SweepPlan, list[Experiment]]:
    plan = _plan(root, backend, text)
    made = []
    for row in plan.rows:
        assert row.rendered is not None
        made.append(backend.create(plan.sweep, row.rendered))
    return plan, made


def test_results_say_why_each_of_six_points_ended_in_one_job_listing_each(
    tmp_path: Path, fake_beaker: FakeBeaker, backend: BeakerBackend
) -> None:
    plan, made = _created(tmp_path, backend)
    twice, once, slow, crash, stopped, fine = (e.name for e in made)
    names = [e.name for e in made]
    for name in names:
        fake_beaker.set_job_status(name, "running")
    fake_beaker.reset_calls()
    running = backend.results(plan.sweep, names)
    assert fake_beaker.calls["ListJobs"] == 0  # never a job listing for a running experiment
    assert {e.ended for e in running.experiments.values()} == {None}

    fake_beaker.preempt(twice, resume=True)  # resumed by Beaker...
    fake_beaker.set_job_status(twice, "running")
    fake_beaker.preempt(twice)  # ... and preempted again: the spec says no auto_resume
    fake_beaker.preempt(once, "user_preemption")
    fake_beaker.time_out(slow)
    fake_beaker.set_job_status(crash, "failed", 3)
    canceled = backend.cancel(plan.sweep, [running.experiments[stopped]])
    assert canceled == [stopped]
    fake_beaker.set_job_status(fine, "succeeded")

    fake_beaker.reset_calls()
    results = backend.results(plan.sweep, names)
    seen = {name: results.experiments[name] for name in names}
    assert {n: e.ended for n, e in seen.items()} == {
        twice: Ended(EndCause.PREEMPTED, TEXTS["system_preemption"], 7200.0, 2),
        once: Ended(EndCause.PREEMPTED, TEXTS["user_preemption"], 7200.0, 1),
        slow: Ended(EndCause.TIMED_OUT, "exceeded its timeout of 7200s", 7200.0, 0),
        crash: Ended(EndCause.FAILED, "exited with code 3", 7200.0, 0),
        stopped: Ended(EndCause.CANCELED, "canceled by fake-user", 7200.0, 0),
        fine: Ended(EndCause.SUCCEEDED, "", 7200.0, None),  # not listed: not read
    }
    assert [seen[n].state for n in (twice, once, slow, stopped)] == [ExperimentState.CANCELED] * 4
    assert (seen[crash].state, seen[crash].exit_code) == (ExperimentState.FAILED, 3)
    assert (seen[fine].state, seen[fine].exit_code) == (ExperimentState.SUCCEEDED, 0)
    # One job listing for each of the five that ended without succeeding (one task each).
    assert fake_beaker.calls["ListJobs"] == 5


def test_an_auto_resumed_experiment_is_seen_running_again_preempted_once(
    tmp_path: Path, fake_beaker: FakeBeaker, backend: BeakerBackend
) -> None:
    text = ENDING.replace("  auto_resume: false\n", "  auto_resume: true\n")
    plan, made = _created(tmp_path, backend, text)
    name = made[0].name
    fake_beaker.set_job_status(name, "running")
    backend.results(plan.sweep, [name])
    fake_beaker.preempt(name)  # Beaker resumes it: queued again, with a new job

    fake_beaker.reset_calls()
    queued = backend.results(plan.sweep, [name]).experiments[name]
    assert queued.state is ExperimentState.QUEUED  # it went back: its jobs are read, once
    assert queued.ended == Ended(EndCause.PREEMPTED, TEXTS["system_preemption"], 7200.0, 1)
    assert fake_beaker.calls["ListJobs"] == 1

    fake_beaker.set_job_status(name, "running")
    fake_beaker.reset_calls()
    again = backend.results(plan.sweep, [name]).experiments[name]
    assert again.state is ExperimentState.RUNNING  # preempted, resumed by Beaker
    assert again.ended is not None and again.ended.cause is EndCause.PREEMPTED
    assert again.ended.preemptions == 1
    assert "ListJobs" not in fake_beaker.calls  # known from the last look: no call
    (listed,) = backend.experiments(plan.sweep, [name])[name]
    assert listed.ended == again.ended  # `experiments` tells what is known, without a call

    fake_beaker.set_job_status(name, "succeeded")
    done = backend.results(plan.sweep, [name]).experiments[name]
    assert done.ended == Ended(EndCause.SUCCEEDED, "", 7200.0, 1)
    assert "ListJobs" not in fake_beaker.calls


LOCAL = SWEEP.replace(
    'command: [python, train.py, "--lr={lr}", "--seed={seed}"]',
    'command: [python, -c, "import sys; sys.exit(3 if {seed} == 2 else 0)"]',
).replace("lr: [0.1, 0.01, 0.001]", "lr: [0.1]")


def test_the_local_backend_says_a_run_exited_or_was_canceled(tmp_path: Path) -> None:
    backend = LocalBackend(tmp_path, lambda text: None)
    try:
        plan = _plan(tmp_path, backend, LOCAL)
        for row in plan.rows:
            assert row.rendered is not None
            backend.create(plan.sweep, row.rendered)
        names = [row.name for row in plan.rows]
        seen = backend.results(plan.sweep, names).experiments
    finally:
        backend.close()
    ok, failed = (seen[n] for n in names)
    assert ok.ended == Ended(EndCause.SUCCEEDED, preemptions=0)  # this machine never preempts
    assert failed.exit_code == 3 and failed.ended is not None
    assert (failed.ended.cause, failed.ended.preemptions) == (EndCause.FAILED, 0)
    assert failed.ended.text.endswith("exited 3")


@pytest.mark.parametrize(
    ("status", "ended"),
    [
        (CANCELED, Ended(EndCause.CANCELED, preemptions=0)),  # `cancel` stopped it
        (INTERRUPTED, None),  # its runner left it: not ended, the next submit resumes it
        (RUNNING, None),
    ],
)
def test_a_local_run_that_did_not_exit_ended_only_if_cancel_stopped_it(
    tmp_path: Path, status: str, ended: Ended | None
) -> None:
    run = RunDir(tmp_path / "run")
    state = dataclasses.replace(new_state("s", "e", "k", ()), status=status)
    assert as_experiment(run, state, live=status == RUNNING).ended == ended


def test_a_job_listing_beaker_py_retries_reads_the_same_ending_and_a_refused_one_says_so(
    tmp_path: Path, fake_beaker: FakeBeaker, backend: BeakerBackend
) -> None:
    plan, made = _created(tmp_path, backend)
    name = made[0].name
    fake_beaker.set_job_status(name, "running")
    fake_beaker.preempt(name)
    fake_beaker.unavailable("ListJobs", times=1)  # beaker-py lists again, 2 s later
    fake_beaker.reset_calls()
    seen = backend.results(plan.sweep, [name]).experiments[name]
    assert seen.ended == Ended(EndCause.PREEMPTED, TEXTS["system_preemption"], 7200.0, 1)
    assert fake_beaker.calls["ListJobs"] == 2
    fake_beaker.fail_rpc("ListJobs", grpc.StatusCode.PERMISSION_DENIED)
    with pytest.raises(Rejected, match=f"jobs of {name}"):
        backend.results(plan.sweep, [name])  # as a failed point's exit code always did


def _job(task: str, rank: int, status: int, at: int, **fields: object) -> pb2.Job:
    """A job of `task`'s replica `rank` that ended (or changed) at second `at`."""
    stamp = {"seconds": at}
    ends = {"canceled": stamp} if status == pb2.WorkloadStatus.STATUS_CANCELED else {}
    if status in (pb2.WorkloadStatus.STATUS_FAILED, pb2.WorkloadStatus.STATUS_SUCCEEDED):
        ends = {"exited": stamp}
    return pb2.Job(
        id=f"{task}-{rank}-{at}",
        task_id=task,
        status=pb2.JobStatus(status=status, finalized=stamp, **ends, **fields),  # type: ignore[arg-type]
        system_details=pb2.SystemDetails(replica_group_details=pb2.ReplicaGroupDetails(rank=rank)),
    )


def test_the_job_that_ended_it_is_the_one_that_failed_or_was_canceled_for_its_own_reason() -> None:
    """A replica preempted cancels its siblings; a failure beside a cancel is the cause; a code
    newer than beaker-py's is a cancel without a reason, not a crash."""
    workload = pb2.Workload(experiment=pb2.Experiment(tasks=[pb2.Task(id="t")]))
    canceled, failed = pb2.WorkloadStatus.STATUS_CANCELED, pb2.WorkloadStatus.STATUS_FAILED
    code = pb2.CancelationCode
    sibling = _job(
        "t", 0, canceled, 10, canceled_code=code.CANCELATION_CODE_SIBLING_TASK_PREEMPTION
    )
    own = _job("t", 1, canceled, 11, canceled_code=code.CANCELATION_CODE_NODE_UNHEALTHY)
    end, job = endings.ended(workload, ExperimentState.CANCELED, [sibling, own])
    assert end is not None and end.cause is EndCause.NODE_FAILURE and job is own
    crash = _job("t", 0, failed, 12, exit_code=2, message="exited with code 2")
    end, job = endings.ended(workload, ExperimentState.FAILED, [crash, own])
    assert end == Ended(EndCause.FAILED, "exited with code 2", None, 0) and job is crash
    newer = _job("t", 0, canceled, 13, canceled_code=99, canceled_for="a reason of 2027")
    end, _ = endings.ended(workload, ExperimentState.CANCELED, [newer])
    assert end == Ended(EndCause.CANCELED, "a reason of 2027", None, 0)
    running = pb2.Job(task_id="t", status=pb2.JobStatus(status=pb2.WorkloadStatus.STATUS_RUNNING))
    assert endings.ended(workload, ExperimentState.RUNNING, [running]) == (None, None)
