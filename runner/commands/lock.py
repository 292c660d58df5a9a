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
from collections.abc import Sequence
from pathlib import Path

from runner.commands.searches import lock_samples
from runner.core.errors import Exit


def run(args: argparse.Namespace) -> Exit:
    return lock(Path(args.directory), args.paths)


def lock(directory: Path, paths: Sequence[str]) -> Exit:
    """Lock every manifest named (or all); one manifest's problem does not stop the others."""

    return lock_samples(directory, paths)
