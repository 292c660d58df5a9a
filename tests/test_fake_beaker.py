"""The fake Beaker, driven by the unmodified beaker-py client (and raw grpc/requests for faults
beaker-py hides). These tests also pin down how beaker-py behaves on each fault."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import grpc
import pytest
import requests
from beaker import (
    Beaker,
    BeakerExperimentSpec,
    BeakerSortOrder,
    BeakerWorkloadStatus,
    beaker_pb2_grpc,
)
from beaker import beaker_pb2 as pb2
from beaker.exceptions import (
    BeakerError,
    BeakerExperimentConflict,
    BeakerWorkloadNotFound,
    BeakerWorkspaceNotFound,
)

from tests.fake_beaker import FakeBeaker
from tests.fake_beaker.fixtures import DEFAULT_WORKSPACE, new_client

REPO = Path(__file__).resolve().parent.parent


def make_spec(description: str = "a sweep point", **env: str) -> BeakerExperimentSpec:
    spec = BeakerExperimentSpec.new(
        docker_image="python:3.11", description=description, command=["python", "-c", "pass"]
    )
    for name, value in env.items():
        spec.tasks[0] = spec.tasks[0].with_env_var(name, value)
    return spec


@pytest.fixture
def raw_stub(fake_beaker: FakeBeaker) -> Iterator[Callable[[str, Any], Any]]:
    """Calls an RPC without beaker-py's retries; returns the response or raises grpc.RpcError."""
    credentials = grpc.ssl_channel_credentials(fake_beaker.certs.ca_path.read_bytes())
    channel = grpc.secure_channel(fake_beaker.rpc_address, credentials)
    stub = beaker_pb2_grpc.BeakerStub(channel)
    metadata = [("authorization", f"bearer {fake_beaker.token}")]

    def call(rpc: str, request: Any) -> Any:
        return getattr(stub, rpc)(request, metadata=metadata, timeout=5)

    yield call
    channel.close()


def create(client: Beaker, workspace: pb2.Workspace, name: str, **env: str) -> pb2.Workload:
    return client.experiment.create(name=name, spec=make_spec(**env), workspace=workspace)


# Wiring.


def test_env_points_only_at_loopback(fake_beaker: FakeBeaker, beaker: Beaker) -> None:
    env = fake_beaker.env
    assert env["BEAKER_ADDR"] == f"https://127.0.0.1:{fake_beaker.http_port}"
    assert env["GRPC_DEFAULT_SSL_ROOTS_FILE_PATH"] == env["REQUESTS_CA_BUNDLE"]
    assert Path(env["BEAKER_CONFIG"]).is_file()
    assert beaker.config.agent_address == env["BEAKER_ADDR"]
    assert beaker.config.rpc_address == f"127.0.0.1:{fake_beaker.grpc_port}"
    assert beaker.config.default_workspace is None


def test_user_and_workspace(fake_beaker: FakeBeaker, beaker: Beaker) -> None:
    assert beaker.user_name == fake_beaker.user == "fake-user"
    workspace = beaker.workspace.get(DEFAULT_WORKSPACE)
    assert workspace.name == DEFAULT_WORKSPACE
    assert workspace.id == fake_beaker.add_workspace(DEFAULT_WORKSPACE)  # idempotent
    with pytest.raises(BeakerWorkspaceNotFound):
        beaker.workspace.get("ai2/no-such-workspace")


def test_wrong_token_is_rejected_on_both_protocols(
    fake_beaker: FakeBeaker, workspace: pb2.Workspace
) -> None:
    with new_client(user_token="wrong") as client:
        with pytest.raises(BeakerError, match=r"\[code=401\]"):
            create(client, workspace, "x")
        with pytest.raises(grpc.RpcError) as info:
            client.workload.get("01FAKEEXP00000000000000001")
    assert info.value.code() == grpc.StatusCode.UNAUTHENTICATED
    assert fake_beaker.experiments() == []


# Creating and reading experiments.


