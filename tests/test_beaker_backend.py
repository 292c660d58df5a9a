"""The Beaker backend against the fake Beaker: connections it keeps, requests it sends."""

from __future__ import annotations

import contextlib
import io
import json
import time
from pathlib import Path

import pytest
import requests
from beaker import Beaker

from runner.backends.beaker import BeakerBackend, to_beaker_spec
from runner.core.model import Rendered, Sweep
from runner.core.retry import RetryPolicy
from runner.plan import catalog
from runner.report.progress import Progress
from runner.submit import Options, OutcomeStatus, Submitter
from tests.fake_beaker.server import FakeBeaker
from tests.helpers import POINTS, SWEEP, no_sleep, write_manifest


def quiet() -> Progress:
    return Progress(io.StringIO(), io.StringIO(), live=False)


def submit(root: Path, backend: BeakerBackend, concurrency: int) -> None:
    options = Options(root=root, commit="c0ffee", concurrency=concurrency, policy=RetryPolicy())
    progress = Progress(io.StringIO(), io.StringIO(), live=False)
    outcomes = Submitter(backend, options, progress).run(catalog.load(root, []).plans())
    assert [o.status for o in outcomes] == [OutcomeStatus.CREATED] * POINTS


@pytest.mark.parametrize("concurrency", [1, 3])
def test_each_worker_thread_sends_its_creates_over_one_connection(
    repo: Path, fake_beaker: FakeBeaker, concurrency: int
) -> None:
    backend = BeakerBackend()
    try:
        submit(repo, backend, concurrency)
    finally:
        backend.close()
    # beaker-py alone opens a session, and a TLS connection, for every request: 6 here.
    assert 1 <= fake_beaker.posting_connections <= concurrency < POINTS


def test_no_kept_connection_outlives_the_run(repo: Path, fake_beaker: FakeBeaker) -> None:
    backend = BeakerBackend()
    submit(repo, backend, concurrency=3)
    write_manifest(repo, SWEEP.replace("name: exact", "name: other"), "other.yaml")
    plan = next(p for p in catalog.load(repo, []).plans() if p.sweep.name == "other")
    for row in plan.rows:  # on a session the main thread now keeps
        assert row.rendered is not None
        backend.create(plan.sweep, row.rendered)
    assert len(fake_beaker.count_by_name()) == 2 * POINTS
    backend.close()  # closes it; the workers' sessions ended with their threads
    for _ in range(200):  # the server notices each close when its handler reads EOF
        if fake_beaker.open_connections == 0:
            return
        time.sleep(0.05)
    raise AssertionError(f"{fake_beaker.open_connections} connection(s) left open")


def test_the_connection_count_is_served_to_other_processes(fake_beaker: FakeBeaker) -> None:
    reply = requests.get(f"{fake_beaker.agent_address}/_fake/connections", timeout=10)
    assert reply.json() == {"posting": 0}


def test_retry_after_is_still_seen_on_a_kept_session(repo: Path, fake_beaker: FakeBeaker) -> None:
    fake_beaker.fail_creates(429, times=2, retry_after=5)
    sleeps: list[float] = []
    backend = BeakerBackend()
    options = Options(
        root=repo, commit="c0ffee", concurrency=1, policy=RetryPolicy(sleep=sleeps.append)
    )
    try:
        Submitter(backend, options, Progress(io.StringIO(), io.StringIO(), live=False)).run(
            catalog.load(repo, []).plans()
        )
    finally:
        backend.close()
    assert sleeps == [5.0, 5.0] and fake_beaker.posting_connections == 1


def _first_point(root: Path) -> tuple[Sweep, Rendered]:
    plan = catalog.load(root, []).plans()[0]
    point = plan.rows[0].rendered
    assert point is not None
    return plan.sweep, point


def test_create_is_one_request_and_returns_what_a_lookup_returns(
    repo: Path, fake_beaker: FakeBeaker
) -> None:
    sweep, point = _first_point(repo)
    with contextlib.closing(BeakerBackend()) as backend:
        backend.experiments(sweep, [])  # resolves the workspace, as a run does before creating
        fake_beaker.reset_calls()
        created = backend.create(sweep, point)
        assert fake_beaker.calls == {"http:create": 1}  # beaker-py's create adds a GetWorkload
        (found,) = backend.experiments(sweep, [point.name])[point.name]
    assert created == found
    assert (created.name, created.key, created.state) == (point.name, point.key, "queued")
    assert created.id == fake_beaker.experiments()[0].id


def test_create_sends_what_beaker_pys_create_sends(repo: Path, fake_beaker: FakeBeaker) -> None:
    sweep, point = _first_point(repo)
    with Beaker.from_env(check_for_upgrades=False) as client:
        client.experiment.create(
            name="by-beaker-py",
            spec=to_beaker_spec(point.spec),
            workspace=client.workspace.get(sweep.placement.workspace),
        )
    with contextlib.closing(BeakerBackend()) as backend:
        backend.create(sweep, point)
    theirs, ours = fake_beaker.experiments()
    assert (ours.name, ours.workspace, ours.author) == (point.name, theirs.workspace, theirs.author)
    # The same JSON document beaker-py sends; ours is the rendered text itself (sorted, compact).
    assert json.loads(ours.spec_json) == json.loads(theirs.spec_json)
    assert ours.spec_json == point.spec_json


def test_a_create_reply_without_an_id_is_looked_up_and_adopted(
    repo: Path, fake_beaker: FakeBeaker
) -> None:
    fake_beaker.garble_after_commit(times=1)
    backend = BeakerBackend()
    options = Options(root=repo, commit="c0ffee", concurrency=1, policy=RetryPolicy(sleep=no_sleep))
    try:
        outcomes = Submitter(backend, options, quiet()).run(catalog.load(repo, []).plans())
    finally:
        backend.close()
    assert sorted(o.status for o in outcomes) == [OutcomeStatus.ADOPTED] + [
        OutcomeStatus.CREATED
    ] * (POINTS - 1)
    assert set(fake_beaker.count_by_name().values()) == {1}
