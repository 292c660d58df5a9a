"""Rules every composite action (.github/actions/) and workflow keeps, read from their files.

The workflow tests (tests/test_workflows.py) run these steps; here, what must hold of all of
them: every setup-python step has pip's cache, keyed by the hash-pinned lock the install uses,
and the install itself stays hash-pinned.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.conftest import PROJECT

RELEASE = PROJECT / ".github" / "workflows" / "release.yml"
"""Publishes to PyPI: it restores no cache, which a poisoned entry could turn into a release
(zizmor's cache-poisoning audit)."""
FILES = sorted((PROJECT / ".github" / "actions").glob("*/action.yml")) + sorted(
    p for p in (PROJECT / ".github" / "workflows").glob("*.yml") if p != RELEASE
)
CACHE = "actions/cache@"


def _steps(path: Path) -> list[list[dict[str, Any]]]:
    document = yaml.safe_load(path.read_text())
    if "runs" in document:
        return [document["runs"].get("steps") or []]
    return [job.get("steps") or [] for job in document["jobs"].values()]


def _setups() -> list[tuple[str, list[dict[str, Any]], int]]:
    found = []
    for path in FILES:
        for steps in _steps(path):
            for index, step in enumerate(steps):
                if str(step.get("uses", "")).startswith("actions/setup-python@"):
                    found.append((str(path.relative_to(PROJECT)), steps, index))
    return found


@pytest.mark.parametrize(
    ("where", "steps", "index"), [pytest.param(*found, id=found[0]) for found in _setups()]
)
def test_every_setup_python_step_caches_pip_by_its_own_lock(
    where: str, steps: list[dict[str, Any]], index: int
) -> None:
    setup = steps[index]
    if setup.get("with", {}).get("cache") == "pip":  # a workflow of this repository
        assert setup["with"]["cache-dependency-path"], where
        return
    after = steps[index + 1 :]
    install = next(i for i, s in enumerate(after) if str(s.get("run", "")).endswith('install.sh"'))
    (cache,) = [s for s in after[:install] if str(s.get("uses", "")).startswith(CACHE)]
    (keyed,) = [s for s in after[:install] if 'install.sh" --cache-key' in str(s.get("run", ""))]
    assert cache["with"] == {
        "path": "~/.cache/pip",
        "key": f"${{{{ steps.{keyed['id']}.outputs.key }}}}",
    }
    # Skipped together: a cache without its install (or the reverse) is never run.
    assert cache.get("if") == keyed.get("if") == setup.get("if") == after[install].get("if"), where
    assert keyed.get("env", {}) == after[install].get("env", {}), where  # the same lock


def test_the_composite_actions_have_setup_python_steps_and_the_install_stays_hash_pinned() -> None:
    actions = {where.split("/")[2] for where, _, _ in _setups() if where.startswith(".github/a")}
    assert actions == {"plan", "propose", "reviewed", "status", "submit"}
    script = (PROJECT / ".github" / "actions" / "install.sh").read_text()
    assert 'python -m pip install --quiet --require-hashes --no-deps -r "$requirements"' in script


def test_the_release_workflow_restores_no_cache() -> None:
    for steps in _steps(RELEASE):
        for step in steps:
            assert not str(step.get("uses", "")).startswith(CACHE), step
            assert "cache" not in step.get("with", {}), step
