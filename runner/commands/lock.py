"""`lock`: write what a manifest reads from its lock file (`NAME.lock.json`, beside it).

Two steps, each a section of the lock: the clusters a cluster selector (`beaker.gpu_type`,
`cluster_tags`, globs in `clusters`) resolves to, asked of Beaker with a token
(`runner.locking.clusters`); then the points of each manifest's `params.sample`, drawn with the
`[search]` extra (`runner.locking.proposing`). Every other command reads the lock and never
samples nor lists clusters. Points already locked for the same sample section are kept byte for
byte (growing `n` appends); a changed method, seed, digits or space draws a new sample. A lock
that would not change is not written. Exit 0: every lock written or already up to date; 1: a
manifest, selector or sample problem, no Beaker token for a selector (a draft's is left, said in
one line: it runs on this machine, where clusters are ignored), or scipy missing (nothing
written for that manifest); 4: Beaker refused the listing; 5: Beaker did not answer in time
(`--timeout`, `--max-unreachable`; the locks written before are kept); 3: unexpected.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from pathlib import Path

from runner.backends.opening import open_backend
from runner.backends.placing import Places, placing
from runner.commands.common import stderr
from runner.commands.limits import bounds, show_waits, unanswered
from runner.commands.loading import load_catalog, report_problems
from runner.core.clock import Bounds, Clock
from runner.core.defaults import DEFAULT_READ_TIMEOUT
from runner.core.errors import Exit, ManifestError
from runner.core.invoked import invoked
from runner.locking.clusters import drop_clusters, lock_clusters
from runner.locking.proposing import draws
from runner.manifest import Locks
from runner.plan.catalog import Catalog
from runner.report.rounds import clusters_line, drew_line

DRAFT_UNRESOLVED = (
    "cluster selector not resolved (no Beaker token here): a draft runs on this machine, where"
    " clusters are ignored; lock it with a token before it goes to Beaker"
)


def run(args: argparse.Namespace) -> Exit:
    return lock(Path(args.directory), args.paths, args.timeout, args.max_unreachable)


def lock(
    directory: Path,
    paths: Sequence[str],
    timeout: str | None = None,
    max_unreachable: str | None = None,
    clock: Clock | None = None,
) -> Exit:
    """Lock every manifest named (or all); one manifest's problem does not stop the others.
    `timeout`, `max_unreachable`: durations (`--timeout`, default `DEFAULT_READ_TIMEOUT`);
    `clock`: what the deadline is on (tests pass one that jumps)."""
    limits = bounds(clock or Clock(), timeout, max_unreachable, DEFAULT_READ_TIMEOUT)
    cat = load_catalog(directory, paths, Locks.MAY_BE_STALE)
    failed = report_problems(cat)
    placed, unplaced = _place(cat, limits)
    drew = draws(cat, placed)
    for one in drew:
        stderr(drew_line(one))
    failed = any(one.failed for one in drew) or unplaced or failed
    return Exit.USER_ERROR if failed else Exit.OK


def _place(cat: Catalog, limits: Bounds) -> tuple[set[str], bool]:
    """Each selector resolved into its lock (one Beaker listing per organization and sweep);
    a lock's clusters section that no selector asks for any more dropped. The sweeps whose
    clusters were locked, and whether one failed."""
    for sweep in cat.sweeps:
        command = f"{invoked()} lock {sweep.path}"
        if sweep.placement.selector is None and drop_clusters(cat.root / sweep.path, command):
            stderr(f"{sweep.path}: dropped the lock's clusters (no selector asks for them)")
    asking = [s for s in cat.sweeps if s.placement.selector is not None]
    if not asking:
        return set(), False
    backend = open_backend("auto", cat.root, lambda text: None, bounds=limits)
    show_waits(backend.health)
    failed, written = False, [0]
    try:
        if not isinstance(backend, Places) and all(s.draft for s in asking):
            for sweep in asking:  # drafts run here only: their clusters wait for a token
                stderr(f"{sweep.path}: {DRAFT_UNRESOLVED}")
            return {s.name for s in asking}, False
        where = placing(backend, f"{asking[0].path}: resolving a cluster selector")
        for sweep in asking:
            command = f"{invoked()} lock {sweep.path}"
            try:
                with unanswered(lambda: f"{written[0]} lock(s) written before it, the rest not"):
                    done = lock_clusters(
                        cat.loaded[sweep.name], cat.root / sweep.path, command, where
                    )
            except ManifestError as exc:
                stderr(str(exc))
                failed = True
                continue
            written[0] += 1
            stderr(clusters_line(str(sweep.path), done))
    finally:
        backend.close()
    return {s.name for s in asking}, failed
