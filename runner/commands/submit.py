"""`submit`: create every `+` point of the plan on the backend, exactly once, and record it."""

from __future__ import annotations

import argparse
import os
import sys
import time

from runner import github, report
from runner.backends import Backend
from runner.commands.common import Subparsers, add_paths, load_catalog, raise_if_problems
from runner.commands.github import apply_event, check_commit, commit_back
from runner.errors import SubmitError
from runner.progress import Progress

DEFAULT_CONCURRENCY = 8


def register(commands: Subparsers) -> None:
    parser = commands.add_parser("submit", help="submit every point the plan marks '+'")
    add_paths(parser)
    parser.add_argument("--dry-run", action="store_true", help="print the plan and stop")
    parser.add_argument(
        "--concurrency",
        type=_positive,
        default=DEFAULT_CONCURRENCY,
        help="experiments created at once (default 8)",
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
    parser.add_argument("--http-timeout", type=float, metavar="SECONDS", help=argparse.SUPPRESS)
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
    parser.set_defaults(run=run)


def _positive(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError("must be at least 1")
    return value


def in_ci() -> bool:
    return bool(os.environ.get("CI") or os.environ.get("GITHUB_ACTIONS"))


def run(args: argparse.Namespace) -> int:
    started = time.monotonic()
    branch = apply_event(args) if args.github_event else None
    cat = load_catalog(args)
    raise_if_problems(cat)  # one invalid manifest stops the whole run: nothing is submitted
    target = check_commit(args, cat, branch)  # refuses before anything is created
    backend = make_backend(args, announce=bool(args.paths))
    if backend.kind == "local" and args.backend == "auto" and not args.paths:
        backend.close()
        raise SubmitError(
            "no Beaker credentials, and the local backend runs only the manifests you name"
            " (e.g. `python -m runner submit sweeps/quickstart.yaml`), or pass --backend local"
        )
    plans = cat.plans(kind=backend.kind)
    print(report.table(plans), file=sys.stderr)
    if args.dry_run:
        backend.close()
        github.append_summary(report.markdown(plans, heading="Sweep plan (dry run)"))
        return 0
    from runner import gitrepo
    from runner.submit import ADOPTED, CREATED, Options, Submitter

    deadline = None if args.timeout is None else started + args.timeout
    options = Options(
        root=cat.root,
        commit=gitrepo.head_commit(cat.root),
        concurrency=args.concurrency,
        deadline=deadline,
    )
    try:
        outcomes = Submitter(backend, options, Progress()).run(plans)
    finally:
        backend.close()
    github.append_summary(github.submit_summary(outcomes))
    commit_back(args, cat.root, target)  # after failures too: what was created is recorded
    bad = [o for o in outcomes if o.status not in (CREATED, ADOPTED)]
    done = len(outcomes) - len(bad)
    print(
        f"submitted: {done} of {len(outcomes)} ({sum(o.status == CREATED for o in outcomes)} created,"
        f" {sum(o.status == ADOPTED for o in outcomes)} adopted)",
        file=sys.stderr,
    )
    if bad:
        rows = [[o.sweep, o.point.name, o.status, o.error] for o in bad]
        print(
            report.tabulate(rows, headers=["sweep", "experiment", "status", "why"]), file=sys.stderr
        )
        print(
            f"{len(bad)} point(s) not submitted; run submit again to retry only those",
            file=sys.stderr,
        )
        return 1
    return 0


def make_backend(args: argparse.Namespace, announce: bool = True) -> Backend:
    """Beaker when asked or when credentials exist; local otherwise (never silently in CI)."""
    choice = args.backend
    if choice in ("auto", "beaker"):
        from runner.backends.beaker import TOKEN_HELP, BeakerBackend, has_credentials

        if has_credentials():
            return BeakerBackend(http_timeout=args.http_timeout)
        if choice == "beaker" or in_ci():
            raise SubmitError(
                TOKEN_HELP + (" (CI never falls back to the local backend)" if in_ci() else "")
            )
        choice = "local"
    from runner.backends.local import LocalBackend

    if announce and args.backend == "auto":
        print(
            "no Beaker credentials found: using the local backend (this machine)", file=sys.stderr
        )
    return LocalBackend(args)
