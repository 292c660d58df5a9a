"""A capped sweep on a shared cluster, driven by the scheduled submit on a virtual clock: the
world of the preemption soak (`tests/test_soak.py`, benchmark 16).

Every 15 virtual minutes the cluster moves on (queued points start; a running point finishes
after its run, or is preempted, or loses its node, as its script says), then one plain
`submit` runs (`runner.apply`, as the workflow's schedule runs it: no flag) against the fake at
the port (`tests.fake_backend.FakeBackend`, which ends experiments as Beaker does). Beaker does
not resume the points it preempts (`auto_resume: false`), except those scripted to be resumed
by Beaker itself, which the runner only counts. The world checks, at every tick, that no point
has two experiments and that no more than `max_running` are queued or running.
"""

from __future__ import annotations

import random
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from runner import ledger
from runner.apply import ApplyOptions, apply
from runner.backends import EndCause, ExperimentState
from runner.plan import catalog
from tests.clock import VirtualClock
from tests.fake_backend import FakeBackend
from tests.helpers import Quiet, write_manifest

TICK = 15 * 60.0
"""The workflow's schedule: a submit every 15 minutes."""


def manifest(points: int, max_running: int) -> str:
    return f"""\
version: 1
name: soak
max_running: {max_running}
max_failures: 1
max_restarts: 0
beaker:
  workspace: ai2/sweeps-test
  budget: ai2/sweeps-budget
  clusters: [ai2/test-cluster]
  priority: low
  auto_resume: false
tasks:
  - image: {{beaker: org/image}}
    command: [python, train.py, "--seed={{seed}}"]
params:
  grid:
    seed: {list(range(points))}
  max_points: {points}
"""


@dataclass
class Script:
    """What happens to one point: how many ticks it runs, and what ends its attempts first."""

    ticks: int
    events: list[str] = field(default_factory=list)
    """`preempt`, `resumed` (preempted, resumed by Beaker) or `node`, in order: each ends (or
    interrupts) one attempt on its first tick running."""
    ran: int = 0
    """Ticks run in the current attempt."""


@dataclass
class Figures:
    points: int
    max_running: int
    ticks: int = 0
    runs: int = 0
    """Attempts started: creates, resumes by the runner, and Beaker's own."""
    events: Counter[str] = field(default_factory=Counter)
    """What the script did: preemptions not resumed by Beaker, by Beaker, lost nodes."""
    resumed: int = 0
    """Restarts the runner sent (`FakeBackend.restarted`)."""
    most_live: int = 0
    duplicates: int = 0
    lost: int = 0
    """Points without an entry, or not succeeded, at the end."""
    ledger_preemptions: int = 0
    ledger_restarts: int = 0
    seconds: float = 0.0


def scripts(points: int, seed: int = 0) -> dict[int, Script]:
    """10 % of the points preempted (a quarter of those twice, a fifth resumed by Beaker), 1 %
    lost to a node failure; each runs 2 to 5 ticks."""
    rng = random.Random(seed)
    out = {i: Script(rng.randint(2, 5)) for i in range(points)}
    chosen = rng.sample(range(points), points // 10 + points // 100)
    preempted, lost = chosen[: points // 10], chosen[points // 10 :]
    for n, i in enumerate(preempted):
        kind = "resumed" if n % 5 == 0 else "preempt"
        out[i].events = [kind] * (2 if n % 4 == 0 else 1)
    for i in lost:
        out[i].events = ["node"]
    return out


def soak(root: Path, points: int = 2000, max_running: int = 64, seed: int = 0) -> Figures:
    """Run the world until every point has succeeded and a submit changes nothing more."""
    write_manifest(root, manifest(points, max_running), "soak.yaml")
    backend, clock = FakeBackend(), VirtualClock()
    (plan,) = catalog.load(root, ()).plans()
    seeds = {row.name: int(dict(row.params)["seed"]) for row in plan.rows}
    script = scripts(points, seed)
    figures = Figures(points, max_running)
    started = time.perf_counter()
    quiet = 0
    while quiet < 2:  # twice without a change: every count recorded
        before = _state(root, backend)
        _step(backend, seeds, script, figures)
        _submit(root, backend, clock)
        figures.most_live = max(figures.most_live, _live(backend))
        figures.ticks += 1
        clock.advance(TICK)
        quiet = quiet + 1 if _state(root, backend) == before else 0
        if figures.ticks > 50 * points:
            raise AssertionError("the soak does not end")
    figures.seconds = time.perf_counter() - started
    _tally(root, backend, figures)
    return figures


def _submit(root: Path, backend: FakeBackend, clock: VirtualClock) -> None:
    plans = catalog.load(root, ()).plans()
    applied = apply(plans, backend, ApplyOptions(root, clock=clock), Quiet())
    assert applied.exit_code == 0, applied


def _live(backend: FakeBackend) -> int:
    return sum(found[-1].state.live for found in backend.made.values())


def _state(root: Path, backend: FakeBackend) -> tuple[object, ...]:
    states = tuple(sorted((n, str(f[-1].state)) for n, f in backend.made.items()))
    return states, ledger.ledger_path(root, "soak").read_bytes() if backend.made else b""


def _step(
    backend: FakeBackend, seeds: dict[str, int], script: dict[int, Script], figures: Figures
) -> None:
    """The cluster's 15 minutes: queued points start, running ones run a tick, then end (or
    their attempt does, as scripted)."""
    for name, found in backend.made.items():
        figures.duplicates += len(found) - 1
        state, plan = found[-1].state, script[seeds[name]]
        if state is ExperimentState.QUEUED:
            backend.end(name, ExperimentState.RUNNING)
            figures.runs += 1
            plan.ran = 0
        elif state is not ExperimentState.RUNNING:
            continue
        plan.ran += 1
        if plan.events and plan.ran == 1:
            event = plan.events.pop(0)
            figures.events[event] += 1
            backend.preempt(name, node=event == "node", resume=event == "resumed")
        elif plan.ran >= plan.ticks:
            backend.end(name, ExperimentState.SUCCEEDED, metrics={"loss": 1.0})
    assert _live(backend) <= figures.max_running


def _tally(root: Path, backend: FakeBackend, figures: Figures) -> None:
    entries = ledger.read(ledger.ledger_path(root, "soak"), "soak").entries
    figures.resumed = sum(backend.restarted.values())
    figures.ledger_preemptions = sum(e.preemptions for e in entries.values())
    figures.ledger_restarts = sum(e.restarts for e in entries.values())
    succeeded = {
        n
        for n, f in backend.made.items()
        if f[-1].ended and f[-1].ended.cause is EndCause.SUCCEEDED
    }
    figures.lost = figures.points - len({e.experiment for e in entries.values()} & succeeded)
