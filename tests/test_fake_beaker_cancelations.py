"""Why Beaker ended a job, on the fake Beaker, read back through unmodified beaker-py: every
cancelation code with its words on the job (GetJob, ListJobs) and on the workload (GetWorkload,
ListWorkloads); a preemption resumed by Beaker or not; a timeout; a node failure; a job that
cannot be scheduled; a person's cancel."""

from __future__ import annotations

from typing import Any

import pytest
from beaker import Beaker, BeakerExperimentSpec
from beaker import beaker_pb2 as pb2

from tests.fake_beaker import FakeBeaker
from tests.fake_beaker.cancelations import CODES, TEXTS

CANCELED = pb2.WorkloadStatus.STATUS_CANCELED
QUEUED = pb2.WorkloadStatus.STATUS_QUEUED
Code = pb2.CancelationCode


def create(client: Beaker, workspace: pb2.Workspace, name: str, **task: Any) -> pb2.Workload:
    spec = BeakerExperimentSpec.new(docker_image="python:3.11", command=["true"], **task)
    return client.experiment.create(name=name, spec=spec, workspace=workspace)


def jobs(client: Beaker, workload: pb2.Workload) -> list[pb2.Job]:
    """Every job of every task, oldest first (ListJobs lists newest first)."""
    found = [j for t in workload.experiment.tasks for j in client.job.list(task=t)]
    return sorted(found, key=lambda j: j.status.created.ToNanoseconds())


def code(name: str) -> int:
    return int(Code.Value(f"CANCELATION_CODE_{name.upper()}"))


def test_codes_are_every_code_beaker_gives_but_unspecified() -> None:
    assert len(CODES) == len(Code.keys()) - 1 == 12
    assert {code(c) for c in CODES} == set(Code.values()) - {Code.CANCELATION_CODE_UNSPECIFIED}


@pytest.mark.parametrize("name", CODES)
def test_every_code_is_served_on_the_job_and_the_workload(
    name: str, fake_beaker: FakeBeaker, beaker: Beaker, workspace: pb2.Workspace
) -> None:
    made = create(beaker, workspace, f"ends-{name.replace('_', '-')}")
    fake_beaker.set_job_status(made.experiment.id, "running")
    fake_beaker.cancel_jobs(made.experiment.id, name)

    (listed,) = jobs(beaker, made)
    for job in (listed, beaker.job.get(listed.id)):
        assert job.status.status == CANCELED
        assert (job.status.canceled_code, job.status.canceled_for) == (code(name), TEXTS[name])
        assert job.status.HasField("canceled") and job.status.HasField("finalized")
        assert job.status.HasField("started")  # it had been running
    (from_list,) = beaker.workload.list(
        workspace=workspace, name_or_description=made.experiment.name
    )
    for workload in (beaker.workload.get(made.experiment.id), from_list):
        assert workload.status == CANCELED and workload.experiment.tasks[0].status == CANCELED
        assert workload.experiment.canceled_for == TEXTS[name]
        assert workload.experiment.HasField("canceled")


def test_a_preempted_task_with_auto_resume_gets_a_new_job_by_itself(
    fake_beaker: FakeBeaker, beaker: Beaker, workspace: pb2.Workspace
) -> None:
    made = create(beaker, workspace, "resumed", auto_resume=True)
    assert made.experiment.tasks[0].system_details.auto_resume
    fake_beaker.set_job_status("resumed", "running")
    fake_beaker.preempt("resumed")

    workload = beaker.workload.get(made.experiment.id)
    assert workload.status == QUEUED  # back in the queue, not canceled
    first, second = jobs(beaker, workload)
    assert first.status.status == CANCELED
    assert first.status.canceled_code == Code.CANCELATION_CODE_SYSTEM_PREEMPTION
    assert first.status.canceled_for == TEXTS["system_preemption"]
    assert second.status.status == QUEUED and second.retry_ancestor_id == first.id
    assert beaker.workload.get_latest_job(workload).id == second.id  # type: ignore[union-attr]

    fake_beaker.set_job_status("resumed", "running")
    fake_beaker.preempt("resumed", "user_preemption")  # a second time
    codes = [j.status.canceled_code for j in jobs(beaker, workload)]
    assert codes == [code("system_preemption"), code("user_preemption"), 0]


def test_auto_resume_is_beakers_default_and_a_spec_or_the_control_turns_it_off(
    fake_beaker: FakeBeaker, beaker: Beaker, workspace: pb2.Workspace
) -> None:
    default = create(beaker, workspace, "default")
    off = create(beaker, workspace, "off", auto_resume=False)
    assert default.experiment.tasks[0].system_details.auto_resume
    assert not off.experiment.tasks[0].system_details.auto_resume
    for name in ("default", "off"):
        fake_beaker.set_job_status(name, "running")
        fake_beaker.preempt(name, resume=False if name == "default" else None)
        workload = beaker.workload.get(fake_beaker.experiment(name).id)
        assert workload.status == CANCELED and len(jobs(beaker, workload)) == 1
        assert workload.experiment.canceled_for == TEXTS["system_preemption"]
    # A preempted experiment that was not resumed restarts as any canceled one does.
    restarted = beaker.experiment.restart_tasks(beaker.workload.get(off.experiment.id))
    assert restarted.status == QUEUED and len(jobs(beaker, restarted)) == 2


