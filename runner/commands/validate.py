"""`validate`: check manifests (schema, semantics, every point renders) and print nothing else."""

from __future__ import annotations

import argparse
import sys

from runner.commands.common import Subparsers, add_paths, load_catalog, report_problems
from runner.errors import ManifestError


def register(commands: Subparsers) -> None:
    parser = commands.add_parser("validate", help="check manifests without planning")
    add_paths(parser)
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    cat = load_catalog(args)
    failed = report_problems(cat)
    try:
        plans = cat.plans()
    except ManifestError as exc:
        print(exc, file=sys.stderr)
        return 1
    if failed:
        return 1
    points = sum(len(p.rows) for p in plans)
    print(f"{len(plans)} manifest(s) valid, {points} point(s)", file=sys.stderr)
    return 0
