"""Groups, metrics, restart, cancel and logs on the fake Beaker, driven by unmodified beaker-py,
with the commit-then-lost-reply fault on each mutation."""

from __future__ import annotations

import csv
import dataclasses
import io
import threading
import time

import grpc
import pytest
from beaker import Beaker, BeakerExperimentSpec, BeakerSortOrder
from beaker import beaker_pb2 as pb2
from beaker.exceptions import (
    BeakerClientError,
    BeakerExperimentNotFound,
    BeakerGroupNotFound,
    BeakerJobNotFound,
    BeakerNotFoundError,
    BeakerServerUnavailableError,
)

from tests.fake_beaker import FakeBeaker

QUEUED = pb2.WorkloadStatus.STATUS_QUEUED
CANCELED = pb2.WorkloadStatus.STATUS_CANCELED


def create(
    client: Beaker, workspace: pb2.Workspace, name: str, *, tasks: int = 1, replicas: int = 1
) -> pb2.Workload:
    spec = BeakerExperimentSpec.new(docker_image="python:3.11", command=["true"], replicas=replicas)
    for i in range(1, tasks):
        spec.tasks.append(dataclasses.replace(spec.tasks[0], name=f"task{i}"))
    return client.experiment.create(name=name, spec=spec, workspace=workspace)


# Groups.


def test_group_create_get_update_and_url(
    fake_beaker: FakeBeaker, beaker: Beaker, workspace: pb2.Workspace
) -> None:
    a, b = (create(beaker, workspace, n).experiment.id for n in ("a", "b"))
    group = beaker.group.create(
        "sweep-1", workspace=workspace, description="lr sweep", experiment_ids=[a]
    )
    assert group.id.startswith("01FAKEGRP") and group.name == "sweep-1"
    assert (group.workspace_id, group.description) == (workspace.id, "lr sweep")
    assert group.full_name == "fake-user/sweep-1"
    assert beaker.group.get(group.id) == group
    assert beaker.group.url(group) == f"{fake_beaker.agent_address}/gr/{group.id}"

    updated = beaker.group.update(group, add_experiment_ids=[a, b, b], description="v2")
    assert (updated.name, updated.description) == ("sweep-1", "v2")
    [record] = fake_beaker.groups()
    assert record.experiment_ids == (a, b)  # adding an id twice is a no-op
    renamed = beaker.group.update(group, name="sweep-one")
    assert beaker.group.get(group.id).name == renamed.name == "sweep-one"

    beaker.group.delete(group)
    with pytest.raises(BeakerGroupNotFound):
        beaker.group.get(group.id)


def test_group_errors(fake_beaker: FakeBeaker, beaker: Beaker, workspace: pb2.Workspace) -> None:
    group = beaker.group.create("taken", workspace=workspace)
    with pytest.raises(grpc.RpcError) as info:  # beaker-py maps ALREADY_EXISTS to nothing
        beaker.group.create("taken", workspace=workspace)
    assert info.value.code() == grpc.StatusCode.ALREADY_EXISTS
    other = beaker.workspace.get(fake_beaker.add_workspace("ai2/other"))
    beaker.group.create("taken", workspace=other)  # names are per workspace

    with pytest.raises(BeakerNotFoundError, match="01NOSUCHEXP"):
        beaker.group.create("g2", workspace=workspace, experiment_ids=["01NOSUCHEXP"])
    with pytest.raises(BeakerNotFoundError):
        beaker.group.update(group, add_experiment_ids=["01NOSUCHEXP"], description="x")
    assert beaker.group.get(group.id).description == ""  # the failed update changed nothing
    with pytest.raises(BeakerClientError):
        beaker.group.create("bad name!", workspace=workspace)
    with pytest.raises(BeakerGroupNotFound):
        beaker.group.get("taken")  # get() takes an id only; there is no ResolveGroupName
    with pytest.raises(ValueError, match="invalid group ID"):
        beaker.group.update("fake-user/taken", description="x")  # type: ignore[arg-type]
    assert [g.name for g in fake_beaker.groups()] == ["taken", "taken"]


