"""What several commands do first: load the manifests named (each parsed once), say their
problems, and observe the sweeps for the readers (`status`, `report`)."""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence
from pathlib import Path

from runner.backends import Backend, Capability
from runner.backends.opening import open_backend
from runner.commands.limits import show_waits
from runner.core.clock import Bounds
from runner.core.errors import ManifestError
from runner.ledger import Layout
from runner.manifest import Locks
from runner.observe import sweeps
from runner.observe.live import NO_TAILS, Reading
from runner.observe.model import Observation
from runner.plan import SweepPlan, catalog
from runner.plan.catalog import Catalog
from runner.render.code import uses_code
from runner.repo import gitrepo


def load_catalog(directory: Path, paths: Sequence[str], locks: Locks | None = None) -> Catalog:
    """The manifests named (or all), each parsed once; `locks`: what is asked of a sample's
    lock (by default, that it is current)."""

    return catalog.load(directory, paths, locks or Locks.CURRENT)


def observed_sweeps(
    directory: Path,
    paths: Sequence[str],
    backend: str,
    reading: Reading = NO_TAILS,
    asked: Sequence[str] = (),
    bounds: Bounds | None = None,
) -> list[Observation]:
    """`status` and `report`: every sweep named (or all) observed once, from one bulk look each
    (`runner.observe.sweeps`), and the reporting lines `reading` asks for from the points'
    logs; a manifest problem raises before the backend is asked anything. `asked`: the metrics
    the reader asked for by name (`gpu_hours` among them is measured); `bounds`: the command's
    deadline, which every Beaker call is held to."""

    cat = load_catalog(directory, paths)
    raise_if_problems(cat)
    opened = open_backend(backend, cat.root, lambda text: None, bounds=bounds)  # quiet fallback
    show_waits(opened.health)
    try:
        return sweeps.observe(cat, opened, checked_out(cat, opened), reading=reading, asked=asked)
    finally:
        opened.close()


def checked_out(cat: Catalog, backend: Backend) -> str:
    """The commit checked out, where local `code:` points say when they ran another one (a
    backend that reruns them); "" where no reader compares with it."""
    if Capability.RERUNS in backend.capabilities and any(uses_code(s) for s in cat.sweeps):
        return gitrepo.head_commit(cat.root).replace("uncommitted", "")
    return ""


def report_problems(cat: Catalog) -> bool:
    """Print every manifest problem (and warning) to stderr; True when there were problems."""
    warnings = [w for sweep in cat.sweeps for w in sweep.warnings]
    for problem in sorted([*cat.problems, *warnings]):
        print(problem, file=sys.stderr)
    return bool(cat.problems)


def replanning(
    directory: Path, paths: Sequence[str], layout: Layout
) -> Callable[[], list[SweepPlan]]:
    """The sweeps loaded and planned anew at each call (`submit`'s local rounds: the locks an
    automatic round wrote are read again); a problem raises, as on the first load."""

    def replan() -> list[SweepPlan]:
        again = load_catalog(directory, paths)
        raise_if_problems(again)
        return again.plans(again.ledgers(layout))

    return replan


def raise_if_problems(cat: Catalog) -> None:
    if cat.problems:
        raise ManifestError(list(cat.problems))
