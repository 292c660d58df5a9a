"""Arguments and helpers shared by several subcommands."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from runner import catalog, discover
from runner.errors import ManifestError

Subparsers = argparse._SubParsersAction


def add_paths(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "paths",
        nargs="*",
        metavar="PATH",
        help="manifests or directories (default: every manifest under sweeps/)",
    )


def load_catalog(args: argparse.Namespace) -> catalog.Catalog:
    root = discover.find_root(Path(args.directory).resolve())
    return catalog.load(root, args.paths)


def report_problems(cat: catalog.Catalog) -> bool:
    """Print every manifest problem to stderr; True when there were any."""
    for problem in cat.problems:
        print(problem, file=sys.stderr)
    return bool(cat.problems)


def raise_if_problems(cat: catalog.Catalog) -> None:
    if cat.problems:
        raise ManifestError(list(cat.problems))
