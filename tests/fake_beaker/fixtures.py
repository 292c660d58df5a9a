"""Pytest fixtures for the fake Beaker.

Enable with ``pytest_plugins = ["tests.fake_beaker.fixtures"]`` in tests/conftest.py.

``fake_beaker_ca`` is session-scoped and autouse, so the CA env vars are in os.environ before any
test opens a gRPC channel: gRPC reads ``GRPC_DEFAULT_SSL_ROOTS_FILE_PATH`` once per process.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

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


@pytest.fixture
def fake_beaker(
    fake_beaker_ca: CertBundle, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Iterator[FakeBeaker]:
    """A started FakeBeaker with workspace ai2/sweeps-test; its env is set in os.environ."""
    fake = FakeBeaker(certs=fake_beaker_ca, workdir=tmp_path / "fake-beaker")
    fake.add_workspace(DEFAULT_WORKSPACE)
    fake.start()
    for name, value in fake.env.items():
        monkeypatch.setenv(name, value)
    try:
        yield fake
    finally:
        fake.close()
