"""The sweeps of a repository: which manifests, each loaded and checked, and their plans."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from runner import ledger, manifest, plan
from runner.core.errors import LedgerError, ManifestError, Problem, RunnerError
from runner.core.model import Sweep
from runner.plan.policy import POLICY_PATH
from runner.render import Renderer

SWEEPS_DIR = ledger.LEDGER_DIR.parent.name
SKIP_DIRS = {ledger.LEDGER_DIR.name}
"""Directories under sweeps/ that hold no manifests."""


@dataclass(frozen=True)
class Catalog:
    root: Path
    sweeps: tuple[Sweep, ...]
    problems: tuple[Problem, ...]
    """Problems of the manifests that failed to load; those are left out of sweeps."""
    renderers: Mapping[str, Renderer] = field(default_factory=dict, compare=False, repr=False)
    """Each sweep's renderer by sweep name, compiled once while loading."""

    def plans(self, kind: str = "beaker", use_ledgers: bool = True) -> list[plan.SweepPlan]:
        """Plan every valid sweep against its ledger (or an empty one); problems raise."""
        plans: list[plan.SweepPlan] = []
        problems: list[Problem] = []
        for sweep in self.sweeps:
            try:
                plans.append(self._plan(sweep, kind, use_ledgers))
            except ManifestError as exc:
                problems += exc.problems
        if problems:
            raise ManifestError(problems)
        return plans

    def readable_plans(self, kind: str = "beaker") -> tuple[list[plan.SweepPlan], list[str]]:
        """The plans of the sweeps whose ledgers read, and why each other one is left out (a
        command about one point must not fail for another sweep's broken ledger)."""
        plans: list[plan.SweepPlan] = []
        left_out: list[str] = []
        for sweep in self.sweeps:
            try:
                plans.append(self._plan(sweep, kind, use_ledgers=True))
            except (ManifestError, LedgerError) as exc:
                left_out.append(str(exc))
        return plans, left_out

    def _plan(self, sweep: Sweep, kind: str, use_ledgers: bool) -> plan.SweepPlan:
        record = (
            ledger.LedgerStore(self.root, kind).read(sweep.name)
            if use_ledgers
            else ledger.Ledger(sweep.name, {})
        )
        built = plan.build(sweep, record, self.renderers.get(sweep.name))
        return plan.capped(built, running=None)


def find_root(start: Path) -> Path:
    """The repository root: the nearest directory at or above start that has sweeps/."""
    for candidate in (start, *start.parents):
        if (candidate / SWEEPS_DIR).is_dir():
            return candidate
    raise RunnerError(
        f"no {SWEEPS_DIR}/ directory at or above {start}; run from the repository root"
    )


def manifests(root: Path, paths: Sequence[str], base: Path) -> list[Path]:
    """Manifest files, sorted; relative paths are taken from `base`; a directory means every
    manifest in it. No paths: every manifest under sweeps/."""
    if not paths:
        paths = [str(root / SWEEPS_DIR)]
    found: set[Path] = set()
    for raw in paths:
        path = base / raw  # an absolute raw path replaces base
        if path.is_dir():
            found.update(
                p
                for pattern in ("*.yaml", "*.yml")
                for p in path.rglob(pattern)
                if not SKIP_DIRS.intersection(p.relative_to(path).parts[:-1])
            )
        elif path.exists():
            found.add(path)
        else:
            raise RunnerError(f"{raw}: no such file or directory")
    policy = (root / POLICY_PATH).resolve()  # the budget policy is not a manifest
    return sorted(p for p in found if p.resolve() != policy)


def display(root: Path, path: Path) -> str:
    """The path shown in messages and descriptions: relative to the root when inside it."""
    try:
        return path.resolve().relative_to(root.resolve()).as_posix()
    except ValueError:
        return str(path)


def load(directory: Path, paths: Sequence[str] = ()) -> Catalog:
    """Load every manifest named (or all under sweeps/), collecting problems across files.

    `directory` is where the command runs (`-C`): the root is found from it, and relative paths
    are taken from it, as `git -C` does.
    """
    base = directory.resolve()
    root = find_root(base)
    sweeps: list[Sweep] = []
    problems: list[Problem] = []
    owners: dict[str, Sweep] = {}
    renderers: dict[str, Renderer] = {}
    for path in manifests(root, paths, base):
        shown = display(root, path)
        try:
            loaded = manifest.load(path, shown)
        except ManifestError as exc:
            problems += exc.problems
            continue
        sweep = loaded.sweep
        first = owners.get(sweep.name)
        if first is not None:
            problems.append(
                Problem.at(
                    sweep.marks,
                    shown,
                    ("name",),
                    f"sweep name {sweep.name!r} is already used by {first.path}",
                )
            )
            continue
        owners[sweep.name] = sweep
        sweeps.append(sweep)
        renderers[sweep.name] = loaded.renderer
    return Catalog(root, tuple(sweeps), tuple(problems), renderers)
