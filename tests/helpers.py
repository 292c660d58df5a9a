"""Small builders shared by tests: minimal manifests and loading them."""

from __future__ import annotations

import textwrap
from pathlib import Path

from runner.manifest import load_manifest
from runner.model import Sweep

MINIMAL = """\
version: 1
name: {name}
beaker:
  workspace: ai2/sweeps-test
  budget: ai2/sweeps-budget
  clusters: [ai2/test-cluster]
tasks:
  - image: {{beaker: org/image}}
    command: [python, train.py]
    arguments: ["--lr={{lr}}"]
params:
  grid:
    lr: [0.1, 0.01]
"""


def write_manifest(root: Path, text: str, name: str = "sweep.yaml") -> Path:
    path = root / "sweeps" / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text), encoding="utf-8")
    return path


def minimal(root: Path, name: str = "demo", extra: str = "", body: str | None = None) -> Path:
    text = (body if body is not None else MINIMAL.format(name=name)) + extra
    return write_manifest(root, text, f"{name}.yaml")


def load(root: Path, path: Path) -> Sweep:
    return load_manifest(path, path.relative_to(root).as_posix())


# The six-point sweep the submit and GitOps tests create on the fake Beaker.
SWEEP = """\
version: 1
name: exact
beaker:
  workspace: ai2/sweeps-test
  budget: ai2/sweeps-budget
  clusters: [ai2/test-cluster]
tasks:
  - image: {beaker: org/image}
    command: [python, train.py, "--lr={lr}", "--seed={seed}"]
params:
  grid:
    lr: [0.1, 0.01, 0.001]
    seed: [1, 2]
"""
POINTS = 6