def test_create_then_get_by_id_and_by_author_name(
    fake_beaker: FakeBeaker, beaker: Beaker, workspace: pb2.Workspace
) -> None:
    created = create(beaker, workspace, "lr-0.1", LR="0.1")
    exp_id = created.experiment.id
    assert exp_id.startswith("01FAKEEXP") and len(exp_id) == 26

    by_id = beaker.workload.get(exp_id)
    by_name = beaker.workload.get(f"{beaker.user_name}/lr-0.1")
    assert by_id == by_name == created
    assert by_id.experiment.name == "lr-0.1"
    assert by_id.experiment.workspace_id == workspace.id
    assert by_id.experiment.description == "a sweep point"
    env = by_id.experiment.tasks[0].container_spec.environment_variables
    assert [(v.name, v.literal) for v in env] == [("LR", "0.1")]
    assert beaker.workload.url(by_id).endswith(f"/ex/{exp_id}")

    [record] = fake_beaker.experiments()
    assert (record.id, record.name, record.workspace) == (exp_id, "lr-0.1", DEFAULT_WORKSPACE)
    assert record.author == "fake-user"
    assert record.spec == make_spec(LR="0.1").to_json()
    assert record.env_vars == {"LR": "0.1"}
    with pytest.raises(BeakerWorkloadNotFound):
        beaker.workload.get("fake-user/never-created")


def test_same_name_conflicts_within_a_workspace_only(
    fake_beaker: FakeBeaker, beaker: Beaker, workspace: pb2.Workspace
) -> None:
    create(beaker, workspace, "point-1")
    with pytest.raises(BeakerExperimentConflict):
        create(beaker, workspace, "point-1")
    other = beaker.workspace.get(fake_beaker.add_workspace("ai2/other"))
    create(beaker, other, "point-1")
    assert fake_beaker.count_by_name() == {"point-1": 2}
    assert fake_beaker.calls["http:create"] == 3


def test_concurrent_creates_of_one_name_commit_once(
    fake_beaker: FakeBeaker, workspace: pb2.Workspace
) -> None:
    def attempt(_: int) -> str:
        with new_client() as client:
            try:
                create(client, workspace, "contended")
            except BeakerExperimentConflict:
                return "conflict"
            return "created"

    with ThreadPoolExecutor(8) as pool:
        outcomes = sorted(pool.map(attempt, range(8)))
    assert outcomes == ["conflict"] * 7 + ["created"]
    assert fake_beaker.count_by_name() == {"contended": 1}


def test_bad_requests_get_api_errors(
    fake_beaker: FakeBeaker, beaker: Beaker, workspace: pb2.Workspace
) -> None:
    with pytest.raises(BeakerError, match=r"^\[code=400\] .*at least one task"):
        beaker.experiment.create(name="empty", spec=BeakerExperimentSpec(), workspace=workspace)
    lost = pb2.Workspace(id="01NOSUCHWORKSPACE")
    with pytest.raises(BeakerError, match=r"^\[code=404\] workspace"):
        beaker.experiment.create(name="lost", spec=make_spec(), workspace=lost)
    assert fake_beaker.experiments() == []


def test_get_spec_returns_what_was_posted(beaker: Beaker, workspace: pb2.Workspace) -> None:
    spec = make_spec("described", SEED="7")
    created = beaker.experiment.create(name="spec", spec=spec, workspace=workspace)
    assert beaker.experiment.get_spec(created) == spec


def test_list_pages_filters_and_sorts(
    fake_beaker: FakeBeaker, beaker: Beaker, workspace: pb2.Workspace
) -> None:
    names = [f"p{i:02d}" for i in range(12)]
    for name in names:
        create(beaker, workspace, name)
    other = beaker.workspace.get(fake_beaker.add_workspace("ai2/other"))
    create(beaker, other, "elsewhere")

    fake_beaker.reset_calls()
    listed = [w.experiment.name for w in beaker.workload.list(workspace=workspace)]
    assert listed == names
    assert fake_beaker.calls["ListWorkloads"] == 3  # 5 + 5 + 2 with page_size=5

    newest = beaker.workload.list(workspace=workspace, sort_order=BeakerSortOrder.descending)
    assert [w.experiment.name for w in newest] == names[::-1]
    assert len(list(beaker.workload.list(workspace=workspace, limit=7))) == 7
    found = beaker.workload.list(workspace=other, name_or_description="ELSE")
    assert [w.experiment.name for w in found] == ["elsewhere"]
    assert len(list(beaker.workload.list())) == 13  # no workspace: everything


# Jobs.


