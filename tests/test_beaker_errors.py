"""Every row of the Beaker error translation (`runner.backends.beaker.errors`), each produced by
the fake Beaker over the real wire: HTTPS through beaker-py (or bare requests where beaker-py
would retry for half a minute first), gRPC through beaker-py."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from pathlib import Path

import grpc
import pytest
import requests

from runner.backends import Experiment, NameTaken, Rejected, Transient
from runner.backends.beaker import BeakerBackend
from runner.backends.beaker.errors import call
from runner.core.model import Rendered, Sweep
from runner.core.retry import RetryPolicy
from runner.plan import catalog
from tests.fake_beaker.server import FakeBeaker
from tests.helpers import SWEEP, write_manifest


@pytest.fixture
def point(tmp_path: Path) -> tuple[Sweep, Rendered]:
    write_manifest(tmp_path, SWEEP, "exact.yaml")
    plan = catalog.load(tmp_path, []).plans()[0]
    rendered = plan.rows[0].rendered
    assert rendered is not None
    return plan.sweep, rendered


@pytest.fixture
def backend(fake_beaker: FakeBeaker) -> Iterator[BeakerBackend]:
    with contextlib.closing(BeakerBackend(http_timeout=0.5)) as opened:
        yield opened


def create(backend: BeakerBackend, point: tuple[Sweep, Rendered]) -> Experiment:
    return backend.create(*point)


# HTTPS (create): fault, expected error, text in its message, may it have been committed.
HTTP_ROWS = [
    ("403", lambda f: f.fail_creates(403, message="no access"), Rejected, "permission denied"),
    ("404 plain", lambda f: f.fail_creates(404, message=""), Rejected, "HTTP 404"),
    ("400 plain", lambda f: f.fail_creates(400, message=""), Rejected, "HTTP 400"),
    (
        "400 json",
        lambda f: f.fail_creates(400, message="bad spec"),
        Rejected,
        "[code=400] bad spec",
    ),
    ("500", lambda f: f.fail_creates(500), Transient, "HTTP 500"),
    ("503 plain", lambda f: f.fail_creates(503), Transient, "HTTP 503"),
    ("429", lambda f: f.fail_creates(429, retry_after=3), Transient, "rate limited"),
    ("reset", lambda f: f.reset_after_commit(), Transient, "connection lost"),
    ("cut", lambda f: f.cut_reply_after_commit(), Transient, "reply cut off mid-body"),
    ("garbled", lambda f: f.garble_after_commit(), Transient, "carries no experiment id"),
    ("late", lambda f: f.reply_late_after_commit(delay=2), Transient, "no reply in time"),
]


@pytest.mark.parametrize(
    ("fault", "error", "text"), [r[1:] for r in HTTP_ROWS], ids=[r[0] for r in HTTP_ROWS]
)
def test_each_create_failure_is_translated(
    fake_beaker: FakeBeaker,
    backend: BeakerBackend,
    point: tuple[Sweep, Rendered],
    fault: Callable[[FakeBeaker], None],
    error: type[Exception],
    text: str,
) -> None:
    backend.experiments(point[0], [])  # resolve the workspace first: the fault is for the POST
    fault(fake_beaker)
    with pytest.raises(error, match=text.replace("[", r"\[")) as info:
        create(backend, point)
    if isinstance(info.value, Transient):
        committed = len(fake_beaker.experiments()) == 1
        assert committed <= info.value.maybe_committed  # a committed create is never "safe"


def test_429_carries_retry_after_and_is_known_not_committed(
    fake_beaker: FakeBeaker, backend: BeakerBackend, point: tuple[Sweep, Rendered]
) -> None:
    backend.experiments(point[0], [])
    fake_beaker.fail_creates(429, retry_after=3)
    with pytest.raises(Transient) as info:
        create(backend, point)
    assert (info.value.maybe_committed, info.value.retry_after) == (False, 3.0)


def test_a_taken_name_is_name_taken(backend: BeakerBackend, point: tuple[Sweep, Rendered]) -> None:
    create(backend, point)
    with pytest.raises(NameTaken):
        create(backend, point)


def test_an_unknown_workspace_is_rejected(
    tmp_path: Path, fake_beaker: FakeBeaker, backend: BeakerBackend
) -> None:
    write_manifest(tmp_path, SWEEP.replace("sweeps-test", "no-such-space"), "exact.yaml")
    plan = catalog.load(tmp_path, []).plans()[0]
    with pytest.raises(Rejected, match="workspace not found"):
        backend.experiments(plan.sweep, [])


@pytest.mark.parametrize(
    ("code", "text"),
    [
        (grpc.StatusCode.PERMISSION_DENIED, "permission denied"),
        (grpc.StatusCode.NOT_FOUND, "injected NOT_FOUND"),
    ],
)
def test_grpc_client_errors_on_a_listing_are_rejected(
    fake_beaker: FakeBeaker,
    backend: BeakerBackend,
    point: tuple[Sweep, Rendered],
    code: grpc.StatusCode,
    text: str,
) -> None:
    fake_beaker.fail_rpc("ListWorkloads", code)
    with pytest.raises(Rejected, match=text):
        backend.experiments(point[0], [point[1].name])


@pytest.mark.parametrize(
    ("code", "error", "text"),
    [
        (grpc.StatusCode.UNAVAILABLE, Transient, "Beaker server error"),  # a mutation: no retry
        (grpc.StatusCode.INTERNAL, Transient, "Beaker server error"),
        (grpc.StatusCode.FAILED_PRECONDITION, Rejected, "gRPC StatusCode.FAILED_PRECONDITION"),
    ],
)
def test_grpc_errors_on_a_mutation_are_translated(
    fake_beaker: FakeBeaker,
    backend: BeakerBackend,
    point: tuple[Sweep, Rendered],
    code: grpc.StatusCode,
    error: type[Exception],
    text: str,
) -> None:
    made = create(backend, point)
    fake_beaker.fail_rpc("CancelWorkloads", code)
    with (
        contextlib.closing(BeakerBackend(policy=RetryPolicy(attempts=1))) as once,
        pytest.raises(error, match=text) as info,
    ):
        once.cancel(point[0], [made])
    if isinstance(info.value, Transient):
        assert info.value.maybe_committed  # a mutation's failure is ambiguous
    assert fake_beaker.cancels(made.id) == 0


def test_a_connect_timeout_is_known_not_committed(fake_beaker: FakeBeaker) -> None:
    url = f"{fake_beaker.agent_address}/api/v3/workspaces/x/experiments"
    with fake_beaker.unresponsive(), pytest.raises(Transient) as info:
        call("create x", lambda: requests.post(url, timeout=0.3))
    assert not info.value.maybe_committed and info.value.unreachable == "connect timeout"


def test_a_refused_connection_is_known_not_committed_and_unreachable(
    fake_beaker: FakeBeaker,
) -> None:
    url = f"{fake_beaker.agent_address}/api/v3/workspaces/x/experiments"
    fake_beaker.stop()
    with pytest.raises(Transient) as info:
        call("create x", lambda: requests.post(url, timeout=1))
    assert not info.value.maybe_committed and info.value.unreachable == "connection refused"
