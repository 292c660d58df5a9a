"""Shared fixtures: an isolated HOME and git identity, and repositories built from this project."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.webhook import Webhook

pytest_plugins = ["tests.fake_beaker.fixtures", "tests.github_world"]

PROJECT = Path(__file__).resolve().parent.parent


@pytest.fixture(autouse=True)
def _isolated_home(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Tests never read the developer's ~/.beaker, ~/.gitconfig or CI variables."""
    home = tmp_path_factory.mktemp("home")
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    monkeypatch.setenv("GIT_AUTHOR_NAME", "Sweep Tester")
    monkeypatch.setenv("GIT_AUTHOR_EMAIL", "tester@example.com")
    monkeypatch.setenv("GIT_COMMITTER_NAME", "Sweep Tester")
    monkeypatch.setenv("GIT_COMMITTER_EMAIL", "tester@example.com")
    for name in (
        "BEAKER_TOKEN",
        "BEAKER_ADDR",
        "BEAKER_CONFIG",
        "CI",
        "GITHUB_ACTIONS",
        "SWEEP_SLACK_WEBHOOK",
    ):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("BEAKER_CONFIG", str(home / "beaker-config.yml"))


@pytest.fixture
def project_copy(tmp_path: Path) -> Path:
    """A copy of this project's sweeps/ and schemas/ in a fresh directory (no git)."""
    root = tmp_path / "repo"
    root.mkdir()
    shutil.copytree(PROJECT / "sweeps", root / "sweeps", ignore=shutil.ignore_patterns("ledger"))
    shutil.copytree(PROJECT / "schemas", root / "schemas")
    return root


@pytest.fixture
def webhook() -> Iterator[Webhook]:
    """A stand-in Slack incoming webhook on 127.0.0.1 (tests/webhook.py)."""
    hook = Webhook()
    try:
        yield hook
    finally:
        hook.close()


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A directory holding the six-point sweep `exact` (tests.helpers.SWEEP), as sweeps/exact.yaml."""
    from tests.helpers import SWEEP, write_manifest

    write_manifest(tmp_path, SWEEP, "exact.yaml")
    return tmp_path