@pytest.mark.parametrize(
    ("status", "exit_code", "expected_exit", "finalized"),
    [
        ("queued", None, None, False),
        ("running", None, None, False),
        ("succeeded", None, 0, True),
        ("failed", 3, 3, True),
        ("canceled", None, None, True),
    ],
)
def test_job_status_set_by_the_test_is_seen_by_the_client(
    fake_beaker: FakeBeaker,
    beaker: Beaker,
    workspace: pb2.Workspace,
    status: str,
    exit_code: int | None,
    expected_exit: int | None,
    finalized: bool,
) -> None:
    created = create(beaker, workspace, "job")
    fake_beaker.set_job_status(created.experiment.id, status, exit_code)

    job = beaker.workload.get_latest_job(beaker.workload.get(created.experiment.id))
    assert job is not None
    assert job.status.status == BeakerWorkloadStatus[status].as_pb2()
    assert job.status.HasField("finalized") is finalized
    assert job.status.HasField("exit_code") is (expected_exit is not None)
    if expected_exit is not None:
        assert job.status.exit_code == expected_exit
    assert beaker.workload.get(created.experiment.id).status == job.status.status
    assert beaker.job.get(job.id) == job
    finished = list(beaker.workload.list(workspace=workspace, finalized=True))
    assert len(finished) == int(finalized)


def test_new_experiments_have_a_queued_job(beaker: Beaker, workspace: pb2.Workspace) -> None:
    job = beaker.workload.get_latest_job(create(beaker, workspace, "fresh"))
    assert job is not None
    assert job.status.status == pb2.WorkloadStatus.STATUS_QUEUED
    assert not job.status.HasField("exit_code")


# Faults on create. beaker-py never retries the POST itself (urllib3 only retries idempotent
# methods on a status or a read error), except on 409 "a retryable database conflict occurred".


@pytest.mark.parametrize("status", [503, 502, 500])
def test_server_error_burst_surfaces_then_clears(
    fake_beaker: FakeBeaker, beaker: Beaker, workspace: pb2.Workspace, status: int
) -> None:
    fake_beaker.fail_creates(status, times=2)
    for _ in range(2):
        with pytest.raises(requests.exceptions.HTTPError) as info:
            create(beaker, workspace, "burst")
        assert info.value.response is not None
        assert info.value.response.status_code == status
    create(beaker, workspace, "burst")
    assert fake_beaker.calls["http:create"] == 3
    assert fake_beaker.count_by_name() == {"burst": 1}


def test_429_is_a_beaker_error_with_retry_after_only_in_its_context(
    fake_beaker: FakeBeaker, beaker: Beaker, workspace: pb2.Workspace
) -> None:
    fake_beaker.fail_creates(429, retry_after=2)
    with pytest.raises(BeakerError) as info:
        create(beaker, workspace, "limited")
    assert str(info.value) == "[code=429] rate limit exceeded"
    # beaker-py raises inside `except HTTPError`, so the response survives as __context__.
    context = info.value.__context__
    assert isinstance(context, requests.exceptions.HTTPError)
    assert context.response is not None
    assert context.response.headers["Retry-After"] == "2"
    assert fake_beaker.experiments() == []


def test_rate_limit_answers_429_beyond_r_per_second(
    fake_beaker: FakeBeaker, beaker: Beaker, workspace: pb2.Workspace
) -> None:
    fake_beaker.rate_limit(2)
    create(beaker, workspace, "r1")
    create(beaker, workspace, "r2")
    with pytest.raises(BeakerError, match=r"^\[code=429\]") as info:
        create(beaker, workspace, "r3")
    context = info.value.__context__
    assert isinstance(context, requests.exceptions.HTTPError) and context.response is not None
    assert context.response.headers["Retry-After"] == "1"
    assert [e.name for e in fake_beaker.experiments()] == ["r1", "r2"]


@pytest.mark.slow
def test_retryable_conflict_is_retried_by_beaker_py_itself(
    fake_beaker: FakeBeaker, beaker: Beaker, workspace: pb2.Workspace
) -> None:
    fake_beaker.fail_creates(409, message="a retryable database conflict occurred")
    create(beaker, workspace, "retried")  # beaker-py sleeps 1 s and POSTs again
    assert fake_beaker.calls["http:create"] == 2
    assert fake_beaker.count_by_name() == {"retried": 1}


