"""`lock`: draw the points of each manifest's `params.sample` into its lock file.

The lock (`NAME.lock.json` beside the manifest) is what every other command reads; only this
command samples (`runner.search.draw`), and only it needs the `[search]` extra. Points already
locked for the same sample section are kept byte for byte (growing `n` appends); a changed
method, seed, digits or space draws a new sample. Exit 0: every lock written or already up to
date; 1: a manifest or sample problem, or scipy missing (nothing written for that manifest);
3: unexpected.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from runner.commands.common import Subparsers, add_paths
from runner.core.errors import MissingExtra, RunnerError


def register(commands: Subparsers) -> None:
    parser = commands.add_parser(
        "lock", help="draw the points of params.sample into the manifest's lock file"
    )
    add_paths(parser)
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    return lock(Path(args.directory), args.paths)


def lock(directory: Path, paths: Sequence[str]) -> int:
    """Lock every manifest named (or all); one manifest's problem does not stop the others."""
    from runner.plan import catalog

    base = directory.resolve()
    root = catalog.find_root(base)
    failed = False
    for path in catalog.manifests(root, paths, base):
        try:
            lines = lock_manifest(path, catalog.display(root, path))
        except MissingExtra:
            raise
        except RunnerError as exc:
            print(exc, file=sys.stderr)
            failed = True
            continue
        for line in lines:
            print(line, file=sys.stderr)
    return 1 if failed else 0


def lock_manifest(path: Path, shown: str) -> tuple[str, ...]:
    """Write (or keep) the lock of one manifest; the lines to print. ManifestError when its
    sample section or the points drawn are not acceptable: then nothing is written."""
    from runner import manifest
    from runner.core import files
    from runner.core.invoked import invoked
    from runner.manifest.sample import collisions, lock_path, lock_text, read_lock
    from runner.search.draw import extend

    sample = manifest.load_sample(path, shown)
    target = lock_path(path)
    if sample is None:
        return (f"{shown}: no params.sample: nothing to lock",)
    if sample.adaptive:
        return (
            f"{shown}: method {sample.method} proposes its points round by round from the results:"
            f" run {invoked()} propose {shown}",
        )
    before = read_lock(target, sample.names)
    same = before is not None and before.sample == sample.digest
    kept = before.rows if before is not None and same else ()
    rows = extend(sample, kept)
    clashes = collisions(rows)
    if clashes:
        first, second = clashes[0]
        raise RunnerError(
            f"{shown}: params.sample: points {first} and {second} are the same after rounding to"
            f" {sample.digits} significant digits: raise params.sample.digits (nothing written)"
        )
    text = lock_text(sample, rows, f"{invoked()} lock {shown}")
    shown_lock = target.name
    if target.exists() and target.read_text(encoding="utf-8") == text:
        return (f"{shown}: {shown_lock} is up to date ({len(rows)} points)",)
    files.write_atomic(target, text)
    manifest.load(path, shown)  # the whole manifest, with its new lock, must now be valid
    if same:
        verb = f"kept {min(len(kept), sample.n)}, drew {max(0, sample.n - len(kept))}"
    elif before is None:
        verb = f"drew {len(rows)}"
    else:
        verb = f"a new sample: drew {len(rows)} (the sample section changed)"
    return (f"{shown}: wrote {shown_lock}: {verb} point(s) ({sample.method}, seed {sample.seed})",)
