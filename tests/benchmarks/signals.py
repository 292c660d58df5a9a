"""Benchmark 13: the house's cheap signals (issue 37), read from the code as it is, and the
readers' one observation of a sweep, counted at the port.

- function-level imports of runner modules, in runner/commands/ and in all of runner/;
- modules over 300 lines; functions taking a `bool`;
- the port calls that `status`, `report` and `propose` make together in one process for two
  sweeps (a grid and an adaptive search), on the fake at the port: one look per sweep.
"""

from __future__ import annotations

import dataclasses
import io
from contextlib import redirect_stderr
from pathlib import Path

from runner.analysis.findings import find
from runner.apply import ApplyOptions, apply
from runner.backends import ExperimentState
from runner.commands.propose import same_code
from runner.core.aims import Goal
from runner.locking.proposing import proposals
from runner.manifest import Locks
from runner.observe import sweeps
from runner.plan import catalog
from runner.report import status
from tests.benchmarks.common import PROJECT, Config, Row
from tests.fake_backend import FakeBackend
from tests.helpers import Quiet, minimal, write_manifest
from tests.house import bool_parameters, function_imports, oversized

RUNNER = PROJECT / "runner"
SEARCH = """\
version: 1
name: search
beaker: {workspace: ai2/bench, budget: ai2/bench, clusters: [ai2/bench]}
tasks:
  - image: {beaker: org/image}
    command: [python, train.py, "--x={x}"]
params:
  sample: {method: tpe, n: 8, batch: 4, metric: loss, space: {x: {uniform: [0, 1]}}}
"""


def _readers_calls(root: Path) -> dict[str, int]:
    """The port calls of status + report + propose over one observer, by kind."""
    minimal(root)
    write_manifest(root, SEARCH, "search.yaml")
    backend = FakeBackend()
    with redirect_stderr(io.StringIO()):
        cat = catalog.load(root, (), Locks.MAY_BE_STALE)
        proposals(cat, sweeps.observer(cat, backend), same_code(root))
        cat = catalog.load(root, ())
        apply(cat.plans(), backend, ApplyOptions(root), Quiet())
        for name, made in backend.made.items():
            done = dataclasses.replace(made[-1], state=ExperimentState.SUCCEEDED)
            backend.made[name][-1] = dataclasses.replace(done, metrics={"loss": len(name) / 100})
        backend.calls.clear()
        looks = sweeps.observer(cat, backend)
        observations = [looks.observation(p) for p in cat.plans()]
        status.render(observations, "json")
        [find(o, "loss", Goal.MINIMIZE) for o in observations]
        proposals(cat, looks, same_code(root))
    counts: dict[str, int] = {}
    for call, _ in backend.calls:
        counts[call] = counts.get(call, 0) + 1
    return counts


def run(config: Config) -> list[Row]:
    over = [f for f in oversized(RUNNER, 300, 10_000) if f.endswith(" lines")]
    calls = _readers_calls(config.workdir / "signals")
    config.note(
        "Signals (13): modules over 300 lines: "
        + ", ".join(o.split(": ")[0] for o in over)
        + "; function-level imports left: "
        + ", ".join(function_imports(RUNNER))
    )
    looked = calls.get("results", 0)
    return [
        Row(
            "13",
            "function-level imports of runner modules",
            f"{len(function_imports(RUNNER / 'commands'))} in commands/,"
            f" {len(function_imports(RUNNER))} in runner/",
            "99 in commands/, 107 in runner/ before issue 37",
            target="commands/ <= 40",
            verdict="met" if len(function_imports(RUNNER / "commands")) <= 40 else "missed",
        ),
        Row(
            "13",
            "modules over 300 lines",
            str(len(over)),
            "13 before issue 37",
            target="<= 8",
            verdict="met" if len(over) <= 8 else "missed",
        ),
        Row("13", "functions taking a bool", str(len(bool_parameters(RUNNER))), "51 before"),
        Row(
            "13",
            "status + report + propose of 2 sweeps in one process",
            f"{looked} results look(s), {sum(calls.values())} port call(s): {calls}",
            "one look per reader per sweep: 6",
            target="one look per sweep: 2",
            verdict="met" if looked == 2 else "missed",
        ),
    ]
