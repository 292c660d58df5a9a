"""Pytest fixtures for the fake Beaker.

Enable with ``pytest_plugins = ["tests.fake_beaker.fixtures"]`` in tests/conftest.py.

``fake_beaker_ca`` is session-scoped and autouse, so the CA env vars are in os.environ before any
test opens a gRPC channel: gRPC reads ``GRPC_DEFAULT_SSL_ROOTS_FILE_PATH`` once per process.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from beaker import Beaker
from beaker import beaker_pb2 as pb2

from .certs import CertBundle, default_bundle
from .server import FakeBeaker

DEFAULT_WORKSPACE = "ai2/sweeps-test"


@pytest.fixture(scope="session", autouse=True)
def fake_beaker_ca() -> Iterator[CertBundle]:
    bundle = default_bundle()
    patch = pytest.MonkeyPatch()
    for name, value in bundle.client_env().items():
        patch.setenv(name, value)
    yield bundle
    patch.undo()


@contextlib.contextmanager
def serving(
    certs: CertBundle, workdir: Path, monkeypatch: pytest.MonkeyPatch, **options: Any
) -> Iterator[FakeBeaker]:
    """A started FakeBeaker (``options`` as FakeBeaker takes them) with workspace
    ai2/sweeps-test, its env set in os.environ until the test ends; closed on leaving."""
    fake = FakeBeaker(certs=certs, workdir=workdir, **options)
    fake.add_workspace(DEFAULT_WORKSPACE)
    with fake:
        for name, value in fake.env.items():
            monkeypatch.setenv(name, value)
        yield fake


@pytest.fixture
def fake_beaker(
    fake_beaker_ca: CertBundle, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Iterator[FakeBeaker]:
    """A started FakeBeaker with workspace ai2/sweeps-test; its env is set in os.environ."""
    with serving(fake_beaker_ca, tmp_path / "fake-beaker", monkeypatch) as fake:
        yield fake


def new_client(**overrides: Any) -> Beaker:
    """An unmodified beaker-py client for the fake's environment (set in os.environ).

    check_for_upgrades=False: otherwise beaker-py calls pypi.org and reads ~/.beaker.
    """
    return Beaker.from_env(check_for_upgrades=False, **overrides)


@pytest.fixture
def beaker(fake_beaker: FakeBeaker) -> Iterator[Beaker]:
    """A beaker-py client of the started fake (the default user)."""
    with new_client() as client:
        yield client


@pytest.fixture
def workspace(beaker: Beaker) -> pb2.Workspace:
    """The default workspace; passing the message (not its name) skips ResolveWorkspaceName."""
    return beaker.workspace.get(DEFAULT_WORKSPACE)
