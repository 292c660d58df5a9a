"""`plan-comment`: the plan of a pull request as the markdown of its sticky comment.

Writes the document to --output (for the workflow step that posts the comment) and to the job
summary. Invalid manifests still produce a document, listing the problems, and exit 1.
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

from runner import catalog, github, gitrepo, report
from runner.commands.common import Subparsers, add_paths, load_catalog
from runner.errors import ManifestError, Problem, RunnerError


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
    cat = load_catalog(args)
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
    if args.output:
        Path(args.output).write_text(text, encoding="utf-8")
    else:
        sys.stdout.write(text)
    github.append_summary(text)
    github.set_outputs({"valid": str(not problems).lower(), "to_submit": str(to_submit)})
    for problem in problems:
        print(problem, file=sys.stderr)
    return 1 if problems else 0


def problems_markdown(problems: list[Problem]) -> str:
    body = "\n".join(str(p) for p in sorted(set(problems)))
    # A fence longer than any backtick run in the text, so manifest content cannot close it.
    longest = max((len(run) for run in re.findall(r"`+", body)), default=0)
    fence = "`" * max(3, longest + 1)
    return (
        f"{report.COMMENT_MARKER}\n## Sweep plan\n\n"
        f"**{len(problems)} problem(s)** in the manifests: nothing can be planned or submitted"
        " until they are fixed.\n\n"
        f"{fence}text\n{body}\n{fence}\n"
    )


# -- the git and GitHub side of `submit` ------------------------------------------------------


def apply_event(args: argparse.Namespace) -> str | None:
    """Apply a workflow_dispatch event's inputs to submit's arguments; the branch to push to."""
    event = github.read_event()
    if event.dispatch is not None:
        if event.dispatch.paths:
            args.paths = list(event.dispatch.paths)
        args.dry_run = args.dry_run or event.dispatch.dry_run
        args.concurrency = event.dispatch.concurrency or args.concurrency
    github.check_submit_branch(event, args.dry_run)
    return event.branch


def check_commit(
    args: argparse.Namespace, cat: catalog.Catalog, branch: str | None
) -> gitrepo.Target | None:
    """Before anything is created: refuse uncommitted manifests; find where to push."""
    if args.push and not args.commit:
        raise RunnerError("--push pushes the ledger commit: use it with --commit")
    if not args.commit or args.dry_run:
        return None
    gitrepo.ensure_committed(cat.root, [cat.root / s.path for s in cat.sweeps])
    return gitrepo.resolve_target(cat.root, branch) if args.push else None


def commit_back(args: argparse.Namespace, root: Path, target: gitrepo.Target | None) -> None:
    """Commit (and push) the ledgers after a submit, and say what happened, also in the summary."""
    if not args.commit:
        return
    made = gitrepo.commit_ledgers(root)
    lines = [f"Committed {made.sha[:12]}: {made.message}" if made else "No ledger changed."]
    if target is not None:
        pushed = gitrepo.publish(root, target)
        where = f"{target.remote}/{target.branch}"
        lines.append(
            f"Pushed {pushed.sha[:12]} to {where}." if pushed.sha else f"{where} is up to date."
        )
        github.set_outputs({"commit": pushed.sha or ""})
    for line in lines:
        print(line, file=sys.stderr)
    github.append_summary("\n" + "\n\n".join(lines) + "\n")