def test_reset_after_commit_raises_connection_error_but_the_experiment_exists(
    fake_beaker: FakeBeaker, beaker: Beaker, workspace: pb2.Workspace
) -> None:
    fake_beaker.reset_after_commit()
    with pytest.raises(requests.exceptions.ConnectionError, match="Connection aborted"):
        create(beaker, workspace, "ghost")
    assert fake_beaker.count_by_name() == {"ghost": 1}
    # A blind retry now conflicts; looking the name up finds the committed experiment.
    with pytest.raises(BeakerExperimentConflict):
        create(beaker, workspace, "ghost")
    assert beaker.workload.get("fake-user/ghost").experiment.id == fake_beaker.experiments()[0].id


def test_late_reply_after_commit_times_out_but_the_experiment_exists(
    fake_beaker: FakeBeaker, workspace: pb2.Workspace
) -> None:
    with new_client() as client:
        # Beaker.TIMEOUT (30 s) is the only knob for the HTTP timeout; from_env has none.
        client.TIMEOUT = 0.3  # type: ignore[misc]
        fake_beaker.reply_late_after_commit(delay=2.0)
        with pytest.raises(requests.exceptions.ReadTimeout, match=r"read timeout=0\.3"):
            create(client, workspace, "slow")
        assert fake_beaker.calls["http:create"] == 1  # beaker-py gave up; it did not POST again
    assert fake_beaker.count_by_name() == {"slow": 1}


# Faults on gRPC.


def test_unavailable_is_injected_exactly_n_times(
    fake_beaker: FakeBeaker, beaker: Beaker, workspace: pb2.Workspace, raw_stub: Any
) -> None:
    exp_id = create(beaker, workspace, "flaky").experiment.id
    fake_beaker.unavailable("GetWorkload", times=3)
    request = pb2.GetWorkloadRequest(workload_id=exp_id)
    for _ in range(3):
        with pytest.raises(grpc.RpcError) as info:
            raw_stub("GetWorkload", request)
        assert info.value.code() == grpc.StatusCode.UNAVAILABLE
        assert "injected UNAVAILABLE" in info.value.details()
    assert raw_stub("GetWorkload", request).workload.experiment.id == exp_id
    with pytest.raises(ValueError, match="not a Beaker RPC"):
        fake_beaker.unavailable("GetWorkloads")


def test_a_fault_after_n_calls_lets_those_through_first(
    fake_beaker: FakeBeaker, beaker: Beaker, workspace: pb2.Workspace, raw_stub: Any
) -> None:
    exp_id = create(beaker, workspace, "later").experiment.id
    fake_beaker.fail_rpc("GetWorkload", grpc.StatusCode.PERMISSION_DENIED, after=2)
    request = pb2.GetWorkloadRequest(workload_id=exp_id)
    for _ in range(2):
        assert raw_stub("GetWorkload", request).workload.experiment.id == exp_id
    with pytest.raises(grpc.RpcError) as info:
        raw_stub("GetWorkload", request)
    assert info.value.code() == grpc.StatusCode.PERMISSION_DENIED
    assert raw_stub("GetWorkload", request).workload.experiment.id == exp_id


@pytest.mark.slow
def test_beaker_py_retries_unavailable_every_two_seconds(
    fake_beaker: FakeBeaker, beaker: Beaker, workspace: pb2.Workspace
) -> None:
    exp_id = create(beaker, workspace, "flaky").experiment.id
    fake_beaker.reset_calls()
    fake_beaker.unavailable("GetWorkload", times=1)
    started = time.perf_counter()
    assert beaker.workload.get(exp_id).experiment.id == exp_id
    assert time.perf_counter() - started >= 1.9  # it waited before retrying
    assert fake_beaker.calls["GetWorkload"] == 2  # one failure, one retry: neither more nor less


def test_latency_is_added_to_every_call(
    fake_beaker: FakeBeaker, beaker: Beaker, workspace: pb2.Workspace
) -> None:
    exp_id = create(beaker, workspace, "quick").experiment.id
    fake_beaker.latency = 0.05
    started = time.perf_counter()
    beaker.workload.get(exp_id)  # one gRPC call
    assert time.perf_counter() - started >= 0.05
    started = time.perf_counter()
    create(beaker, workspace, "slower")  # one POST + one GetWorkload
    assert time.perf_counter() - started >= 0.10


# Stop and restart.


