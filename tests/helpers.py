"""Small builders shared by tests: the head every test manifest starts with, minimal manifests
and loading them; a submit in another process, and the exactly-once check of a submit on the
fake Beaker."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import TYPE_CHECKING

from runner import ledger
from runner.core.model import Sweep
from runner.manifest import load_manifest
from tests.conftest import PROJECT

if TYPE_CHECKING:
    from tests.fake_beaker.server import FakeBeaker

HEAD = """\
version: 1
name: {name}
beaker:
  workspace: ai2/sweeps-test
  budget: ai2/sweeps-budget
  clusters: [ai2/test-cluster]
tasks:
  - image: {{beaker: org/image}}
"""
"""The lines every test manifest starts with, up to its first task's image, as a template of its
`name` (so MINIMAL, which goes on from it, is one too); head() fills it in."""


def head(name: str, *, draft: bool = False) -> str:
    """A test manifest up to its first task's image, so that a test writes only what its sweep
    is about (the task's command, its params): in the fake Beaker's workspace, with a budget; a
    draft (run locally, never on Beaker) leaves the budget out, as only a draft may."""
    text = HEAD.format(name=name)
    if draft:
        text = text.replace("beaker:\n", "draft: true\nbeaker:\n", 1)
        text = text.replace("  budget: ai2/sweeps-budget\n", "")
    return text


MINIMAL = (
    HEAD
    + """\
    command: [python, train.py]
    arguments: ["--lr={{lr}}"]
params:
  grid:
    lr: [0.1, 0.01]
"""
)


def no_sleep(seconds: float) -> None:
    """A RetryPolicy's sleep that returns at once: retries without waiting."""


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
SWEEP = (
    head("exact")
    + """\
    command: [python, train.py, "--lr={lr}", "--seed={seed}"]
params:
  grid:
    lr: [0.1, 0.01, 0.001]
    seed: [1, 2]
"""
)
POINTS = 6

OBJECTIVE_HEAD = """\
version: 1
name: {name}
draft: true
beaker:
  workspace: ai2/sweep-quickstart
  clusters: [ai2/jupiter]
tasks:
  - name: objective
    image: {{docker: python:3.12-slim}}
"""
"""A draft sweep's head whose task evaluates a test function (runner.examples.objectives), as a
template of its `name`: the searches' tests run it on the local backend."""

BRANIN_SEARCH = """\
    command: [python, -m, runner.examples.objectives, branin]
    arguments: [--x1, "{x1}", --x2, "{x2}"]
params:
  sample:
    method: tpe
    n: 12
    batch: 4
    metric: value
    seed: 0
    space:
      x1: {uniform: [-5, 10]}
      x2: {uniform: [0, 15]}
"""
"""A task that evaluates the Branin function (runner.examples.objectives) and an adaptive (TPE)
search of it, 12 points in rounds of 4: a manifest's rest after its head()."""


def assert_exactly_once(root: Path, fake: FakeBeaker, points: int = POINTS) -> None:
    counts = fake.count_by_name()
    assert len(counts) == points and set(counts.values()) == {1}, counts
    entries = ledger.read(ledger.ledger_path(root, "exact"), "exact").entries
    assert sorted(e.experiment for e in entries.values()) == sorted(counts)
    assert {e.id for e in entries.values()} == {x.id for x in fake.experiments()}
    assert all(e.url.endswith(e.id) for e in entries.values())


def submit_process(root: Path, *extra: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "runner", "-C", str(root), "submit", *extra],
        cwd=PROJECT,
        env=dict(os.environ),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def wait_for_entries(path: Path, count: int, proc: subprocess.Popen[str]) -> None:
    for _ in range(600):
        if path.exists() and len(path.read_text().splitlines()) - 1 >= count:
            return
        assert proc.poll() is None, proc.communicate()
        time.sleep(0.05)
    raise AssertionError("runner made no progress")


def interrupted_submit(
    root: Path, fake: FakeBeaker, signal: int, *, recorded: int, concurrency: int
) -> subprocess.Popen[str]:
    """A submit of `exact` in another process, each Beaker call slowed to 0.3 s, sent `signal`
    once its ledger holds `recorded` points: a runner stopped mid-run."""
    fake.latency = 0.3
    proc = submit_process(root, "--concurrency", str(concurrency))
    wait_for_entries(ledger.ledger_path(root, "exact"), recorded, proc)
    proc.send_signal(signal)
    return proc


Step = tuple[str, list[str]]
"""One `$ command` of a documented transcript and the lines shown under it."""


def transcripts(text: str, info: str = "") -> list[list[Step]]:
    """The transcripts in a markdown text: each fenced block whose info string is `info` and
    whose first line is a `$ command`, as its commands with the lines under each."""
    blocks: list[list[Step]] = []
    fence: str | None = None  # the info string of the open block; None outside one
    opened = False  # the open block has no command yet
    for line in text.splitlines():
        if line.startswith("```"):
            fence = line[3:] if fence is None else None
            opened = fence is not None
        elif fence == info and line.startswith("$ "):
            if opened:
                blocks.append([])
            blocks[-1].append((line[2:], []))
            opened = False
        elif fence == info and blocks and not opened:
            blocks[-1][-1][1].append(line)
    return blocks


def shown_line(line: str) -> str:
    """A transcript line as compared with what a command printed: URLs dropped, times,
    durations, create order and spacing made alike; a table's rule line is empty."""
    line = re.sub(r"(https?|file)://[^\s)]+", "", line)
    line = re.sub(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", "TIME", line)
    line = re.sub(r"\b\d+s\b", "Ns", line)
    line = re.sub(r"^\[\d+/\d+\] ", "[i/n] ", line)  # creates finish in any order
    return "" if set(line.strip()) <= {"-", " "} else " ".join(line.split())


class Quiet:
    """An ApplyListener that shows nothing (for tests of what `apply` returns)."""

    def planned(self, applied: object) -> None:
        pass

    def start(self, total: int) -> None:
        pass

    def note(self, text: str) -> None:
        pass

    def wait(self, text: str) -> None:
        pass

    def started(self, outcome: object) -> None:
        pass

    def done(self, outcome: object) -> None:
        pass

    def finish(self) -> None:
        pass
