"""The sweeps of a repository: every manifest loaded and checked, with its ledger and plan."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from runner import discover, ledger, plan
from runner.errors import ManifestError, Problem
from runner.manifest import load_manifest
from runner.model import Sweep


@dataclass(frozen=True)
class Catalog:
    root: Path
    sweeps: tuple[Sweep, ...]
    problems: tuple[Problem, ...]
    """Problems of the manifests that failed to load; those are left out of sweeps."""

    def plans(self, kind: str = "beaker", use_ledgers: bool = True) -> list[plan.SweepPlan]:
        """Plan every valid sweep against its ledger (or an empty one); problems raise."""
        plans: list[plan.SweepPlan] = []
        problems: list[Problem] = []
        for sweep in self.sweeps:
            try:
                path = ledger.ledger_path(self.root, sweep.name, kind)
                record = (
                    ledger.read(path, sweep.name) if use_ledgers else ledger.Ledger(sweep.name, {})
                )
                plans.append(plan.build(sweep, record))
            except ManifestError as exc:
                problems += exc.problems
        if problems:
            raise ManifestError(problems)
        return plans


def load(root: Path, paths: Sequence[str]) -> Catalog:
    """Load every manifest named (or all under sweeps/), collecting problems across files."""
    sweeps: list[Sweep] = []
    problems: list[Problem] = []
    owners: dict[str, Sweep] = {}
    for path in discover.manifests(root, list(paths)):
        shown = discover.display(root, path)
        try:
            sweep = load_manifest(path, shown)
        except ManifestError as exc:
            problems += exc.problems
            continue
        first = owners.get(sweep.name)
        if first is not None:
            mark = sweep.marks.value(("name",))
            problems.append(
                Problem(
                    shown,
                    mark.line,
                    mark.col,
                    "name",
                    f"sweep name {sweep.name!r} is already used by {first.path}",
                )
            )
            continue
        owners[sweep.name] = sweep
        sweeps.append(sweep)
    return Catalog(root, tuple(sweeps), tuple(problems))