def test_stop_refuses_connections_and_restart_keeps_state(
    fake_beaker: FakeBeaker, beaker: Beaker, workspace: pb2.Workspace, raw_stub: Any
) -> None:
    exp_id = create(beaker, workspace, "survivor").experiment.id
    ports = (fake_beaker.http_port, fake_beaker.grpc_port)
    fake_beaker.stop()

    with pytest.raises(ConnectionRefusedError):  # refused, not timed out
        socket.create_connection(("127.0.0.1", fake_beaker.http_port), timeout=1).close()
    with pytest.raises(requests.exceptions.ConnectionError, match="Connection refused"):
        requests.post(f"{fake_beaker.agent_address}/api/v3/workspaces/x/experiments", timeout=1)
    with pytest.raises(grpc.RpcError) as info:
        raw_stub("GetWorkload", pb2.GetWorkloadRequest(workload_id=exp_id))
    assert info.value.code() == grpc.StatusCode.UNAVAILABLE
    assert "Connection refused" in str(info.value.details())

    fake_beaker.restart()
    assert (fake_beaker.http_port, fake_beaker.grpc_port) == ports
    assert beaker.workload.get("fake-user/survivor").experiment.id == exp_id
    create(beaker, workspace, "after-restart")
    assert fake_beaker.count_by_name() == {"survivor": 1, "after-restart": 1}


@pytest.mark.slow
def test_beaker_py_rides_out_a_short_outage(
    fake_beaker: FakeBeaker, beaker: Beaker, workspace: pb2.Workspace
) -> None:
    """While stopped, beaker-py's Get/List/Resolve retry UNAVAILABLE forever and its POST
    retries the refused connect (urllib3: 5 retries, 0+2+4+8+16 s, then ConnectionError after
    ~30 s). So calls made during a short outage block, then succeed after restart."""
    exp_id = create(beaker, workspace, "before").experiment.id
    fake_beaker.stop()
    results: dict[str, Any] = {}

    def run(key: str, call: Callable[[Beaker], Any]) -> None:
        with new_client() as client:
            results[key] = call(client)

    threads = [
        threading.Thread(target=run, args=("get", lambda c: c.workload.get(exp_id)), daemon=True),
        threading.Thread(
            target=run, args=("create", lambda c: create(c, workspace, "during")), daemon=True
        ),
    ]
    for thread in threads:
        thread.start()
    time.sleep(0.5)
    assert all(thread.is_alive() for thread in threads) and results == {}
    fake_beaker.restart()
    for thread in threads:
        thread.join(timeout=10)
    assert results["get"].experiment.id == exp_id
    assert results["create"].experiment.name == "during"
    assert fake_beaker.count_by_name() == {"before": 1, "during": 1}


# Out of process.


def test_stats_endpoint(fake_beaker: FakeBeaker, beaker: Beaker, workspace: pb2.Workspace) -> None:
    create(beaker, workspace, "counted")
    stats = requests.get(f"{fake_beaker.agent_address}/_fake/stats", timeout=5).json()
    assert stats["calls"]["http:create"] == 1
    assert stats["experiments"] == 1


@pytest.mark.slow
def test_runs_as_a_separate_process(tmp_path: Path) -> None:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    command = [sys.executable, "-m", "tests.fake_beaker", "--latency", "0.01"]
    command += ["--workspace", "ai2/bench"]
    with subprocess.Popen(command, cwd=REPO, env=env, stdout=subprocess.PIPE, text=True) as proc:
        try:
            assert proc.stdout is not None
            client_env = json.loads(proc.stdout.readline())
            assert client_env["BEAKER_ADDR"].startswith("https://127.0.0.1:")
            ca = client_env["REQUESTS_CA_BUNDLE"]
            assert ca == client_env["GRPC_DEFAULT_SSL_ROOTS_FILE_PATH"]
            base = client_env["BEAKER_ADDR"]
            # Its own CA: this process's gRPC roots are fixed already, so talk HTTPS only.
            reply = requests.post(
                f"{base}/api/v3/workspaces/01NOSUCHWORKSPACE/experiments?name=x",
                data=json.dumps(make_spec().to_json()),
                headers={"Authorization": f"Bearer {client_env['BEAKER_TOKEN']}"},
                verify=ca,
                timeout=5,
            )
            assert reply.status_code == 404
            stats = requests.get(f"{base}/_fake/stats", verify=ca, timeout=5).json()
            assert stats == {"calls": {"http:create": 1}, "experiments": 0}
        finally:
            proc.send_signal(signal.SIGTERM)
            assert proc.wait(timeout=10) == 0
