"""3. `expand --plan` for a 10 000-point sweep against a 10 000-entry ledger, end to end.

The end-to-end figure is a fresh `python -m runner expand --plan` process (start-up, imports,
loading, rendering, reading the ledger, comparing, printing the table). The in-process phases
below it say where that time goes.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

from runner import ledger, plan
from runner.plan import catalog, render_sweep
from runner.report import plan as report
from tests.benchmarks.common import (
    PROJECT,
    Config,
    Row,
    best_of,
    count,
    load_sweep,
    manifest_text,
    python,
    seconds,
    time_process,
    verdict,
    write_sweep,
)

SHAPE = (10, 10, 100)
QUICK_SHAPE = (10, 10, 20)
TARGET = 1.0
NAME = "plan"


def make_repo(root: Path, shape: tuple[int, ...]) -> int:
    """A repository whose one sweep is fully submitted: every point has its ledger entry."""
    points = 1
    for size in shape:
        points *= size
    path = write_sweep(root, NAME, manifest_text(NAME, shape, max_points=points))
    sweep = load_sweep(root, path)
    entries = {
        r.key: ledger.Entry(
            key=r.key,
            experiment=r.name,
            url=f"https://beaker.org/ex/01HBENCH{i:018d}",
            id=f"01HBENCH{i:018d}",
            spec_hash=r.spec_hash,
            submitted_at="2026-01-01T00:00:00Z",
            commit="0" * 40,
            params=dict(r.params),
        )
        for i, r in enumerate(render_sweep(sweep))
    }
    target = ledger.ledger_path(root, NAME)
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(ledger.render(ledger.Ledger(NAME, entries)), encoding="utf-8")
    return points


def run(config: Config) -> list[Row]:
    root = config.workdir / "plan-repo"
    points = make_repo(root, QUICK_SHAPE if config.quick else SHAPE)
    argv = python("-m", "runner", "-C", str(root), "expand", "--plan")
    check = subprocess.run(argv, cwd=PROJECT, capture_output=True, text=True, check=True)
    expected = f"Plan: 0 to submit, {points} already submitted"
    assert expected in check.stdout, check.stdout[-500:]
    end_to_end = time_process(argv, 3)

    repeat = 3
    cat = catalog.load(root, [])
    (sweep,) = cat.sweeps
    path = ledger.ledger_path(root, NAME)
    record = ledger.read(path, NAME)
    plans = cat.plans()
    phases = {
        "load + check the manifest": best_of(lambda: catalog.load(root, []), repeat),
        f"read the {count(points)}-entry ledger": best_of(lambda: ledger.read(path, NAME), repeat),
        "render every point + compare (`plan.build`)": best_of(
            lambda: plan.build(sweep, record), repeat
        ),
        "format the table (`report.table`)": best_of(lambda: report.table(plans), repeat),
    }
    inside = sum(phases.values())
    rows = [
        Row(
            "3",
            f"`expand --plan`, {count(points)} points vs {count(points)}-entry ledger, fresh process",
            f"{seconds(end_to_end.median)} (median of {end_to_end.runs}; best {seconds(end_to_end.best)})",
            f"its in-process phases: {seconds(inside)}",
            "",
            f"< {TARGET:g} s",
            verdict(end_to_end.median < TARGET),
        )
    ]
    rows += [Row("3", f"  phase: {name}", seconds(t)) for name, t in phases.items()]
    return rows
