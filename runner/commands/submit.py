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
from runner.commands.gitops import check_commit, code_for, commit_back
from runner.commands.submit_args import (
    DEFAULT_TIMEOUT,
    DRY_RESTART,
    SubmitArgs,
    add_arguments,
    apply_event,
    from_namespace,
    name_the_manifests,
)
from runner.core.errors import RunnerError, SubmitError

if TYPE_CHECKING:  # annotations only: gitrepo imports GitPython, apply the whole pipeline
    from runner.apply import Applied, ApplyOptions
    from runner.backends import Backend
    from runner.plan.catalog import Catalog
    from runner.repo.gitrepo import Target
    from runner.repo.review import Pin
    from runner.submit import Clock


def register(commands: Subparsers) -> None:
    parser = commands.add_parser("submit", help="submit every point the plan marks '+'")
    add_arguments(parser)
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    return submit(Path(args.directory), from_namespace(args))


def submit(directory: Path, args: SubmitArgs, clock: Clock | None = None) -> int:
    """Parse, load, check, open the backend, apply, print, commit (`runner.apply` does the
    work). `clock`: what the run reads the time and waits by (tests pass one that jumps)."""
    from runner.backends import open_backend
    from runner.report.progress import Progress

    started = time.monotonic()
    branch = None
    if args.github_event:
        args, branch = apply_event(args)
    cat = load_catalog(directory, args.paths)
    raise_if_problems(cat)  # one invalid manifest stops the whole run: nothing is submitted
    offline = args.github_event or not (args.paths or args.restart_failed or args.restart_points)
    if args.dry_run and args.backend == "auto" and offline:
        return _dry_run(cat, args.restart_failed)  # the plan needs no credentials: CI's has none
    manifests = [cat.root / s.path for s in cat.sweeps]
    target = check_commit(
        cat.root, manifests, branch, commit=args.commit, push=args.push, dry_run=args.dry_run
    )
    progress = Progress()
    quiet = args.backend == "auto" and not args.paths  # refused below if it falls back to local
    notify = (lambda text: None) if quiet else progress.note
    backend = open_backend(
        args.backend,
        cat.root,
        notify,
        http_timeout=args.http_timeout,
        refuse_local=not_drafts(cat),
    )
    try:
        from runner.apply import apply
        from runner.backends.local.resume import unfinished

        options = _options(backend, cat, args, started, clock)
        plans = unfinished(backend, cat.plans(kind=backend.kind))  # local runs a runner left
        applied = apply(plans, backend, options, progress)
        if not args.dry_run:
            from runner.apply import notify as webhook
            from runner.repo import github

            announced = webhook.announce(backend, cat)  # once per event, recorded in the ledger
            for line in announced.warnings:
                stderr(line)
            github.append_summary(announced.summary())
    finally:
        backend.close()
    return _report(cat.root, args, target, applied)


def not_drafts(cat: Catalog) -> str:
    """Why `--backend auto` must not run these sweeps locally: a sweep that is not a draft is
    meant for Beaker, and a missing token must not start it on this machine. Empty: all drafts."""
    names = [s.path.as_posix() for s in cat.sweeps if not s.draft]
    if not names:
        return ""
    more = f" and {len(names) - 1} more" if len(names) > 1 else ""
    return f"{names[0]}{more} is not a draft (`draft: true`)"


def _options(
    backend: Backend, cat: Catalog, args: SubmitArgs, started: float, clock: Clock | None
) -> ApplyOptions:
    """What `apply` is asked to do on this backend."""
    from runner.apply import ApplyOptions
    from runner.backends import BackendKind, Capability
    from runner.backends.local.resume import unfinished
    from runner.repo import gitrepo
    from runner.submit import Clock

    if backend.kind == BackendKind.LOCAL and args.backend == "auto" and not args.paths:
        raise SubmitError(name_the_manifests())
    shared = Capability.SHARED in backend.capabilities
    code = code_for(cat, shared, args.dry_run)  # `code:` sweeps: refused if not pushed
    return ApplyOptions(
        root=cat.root,
        commit="uncommitted" if args.dry_run else gitrepo.head_commit(cat.root),
        dry_run=args.dry_run,
        restart_failed=args.restart_failed,
        restart_points=args.restart_points,
        pins=_pins(Path(args.reviewed)) if args.reviewed is not None and shared else None,
        concurrency=args.concurrency,
        timeout=DEFAULT_TIMEOUT if args.timeout is None and shared else args.timeout,
        started=started,
        max_unreachable=args.max_unreachable,
        clock=clock or Clock(),
        replan=lambda: unfinished(backend, cat.plans(kind=backend.kind)),
        code=code,
    )


def _pins(path: Path) -> list[Pin]:
    from runner.repo import review

    try:
        return review.parse_pins(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise RunnerError(f"cannot read the reviewed plans at {path}: {exc}") from None


def _report(root: Path, args: SubmitArgs, target: Target | None, applied: Applied) -> int:
    """The lines, the job summary, the ledger commit, the JSON summary; the exit code."""
    from runner.repo import github
    from runner.report import plan as report
    from runner.report.apply import result_lines
    from runner.report.held import held_counts
    from runner.report.submission import submit_summary, summary_json

    for group in applied.groups:  # the URL on stdout, with the experiments; a failure on stderr
        print(group.line(), file=sys.stdout if group.group else sys.stderr, flush=True)
    if args.dry_run:
        github.append_summary(report.markdown(applied.plans, heading="Sweep plan (dry run)"))
        return 0
    outcomes, stop, duplicates = applied.outcomes, applied.stop, applied.duplicates
    waiting, held = held_counts(applied.plans)
    summary = submit_summary(outcomes, stop, duplicates, applied.groups, waiting, held)
    note = "…and {lines} more rows: the ledger files list every experiment."
    github.append_summary(report.truncate_lines(summary, report.SUMMARY_LIMIT, note))
    if args.commit:  # after failures too: what was created is recorded
        commit_back(root, target)
    for line in result_lines(applied):
        stderr(line)
    result, code = applied.result, applied.exit_code
    if args.summary_json:
        text = summary_json(outcomes, stop, duplicates, result, code)
        Path(args.summary_json).write_text(text, encoding="utf-8")
    submitted = sum(o.status.submitted for o in outcomes)
    not_submitted = str(len(outcomes) - submitted)
    github.set_outputs(
        {"result": result, "submitted": str(submitted), "not-submitted": not_submitted}
    )
    return code


def _dry_run(cat: Catalog, restart_failed: bool = False) -> int:
    from runner.repo import github
    from runner.report import plan as report

    if restart_failed:
        stderr(DRY_RESTART)
    plans = cat.plans()
    print(report.table(plans), file=sys.stderr)
    github.append_summary(report.markdown(plans, heading="Sweep plan (dry run)"))
    return 0
