"""The Beaker backend against the fake Beaker: connections it keeps, requests it sends."""

from __future__ import annotations

import io
import time
from pathlib import Path

import pytest
import requests

from runner import catalog
from runner.backends.beaker import BeakerBackend
from runner.progress import Progress
from runner.submit import CREATED, Options, RetryPolicy, Submitter
from tests.fake_beaker.server import FakeBeaker
from tests.helpers import POINTS, SWEEP, write_manifest


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    write_manifest(tmp_path, SWEEP, "exact.yaml")
    return tmp_path


def submit(root: Path, backend: BeakerBackend, concurrency: int) -> None:
    options = Options(root=root, commit="c0ffee", concurrency=concurrency, policy=RetryPolicy())
    progress = Progress(io.StringIO(), io.StringIO(), live=False)
    outcomes = Submitter(backend, options, progress).run(catalog.load(root, []).plans())
    assert [o.status for o in outcomes] == [CREATED] * POINTS


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
