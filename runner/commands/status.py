"""`status`: the live state of every recorded experiment, from the backend, in few calls."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from runner.commands.common import (
    FORMATS,
    Subparsers,
    add_paths,
    load_catalog,
    raise_if_problems,
)

if TYPE_CHECKING:  # annotations only: the backends load the whole pipeline
    from runner.backends import Backend
    from runner.ledger import Entry
    from runner.model import Sweep


def register(commands: Subparsers) -> None:
    parser = commands.add_parser("status", help="live state of each point's experiment")
    add_paths(parser)
    parser.add_argument("--format", choices=FORMATS, default="table")
    parser.add_argument("--backend", choices=("auto", "beaker", "local"), default="auto")
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    return status(Path(args.directory), args.paths, fmt=args.format, backend=args.backend)


def status(
    directory: Path, paths: Sequence[str], *, fmt: str = "table", backend: str = "auto"
) -> int:
    from runner import ledger
    from runner.backends import open_backend
    from runner.report.status import PointStatus, SweepStatus, render

    cat = load_catalog(directory, paths)
    raise_if_problems(cat)
    opened = open_backend(backend, cat.root, lambda text: None)  # falls back quietly
    sweeps: list[SweepStatus] = []
    try:
        for sweep in cat.sweeps:
            path = ledger.ledger_path(cat.root, sweep.name, opened.kind)
            entries = sorted(
                ledger.read(path, sweep.name).entries.values(), key=lambda e: e.experiment
            )
            live = opened.states(sweep, [e.experiment for e in entries]) if entries else {}
            if entries:
                _warn_of_duplicates(opened, sweep, entries)
            points = []
            for entry in entries:
                exp = live.get(entry.experiment)
                points.append(
                    PointStatus(
                        experiment=entry.experiment,
                        state=exp.state if exp else "missing",
                        exit_code=exp.exit_code if exp else None,
                        params=dict(entry.params),
                        metrics=dict(exp.metrics) if exp else {},
                        url=entry.url,
                    )
                )
            sweeps.append(SweepStatus(sweep.name, str(sweep.path), tuple(points)))
    finally:
        opened.close()
    sys.stdout.write(render(sweeps, fmt))
    return 0


def _warn_of_duplicates(backend: Backend, sweep: Sweep, entries: Sequence[Entry]) -> None:
    """One line on stderr for each point with more than one live experiment carrying its key."""
    copies = backend.copies(sweep, [e.experiment for e in entries])
    for entry in entries:
        live = [
            e
            for e in copies.get(entry.experiment, ())
            if e.key == entry.key and e.state != "canceled"
        ]
        if len(live) > 1:
            ids = ", ".join(e.id for e in live)
            print(
                f"warning: DUPLICATE {sweep.name}/{entry.experiment}: {len(live)} live experiments"
                f" carry this point's key ({ids}); the ledger records {entry.id}; cancel the others",
                file=sys.stderr,
            )
