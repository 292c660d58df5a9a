"""The Beaker gateway (`runner.backends.beaker.gateway`): no call reaches Beaker around it, and
every call of the port (each method of `Backend` and of `Placing`, found by introspection, so a
new one is covered by itself) ends within the deadline against a Beaker that refuses every
connection; `wait` ends when an awaited experiment is gone; `report --live` reads each point's
log at most once."""

from __future__ import annotations

import inspect
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import grpc
import pytest

from runner.backends import (
    NO_RECORD,
    NOTHING_RECORDED,
    Backend,
    Experiment,
    Listing,
    LogQuery,
    Transient,
)
from runner.backends.beaker import BeakerBackend
from runner.backends.beaker.client import OutsideGateway
from runner.backends.placing import Placing
from runner.cli import main
from runner.commands.wait import WaitArgs, wait
from runner.core.clock import Bounds
from runner.core.errors import Exit
from runner.observe import sweeps
from runner.observe.live import Live, Reading, Tails
from runner.plan import catalog
from tests.clock import VirtualClock
from tests.fake_beaker.server import FakeBeaker
from tests.helpers import POINTS, SWEEP, write_manifest

DEADLINE = 20.0


@pytest.fixture
def submitted(tmp_path: Path, fake_beaker: FakeBeaker) -> Path:
    write_manifest(tmp_path, SWEEP, "exact.yaml")
    assert main(["-C", str(tmp_path), "submit", "--backend", "beaker"]) == 0
    return tmp_path


@pytest.fixture
def opened(fake_beaker: FakeBeaker) -> Iterator[BeakerBackend]:
    backend = BeakerBackend()
    try:
        yield backend
    finally:
        backend.close()


# -- no call around the gateway ---------------------------------------------------------------


def test_the_client_refuses_every_use_outside_a_gateway_call(
    opened: BeakerBackend, fake_beaker: FakeBeaker
) -> None:
    """A path that forgets the gateway fails loudly, gRPC and HTTP alike, in every test that
    takes it: a new call cannot reach Beaker around the deadline by accident."""
    client = opened.client
    with pytest.raises(OutsideGateway, match="outside a gateway call"):
        client.workspace.get("ai2/sweeps-test")  # gRPC
    with pytest.raises(OutsideGateway, match="HTTP request POST"):
        client.experiment.http_request("workspaces/x/experiments", method="POST", data="{}")
    # A listing handed out of its call unconsumed: its first page is refused where it is read.
    listing = opened.gateway.read("a listing", lambda: client.workload.list())
    with pytest.raises(OutsideGateway):
        next(iter(listing))
    # A method taken inside a call and used after it is refused too: every RPC is checked.
    method = opened.gateway.read("a method", lambda: client.service.GetWorkspace)
    with pytest.raises(OutsideGateway):
        method(None)
    assert fake_beaker.calls == {}  # nothing reached Beaker
    assert opened.gateway.read("inside", lambda: client.workspace.get("ai2/sweeps-test")).id


# -- every call of the port, against a Beaker that refuses connections ------------------------


def _calls(port: type) -> list[str]:
    return sorted(
        n for n, f in inspect.getmembers(port, inspect.isfunction) if not n.startswith("_")
    )


PORT = [("backend", n) for n in _calls(Backend) if n != "close"] + [
    ("placing", n) for n in _calls(Placing)
]


def _argument(annotation: str, root: Path) -> Any:
    """A value for each parameter type the port's calls take: a new call with a new type fails
    here, loudly, until it gets one."""
    plan = catalog.load(root, []).plans()[0]
    point = plan.rows[0].rendered
    experiment = Experiment("exact-x", "01FAKEEXP0000000000000000X", "", None)
    values = {
        "Sweep": plan.sweep,
        "Rendered": point,
        "Iterable[str]": [plan.rows[0].experiment],
        "Sequence[str]": ["01FAKEEXP0000000000000000X"],
        "Recorded": NOTHING_RECORDED,
        "Listing": Listing.SOON,
        "Experiment": experiment,
        "Sequence[Experiment]": [experiment],
        "WriteAhead": NO_RECORD,
        "LogQuery": LogQuery(),
        "str": "ai2/sweeps-test",
    }
    if annotation not in values:
        raise AssertionError(f"no test value for a port parameter of type {annotation}")
    return values[annotation]


@pytest.mark.parametrize(("where", "name"), PORT, ids=[n for _, n in PORT])
def test_every_port_call_against_a_refusing_beaker_ends_transient_within_the_deadline(
    repo: Path, fake_beaker: FakeBeaker, where: str, name: str
) -> None:
    clock = VirtualClock()
    start = clock.now()
    backend = BeakerBackend(bounds=Bounds(clock, start + DEADLINE, 180.0))
    port = Backend if where == "backend" else Placing
    target = backend if where == "backend" else backend.placing
    parameters = list(inspect.signature(getattr(port, name)).parameters.values())[1:]
    arguments = [_argument(str(p.annotation), repo) for p in parameters if p.default is p.empty]
    fake_beaker.stop()
    try:
        with pytest.raises(Transient) as raised:
            _read(getattr(target, name)(*arguments))
        assert raised.value.unreachable is not None
        assert clock.now() <= start + DEADLINE  # within it, however long the retries
    finally:
        backend.close()


def _read(found: object) -> None:
    """A stream's lines are read (the calls happen then)."""
    if isinstance(found, Iterator):
        list(found)


# -- wait, when an awaited experiment is gone -------------------------------------------------


def test_wait_ends_exit_5_naming_a_recorded_experiment_gone_from_beaker(
    submitted: Path, fake_beaker: FakeBeaker, capsys: pytest.CaptureFixture[str]
) -> None:
    gone = fake_beaker.experiments()[2]
    fake_beaker.delete_experiment(gone.id)
    capsys.readouterr()
    assert wait(submitted, WaitArgs(), VirtualClock()) == Exit.INCOMPLETE
    err = capsys.readouterr().err
    assert f"not found, though the ledger records it (deleted?): {gone.name} (missing)" in err


# -- report --live: at most one log read per point --------------------------------------------


def test_a_live_read_of_every_point_is_one_stream_each_and_names_what_it_could_not_read(
    submitted: Path, fake_beaker: FakeBeaker
) -> None:
    """Every finished point's log is read for its curve: one StreamJobLogs each. A stream that
    fails is not resumed (beaker-py would: a second stream for that point); the point is named
    in the sweep's note."""
    for exp in fake_beaker.experiments():
        fake_beaker.set_job_status(exp.id, "succeeded")
        fake_beaker.set_logs(exp.id, ['[sweep-metric] {"step": 1, "loss": 2.0}\n'])
    cat = catalog.load(submitted, [])
    reading = Reading(Tails.CURVES, Live.ON)
    fake_beaker.fail_rpc("StreamJobLogs", grpc.StatusCode.UNAVAILABLE, after=2)
    fake_beaker.reset_calls()
    backend = BeakerBackend()
    try:
        (seen,) = sweeps.observe(cat, backend, reading=reading)
    finally:
        backend.close()
    assert fake_beaker.calls["StreamJobLogs"] == POINTS  # one each, the failed one too
    unread = [p.experiment for p in seen.points if not p.reported]
    assert len(unread) == 1
    assert f"live values of 1 point(s) not read: {unread[0]} (" in seen.note