def test_group_list_filters_sorts_and_pages(
    fake_beaker: FakeBeaker, beaker: Beaker, workspace: pb2.Workspace
) -> None:
    names = [f"g{i:02d}" for i in range(12)]
    for name in reversed(names):
        beaker.group.create(name, workspace=workspace, description=f"about {name}")
    other = beaker.workspace.get(fake_beaker.add_workspace("ai2/other"))
    beaker.group.create("elsewhere", workspace=other)

    fake_beaker.reset_calls()
    assert [g.name for g in beaker.group.list(workspace=workspace)] == names  # by name
    assert fake_beaker.calls["ListGroups"] == 3  # 5 + 5 + 2
    newest_first = beaker.group.list(
        workspace=workspace, sort_field="created", sort_order=BeakerSortOrder.descending
    )
    assert [g.name for g in newest_first] == names
    assert [g.name for g in beaker.group.list(name_or_description="ABOUT G1")] == ["g10", "g11"]
    assert len(list(beaker.group.list(limit=7))) == 7
    assert len(list(beaker.group.list())) == 13


def test_list_task_metrics_pages_over_every_task_of_every_experiment(
    fake_beaker: FakeBeaker, beaker: Beaker, workspace: pb2.Workspace
) -> None:
    ids = [create(beaker, workspace, f"m{i}", tasks=2).experiment.id for i in range(3)]
    group = beaker.group.create("metrics", workspace=workspace, experiment_ids=ids)
    fake_beaker.set_metrics("m0", {"loss": 0.5, "acc": 0.9})
    fake_beaker.set_metrics("m0", {"loss": 0.25}, task="task1")
    fake_beaker.set_metrics(ids[2], {"note": "diverged", "done": True})
    fake_beaker.set_job_status("m1", "failed")

    fake_beaker.reset_calls()
    rows = list(beaker.group.list_task_metrics(group))
    assert fake_beaker.calls["ListGroupTaskMetrics"] == 2  # 6 tasks, pages of 5
    assert [(r.experiment_name, r.task_name) for r in rows] == [
        (f"m{i}", task) for i in range(3) for task in ("main", "task1")
    ]
    values = {
        (r.experiment_name, r.task_name): {m.group_parameter.name: m.value for m in r.metrics}
        for r in rows
    }
    assert values[("m0", "main")]["loss"].number_value == 0.5
    assert values[("m0", "main")]["acc"].number_value == 0.9
    assert values[("m0", "task1")]["loss"].number_value == 0.25
    assert values[("m2", "main")]["note"].string_value == "diverged"
    assert values[("m2", "main")]["done"].bool_value is True
    assert values[("m1", "main")] == {}
    assert {r.task_status for r in rows if r.experiment_name == "m1"} == {
        pb2.WorkloadStatus.STATUS_FAILED
    }
    kinds = {m.group_parameter.type for r in rows for m in r.metrics}
    assert kinds == {pb2.GroupParameter.GroupParameterType.GROUP_PARAMETER_METRIC}

    table = list(csv.DictReader(io.StringIO(beaker.group.export_metrics(group))))
    assert len(table) == 6
    assert table[0]["experiment_name"] == "m0" and table[0]["loss"] == "0.5"
    assert table[2]["status"] == "failed"


