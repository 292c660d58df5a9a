"""`submit`: create every `+` point of the plan on the backend, exactly once, and record it.

With `--commit [--push]` it also commits the ledgers (and pushes them); with `--github-event`
it takes its inputs from a workflow's event. That git and GitHub side is at the end.

Exit codes (also in the JSON summary, `--summary-json FILE`, and the step output `result`):
0 every point submitted; 1 user error (invalid manifest, no token, git), nothing submitted
for it; 4 some points rejected by Beaker (a rerun does the same), all others submitted;
5 incomplete: the deadline passed, Beaker was unreachable, or retries ran out (a rerun
continues; rejections may also be among them); 130 SIGINT, 143 SIGTERM (the ledger is
written and the summary printed first); 3 an unexpected error.
"""

from __future__ import annotations

import argparse
import contextlib
import signal
import sys
import threading
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING

from runner.commands.common import (
    BACKEND_CHOICES,
    Subparsers,
    add_paths,
    load_catalog,
    raise_if_problems,
    stderr,
)
from runner.commands.gitops import check_commit, commit_back, only_reviewed
from runner.errors import EXIT_INCOMPLETE, EXIT_REJECTED, SubmitError

if TYPE_CHECKING:  # annotations only: gitrepo imports GitPython, submit the whole pipeline
    from runner.backends import Backend
    from runner.catalog import Catalog
    from runner.gitrepo import Target
    from runner.membership import GroupOutcome
    from runner.plan import SweepPlan
    from runner.progress import Progress
    from runner.submit import Clock, Outcome, Stop, Submitter

DEFAULT_CONCURRENCY = 8
DEFAULT_TIMEOUT = 3600.0
"""Seconds a Beaker run may take when --timeout is not given (local runs have no default)."""
DEFAULT_MAX_UNREACHABLE = 180.0
EXIT_OK = 0
EXIT_SIGNAL = {"SIGINT": 130, "SIGTERM": 143}


@dataclass(frozen=True)
class SubmitArgs:
    """What `submit` was asked to do, after a workflow event's inputs are applied."""

    paths: tuple[str, ...] = ()
    dry_run: bool = False
    concurrency: int = DEFAULT_CONCURRENCY
    timeout: float | None = None
    """None: DEFAULT_TIMEOUT on Beaker, no deadline locally."""
    backend: str = "auto"
    http_timeout: float | None = None
    commit: bool = False
    push: bool = False
    github_event: bool = False
    restart_failed: bool = False
    max_unreachable: float = DEFAULT_MAX_UNREACHABLE
    summary_json: str | None = None
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
        "--timeout",
        type=float,
        metavar="SECONDS",
        help=f"deadline for the whole run (default on Beaker: {DEFAULT_TIMEOUT:.0f}; locally: none)",
    )
    parser.add_argument(
        "--max-unreachable",
        type=float,
        metavar="SECONDS",
        default=DEFAULT_MAX_UNREACHABLE,
        help="stop early once Beaker has been unreachable this long"
        f" (default {DEFAULT_MAX_UNREACHABLE:.0f})",
    )
    parser.add_argument(
        "--summary-json",
        metavar="FILE",
        help="also write what happened to each point, and the result, as JSON to FILE",
    )
    parser.add_argument(
        "--backend",
        choices=BACKEND_CHOICES,
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
        "--restart-failed",
        action="store_true",
        help="also restart the failed tasks of every recorded point whose experiment failed or was"
        " canceled, in the same experiment (at most max_restarts times; not points canceled with"
        " `cancel`)",
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
            restart_failed=args.restart_failed,
            max_unreachable=args.max_unreachable,
            summary_json=args.summary_json,
            reviewed=args.reviewed,
        ),
    )


def submit(directory: Path, args: SubmitArgs, clock: Clock | None = None) -> int:
    """`clock`: what the run reads the time and waits by (tests pass one that jumps)."""
    from runner.backends import open_backend
    from runner.progress import Progress

    started = time.monotonic()
    branch = None
    if args.github_event:
        args, branch = apply_event(args)
    cat = load_catalog(directory, args.paths)
    raise_if_problems(cat)  # one invalid manifest stops the whole run: nothing is submitted
    offline = args.github_event or not (args.paths or args.restart_failed)
    if args.dry_run and args.backend == "auto" and offline:
        return _dry_run(cat, args.restart_failed)  # the plan needs no credentials: CI's has none
    manifests = [cat.root / s.path for s in cat.sweeps]
    target = check_commit(
        cat.root, manifests, branch, commit=args.commit, push=args.push, dry_run=args.dry_run
    )
    progress = Progress()
    quiet = args.backend == "auto" and not args.paths  # refused below if it falls back to local
    notify = (lambda text: None) if quiet else progress.note
    backend = open_backend(args.backend, cat.root, notify, http_timeout=args.http_timeout)
    try:
        return _submit_with(backend, cat, args, target, progress, started, clock)
    finally:
        backend.close()


