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

from runner.commands.common import write_output
from runner.commands.loading import load_catalog
from runner.core.errors import Exit, ManifestError, Problem
from runner.core.output import write_text, writing
from runner.plan import budget, policy
from runner.plan.policy import Policy
from runner.repo import github, gitrepo, review
from runner.report import comment as report
from runner.report import plan as plan_report
from runner.report.comment import ARTIFACT


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
        rules = policy_at(cat.root, base)
        verdict = budget.judge(plans, rules, github.event_labels())
        pins = review.comment_pins(review.approve_pins(review.pins(plans), verdict))
        made = report.documents(
            plans,
            changed,
            report.budget_markdown(verdict) + report.allocation_markdown(plans, rules),
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

    with writing(directory):
        directory.mkdir(parents=True, exist_ok=True)
    write_text(directory / f"{ARTIFACT}.md", full)
    write_text(directory / f"{ARTIFACT}.json", plan_json)


def policy_at(root: Path, base: str | None) -> Policy:
    """The budget policy a pull request is judged by: its base commit's (a pull request that
    raises a limit is judged by the old one); the working tree's without a base."""

    if base is None:
        return policy.read(root)
    text = gitrepo.file_at(root, base, policy.POLICY_PATH)
    return policy.parse(text, f"{policy.POLICY_PATH}@{base}")


def _changed(root: Path, base: str) -> set[str] | None:

    return gitrepo.changed_since(root, base)


def _annotation(problem: Problem) -> str:

    message = f"{problem.field}: {problem.message}" if problem.field else problem.message
    return github.annotation("error", message, problem.path, problem.line, problem.col)