def test_group_mutations_commit_then_lose_the_reply(
    fake_beaker: FakeBeaker, beaker: Beaker, workspace: pb2.Workspace
) -> None:
    exp_id = create(beaker, workspace, "member").experiment.id
    fake_beaker.lose_reply("CreateGroup")
    with pytest.raises(BeakerServerUnavailableError, match="reply lost"):
        beaker.group.create("lost", workspace=workspace)  # not retried by beaker-py
    [group] = beaker.group.list(workspace=workspace)
    assert group.name == "lost"
    with pytest.raises(grpc.RpcError) as info:
        beaker.group.create("lost", workspace=workspace)  # a blind retry conflicts
    assert info.value.code() == grpc.StatusCode.ALREADY_EXISTS

    fake_beaker.lose_reply("UpdateGroup", times=2)
    for _ in range(2):
        with pytest.raises(BeakerServerUnavailableError):
            beaker.group.update(group, add_experiment_ids=[exp_id])
    beaker.group.update(group, add_experiment_ids=[exp_id])  # the third one answers
    assert fake_beaker.groups()[0].experiment_ids == (exp_id,)
    assert fake_beaker.calls["UpdateGroup"] == 3


def test_lost_reply_is_not_used_up_by_a_failing_call(
    fake_beaker: FakeBeaker, beaker: Beaker, workspace: pb2.Workspace
) -> None:
    beaker.group.create("taken", workspace=workspace)
    fake_beaker.lose_reply("CreateGroup")
    with pytest.raises(grpc.RpcError):
        beaker.group.create("taken", workspace=workspace)  # ALREADY_EXISTS, nothing committed
    with pytest.raises(BeakerServerUnavailableError):
        beaker.group.create("fresh", workspace=workspace)
    beaker.group.create("fresher", workspace=workspace)
    assert sorted(g.name for g in fake_beaker.groups()) == ["fresh", "fresher", "taken"]
    with pytest.raises(ValueError, match="not a Beaker RPC"):
        fake_beaker.lose_reply("CreateGroups")


# Restart.


def test_restart_puts_failed_tasks_back_in_queue_with_new_jobs(
    fake_beaker: FakeBeaker, beaker: Beaker, workspace: pb2.Workspace
) -> None:
    workload = create(beaker, workspace, "flaky", tasks=2)
    main, second = workload.experiment.tasks
    fake_beaker.set_job_status("flaky", "succeeded", task="main")
    fake_beaker.set_job_status("flaky", "failed", exit_code=3, task="task1")
    old = beaker.workload.get_latest_job(workload, task=second)
    assert old is not None and old.status.exit_code == 3

    restarted = beaker.experiment.restart_tasks(workload)
    assert restarted.status == QUEUED
    assert fake_beaker.restarts("flaky") == 1
    new = beaker.workload.get_latest_job(restarted, task=second)
    assert new is not None and new.id != old.id
    assert new.status.status == QUEUED and not new.status.HasField("finalized")
    assert [j.id for j in beaker.job.list(task=second)] == [new.id, old.id]  # old stays
    assert beaker.job.get(old.id).status.exit_code == 3
    succeeded = beaker.workload.get_latest_job(restarted, task=main)
    assert succeeded is not None and succeeded.status.exit_code == 0  # not restarted
    assert len(fake_beaker.jobs("flaky")) == 3


def test_restart_refuses_unfinished_and_unknown_experiments(
    fake_beaker: FakeBeaker, beaker: Beaker, workspace: pb2.Workspace
) -> None:
    workload = create(beaker, workspace, "busy")
    with pytest.raises(grpc.RpcError) as info:
        beaker.workload.restart_tasks(workload)
    assert info.value.code() == grpc.StatusCode.FAILED_PRECONDITION
    fake_beaker.set_job_status("busy", "succeeded")
    with pytest.raises(grpc.RpcError) as info:
        beaker.workload.restart_tasks(workload)  # nothing failed
    assert info.value.code() == grpc.StatusCode.FAILED_PRECONDITION
    with pytest.raises(BeakerExperimentNotFound):
        beaker.experiment.restart_tasks(pb2.Experiment(id="01FAKEEXP99999999999999999"))
    assert fake_beaker.restarts("busy") == 0