def _submit_with(
    backend: Backend,
    cat: Catalog,
    args: SubmitArgs,
    target: Target | None,
    progress: Progress,
    started: float,
    clock: Clock | None,
) -> int:
    """The run on an open backend (`submit` closes it, whatever happens here)."""
    from runner import github
    from runner.backends import BackendKind, Capability
    from runner.report import plan as report

    if backend.kind == BackendKind.LOCAL and args.backend == "auto" and not args.paths:
        raise SubmitError(
            "no Beaker credentials, and the local backend runs only the manifests you name"
            " (e.g. `python -m runner submit sweeps/quickstart.yaml`), or pass --backend local"
        )
    from runner import operate

    plans = cat.plans(kind=backend.kind)
    restarts_failed = False
    if args.restart_failed and args.dry_run:
        would_restart(backend, plans)
    elif args.restart_failed:
        restarts_failed = restart_failed(backend, plans, cat.root)
        plans = cat.plans(kind=backend.kind)  # the ledgers now record the restarts
    if args.reviewed is not None and Capability.SHARED in backend.capabilities:
        plans = only_reviewed(plans, Path(args.reviewed))
    plans = operate.live_caps(backend, plans)
    print(report.table(plans), file=sys.stderr)
    if args.dry_run:
        github.append_summary(report.markdown(plans, heading="Sweep plan (dry run)"))
        return 0
    from runner import gitrepo
    from runner.submit import Clock, Options, Submitter

    clock = clock or Clock()
    timeout = args.timeout
    if timeout is None and Capability.SHARED in backend.capabilities:
        timeout = DEFAULT_TIMEOUT
    options = Options(
        root=cat.root,
        commit=gitrepo.head_commit(cat.root),
        concurrency=args.concurrency,
        deadline=None if timeout is None else clock.now() - (time.monotonic() - started) + timeout,
        clock=clock,
        max_unreachable=args.max_unreachable,
    )
    from runner.membership import ensure_groups

    submitter = Submitter(backend, options, progress)
    groups: list[GroupOutcome] = []
    with _stopping_on_signals(submitter):
        outcomes = submitter.run(plans)
        if submitter.stopped is None:  # never after a signal, or with Beaker down
            real_deadline = None if timeout is None else started + timeout
            groups = ensure_groups(backend, plans, cat.root, real_deadline)
    for group in groups:  # the URL on stdout with the created experiments; a failure on stderr
        print(group.line(), file=sys.stdout if group.group else sys.stderr, flush=True)
    return report_run(cat.root, args, target, submitter, outcomes, groups, restarts_failed)


def report_run(
    root: Path,
    args: SubmitArgs,
    target: Target | None,
    submitter: Submitter,
    outcomes: Sequence[Outcome],
    groups: Sequence[GroupOutcome] = (),
    restarts_failed: bool = False,
) -> int:
    """Summary, ledger commit, the lines on stderr, the JSON summary; returns the exit code.
    A restart Beaker refused counts as a rejected point."""
    from runner import github
    from runner.report import plan as report
    from runner.report.submission import (
        counts_line,
        failures_table,
        stop_line,
        submit_summary,
        summary_json,
    )

    stop, duplicates = submitter.stopped, submitter.duplicates
    github.append_summary(
        report.truncate_lines(
            submit_summary(outcomes, stop, duplicates, groups),
            report.SUMMARY_LIMIT,
            "…and {lines} more rows: the ledger files list every experiment.",
        )
    )
    if args.commit:  # after failures too: what was created is recorded
        commit_back(root, target)
    result, code = run_result(outcomes, stop)
    if restarts_failed and code == EXIT_OK:
        result, code = "rejected", EXIT_REJECTED
    stderr(counts_line(outcomes))
    for duplicate in duplicates:
        stderr(f"warning: {duplicate.text()}")
    bad = [o for o in outcomes if not o.status.submitted]
    listed = [o for o in bad if o.status != o.status.NOT_STARTED]  # never-started: one line below
    if listed:
        stderr(failures_table(listed))
    if stop is not None:
        stderr(stop_line(stop, outcomes))
    elif bad:
        stderr(f"{len(bad)} point(s) not submitted; run submit again to retry only those")
    if args.summary_json:
        text = summary_json(outcomes, stop, duplicates, result, code)
        Path(args.summary_json).write_text(text, encoding="utf-8")
    submitted = sum(o.status.submitted for o in outcomes)
    github.set_outputs(
        {"result": result, "submitted": str(submitted), "not-submitted": str(len(bad))}
    )
    return code


