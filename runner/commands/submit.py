"""`submit`: create every `+` point of the plan on the backend, exactly once, and record it.

With `--commit [--push]` it also commits the ledgers (and pushes them); with `--github-event`
it takes its inputs from a workflow's event. That git and GitHub side is at the end.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING

from runner.commands.common import Subparsers, add_paths, load_catalog, raise_if_problems, stderr
from runner.errors import RunnerError, SubmitError

if TYPE_CHECKING:  # annotations only: gitrepo imports GitPython
    from runner.catalog import Catalog
    from runner.gitrepo import Target
    from runner.plan import SweepPlan

DEFAULT_CONCURRENCY = 8


@dataclass(frozen=True)
class SubmitArgs:
    """What `submit` was asked to do, after a workflow event's inputs are applied."""

    paths: tuple[str, ...] = ()
    dry_run: bool = False
    concurrency: int = DEFAULT_CONCURRENCY
    timeout: float | None = None
    backend: str = "auto"
    http_timeout: float | None = None
    commit: bool = False
    push: bool = False
    github_event: bool = False
    reviewed: str | None = None
    """A file of plan pins (`reviewed-plans`): submit only the points they cover."""


def register(commands: Subparsers) -> None:
    parser = commands.add_parser("submit", help="submit every point the plan marks '+'")
    add_paths(parser)
    parser.add_argument("--dry-run", action="store_true", help="print the plan and stop")
    parser.add_argument(
        "--concurrency",
        type=_positive,
        default=DEFAULT_CONCURRENCY,
        help=f"experiments created at once (default {DEFAULT_CONCURRENCY})",
    )
    parser.add_argument(
        "--timeout", type=float, metavar="SECONDS", help="deadline for the whole run"
    )
    parser.add_argument(
        "--backend",
        choices=("auto", "beaker", "local"),
        default="auto",
        help="auto: Beaker when credentials exist, else local (an error in CI)",
    )
    parser.add_argument(
        "--http-timeout",
        type=float,
        metavar="SECONDS",
        help="seconds to wait for one Beaker HTTP reply (beaker-py's default: 30)",
    )
    parser.add_argument(
        "--commit",
        action="store_true",
        help="then commit the ledger files that changed, and only those (manifests must match HEAD)",
    )
    parser.add_argument(
        "--push",
        action="store_true",
        help="with --commit: push to the current branch, rebuilding the commit if a push races",
    )
    parser.add_argument(
        "--github-event",
        action="store_true",
        help="in GitHub Actions: take manifests, dry run and concurrency from a workflow_dispatch"
        " event, and submit from the default branch only",
    )
    parser.add_argument(
        "--reviewed",
        metavar="FILE",
        help="submit only the points a reviewed plan showed (FILE: written by reviewed-plans);"
        " hold back and list the rest. A dispatch with `unreviewed` ticked submits them too",
    )
    parser.set_defaults(run=run)


