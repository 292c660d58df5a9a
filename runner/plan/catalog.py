"""The sweeps of a repository: which manifests, each loaded and checked, and their plans."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from runner import ledger, manifest, plan, yaml12
from runner.core.errors import LedgerError, ManifestError, Problem, RunnerError
from runner.core.model import Sweep
from runner.ledger import COMMITTED, Layout
from runner.ledger.store import LedgerStore
from runner.plan.policy import POLICY_PATH
from runner.plan.sources import seed_problems

SWEEPS_DIR = ledger.LEDGER_DIR.parent.name
SKIP_DIRS = {ledger.LEDGER_DIR.name}
"""Directories under sweeps/ that hold no manifests."""


@dataclass(frozen=True)
class Catalog:
    root: Path
    sweeps: tuple[Sweep, ...]
    problems: tuple[Problem, ...]
    """Problems of the manifests that failed to load; those are left out of sweeps."""
    loaded: Mapping[str, manifest.Loaded] = field(default_factory=dict, compare=False, repr=False)
    """Each sweep as its manifest loaded (the renderer it compiled, its sample and lock), by
    sweep name: each manifest is parsed once per command."""

    def ledgers(self, layout: Layout = COMMITTED) -> LedgerStore:
        """The repository's ledgers for a backend's layout (the committed ones by default):
        the one store a command builds and hands to every step that reads or records."""
        return LedgerStore(self.root, layout)

    def plans(self, store: LedgerStore | None = None) -> list[plan.SweepPlan]:
        """Plan every valid sweep against its ledger in `store` (by default the committed
        ledgers); problems raise."""
        store = store or self.ledgers()
        return self._all(lambda sweep: store.read(sweep.name))

    def plans_of(self, names: Sequence[str], store: LedgerStore) -> list[plan.SweepPlan]:
        """The plans of the sweeps named only (in the catalog's order), against `store`."""
        wanted = set(names)
        sweeps = [s for s in self.sweeps if s.name in wanted]
        return [self._plan(s, store.read(s.name)) for s in sweeps]

    def unrecorded_plans(self) -> list[plan.SweepPlan]:
        """Plan every valid sweep as if nothing were submitted (a broken ledger is not a broken
        manifest: `validate`, and `expand` without `--plan`)."""
        return self._all(lambda sweep: ledger.Ledger(sweep.name, {}))

    def _all(self, read: Callable[[Sweep], ledger.Ledger]) -> list[plan.SweepPlan]:
        plans: list[plan.SweepPlan] = []
        problems: list[Problem] = []
        for sweep in self.sweeps:
            try:
                plans.append(self._plan(sweep, read(sweep)))
            except ManifestError as exc:
                problems += exc.problems
        if problems:
            raise ManifestError(problems)
        return plans

    def readable_plans(
        self, store: LedgerStore | None = None
    ) -> tuple[list[plan.SweepPlan], list[str]]:
        """The plans of the sweeps whose ledgers read, and why each other one is left out (a
        command about one point must not fail for another sweep's broken ledger)."""
        store = store or self.ledgers()
        plans: list[plan.SweepPlan] = []
        left_out: list[str] = []
        for sweep in self.sweeps:
            try:
                plans.append(self._plan(sweep, store.read(sweep.name)))
            except (ManifestError, LedgerError) as exc:
                left_out.append(str(exc))
        return plans, left_out

    def _plan(self, sweep: Sweep, record: ledger.Ledger) -> plan.SweepPlan:
        loaded = self.loaded.get(sweep.name)
        built = plan.build(sweep, record, loaded.renderer if loaded is not None else None)
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


def load(
    directory: Path, paths: Sequence[str] = (), locks: manifest.Locks = manifest.Locks.CURRENT
) -> Catalog:
    """Load every manifest named (or all under sweeps/), collecting problems across files;
    `locks`: what is asked of a sample's lock (`runner.manifest.Locks`).

    `directory` is where the command runs (`-C`): the root is found from it, and relative paths
    are taken from it, as `git -C` does.
    """
    base = directory.resolve()
    root = find_root(base)
    sweeps: list[Sweep] = []
    problems: list[Problem] = []
    owners: dict[str, Sweep] = {}
    loaded_by_name: dict[str, manifest.Loaded] = {}
    failed: list[tuple[Path, str]] = []
    for path in manifests(root, paths, base):
        shown = display(root, path)
        try:
            loaded = manifest.load(path, shown, locks)
        except ManifestError as exc:
            problems += exc.problems
            failed.append((path, shown))
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
        loaded_by_name[sweep.name] = loaded
    problems += _sources(root, list(loaded_by_name.values()), failed)
    return Catalog(root, tuple(sweeps), tuple(problems), loaded_by_name)


def _sources(
    root: Path, loaded: list[manifest.Loaded], failed: Sequence[tuple[Path, str]]
) -> list[Problem]:
    """The warm starts' problems (`runner.plan.sources`), of a search whose lock is not written
    yet too (it cannot be, while its `seed_from` is wrong: `validate` says both)."""
    for path, shown in failed:
        try:
            text = path.read_text(encoding="utf-8", errors="replace")
        except OSError:
            continue  # `cannot read file` is said already
        if "seed_from" in text:
            try:
                loaded.append(manifest.load(path, shown, manifest.Locks.MAY_BE_STALE))
            except ManifestError:
                continue  # its own problems are said already
    if not any((s := one.sweep.search.sample) and s.seed_from for one in loaded):
        return []
    others = {name: data for name, (_, data) in named(root, loaded).items()}
    return [problem for one in loaded for problem in seed_problems(one, others)]


def named(
    root: Path, loaded: Sequence[manifest.Loaded] = ()
) -> dict[str, tuple[Path, Mapping[str, Any]]]:
    """Every manifest of the repository by the sweep name it declares, with its document (read
    as YAML only: a warm start's sources, which need not be valid to be named); the documents
    of those `loaded` are not read again."""
    parsed = {str(one.sweep.path): one.doc.data for one in loaded if one.doc is not None}
    found: dict[str, tuple[Path, Mapping[str, Any]]] = {}
    for path in manifests(root, [], root):
        shown = display(root, path)
        try:
            data = parsed[shown] if shown in parsed else yaml12.load_file(path, shown).data
        except ManifestError:
            continue
        if isinstance(data, Mapping) and isinstance(data.get("name"), str):
            found.setdefault(data["name"], (path, data))
    return found
