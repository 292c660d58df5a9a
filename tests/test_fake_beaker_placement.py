"""The fake Beaker's clusters, workspace priorities and workload details, driven by the
unmodified beaker-py client: what `lock` and a submit's allocation read, with their faults."""

from __future__ import annotations

import time

import grpc
import pytest
from beaker import Beaker, BeakerWorkloadStatus
from beaker import beaker_pb2 as pb2
from beaker.exceptions import BeakerClusterNotFound, BeakerPermissionsError

from tests.fake_beaker import FakeBeaker
from tests.fake_beaker.fixtures import DEFAULT_WORKSPACE
from tests.helpers import SIX_CLUSTERS, add_six_clusters


def test_list_clusters_pages_through_an_organization_with_every_field(
    fake_beaker: FakeBeaker, beaker: Beaker
) -> None:
    add_six_clusters(fake_beaker)
    fake_beaker.add_cluster("other/elsewhere", "h100")
    fake_beaker.reset_calls()
    found = {c.name: c for c in beaker.cluster.list(org=beaker.organization.get("ai2"))}
    assert sorted(found) == sorted(name.split("/")[1] for name, *_ in SIX_CLUSTERS)
    assert fake_beaker.calls["ListClusters"] == 2  # six clusters, pages of five
    jupiter = found["jupiter"]
    assert jupiter.organization_name == "ai2" and list(jupiter.aliases) == ["jupiter-cirrascale-2"]
    assert list(jupiter.tags) == ["storage:weka", "interconnect:ib"]
    assert jupiter.node_shape.gpu_type == pb2.GpuType.GPU_TYPE_NVIDIA_H100
    assert not jupiter.HasField("max_task_timeout")
    assert found["augusta"].max_task_timeout.ToSeconds() == 0
    assert found["augusta"].HasField("max_task_timeout")
    assert found["titan"].node_shape.gpu_type == pb2.GpuType.GPU_TYPE_NVIDIA_B200


def test_get_cluster_resolves_a_name_or_an_alias_and_a_rename(
    fake_beaker: FakeBeaker, beaker: Beaker
) -> None:
    add_six_clusters(fake_beaker)
    assert beaker.cluster.get("ai2/jupiter-cirrascale-2").name == "jupiter"
    fake_beaker.rename_cluster("ai2/jupiter", "ai2/jupiter-2")
    assert beaker.cluster.get("ai2/jupiter-2").name == "jupiter-2"
    with pytest.raises(BeakerClusterNotFound):
        beaker.cluster.get("ai2/jupiter")


def test_a_refused_cluster_listing_raises_at_once(fake_beaker: FakeBeaker, beaker: Beaker) -> None:
    fake_beaker.fail_rpc("ListClusters", grpc.StatusCode.PERMISSION_DENIED)
    with pytest.raises(BeakerPermissionsError):
        list(beaker.cluster.list())
    assert fake_beaker.calls["ListClusters"] == 1


@pytest.mark.slow
@pytest.mark.parametrize("fault", ["unavailable", "lost reply"])
def test_beaker_py_asks_for_a_cluster_again_after_unavailable_or_a_lost_reply(
    fake_beaker: FakeBeaker, beaker: Beaker, fault: str
) -> None:
    add_six_clusters(fake_beaker)
    if fault == "unavailable":
        fake_beaker.unavailable("GetCluster")
    else:
        fake_beaker.lose_reply("GetCluster")
    started = time.perf_counter()
    assert beaker.cluster.get("ai2/ceres").name == "ceres"
    assert time.perf_counter() - started >= 1.9 and fake_beaker.calls["GetCluster"] == 2


def test_a_workspace_says_its_maximum_priority(fake_beaker: FakeBeaker, beaker: Beaker) -> None:
    assert beaker.workspace.get(DEFAULT_WORKSPACE).maximum_workload_priority == 0  # not capped
    fake_beaker.set_maximum_priority(DEFAULT_WORKSPACE, "high")
    got = beaker.workspace.get(DEFAULT_WORKSPACE).maximum_workload_priority
    assert got == pb2.JobPriority.JOB_PRIORITY_HIGH


def test_listed_workloads_carry_priority_clusters_and_gpus_of_each_replica(
    fake_beaker: FakeBeaker, beaker: Beaker
) -> None:
    fake_beaker.run_workload(
        DEFAULT_WORKSPACE, "big", gpus=8, priority="urgent", clusters=["ai2/jupiter"], replicas=2
    )
    done = fake_beaker.run_workload(
        DEFAULT_WORKSPACE, "done", gpus=8, priority="urgent", clusters=["ai2/jupiter"]
    )
    fake_beaker.set_job_status(done.name, "succeeded")
    workspace = beaker.workspace.get(DEFAULT_WORKSPACE)
    live = [BeakerWorkloadStatus.queued, BeakerWorkloadStatus.running]
    (found,) = beaker.workload.list(workspace=workspace, statuses=live)
    tasks = found.experiment.tasks
    assert len(tasks) == 2  # one task per replica, as Beaker shows them
    assert {t.container_spec.resource_request.gpu_count for t in tasks} == {8}
    details = tasks[0].system_details
    assert details.priority == pb2.JobPriority.JOB_PRIORITY_URGENT
    (constraint,) = details.placement_constraints
    assert list(constraint.values) == ["ai2/jupiter"]