def _positive(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError("must be at least 1")
    return value


def run(args: argparse.Namespace) -> int:
    return submit(
        Path(args.directory),
        SubmitArgs(
            paths=tuple(args.paths),
            dry_run=args.dry_run,
            concurrency=args.concurrency,
            timeout=args.timeout,
            backend=args.backend,
            http_timeout=args.http_timeout,
            commit=args.commit,
            push=args.push,
            github_event=args.github_event,
            reviewed=args.reviewed,
        ),
    )


def submit(directory: Path, args: SubmitArgs) -> int:
    from runner import github
    from runner.backends import open_backend
    from runner.progress import Progress
    from runner.report import plan as report

    started = time.monotonic()
    branch = None
    if args.github_event:
        args, branch = apply_event(args)
    cat = load_catalog(directory, args.paths)
    raise_if_problems(cat)  # one invalid manifest stops the whole run: nothing is submitted
    if args.dry_run and args.backend == "auto" and (args.github_event or not args.paths):
        return _dry_run(cat)  # the Beaker plan needs no credentials: the dry-run job has none
    target = check_commit(args, cat.root, [cat.root / s.path for s in cat.sweeps], branch)
    progress = Progress()
    quiet = args.backend == "auto" and not args.paths  # refused below if it falls back to local
    notify = (lambda text: None) if quiet else progress.note
    backend = open_backend(args.backend, cat.root, notify, http_timeout=args.http_timeout)
    if backend.kind == "local" and args.backend == "auto" and not args.paths:
        backend.close()
        raise SubmitError(
            "no Beaker credentials, and the local backend runs only the manifests you name"
            " (e.g. `python -m runner submit sweeps/quickstart.yaml`), or pass --backend local"
        )
    plans = cat.plans(kind=backend.kind)
    if args.reviewed is not None and backend.kind == "beaker":
        plans = _only_reviewed(plans, Path(args.reviewed))
    print(report.table(plans), file=sys.stderr)
    if args.dry_run:
        backend.close()
        github.append_summary(report.markdown(plans, heading="Sweep plan (dry run)"))
        return 0
    from runner import gitrepo
    from runner.report.submission import counts_line, failures_table, submit_summary
    from runner.submit import ADOPTED, CREATED, Options, Submitter

    options = Options(
        root=cat.root,
        commit=gitrepo.head_commit(cat.root),
        concurrency=args.concurrency,
        deadline=None if args.timeout is None else started + args.timeout,
    )
    try:
        outcomes = Submitter(backend, options, progress).run(plans)
    finally:
        backend.close()
    github.append_summary(
        report.capped(
            submit_summary(outcomes),
            report.SUMMARY_LIMIT,
            "…and {lines} more rows: the ledger files list every experiment.",
        )
    )
    if args.commit:  # after failures too: what was created is recorded
        commit_back(cat.root, target)
    bad = [o for o in outcomes if o.status not in (CREATED, ADOPTED)]
    stderr(counts_line(outcomes))
    if bad:
        stderr(failures_table(bad))
        stderr(f"{len(bad)} point(s) not submitted; run submit again to retry only those")
        return 1
    return 0


# -- the git and GitHub side ------------------------------------------------------------------


def apply_event(args: SubmitArgs) -> tuple[SubmitArgs, str | None]:
    """The arguments with a workflow_dispatch event's inputs applied, and the branch to push to."""
    from runner import github

    event = github.read_event()
    if event.dispatch is not None:
        args = replace(
            args,
            paths=event.dispatch.paths or args.paths,
            dry_run=args.dry_run or event.dispatch.dry_run,
            concurrency=event.dispatch.concurrency or args.concurrency,
        )
        if event.dispatch.unreviewed and args.reviewed is not None:
            stderr("dispatched with `unreviewed`: points no reviewed plan showed are submitted too")
            args = replace(args, reviewed=None)
    github.check_submit_branch(event, args.dry_run)
    return args, event.branch


def _dry_run(cat: Catalog) -> int:
    from runner import github
    from runner.report import plan as report

    plans = cat.plans()
    print(report.table(plans), file=sys.stderr)
    github.append_summary(report.markdown(plans, heading="Sweep plan (dry run)"))
    return 0


def _only_reviewed(plans: list[SweepPlan], pins_file: Path) -> list[SweepPlan]:
    """Plan pinning: hold back the `+` points no reviewed plan showed, and list them."""
    from runner import github, review

    try:
        pins = review.parse_pins(pins_file.read_text(encoding="utf-8"))
    except OSError as exc:
        raise RunnerError(f"cannot read the reviewed plans at {pins_file}: {exc}") from None
    checked = review.hold_back(plans, pins)
    if checked.held:
        github.append_summary(review.held_markdown(checked))
        stderr(f"{len(checked.held)} point(s) held back: not in a reviewed plan (see the summary)")
        if github.in_actions():
            print(
                github.annotation(
                    "warning", f"{len(checked.held)} point(s) held back: not in a reviewed plan"
                ),
                flush=True,
            )
    return list(checked.plans)


def check_commit(
    args: SubmitArgs, root: Path, manifests: Sequence[Path], branch: str | None
) -> Target | None:
    """Before anything is created: refuse uncommitted manifests; find where to push."""
    if args.push and not args.commit:
        raise RunnerError("--push pushes the ledger commit: use it with --commit")
    if not args.commit or args.dry_run:
        return None
    from runner import gitrepo

    gitrepo.ensure_committed(root, manifests)
    return gitrepo.resolve_target(root, branch) if args.push else None


def commit_back(root: Path, target: Target | None) -> None:
    """Commit (and push) the ledgers after a submit, and say what happened, also in the summary."""
    from runner import github, gitrepo

    made = gitrepo.commit_ledgers(root)
    lines = [f"Committed {made.sha[:12]}: {made.message}" if made else "No ledger changed."]
    if target is not None:
        pushed = gitrepo.publish(root, target)
        where = f"{target.remote}/{target.branch}"
        lines.append(
            f"Pushed {pushed.sha[:12]} to {where}{gitrepo.raced_note(pushed)}."
            if pushed.sha
            else f"{where} is up to date."
        )
        github.set_outputs({"commit": pushed.sha or ""})
    for line in lines:
        stderr(line)
    github.append_summary("\n" + "\n\n".join(lines) + "\n")
