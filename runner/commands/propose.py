"""`propose`: the next round of each adaptive search named (or all), into its lock
(`runner.apply.rounds`), one line each.

In GitHub Actions the step output `rounds` lists each round proposed (sweep, lock path and text,
round, a branch name and the pull request's title and body, `runner.report.rounds`) for the
workflow that opens one pull request per sweep and round (.github/workflows/propose.yml).

Exit 0: proposed, waiting for a round, or stopped (one line each); 1: a manifest problem (a grid,
zip or include beside the sample is one), or Optuna missing; 3: unexpected.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from runner.commands.common import BACKEND_CHOICES, Subparsers, add_paths, stderr

if TYPE_CHECKING:
    from runner.apply.rounds import Round


def register(commands: Subparsers) -> None:
    parser = commands.add_parser(
        "propose", help="adaptive search: append the next round of points to the sample's lock"
    )
    add_paths(parser)
    parser.add_argument("--backend", choices=BACKEND_CHOICES, default="auto")
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    return propose(Path(args.directory), args.paths, args.backend)


def propose(directory: Path, paths: Sequence[str], backend_name: str = "auto") -> int:
    from runner import manifest
    from runner.apply.rounds import next_round
    from runner.backends import open_backend
    from runner.plan import catalog
    from runner.repo import github
    from runner.report.rounds import pull_request

    base = directory.resolve()
    root = catalog.find_root(base)
    backend = None
    rounds: list[Round] = []
    try:
        for path in catalog.manifests(root, paths, base):
            shown = catalog.display(root, path)
            sample = manifest.load_sample(path, shown)
            if sample is None or not sample.adaptive:
                continue
            if backend is None:
                backend = open_backend(backend_name, root, stderr)
            line, proposed = next_round(root, path, shown, sample, backend)
            stderr(line)
            rounds += [proposed] if proposed is not None else []
    finally:
        if backend is not None:
            backend.close()
    pulls = [pull_request(r) for r in rounds]
    github.set_outputs({"rounds": json.dumps(pulls, sort_keys=True)})
    github.append_summary("".join(f"- {p['title']}\n" for p in pulls) or "No round proposed.\n")
    return 0
