"""`plan-comment`: the plan of a pull request as the markdown of its sticky comment.

Writes the document to --output (for the workflow step that posts the comment) and to the job
summary. Invalid manifests still produce a document, listing the problems, and exit 1.
"""

from __future__ import annotations

import argparse
import re
import sys
from collections.abc import Sequence
from pathlib import Path

from runner.commands.common import Subparsers, add_paths, load_catalog, write_output
from runner.errors import ManifestError, Problem


def register(commands: Subparsers) -> None:
    parser = commands.add_parser(
        "plan-comment",
        help="the plan as the markdown of a pull request comment, also added to the job summary",
    )
    add_paths(parser)
    parser.add_argument(
        "--output", metavar="FILE", help="write the comment to FILE (default: stdout)"
    )
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    return plan_comment(Path(args.directory), args.paths, output=args.output)


def plan_comment(directory: Path, paths: Sequence[str], *, output: str | None = None) -> int:
    from runner import github
    from runner.report import plan as report

    cat = load_catalog(directory, paths)
    problems = list(cat.problems)
    to_submit = 0
    try:
        plans = cat.plans()
    except ManifestError as exc:
        problems += exc.problems
    if problems:
        text = problems_markdown(problems)
    else:
        text = report.markdown(plans)
        to_submit = sum(len(p.to_submit) for p in plans)
    write_output(text, output)
    github.append_summary(text)
    github.set_outputs({"valid": str(not problems).lower(), "to_submit": str(to_submit)})
    for problem in problems:
        print(problem, file=sys.stderr)
    return 1 if problems else 0


def problems_markdown(problems: list[Problem]) -> str:
    from runner.report.plan import COMMENT_MARKER

    body = "\n".join(str(p) for p in sorted(set(problems)))
    # A fence longer than any backtick run in the text, so manifest content cannot close it.
    longest = max((len(run) for run in re.findall(r"`+", body)), default=0)
    fence = "`" * max(3, longest + 1)
    return (
        f"{COMMENT_MARKER}\n## Sweep plan\n\n"
        f"**{len(problems)} problem(s)** in the manifests: nothing can be planned or submitted"
        " until they are fixed.\n\n"
        f"{fence}text\n{body}\n{fence}\n"
    )
