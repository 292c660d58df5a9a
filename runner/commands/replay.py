"""`replay`: recompute every automatic round (`advance: auto`) the locks of the manifests named
(or all) record, from each manifest and what each round recorded it read
(`runner.locking.replay`), and say which does not come out the same. Reads no backend.

Exit 0: every round replays (one line per sweep); 4: a round does not, named with why (the
first of each sweep), as `submit` refuses it; 1: a manifest problem.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from pathlib import Path

from runner.commands.common import stderr
from runner.commands.loading import load_catalog, report_problems
from runner.core.errors import Exit
from runner.locking.replay import replay as replayed
from runner.report.rounds import replay_line


def run(args: argparse.Namespace) -> Exit:
    return replay(Path(args.directory), args.paths)


def replay(directory: Path, paths: Sequence[str]) -> Exit:
    cat = load_catalog(directory, paths)
    if report_problems(cat):
        return Exit.USER_ERROR
    failed = False
    for sweep in cat.sweeps:
        if not sweep.search.auto and not (sweep.search.lock and sweep.search.lock.decisions):
            continue
        found = replayed(cat.loaded[sweep.name])
        failed |= any(not r.ok for r in found)
        stderr(replay_line(str(sweep.path), found))
    return Exit.REJECTED if failed else Exit.OK
