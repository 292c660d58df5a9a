"""`submit`: create every `+` point of the plan on the backend, exactly once, and record it.

The steps are `runner.apply`'s (locally round after round of an automatic search); this module
parses, loads, checks, opens the backend, applies, prints and commits. With `--commit [--push]` it
also commits the ledgers and the locks automatic rounds wrote (and pushes them); with
`--github-event` it takes its inputs from a workflow's event (`runner.commands.submit_args`).

Exit codes: `runner.core.errors.Exit` (0 ok, 1 user error, 4 rejected, 5 incomplete, 6 local runs
failed, 7 stopped by `cancel`, 130/143 signals, 3 a bug), also in the JSON summary and the step
output `result`.
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import replace
from pathlib import Path

from runner.apply import Applied, ApplyOptions, apply
from runner.apply.rounds import apply_rounds
from runner.commands.common import stderr
from runner.commands.gitops import check_commit, commit_back
from runner.commands.limits import unanswered
from runner.commands.loading import load_catalog, raise_if_problems, replanning
from runner.commands.submit_args import DRY_RESTART, SubmitArgs, from_namespace
from runner.commands.submit_options import apply_options, open_for
from runner.core.errors import Exit
from runner.core.output import write_text
from runner.repo import github
from runner.repo.gitrepo import Target
from runner.report import apply as shown
from runner.report.progress import Progress
from runner.submit import Clock


def run(args: argparse.Namespace) -> int:
    return submit(Path(args.directory), from_namespace(args))


def submit(directory: Path, args: SubmitArgs, clock: Clock | None = None) -> int:
    """Parse, load, check, open the backend, apply, report, commit (`runner.apply` does the
    work). `clock`: what the run reads the time and waits by (tests pass one that jumps)."""

    clock = clock or Clock()
    started, branch, progress = clock.now(), None, Progress()
    if args.github_event:
        args, branch = apply_event(args)
    cat = load_catalog(directory, args.paths)
    raise_if_problems(cat)  # one invalid manifest stops the whole run: nothing is submitted
    offline = args.github_event or not (args.paths or args.restart_failed or args.restart_points)
    if args.dry_run and args.backend == "auto" and offline:  # a plan check: CI's has no token
        if args.restart_failed:
            stderr(DRY_RESTART)
        applied = apply(cat.plans(), None, ApplyOptions(cat.root, dry_run=True), progress)
        return _report(cat.root, args, None, applied)
    manifests = [cat.root / s.path for s in cat.sweeps]
    target = check_commit(
        cat.root, manifests, branch, commit=args.commit, push=args.push, dry_run=args.dry_run
    )
    backend = open_for(args, cat, progress, clock, started)
    try:
        options = apply_options(backend, cat, args, started, clock)
        plans = cat.plans(cat.ledgers(backend.layout))
        replan = replanning(directory, args.paths, backend.layout)  # the locks rounds wrote
        with unanswered(lambda: "nothing was submitted"):  # a read before anything was done
            applied = apply_rounds(plans, backend, options, progress, replan)
    finally:
        backend.close()
    return _report(cat.root, args, target, applied)


def _report(root: Path, args: SubmitArgs, target: Target | None, applied: Applied) -> int:
    """The lines, the job summary, the ledger commit, the JSON summary; the exit code."""

    for group in applied.groups:  # the URL on stdout, with the experiments; a failure on stderr
        print(group.line(), file=sys.stdout if group.group else sys.stderr, flush=True)
    for warning in shown.warnings(applied) if github.in_actions() else ():
        print(github.annotation("warning", warning), flush=True)
    github.append_summary(shown.job_summary(applied, args.dry_run))
    if args.dry_run:  # nothing created: only a stop (a refusal, Beaker not answering) to say
        if applied.stop is None:
            return Exit.OK
        stderr(shown.stopped_dry_run(applied))
        return applied.exit_code
    if args.commit:  # after failures too: what was created is recorded
        commit_back(root, target, [a.lock for a in applied.advanced], shown.rounds(applied))
    for line in shown.result_lines(applied):
        stderr(line)
    if args.summary_json:
        write_text(Path(args.summary_json), shown.json_summary(applied))
    github.set_outputs(shown.outputs(applied))
    return applied.exit_code


def apply_event(args: SubmitArgs) -> tuple[SubmitArgs, str | None]:
    """The arguments with a workflow_dispatch event's inputs applied, and the branch to push to."""
    event = github.read_event()
    if event.dispatch is not None:
        args = replace(
            args,
            paths=event.dispatch.paths or args.paths,
            dry_run=args.dry_run or event.dispatch.dry_run,
            concurrency=event.dispatch.concurrency or args.concurrency,
            restart_failed=args.restart_failed or event.dispatch.restart_failed,
        )
        if event.dispatch.unreviewed and args.reviewed is not None:
            stderr("dispatched with `unreviewed`: points no reviewed plan showed are submitted too")
            args = replace(args, reviewed=None)
    github.check_submit_branch(event, args.dry_run)
    return args, event.branch
