"""`lock`: draw the points of each manifest's `params.sample` into its lock file.

The lock (`NAME.lock.json` beside the manifest) is what every other command reads; only this
command samples, and only it needs the `[search]` extra. Points already locked for the same
sample section are kept byte for byte (growing `n` appends); a changed method, seed, digits or
space draws a new sample. Exit 0: every lock written or already up to date; 1: a manifest or
sample problem, or scipy missing (nothing written for that manifest); 3: unexpected.
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
    from runner.manifest import sampling
    from runner.plan import catalog

    base = directory.resolve()
    root = catalog.find_root(base)
    failed = False
    for path in catalog.manifests(root, paths, base):
        try:
            lines = sampling.lock_manifest(path, catalog.display(root, path))
        except MissingExtra:
            raise
        except RunnerError as exc:
            print(exc, file=sys.stderr)
            failed = True
            continue
        for line in lines:
            print(line, file=sys.stderr)
    return 1 if failed else 0
