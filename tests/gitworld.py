"""Real git repositories for GitOps tests: a bare "origin" with this project's layout, and clones.

Clones made with `ci_checkout` mimic actions/checkout (a shallow, single-branch clone). Git runs
as a subprocess here on purpose: the tests drive git the way people and CI do, and only
runner/repo/gitrepo.py uses GitPython.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import textwrap
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.builds import without_secrets
from tests.conftest import PROJECT
from tests.helpers import SWEEP


def git(cwd: Path, *args: str) -> str:
    env = without_secrets(os.environ)  # never the fake Beaker's CA or a token
    done = subprocess.run(["git", *args], cwd=cwd, env=env, capture_output=True, text=True)
    if done.returncode:
        raise AssertionError(f"git {' '.join(args)} failed in {cwd}:\n{done.stderr}")
    return done.stdout.rstrip()


@dataclass(frozen=True)
class World:
    """A bare origin repository and a place for its clones."""

    tmp: Path

    @property
    def origin(self) -> Path:
        return self.tmp / "origin.git"

    def clone(self, name: str, branch: str = "main") -> Path:
        """A full clone, as a person has."""
        path = self.tmp / name
        git(self.tmp, "clone", "--quiet", "--branch", branch, str(self.origin), str(path))
        return path

    def ci_checkout(self, name: str, branch: str = "main") -> Path:
        """A shallow single-branch clone, as actions/checkout makes."""
        path = self.tmp / name
        url = self.origin.as_uri()  # --depth is ignored for plain local paths
        git(self.tmp, "clone", "--quiet", "--depth=1", "--branch", branch, url, str(path))
        return path

    def head(self, ref: str = "main") -> str:
        return git(self.origin, "rev-parse", ref)

    def show(self, path: str, ref: str = "main") -> str:
        return git(self.origin, "show", f"{ref}:{path}")

    def message(self, ref: str = "main") -> str:
        return git(self.origin, "log", "-1", "--format=%B", ref)

    def files_changed(self, ref: str = "main") -> list[str]:
        return git(self.origin, "show", "--name-only", "--format=", ref).splitlines()


def make_world(tmp: Path) -> World:
    """An origin holding this project's template: sweeps/ (drafts only), schemas/, workflows."""
    world = World(tmp)
    git(tmp, "init", "--quiet", "--bare", "--initial-branch=main", str(world.origin))
    seed = tmp / "seed"
    seed.mkdir()
    shutil.copytree(PROJECT / "sweeps", seed / "sweeps", ignore=shutil.ignore_patterns("ledger"))
    shutil.copytree(PROJECT / "schemas", seed / "schemas")
    shutil.copytree(PROJECT / ".github", seed / ".github")
    shutil.copy(PROJECT / "README.md", seed / "README.md")
    git(seed, "init", "--quiet", "--initial-branch=main")
    commit_all(seed, "Start from the beaker-sweep-runner template")
    git(seed, "push", "--quiet", str(world.origin), "main")
    return world


def commit_all(repo: Path, message: str) -> str:
    git(repo, "add", "--all")
    git(repo, "commit", "--quiet", "-m", message)
    return git(repo, "rev-parse", "HEAD")


def write(repo: Path, path: str, text: str) -> None:
    target = repo / path
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(textwrap.dedent(text), encoding="utf-8")


def merge_sweep(world: World, name: str = "exact", text: str = SWEEP) -> str:
    """Open a pull request adding a sweep and merge it, as a researcher does; the merge commit."""
    dev = world.tmp / f"dev-{name}"
    if not dev.exists():
        git(world.tmp, "clone", "--quiet", str(world.origin), str(dev))
    git(dev, "checkout", "--quiet", "main")
    git(dev, "pull", "--quiet", "--ff-only")
    git(dev, "checkout", "--quiet", "-b", f"add-{name}")
    write(dev, f"sweeps/{name}.yaml", text)
    commit_all(dev, f"Add the {name} sweep")
    git(dev, "push", "--quiet", "origin", f"add-{name}")
    git(dev, "checkout", "--quiet", "main")
    git(dev, "merge", "--quiet", "--no-ff", f"add-{name}", "-m", f"Merge pull request: {name}")
    git(dev, "push", "--quiet", "origin", "main")
    return git(dev, "rev-parse", "HEAD")


def github_env(
    monkeypatch: pytest.MonkeyPatch,
    tmp: Path,
    event: str,
    payload: dict[str, Any],
    ref: str = "refs/heads/main",
) -> tuple[Path, Path]:
    """The variables GitHub Actions sets for a step; returns (summary file, output file)."""
    tmp.mkdir(parents=True, exist_ok=True)
    event_path, summary, output = tmp / "event.json", tmp / "summary.md", tmp / "output.txt"
    payload = {"repository": {"default_branch": "main", "full_name": "ai2/sweeps"}, **payload}
    event_path.write_text(json.dumps(payload), encoding="utf-8")
    for name, value in {
        "CI": "true",
        "GITHUB_ACTIONS": "true",
        "GITHUB_EVENT_NAME": event,
        "GITHUB_EVENT_PATH": str(event_path),
        "GITHUB_REF": ref,
        "GITHUB_STEP_SUMMARY": str(summary),
        "GITHUB_OUTPUT": str(output),
    }.items():
        monkeypatch.setenv(name, value)
    return summary, output
