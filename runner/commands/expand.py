"""`expand [--plan]`: what a merge would submit, per point, against each sweep's ledger."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from runner.commands.common import write_output
from runner.commands.loading import load_catalog, report_problems
from runner.core.errors import Exit, ManifestError, RunnerError
from runner.core.output import writing
from runner.repo import specfiles
from runner.report import plan as report


def run(args: argparse.Namespace) -> int:
    return expand(
        Path(args.directory),
        args.paths,
        plan=args.plan,
        fmt=args.format,
        detailed_exitcode=args.detailed_exitcode,
        save_specs=args.save_specs,
        output=args.output,
    )


def expand(
    directory: Path,
    paths: Sequence[str],
    *,
    plan: bool = False,
    fmt: str = "table",
    detailed_exitcode: bool = False,
    save_specs: str | None = None,
    output: str | None = None,
) -> int:

    if detailed_exitcode and not plan:
        raise RunnerError("--detailed-exitcode describes a plan: use it with --plan")
    cat = load_catalog(directory, paths)
    failed = report_problems(cat)
    try:
        plans = cat.plans() if plan else cat.unrecorded_plans()
    except ManifestError as exc:
        print(exc, file=sys.stderr)
        return Exit.USER_ERROR
    view = report.View.PLAN if plan else report.View.POINTS
    if fmt == "markdown":
        text = report.markdown(plans, view=view)
    elif fmt == "json":
        text = report.as_json(plans, view=view)
    else:
        text = report.table(plans, view) + "\n"
    write_output(text, output)
    if save_specs:
        with writing(Path(save_specs)):
            written = specfiles.save(Path(save_specs), plans)
        print(f"wrote {written} spec file(s) under {save_specs}", file=sys.stderr)
    if failed:
        return Exit.USER_ERROR
    if detailed_exitcode and any(p.to_submit for p in plans):
        return Exit.WOULD_CHANGE
    return Exit.OK
