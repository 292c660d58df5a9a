"""`validate`: check manifests (schema, semantics, every point renders); ledgers are not read."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from runner.commands.common import Subparsers, add_paths, load_catalog, report_problems
from runner.errors import ManifestError


def register(commands: Subparsers) -> None:
    parser = commands.add_parser("validate", help="check manifests without planning")
    add_paths(parser)
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    return validate(Path(args.directory), args.paths)


def validate(directory: Path, paths: Sequence[str]) -> int:
    cat = load_catalog(directory, paths)
    failed = report_problems(cat)
    try:
        plans = cat.plans(use_ledgers=False)  # a broken ledger is not a broken manifest
    except ManifestError as exc:
        print(exc, file=sys.stderr)
        return 1
    if failed:
        return 1
    points = sum(len(p.rows) for p in plans)
    print(f"{len(plans)} manifest(s) valid, {points} point(s)", file=sys.stderr)
    return 0
