"""`cancel`: cancel a sweep's queued and running experiments, only when asked with --yes.

Nothing else in the runner ever cancels: the plan reports orphans and `submit` leaves them.
Only experiments that record the point's key are touched; each cancel is recorded in the
ledger entry of its point, which `--commit [--push]` commits as `submit` does. Canceling a whole
sweep that a local `submit` is running also stops that submit from starting more of its points.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from runner.backends import Backend, Capability, runs
from runner.backends.opening import open_backend
from runner.commands.common import args_from, split_points, stderr
from runner.commands.gitops import check_commit, commit_back
from runner.commands.limits import bounds, show_waits, unanswered
from runner.commands.loading import load_catalog, raise_if_problems
from runner.core.clock import Clock
from runner.core.defaults import DEFAULT_READ_TIMEOUT
from runner.core.errors import Exit, RunnerError
from runner.operate import cancels
from runner.operate.cancels import CancelTarget
from runner.plan import PlanStatus, SweepPlan
from runner.repo import gitrepo
from runner.report.tables import simple_table


@dataclass(frozen=True)
class Words:
    """How `cancel` speaks of where the points run: Beaker's experiments, or this machine's
    runs (which no workflow's schedule ever submits)."""

    things: str
    none: str
    left: str
    """What becomes of the points not started yet, and how to stop that."""


BEAKER = Words(
    "experiment(s)",
    "Nothing to cancel: no queued or running experiment of these points.",
    "to submit: the next submit (or the workflow's schedule) creates them; set `draft: true` or"
    " remove them to stop it",
)
THIS_MACHINE = Words(
    "run(s) on this machine",
    "Nothing to cancel: none of these points is running on this machine.",
    "not started: the next submit on this machine starts them; remove them from the manifest"
    " to stop it",
)


def words(backend: Backend) -> Words:
    return BEAKER if Capability.SHARED in backend.capabilities else THIS_MACHINE


@dataclass(frozen=True)
class CancelArgs:
    paths: tuple[str, ...]
    orphans: bool = False
    points: tuple[str, ...] = ()
    yes: bool = False
    backend: str = "auto"
    commit: bool = False
    push: bool = False
    timeout: str | None = None
    """A duration; None: `DEFAULT_READ_TIMEOUT`."""
    max_unreachable: str | None = None


SENT = (
    "the cancels sent are recorded in the ledger (one whose reply was lost is reconciled by the"
    " next `cancel --yes`)"
)


def run(args: argparse.Namespace) -> int:
    points, paths = split_points(args.directory, args.points, args.paths)
    if not paths:  # `cancel --points NAME... PATH` gives --points the PATH: split_points finds it
        raise RunnerError("cancel needs the manifests (PATH...) whose experiments it cancels")
    return cancel(Path(args.directory), args_from(args, CancelArgs, paths=paths, points=points))


def cancel(directory: Path, args: CancelArgs, clock: Clock | None = None) -> int:
    """`clock`: what the command's deadline is on (tests pass one that jumps)."""
    limits = bounds(clock or Clock(), args.timeout, args.max_unreachable, DEFAULT_READ_TIMEOUT)
    cat = load_catalog(directory, args.paths)
    raise_if_problems(cat)
    # As submit: the ledger names the commit its manifests were read at, so they must match it.
    manifests = [cat.root / s.path for s in cat.sweeps]
    target = check_commit(
        cat.root, manifests, None, commit=args.commit, push=args.push, dry_run=not args.yes
    )
    backend = open_backend(args.backend, cat.root, stderr, bounds=limits)
    show_waits(backend.health)
    sent = ["nothing was canceled"]  # what is done when Beaker stops answering
    try:
        with unanswered(lambda: sent[0]):
            store = cat.ledgers(backend.layout)
            plans = cat.plans(store)
            found = cancels.reconcile_cancels(backend, plans, store) if args.yes else 0
            if found:
                stderr(f"Recorded {found} cancel(s) that an interrupted run had sent.")
                plans = cat.plans(store)
            if args.yes and not (args.orphans or args.points):
                cancels.stop_starting(backend, plans)  # before the runs end: their submit stops
            targets = cancels.cancel_targets(backend, plans, args.orphans, args.points)
            said = words(backend)
            if not targets:
                stderr(said.none)
                if found and args.commit:
                    commit_back(cat.root, target)
                return Exit.OK
            if not args.yes:
                _show(f"Would cancel {len(targets)} {said.things}", targets)
                stderr(f"Nothing was canceled: pass --yes to cancel these {len(targets)}.")
                return Exit.WOULD_CHANGE
            sent[0] = SENT
            done = cancels.cancel(backend, targets, store, commit=gitrepo.head_commit(cat.root))
    finally:
        backend.close()
    if done:
        _show(f"Canceled {len(done)} {said.things}", done, was="was ")
    if len(done) < len(targets):
        stderr(f"{len(targets) - len(done)} had already finished: nothing to cancel there.")
    _warn_waiting(plans, backend, {id(t.row) for t in done})
    if args.commit:
        commit_back(cat.root, target)
    return Exit.OK


def _warn_waiting(plans: Sequence[SweepPlan], backend: Backend, canceled: set[int]) -> None:
    """Cancel never changes the manifest: its `+` points are still submitted by the next run,
    except those it just canceled (now in the ledger: existing, found by their key)."""

    for plan in plans:
        left = sum(1 for r in plan.rows if r.status == PlanStatus.SUBMIT and id(r) not in canceled)
        if left and plan.to_submit_on(runs(backend, plan.sweep)):
            stderr(f"{plan.sweep.name} still has {left} point(s) {words(backend).left}")


def _show(heading: str, targets: Sequence[CancelTarget], was: str = "") -> None:
    """The targets, each in its state now (`was`: before this cancel)."""
    rows = [
        [t.plan.sweep.name, t.experiment.name, f"{was}{t.experiment.state}", t.experiment.url]
        for t in targets
    ]
    sys.stdout.write(f"{heading}:\n")
    sys.stdout.write(simple_table(rows, ["sweep", "experiment", "state", "url"]) + "\n")