def run_result(outcomes: Sequence[Outcome], stop: Stop | None) -> tuple[str, int]:
    """The run's result and exit code: see the module docstring."""
    if stop is not None and stop.kind in EXIT_SIGNAL:
        return "interrupted", EXIT_SIGNAL[stop.kind]
    if any(o.status.incomplete for o in outcomes):
        return "incomplete", EXIT_INCOMPLETE
    if any(o.status == o.status.REJECTED for o in outcomes):
        return "rejected", EXIT_REJECTED
    return "ok", EXIT_OK


@contextlib.contextmanager
def _stopping_on_signals(submitter: Submitter) -> Iterator[None]:
    """SIGINT and SIGTERM (what CI sends to cancel a job) stop the run in order: no new
    creates, a short wait for those in flight, the ledger written, the summary printed."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def handler(signum: int, frame: object) -> None:
        submitter.request_stop(signal.Signals(signum).name)

    previous = {sig: signal.signal(sig, handler) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield
    finally:
        for sig, old in previous.items():
            signal.signal(sig, old)


# -- acting on the running sweep: restarts and the max_running cap ---------------------------


def restart_failed(backend: Backend, plans: Sequence[SweepPlan], root: Path) -> bool:
    """Restart the failed points (`--restart-failed`), say what happened; True if any failed."""
    from runner import operate
    from runner.operate import RestartVerdict

    done = operate.restart_failed(backend, plans, root)
    for item in done:
        stderr(f"{item.status} {item.sweep}/{item.name}: {item.detail} (restarts: {item.restarts})")
    counts = {s: sum(1 for d in done if d.status == s) for s in RestartVerdict}
    stderr("Restart: " + ", ".join(f"{n} {s}" for s, n in counts.items()))
    return counts[RestartVerdict.FAILED] > 0


def would_restart(backend: Backend, plans: Sequence[SweepPlan]) -> None:
    """`--restart-failed --dry-run`: the points it would restart and those it would leave."""
    from runner import operate
    from runner.operate import RestartVerdict

    found = operate.restart_candidates(backend, plans)
    verbs = {
        RestartVerdict.RESTARTED: "restart",
        RestartVerdict.SKIPPED: "skip",
        RestartVerdict.FAILED: "fail",
    }
    for item in found:
        restarts = item.row.entry.restarts if item.row.entry else 0
        stderr(
            f"would {verbs[item.verdict]} {item.plan.sweep.name}/{item.row.name}: {item.detail}"
            f" (restarts: {restarts})"
        )
    counts = {v: sum(1 for c in found if c.verdict == s) for s, v in verbs.items()}
    stderr(
        "Restart (dry run, nothing restarted): "
        + ", ".join(f"{n} would {v}" for v, n in counts.items())
    )


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
            restart_failed=args.restart_failed or event.dispatch.restart_failed,
        )
        if event.dispatch.unreviewed and args.reviewed is not None:
            stderr("dispatched with `unreviewed`: points no reviewed plan showed are submitted too")
            args = replace(args, reviewed=None)
    github.check_submit_branch(event, args.dry_run)
    return args, event.branch


def _dry_run(cat: Catalog, restart_failed: bool = False) -> int:
    from runner import github
    from runner.report import plan as report

    if restart_failed:
        stderr(
            "--restart-failed: which points failed is not checked in this dry run without"
            " credentials; `submit --restart-failed --dry-run --backend beaker` lists them"
        )
    plans = cat.plans()
    print(report.table(plans), file=sys.stderr)
    github.append_summary(report.markdown(plans, heading="Sweep plan (dry run)"))
    return 0