def test_a_preempted_replica_cancels_its_siblings_and_the_group_resumes_together(
    fake_beaker: FakeBeaker, beaker: Beaker, workspace: pb2.Workspace
) -> None:
    made = create(beaker, workspace, "multi", replicas=2)
    fake_beaker.set_job_status("multi", "running")
    fake_beaker.preempt("multi", replica=1)

    by_rank = {}
    for job in jobs(beaker, made)[:2]:
        by_rank[job.system_details.replica_group_details.rank] = job.status.canceled_code
    assert by_rank == {
        1: Code.CANCELATION_CODE_SYSTEM_PREEMPTION,
        0: Code.CANCELATION_CODE_SIBLING_TASK_PREEMPTION,
    }
    new = jobs(beaker, made)[2:]
    assert len(new) == 2 and all(j.status.status == QUEUED and j.retry_ancestor_id for j in new)
    assert beaker.workload.get(made.experiment.id).status == QUEUED


def test_a_timeout_is_served_on_the_task_and_cancels_the_job_saying_so(
    fake_beaker: FakeBeaker, beaker: Beaker, workspace: pb2.Workspace
) -> None:
    made = create(beaker, workspace, "slow", timeout="2h")
    assert made.experiment.tasks[0].system_details.timeout.ToSeconds() == 7200
    fake_beaker.set_job_status("slow", "running")
    fake_beaker.time_out("slow")
    (job,) = jobs(beaker, made)
    assert job.status.canceled_code == Code.CANCELATION_CODE_TIMEOUT
    assert job.status.canceled_for == "exceeded its timeout of 7200s"
    assert job.system_details.timeout.ToSeconds() == 7200  # the job's details say it too
    workload = beaker.workload.get(made.experiment.id)
    assert workload.status == CANCELED  # a timeout is never resumed


def test_a_job_that_cannot_be_scheduled_says_why_queued_then_canceled(
    fake_beaker: FakeBeaker, beaker: Beaker, workspace: pb2.Workspace
) -> None:
    made = create(beaker, workspace, "huge")
    why = "no cluster has 16 GPUs on one node"
    fake_beaker.cannot_schedule("huge", why, give_up=False)
    (job,) = jobs(beaker, made)
    assert job.status.status == QUEUED and job.status.failed_scheduling_message == why
    assert not job.status.canceled_code

    fake_beaker.cannot_schedule("huge", why)
    (job,) = jobs(beaker, made)
    assert job.status.status == CANCELED and not job.status.HasField("started")
    assert job.status.canceled_code == Code.CANCELATION_CODE_IMPOSSIBLE_TO_SCHEDULE
    assert (job.status.canceled_for, job.status.failed_scheduling_message) == (why, why)


def test_a_node_failure_and_a_persons_cancel_have_their_codes(
    fake_beaker: FakeBeaker, beaker: Beaker, workspace: pb2.Workspace
) -> None:
    node, hand, api = (create(beaker, workspace, n) for n in ("node", "hand", "api"))
    for name in ("node", "hand", "api"):
        fake_beaker.set_job_status(name, "running")
    fake_beaker.fail_node("node", "node_unhealthy")
    fake_beaker.cancel_by_hand("hand", user="petew")
    beaker.workload.cancel(api)  # CancelWorkloads, by the client's own user
    with pytest.raises(ValueError, match="not a node's failure"):
        fake_beaker.fail_node("node", "timeout")

    def status(workload: pb2.Workload) -> tuple[int, str]:
        (job,) = jobs(beaker, workload)
        return job.status.canceled_code, job.status.canceled_for

    assert status(node) == (Code.CANCELATION_CODE_NODE_UNHEALTHY, TEXTS["node_unhealthy"])
    assert status(hand) == (Code.CANCELATION_CODE_MANUAL, "canceled by petew")
    assert status(api) == (Code.CANCELATION_CODE_MANUAL, "canceled by fake-user")
    assert beaker.workload.get(hand.experiment.id).experiment.canceled_for == "canceled by petew"


def test_a_finished_job_is_not_canceled_again_and_a_code_must_be_beakers(
    fake_beaker: FakeBeaker, beaker: Beaker, workspace: pb2.Workspace
) -> None:
    made = create(beaker, workspace, "done")
    fake_beaker.set_job_status("done", "failed", 3)
    fake_beaker.preempt("done")
    (job,) = jobs(beaker, made)
    assert job.status.status == pb2.WorkloadStatus.STATUS_FAILED and job.status.exit_code == 3
    assert not job.status.canceled_code
    with pytest.raises(ValueError, match="code must be one of"):
        fake_beaker.cancel_jobs("done", "unspecified")
    with pytest.raises(ValueError, match="preemption's code"):
        fake_beaker.preempt("done", "timeout")
