"""Small builders shared by tests: the head every test manifest starts with, minimal manifests
and loading them; a submit in another process, and the exactly-once check of a submit on the
fake Beaker."""

from __future__ import annotations

import dataclasses
import os
import re
import subprocess
import sys
import textwrap
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from runner import ledger, manifest, yaml12
from runner.backends import ExperimentState
from runner.cli import main
from runner.core.errors import Problem
from runner.core.locked import RungLock
from runner.core.marks import Document
from runner.core.model import Space, Sweep
from runner.ledger import Layout
from runner.manifest import load_manifest
from runner.manifest.clusters import selector
from runner.manifest.fidelity import (
    RUNGS,
    belonging,
    configuration_names,
    rung_zero,
    rungs_json,
)
from runner.manifest.lock import lock_path, lock_text
from runner.manifest.params import parse_params
from runner.plan import SweepPlan, catalog
from tests.conftest import PROJECT

if TYPE_CHECKING:
    from tests.fake_backend import FakeBackend
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


TPE_SEARCH = """\
params:
  sample:
    method: tpe
    n: 8
    batch: 4
    metric: loss
    space:
      x: {uniform: [0, 1]}
"""
"""An adaptive search's sample over one parameter `x` (rounds of 4, 8 points): for a test
manifest whose task reads `{x}`."""


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


def parse_space(doc: Document) -> tuple[Space, list[Problem]]:
    """The Space of a schema-valid document and its problems (`parse_params`'s two parts)."""
    parsed = parse_params(doc)
    return parsed.space, parsed.problems


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


def only_plan(root: Path, layout: Layout, text: str, name: str) -> SweepPlan:
    """Write one manifest as sweeps/`name` and plan it against the ledgers of a backend's
    `layout`: the one sweep a backend test creates points of."""
    write_manifest(root, text, name)
    cat = catalog.load(root, [])
    (plan,) = cat.plans(cat.ledgers(layout))
    return plan


DOC_PAGES = [PROJECT / "README.md", *sorted((PROJECT / "docs").glob("*.md"))]
DOC_BLOCKS = [
    (page, index, text)
    for page in DOC_PAGES
    for index, text in enumerate(re.findall(r"```yaml\n(.*?)```", page.read_text(), re.S))
]
"""Every YAML block of README.md and the docs pages: (page, its index on the page, its text)."""


def is_manifest(text: str) -> bool:
    """Whether a YAML block is a manifest (not a params fragment, a policy, a configuration)."""
    data = yaml12.load(text, "block").data
    return isinstance(data, dict) and "tasks" in data


def ready(root: Path, text: str, fake_beaker: Callable[[], FakeBeaker]) -> Path:
    """A manifest written as `sweeps/block.yaml` under `root` with what it needs to plan: its
    clusters resolved (on the fake Beaker `fake_beaker()` returns) when a selector names them,
    a sample's lock drawn, an adaptive one's first round proposed; its path."""
    path = write_manifest(root, text, "block.yaml")
    data = yaml12.load(text, "block").data
    if selector(data["beaker"]) is not None:
        add_six_clusters(fake_beaker())
        assert main(["-C", str(root), "lock"]) == 0
    sample = (data.get("params") or {}).get("sample")
    if sample is not None:
        draw = ["propose", "--backend", "local"] if sample.get("method") == "tpe" else ["lock"]
        assert main(["-C", str(root), *draw]) == 0
    return path


def promote(root: Path, shown: str, chosen: Sequence[tuple[int, int]]) -> str:
    """Write the lock `propose` would write for the grid's halving at `root / shown`, promoting
    rung 0's configurations `chosen` ((rung, index of the configuration in rung 0)); its text."""
    loaded = manifest.load(root / shown, shown)
    search = loaded.sweep.search
    halving, aim = search.halving, search.aims.first
    assert halving is not None and aim is not None and search.sample is None
    space = loaded.sweep.space
    names, configurations = configuration_names(space), rung_zero(space)
    of = belonging(halving.ladder, aim, names, configurations)
    promoted = tuple((k, configurations[i]) for k, i in chosen)
    rungs = {RUNGS: rungs_json(RungLock(of, names, promoted))}
    text = lock_text(None, (), "python -m runner propose", None, rungs)
    lock_path(root / shown).write_text(text, encoding="utf-8")
    return text


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


