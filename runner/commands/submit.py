"""`submit`: create every `+` point of the plan on the backend, exactly once, and record it.

The steps are `runner.apply`'s; this module parses, loads, checks, opens the backend, applies,
prints and commits. With `--commit [--push]` it also commits the ledgers (and pushes them); with
`--github-event` it takes its inputs from a workflow's event (`runner.commands.submit_args`).

Exit codes (also in the JSON summary, `--summary-json FILE`, and the step output `result`):
0 every point submitted; 1 user error (invalid manifest, no token, git), nothing submitted
for it; 4 some points rejected by Beaker (a rerun does the same), all others submitted;
5 incomplete: the deadline passed, Beaker was unreachable, or retries ran out (a rerun
continues; rejections may also be among them); 6 every point submitted, but some local runs
failed (they ran once: `status` shows them, `--restart-failed` runs them again); 130 SIGINT,
143 SIGTERM (the ledger is written and the summary printed first); 3 an unexpected error.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING

from runner.commands.common import Subparsers, load_catalog, raise_if_problems, stderr
from runner.commands.gitops import check_commit, code_for, commit_back, pins
from runner.commands.submit_args import (
    DEFAULT_TIMEOUT,
    DRY_RESTART,
    SubmitArgs,
    add_arguments,
    apply_event,
    from_namespace,
)
from runner.core.errors import SubmitError

if TYPE_CHECKING:  # annotations only: gitrepo imports GitPython, apply the whole pipeline
    from runner.apply import Applied, ApplyOptions
    from runner.backends import Backend
    from runner.plan.catalog import Catalog
    from runner.repo.gitrepo import Target
    from runner.submit import Clock


def register(commands: Subparsers) -> None:
    parser = commands.add_parser("submit", help="submit every point the plan marks '+'")
    add_arguments(parser)
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    return submit(Path(args.directory), from_namespace(args))


def submit(directory: Path, args: SubmitArgs, clock: Clock | None = None) -> int:
    """Parse, load, check, open the backend, apply, report, commit (`runner.apply` does the
    work). `clock`: what the run reads the time and waits by (tests pass one that jumps)."""
    from runner.apply import ApplyOptions, apply
    from runner.backends import open_backend
    from runner.report.progress import Progress

    started, branch, progress = time.monotonic(), None, Progress()
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
    quiet = args.backend == "auto" and not args.paths  # refused below if it falls back to local
    backend = open_backend(
        args.backend,
        cat.root,
        (lambda text: None) if quiet else progress.note,
        http_timeout=args.http_timeout,
        refuse_local=_not_drafts(cat),
    )
    try:
        options = _options(backend, cat, args, started, clock)
        applied = apply(cat.plans(kind=backend.kind), backend, options, progress)
    finally:
        backend.close()
    return _report(cat.root, args, target, applied)


def _not_drafts(cat: Catalog) -> str:
    """Why `--backend auto` must not run these sweeps locally: a sweep that is not a draft is
    meant for Beaker, and a missing token must not start it on this machine. Empty: all drafts."""
    names = [s.path.as_posix() for s in cat.sweeps if not s.draft]
    more = f" and {len(names) - 1} more" if len(names) > 1 else ""
    return f"{names[0]}{more} is not a draft (`draft: true`)" if names else ""


def _options(
    backend: Backend, cat: Catalog, args: SubmitArgs, started: float, clock: Clock | None
) -> ApplyOptions:
    """What `apply` is asked to do on this backend."""
    from runner.apply import ApplyOptions
    from runner.backends import Capability
    from runner.repo import gitrepo
    from runner.submit import Clock

    shared = Capability.SHARED in backend.capabilities
    if not shared and args.backend == "auto" and not args.paths:
        raise SubmitError(
            "no Beaker credentials, and the local backend runs only the manifests you name"
            " (e.g. `python -m runner submit sweeps/quickstart.yaml`), or pass --backend local"
        )
    return ApplyOptions(
        root=cat.root,
        commit="uncommitted" if args.dry_run else gitrepo.head_commit(cat.root),
        dry_run=args.dry_run,
        restart_failed=args.restart_failed,
        restart_points=args.restart_points,
        pins=pins(Path(args.reviewed)) if args.reviewed is not None and shared else None,
        concurrency=args.concurrency,
        timeout=DEFAULT_TIMEOUT if args.timeout is None and shared else args.timeout,
        started=started,
        max_unreachable=args.max_unreachable,
        clock=clock or Clock(),
        code=code_for(cat, shared, args.dry_run),  # `code:` sweeps: refused if not pushed
    )


def _report(root: Path, args: SubmitArgs, target: Target | None, applied: Applied) -> int:
    """The lines, the job summary, the ledger commit, the JSON summary; the exit code."""
    from runner.repo import github
    from runner.report.apply import job_summary, result_lines, warnings
    from runner.report.submission import summary_json

    for group in applied.groups:  # the URL on stdout, with the experiments; a failure on stderr
        print(group.line(), file=sys.stdout if group.group else sys.stderr, flush=True)
    if github.in_actions():
        for warning in warnings(applied):
            print(github.annotation("warning", warning), flush=True)
    github.append_summary(job_summary(applied, args.dry_run))
    if args.dry_run:
        return 0
    if args.commit:  # after failures too: what was created is recorded
        commit_back(root, target)
    for line in result_lines(applied):
        stderr(line)
    outcomes, result, code = applied.outcomes, applied.result, applied.exit_code
    if args.summary_json:
        text = summary_json(outcomes, applied.stop, applied.duplicates, result, code)
        Path(args.summary_json).write_text(text, encoding="utf-8")
    submitted = sum(o.status.submitted for o in outcomes)
    left = str(len(outcomes) - submitted)
    github.set_outputs({"result": result, "submitted": str(submitted), "not-submitted": left})
    return code