def test_restart_commits_then_loses_the_reply(
    fake_beaker: FakeBeaker, beaker: Beaker, workspace: pb2.Workspace
) -> None:
    workload = create(beaker, workspace, "once")
    fake_beaker.set_job_status("once", "canceled")
    fake_beaker.lose_reply("RestartExperimentTasks")
    with pytest.raises(BeakerServerUnavailableError):
        beaker.experiment.restart_tasks(workload)
    assert fake_beaker.restarts("once") == 1
    assert beaker.workload.get(workload.experiment.id).status == QUEUED
    with pytest.raises(grpc.RpcError):  # a blind retry: now it is queued, not finished
        beaker.experiment.restart_tasks(workload)
    assert fake_beaker.restarts("once") == 1


# Cancel.


def test_cancel_is_bulk_and_counted(
    fake_beaker: FakeBeaker, beaker: Beaker, workspace: pb2.Workspace
) -> None:
    queued, running, done = (create(beaker, workspace, n) for n in ("q", "r", "d"))
    fake_beaker.set_job_status("r", "running")
    fake_beaker.set_job_status("d", "succeeded")
    canceled = beaker.workload.cancel(queued, running, done)
    assert sorted(canceled) == sorted([queued.experiment.id, running.experiment.id])
    for workload in (queued, running):
        fresh = beaker.workload.get(workload.experiment.id)
        assert fresh.status == CANCELED and fresh.experiment.HasField("canceled")
        job = beaker.workload.get_latest_job(fresh)
        assert job is not None and job.status.HasField("finalized")
    assert beaker.workload.get("fake-user/d").status == pb2.WorkloadStatus.STATUS_SUCCEEDED
    assert list(beaker.workload.cancel(queued)) == []  # already canceled: a no-op
    assert (fake_beaker.cancels("q"), fake_beaker.cancels("r"), fake_beaker.cancels("d")) == (
        2,
        1,
        1,
    )
    with pytest.raises(BeakerNotFoundError):
        beaker.workload.cancel(running, "01FAKEEXP99999999999999999")  # type: ignore[arg-type]
    assert fake_beaker.cancels("r") == 1  # all or nothing


def test_cancel_commits_then_loses_the_reply(
    fake_beaker: FakeBeaker, beaker: Beaker, workspace: pb2.Workspace
) -> None:
    workload = create(beaker, workspace, "stop-me")
    fake_beaker.lose_reply("CancelWorkloads")
    with pytest.raises(BeakerServerUnavailableError):
        beaker.workload.cancel(workload)
    assert beaker.workload.get(workload.experiment.id).status == CANCELED
    assert fake_beaker.cancels("stop-me") == 1


def test_unavailable_on_a_mutation_commits_nothing(
    fake_beaker: FakeBeaker, beaker: Beaker, workspace: pb2.Workspace
) -> None:
    workload = create(beaker, workspace, "keep")
    fake_beaker.unavailable("CancelWorkloads")
    with pytest.raises(BeakerServerUnavailableError, match="injected UNAVAILABLE"):
        beaker.workload.cancel(workload)
    assert beaker.workload.get(workload.experiment.id).status == QUEUED
    assert fake_beaker.cancels("keep") == 0


# A job rewriting its description, a rename in the UI (UpdateWorkload).


def test_update_workload_rewrites_the_description_and_renames_keeping_id_and_spec(
    fake_beaker: FakeBeaker, beaker: Beaker, workspace: pb2.Workspace
) -> None:
    workload = create(beaker, workspace, "job")
    spec = beaker.experiment.get_spec(workload)
    updated = beaker.workload.update(workload, description="[3%, 30/1,000] https://wandb.ai/x")
    assert updated.experiment.description == "[3%, 30/1,000] https://wandb.ai/x"
    renamed = beaker.workload.update(workload, name="job-kept")
    assert renamed.experiment.id == workload.experiment.id
    assert renamed.experiment.description == "[3%, 30/1,000] https://wandb.ai/x"  # kept
    assert fake_beaker.experiment(workload.experiment.id).name == "job-kept"
    assert beaker.experiment.get_spec(workload) == spec  # the spec is the runner's
    fake_beaker.rewrite("job-kept", "[4%, 40/1,000]")  # the same, without a call
    assert beaker.workload.get(workload.experiment.id).experiment.description == "[4%, 40/1,000]"
    create(beaker, workspace, "job")  # the old name is free again
    with pytest.raises(grpc.RpcError):  # taken (ALREADY_EXISTS)
        beaker.workload.update(workload, name="job")
    with pytest.raises(BeakerNotFoundError):
        beaker.workload.update("01FAKEEXP99999999999999999", description="x")  # type: ignore[arg-type]