HALVING = """\
    command: [python, train.py, "--lr={lr}", "--wd={wd}", "--steps={steps}", "--resume={parent}"]
    resources: {gpus: 2}
params:
  grid:
    lr: [0.1, 0.01, 0.001]
    wd: [0.0, 0.1, 0.2]
  fidelity: {param: steps, min: 100, max: 900, eta: 3, metric: loss}
"""
"""A successive halving's task and params: 9 configurations, rungs at 100, 300 and 900 steps
(9, 3 and 1 points), each point 2 GPUs; `halving()` puts a head and a timeout before it."""


def halving(name: str = "halving", *, timeout: str = "9h", draft: bool = False) -> str:
    """A successive-halving test manifest: `head` with a timeout (a full-length point is
    2 GPUs × 9 h = 18 GPU-hours), then `HALVING`."""
    text = head(name, draft=draft).replace("  clusters:", f"  timeout: {timeout}\n  clusters:", 1)
    return text + HALVING


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


SIX_CLUSTERS = (
    # name, GPU type, tags, aliases, maximum task timeout (seconds; None: unset)
    ("ai2/jupiter", "h100", ("storage:weka", "interconnect:ib"), ("jupiter-cirrascale-2",), None),
    ("ai2/ceres", "h100", ("storage:weka",), (), 172800.0),
    ("ai2/neptune", "h100", (), (), None),
    ("ai2/augusta", "h100", ("storage:weka",), (), 0.0),
    ("ai2/saturn", "a100", ("storage:weka",), (), None),
    ("ai2/titan", "b200", ("storage:weka", "interconnect:ib"), (), None),
)
"""The lab's clusters as the placement tests see them: H100, A100 and B200 nodes, tags, an alias,
and one (augusta) whose maximum task timeout of 0 lets it run no batch task."""
H100_ON_WEKA = ("ai2/ceres", "ai2/jupiter")
"""What `gpu_type: [h100]` with `cluster_tags: [storage:weka]` resolves SIX_CLUSTERS to."""


def add_six_clusters(fake: FakeBeaker) -> None:
    for name, gpu, tags, aliases, timeout in SIX_CLUSTERS:
        fake.add_cluster(name, gpu, tags=tags, aliases=aliases, max_task_timeout=timeout)


def eight_gpus(name: str, placement: str, lrs: str) -> str:
    """A sweep of 8-GPU points, one per learning rate of `lrs` (`[0.1, 0.01]`), in the fake
    Beaker's workspace, placed by the `beaker:` lines `placement` (clusters, priority...)."""
    return f"""\
version: 1
name: {name}
beaker:
  workspace: ai2/sweeps-test
  budget: ai2/sweeps-budget
{placement}tasks:
  - image: {{beaker: org/image}}
    command: [python, train.py]
    arguments: ["--lr={{lr}}"]
    resources: {{gpus: 8}}
params:
  grid:
    lr: {lrs}
"""


def finish_rung(
    root: Path, backend: FakeBackend, rung: int, loss: dict[tuple[float, float], float | None]
) -> None:
    """Every point of `rung` of the halving at `root` (`halving()`'s, on the fake at the port)
    ends: succeeded with the loss its (lr, wd) is given, or failed."""
    (plan,) = catalog.load(root, ()).plans()
    for row in plan.rows:
        params = dict(row.params)
        if params["rung"] != rung or row.name not in backend.made:
            continue
        value = loss[(float(params["lr"]), float(params["wd"]))]
        made = backend.made[row.name][-1]
        ended = ExperimentState.FAILED if value is None else ExperimentState.SUCCEEDED
        metrics = {} if value is None else {"loss": value}
        backend.made[row.name][-1] = dataclasses.replace(made, state=ended, metrics=metrics)
