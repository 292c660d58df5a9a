"""`expand [--plan]`: what a merge would submit, per point, against each sweep's ledger."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from runner import report, specfiles
from runner.commands.common import Subparsers, add_paths, load_catalog, report_problems
from runner.errors import ManifestError

EXIT_CHANGES = 2


def register(commands: Subparsers) -> None:
    parser = commands.add_parser(
        "expand", help="expand sweeps into points; with --plan, compare with the ledgers"
    )
    add_paths(parser)
    parser.add_argument(
        "--plan", action="store_true", help="show each point's status against its ledger"
    )
    parser.add_argument("--format", choices=("table", "markdown", "json"), default="table")
    parser.add_argument(
        "--detailed-exitcode",
        action="store_true",
        help="exit 2 when the plan has points to submit (0: nothing to do, 1: invalid)",
    )
    parser.add_argument(
        "--save-specs", metavar="DIR", help="write each point's Beaker spec as YAML under DIR"
    )
    parser.add_argument(
        "--output", metavar="FILE", help="write the report to FILE instead of stdout"
    )
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    cat = load_catalog(args)
    failed = report_problems(cat)
    try:
        plans = cat.plans(use_ledgers=args.plan)
    except ManifestError as exc:
        print(exc, file=sys.stderr)
        return 1
    if args.format == "markdown":
        text = report.markdown(plans)
    elif args.format == "json":
        text = report.as_json(plans)
    else:
        text = report.table(plans) + "\n"
    if args.output:
        Path(args.output).write_text(text, encoding="utf-8")
    else:
        sys.stdout.write(text)
    if args.save_specs:
        written = specfiles.save(Path(args.save_specs), plans)
        print(f"wrote {written} spec file(s) under {args.save_specs}", file=sys.stderr)
    if failed:
        return 1
    if args.detailed_exitcode and any(p.to_submit for p in plans):
        return EXIT_CHANGES
    return 0