def test_update_workload_commits_then_loses_the_reply(
    fake_beaker: FakeBeaker, beaker: Beaker, workspace: pb2.Workspace
) -> None:
    workload = create(beaker, workspace, "lost")
    fake_beaker.lose_reply("UpdateWorkload")
    with pytest.raises(BeakerServerUnavailableError):
        beaker.workload.update(workload, description="step 7")
    assert fake_beaker.experiment("lost").description == "step 7"
    fake_beaker.unavailable("UpdateWorkload")
    with pytest.raises(BeakerServerUnavailableError, match="injected"):
        beaker.workload.update(workload, description="step 8")
    assert fake_beaker.experiment("lost").description == "step 7"  # nothing committed


def test_listings_may_leave_the_task_specs_out(
    fake_beaker: FakeBeaker, beaker: Beaker, workspace: pb2.Workspace
) -> None:
    create(beaker, workspace, "bare")
    [listed] = beaker.workload.list(workspace=workspace)
    assert listed.experiment.tasks[0].container_spec.docker_reference == "python:3.11"
    fake_beaker.listed_specs = False
    [listed] = beaker.workload.list(workspace=workspace)
    assert not listed.experiment.tasks[0].HasField("container_spec")
    assert beaker.experiment.get_spec(listed).tasks[0].image.docker == "python:3.11"


# Logs and replicas.


@pytest.mark.parametrize("replica_tasks", [True, False])
def test_replicas_get_one_job_each_and_their_own_logs(
    fake_beaker: FakeBeaker, beaker: Beaker, workspace: pb2.Workspace, replica_tasks: bool
) -> None:
    """By default a task's replicas are tasks of their own, one replica group, listed out of
    rank order under names that do not give the rank; the older shape is one task, N jobs."""
    fake_beaker.replica_tasks = replica_tasks
    workload = create(beaker, workspace, "ddp", replicas=3)
    tasks = list(workload.experiment.tasks)
    assert len(tasks) == (3 if replica_tasks else 1)
    found = [j for task in tasks for j in beaker.job.list(task=task)]
    if replica_tasks:  # listed highest rank first, names that do not say the rank
        assert [j.system_details.replica_group_details.rank for j in found] == [2, 1, 0]
        assert not any(t.name.endswith(("-0", "-1", "-2")) for t in tasks)
    jobs = sorted(found, key=lambda j: j.system_details.replica_group_details.rank)
    assert [j.system_details.replica_group_details.rank for j in jobs] == [0, 1, 2]
    assert {j.system_details.replica_group_details.size for j in jobs} == {3}
    assert len({j.system_details.replica_group_details.id for j in jobs}) == 1  # one group
    for replica in range(3):
        fake_beaker.set_logs(
            "ddp", [f"rank {replica} line {i}\n" for i in range(2)], replica=replica
        )
    for replica, job in enumerate(jobs):
        lines = [log.message.decode() for log in beaker.job.logs(job)]
        assert lines == [f"rank {replica} line 0\n", f"rank {replica} line 1\n"]


