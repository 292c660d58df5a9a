"""`validate`: check manifests (schema, semantics, every point renders); ledgers are not read."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from runner.commands.loading import load_catalog, report_problems
from runner.core.errors import Exit, ManifestError
from runner.plan import policy


def run(args: argparse.Namespace) -> int:
    return validate(Path(args.directory), args.paths)


def validate(directory: Path, paths: Sequence[str]) -> int:
    cat = load_catalog(directory, paths)
    failed = report_problems(cat)
    failed = _policy_invalid(cat.root) or failed
    try:
        plans = cat.unrecorded_plans()  # a broken ledger is not a broken manifest
    except ManifestError as exc:
        print(exc, file=sys.stderr)
        return Exit.USER_ERROR
    if failed:
        return Exit.USER_ERROR
    points = sum(len(p.rows) for p in plans)
    print(f"{len(plans)} manifest(s) valid, {points} point(s)", file=sys.stderr)
    return Exit.OK


def _policy_invalid(root: Path) -> bool:
    """The budget policy (sweeps/policy.yaml) is checked with the manifests; True when invalid."""

    try:
        policy.read(root)
    except ManifestError as exc:
        print(exc, file=sys.stderr)
        return True
    return False
