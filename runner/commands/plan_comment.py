"""`plan-comment`: the plan of a pull request as the markdown of its sticky comment.

Writes the comment to --output (for the workflow step that posts it: at most 65 536 characters
for any merge, runner/report/comment.py), the whole plan to the job summary, and with --artifact
the whole plan as markdown and JSON to a directory (the run's artifact). With --base, the sweeps
the pull request changes are shown in full and the rest as one line. The comment carries the pins
of plan review (runner/repo/review.py): what a merge may submit. Invalid manifests still produce a
document, listing the problems (each also an annotation on the pull request's diff in GitHub
Actions), and exit 1.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from runner.commands.common import Subparsers, add_paths, load_catalog, write_output
from runner.core.errors import Exit, ManifestError, Problem

if TYPE_CHECKING:  # annotations only: the policy loads the YAML and schema stack
    from runner.plan.policy import Policy


def register(commands: Subparsers) -> None:
    parser = commands.add_parser(
        "plan-comment",
        help="the plan as the markdown of a pull request comment, also added to the job summary",
    )
    add_paths(parser)
    parser.add_argument(
        "--output", metavar="FILE", help="write the comment to FILE (default: stdout)"
    )
    parser.add_argument(
        "--base",
        metavar="REV",
        help="the pull request's base commit: only the sweeps changed since are shown in full",
    )
    parser.add_argument(
        "--artifact",
        metavar="DIR",
        help="also write the whole plan to DIR/sweep-plan.md and DIR/sweep-plan.json",
    )
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    return plan_comment(
        Path(args.directory), args.paths, output=args.output, base=args.base, artifact=args.artifact
    )


def plan_comment(
    directory: Path,
    paths: Sequence[str],
    *,
    output: str | None = None,
    base: str | None = None,
    artifact: str | None = None,
) -> int:
    from runner.plan import budget
    from runner.repo import github, review
    from runner.report import comment as report
    from runner.report import plan as plan_report

    cat = load_catalog(directory, paths)
    problems = list(cat.problems)
    to_submit = 0
    try:
        plans = cat.plans()
    except ManifestError as exc:
        problems += exc.problems
    verdict = None
    if problems:
        text = full = report.problems_markdown(problems)
    else:
        changed = _changed(cat.root, base) if base else None
        verdict = budget.judge(plans, policy_at(cat.root, base), github.event_labels())
        pins = review.comment_pins(review.approve_pins(review.pins(plans), verdict))
        made = report.documents(
            plans,
            changed,
            report.budget_markdown(verdict),
            pins + review.head_line(github.event_head()),
        )
        text, full = made.comment, made.full
        to_submit = sum(len(p.to_submit) for p in plans)
        if artifact:
            _write_artifact(Path(artifact), full, plan_report.as_json(plans))
    write_output(text, output)
    github.append_summary(full)
    github.set_outputs({"valid": str(not problems).lower(), "to_submit": str(to_submit)})
    annotate = github.in_actions()
    for problem in sorted(set(problems)):
        print(problem, file=sys.stderr)
        if annotate:
            print(_annotation(problem), flush=True)
    if verdict is not None and verdict.blocked:  # one line (and annotation) per breach
        for problem in sorted({b.problem for b in verdict.breaches}):
            print(f"over budget: {problem}", file=sys.stderr)
            if annotate:
                print(_annotation(problem), flush=True)
        return Exit.USER_ERROR
    return Exit.USER_ERROR if problems else Exit.OK


def _write_artifact(directory: Path, full: str, plan_json: str) -> None:
    from runner.report.comment import ARTIFACT

    directory.mkdir(parents=True, exist_ok=True)
    (directory / f"{ARTIFACT}.md").write_text(full, encoding="utf-8")
    (directory / f"{ARTIFACT}.json").write_text(plan_json, encoding="utf-8")


def policy_at(root: Path, base: str | None) -> Policy:
    """The budget policy a pull request is judged by: its base commit's (a pull request that
    raises a limit is judged by the old one); the working tree's without a base."""
    from runner.plan import policy
    from runner.repo import gitrepo

    if base is None:
        return policy.read(root)
    text = gitrepo.file_at(root, base, policy.POLICY_PATH)
    return policy.parse(text, f"{policy.POLICY_PATH}@{base}")


def _changed(root: Path, base: str) -> set[str] | None:
    from runner.repo import gitrepo

    return gitrepo.changed_since(root, base)


def _annotation(problem: Problem) -> str:
    from runner.repo import github

    message = f"{problem.field}: {problem.message}" if problem.field else problem.message
    return github.annotation("error", message, problem.path, problem.line, problem.col)