def test_logs_tail_since_and_unknown_job(
    fake_beaker: FakeBeaker, beaker: Beaker, workspace: pb2.Workspace
) -> None:
    workload = create(beaker, workspace, "chatty")
    fake_beaker.set_logs("chatty", [f"{i}\n" for i in range(10)])
    job = beaker.workload.get_latest_job(workload)
    assert job is not None
    logs = list(beaker.job.logs(job))
    assert [log.message for log in logs] == [f"{i}\n".encode() for i in range(10)]
    stamps = [(log.timestamp.seconds, log.timestamp.nanos) for log in logs]
    assert stamps == sorted(set(stamps))
    assert [log.message for log in beaker.job.logs(job, tail_lines=2)] == [b"8\n", b"9\n"]
    since = logs[7].timestamp.ToDatetime()
    assert len(list(beaker.job.logs(job, since=since))) >= 2  # datetime is microseconds
    with pytest.raises(BeakerJobNotFound):
        list(beaker.job.logs(pb2.Job(id="01FAKEJOB99999999999999999")))
    assert fake_beaker.calls["StreamJobLogs"] == 4


def test_follow_streams_new_lines_until_the_job_finishes(
    fake_beaker: FakeBeaker, beaker: Beaker, workspace: pb2.Workspace
) -> None:
    workload = create(beaker, workspace, "live")
    fake_beaker.set_job_status("live", "running")
    fake_beaker.set_logs("live", ["start\n"])
    job = beaker.workload.get_latest_job(workload)
    assert job is not None
    received: list[bytes] = []
    follower = threading.Thread(
        target=lambda: received.extend(log.message for log in beaker.job.logs(job, follow=True)),
        daemon=True,
    )
    follower.start()
    while not received:
        time.sleep(0.01)
    fake_beaker.append_logs("live", ["step 1\n", "step 2\n"])
    fake_beaker.append_logs("live", ["end\n"])
    fake_beaker.set_job_status("live", "succeeded")
    follower.join(timeout=10)
    assert not follower.is_alive()
    assert received == [b"start\n", b"step 1\n", b"step 2\n", b"end\n"]


def test_injected_status_on_the_log_stream(
    fake_beaker: FakeBeaker, beaker: Beaker, workspace: pb2.Workspace
) -> None:
    workload = create(beaker, workspace, "denied")
    job = beaker.workload.get_latest_job(workload)
    assert job is not None
    fake_beaker.fail_rpc("StreamJobLogs", grpc.StatusCode.PERMISSION_DENIED)
    with pytest.raises(Exception, match="injected PERMISSION_DENIED"):
        list(beaker.job.logs(job))
    assert list(beaker.job.logs(job)) == []
    assert fake_beaker.calls["StreamJobLogs"] == 2


@pytest.mark.slow
def test_beaker_py_resumes_a_cut_log_stream_without_duplicates(
    fake_beaker: FakeBeaker, beaker: Beaker, workspace: pb2.Workspace
) -> None:
    workload = create(beaker, workspace, "cut")
    fake_beaker.set_logs("cut", [f"{i}\n" for i in range(6)])
    job = beaker.workload.get_latest_job(workload)
    assert job is not None
    fake_beaker.cut_log_stream(after_lines=4)
    lines = [log.message for log in beaker.job.logs(job)]  # waits 2 s, asks again with since
    assert lines == [f"{i}\n".encode() for i in range(6)]
    assert fake_beaker.calls["StreamJobLogs"] == 2


@pytest.mark.slow
def test_beaker_py_retries_unavailable_on_a_metrics_page(
    fake_beaker: FakeBeaker, beaker: Beaker, workspace: pb2.Workspace
) -> None:
    ids = [create(beaker, workspace, f"p{i}").experiment.id for i in range(7)]
    group = beaker.group.create("paged", workspace=workspace, experiment_ids=ids)
    rows = iter(beaker.group.list_task_metrics(group))
    first = next(rows)  # the first page (5 rows) is fetched
    fake_beaker.reset_calls()
    fake_beaker.unavailable("ListGroupTaskMetrics")  # hits the second page: 2 s, then again
    rest = list(rows)
    assert [r.experiment_id for r in [first, *rest]] == ids
    assert fake_beaker.calls["ListGroupTaskMetrics"] == 2
