"""`wait`: wait for a sweep's submitted points to end, for CI: a progress line on stderr each
time it changes, the final table on stdout, and an exit code that says how it ended (0 every
awaited point succeeded, 6 some failed or were canceled, 124 the timeout came first, 5 the
backend did not answer or an awaited experiment is gone from it, 1 nothing to wait for or a bad
duration). One listing per sweep per interval (`runner.observe.watch`), and one status look at
the end for the table.

`--timeout` is the wait's own (exit 124 when it comes while points still run): the last look
and the table are still made at it. So it is not a deadline for Beaker's calls: those are
bounded by the unreachable limit (`--max-unreachable`, and no longer than `--timeout`), so a
wait with Beaker down ends in that time, exit 5. On this machine the points a running submit
has yet to start are awaited too (it records each as it starts); one it will never start (it was
canceled or stopped first) is named, and counts as not succeeded."""

from __future__ import annotations

import argparse
import dataclasses
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from runner.backends import Backend, RunsInCreate
from runner.backends.opening import open_backend
from runner.commands.common import args_from, duration, split_points, stderr
from runner.commands.limits import show_waits, unanswered
from runner.commands.loading import checked_out, load_catalog, raise_if_problems
from runner.core.clock import Bounds, Clock
from runner.core.defaults import DEFAULT_MAX_UNREACHABLE
from runner.core.errors import Exit, RunnerError
from runner.observe import sweeps, watch
from runner.observe.model import Observation, PointResult
from runner.observe.watch import Awaited, Ending, OnFailure, Tally, Timing, Waited
from runner.operate.finding import find_point
from runner.plan import PlanStatus, Row, SweepPlan
from runner.plan.catalog import Catalog
from runner.render.durations import elapsed_text
from runner.report import status

EXITS = {
    Ending.ALL_SUCCEEDED: Exit.OK,
    Ending.SOME_FAILED: Exit.RUNS_FAILED,
    Ending.TIMED_OUT: Exit.TIMED_OUT,
    Ending.GONE: Exit.INCOMPLETE,
}


@dataclass(frozen=True)
class WaitArgs:
    paths: tuple[str, ...] = ()
    points: tuple[str, ...] = ()
    timeout: str | None = None
    """A duration (`2s`, `90m`, `1h30m`); None: no timeout."""
    interval: str = "30s"
    on_failure: OnFailure = OnFailure.WAIT
    backend: str = "auto"
    max_unreachable: str | None = None
    """A duration: how long Beaker may be unreachable (default DEFAULT_MAX_UNREACHABLE, and no
    longer than the timeout)."""


def run(args: argparse.Namespace) -> int:
    points, paths = split_points(args.directory, args.points, args.paths)
    on_failure = OnFailure.STOP if args.fail_fast else OnFailure.WAIT
    given = args_from(args, WaitArgs, paths=paths, points=points, on_failure=on_failure)
    return wait(Path(args.directory), given)


def timing(args: WaitArgs) -> Timing:
    interval = duration("--interval", args.interval) or 0.0
    if interval <= 0:
        raise RunnerError(f"--interval {args.interval!r}: must be more than 0s")
    return Timing(interval, duration("--timeout", args.timeout), args.on_failure)


def bounds(args: WaitArgs, asked: Timing, clock: Clock) -> Bounds:
    """No deadline for the calls (the timeout's last look and table are made at it), and the
    unreachable limit no longer than the timeout."""
    limit = duration("--max-unreachable", args.max_unreachable)
    limits = [DEFAULT_MAX_UNREACHABLE if limit is None else limit]
    return Bounds(clock, None, min(limits + ([asked.timeout] if asked.timeout else [])))


def wait(directory: Path, args: WaitArgs, clock: Clock | None = None) -> Exit:
    """`clock`: what the wait reads the time and sleeps by (tests pass one that jumps)."""
    asked = timing(args)  # a bad duration is refused before anything is read
    clock = clock or Clock()
    limits = bounds(args, asked, clock)
    cat = load_catalog(directory, args.paths)
    raise_if_problems(cat)
    with unanswered():
        return _wait(cat, args, asked, limits)


def _wait(cat: Catalog, args: WaitArgs, asked: Timing, limits: Bounds) -> Exit:
    backend = open_backend(args.backend, cat.root, stderr, bounds=limits)
    show_waits(backend.health)
    try:
        plans = cat.plans(cat.ledgers(backend.layout))
        starting = {p.sweep.name: _starting(backend, p) for p in plans}
        awaited = chosen(plans, args.points, starting)
        dropped: list[str] = []
        again = None
        if any(starting.values()):  # the ledger gains each point as the submit starts it

            def again() -> list[Awaited]:
                return _again(cat.plans(cat.ledgers(backend.layout)), awaited, backend, dropped)

        said = [""]

        def told(tally: Tally) -> None:
            if tally.text != said[0]:
                said[0] = tally.text
                stderr(tally.text)

        waited = watch.wait(backend, awaited, limits.clock, asked, told, again)
        # The final table: one look at each sweep, as `status` observes it (its search, rungs).
        observer = sweeps.observer(cat, backend, checked_out(cat, backend))
        last = again() if again is not None else awaited  # the points started since too
        final = [_only(observer.observation(a.plan), a.names) for a in last]
    finally:
        backend.close()
    sys.stdout.write(status.render(final, "table"))
    code = ended(waited, asked)
    if dropped:  # never started: not a success
        stderr(f"not started: {', '.join(dropped)} (the submit that was to start them ended)")
        return Exit.RUNS_FAILED if code is Exit.OK else code
    return code


def _starting(backend: Backend, plan: SweepPlan) -> frozenset[str]:
    """The points of the sweep a submit running on this machine has yet to record."""
    if not isinstance(backend, RunsInCreate):
        return frozenset()
    return frozenset(backend.starting(plan.sweep))


def _again(
    plans: Sequence[SweepPlan], awaited: Sequence[Awaited], backend: Backend, dropped: list[str]
) -> list[Awaited]:
    """The awaited points with the plans as the ledger says them now; a point still not
    recorded that no running submit is to start any more is dropped (and added to `dropped`)."""
    fresh = {p.sweep.name: p for p in plans}
    out = []
    for one in awaited:
        plan = fresh.get(one.plan.sweep.name, one.plan)
        recorded = {r.experiment for r in plan.rows if r.entry is not None}
        left = one.names - recorded
        gone = sorted(left - _starting(backend, plan)) if left else []
        dropped += [n for n in gone if n not in dropped]
        out.append(Awaited(plan, one.names.difference(dropped)))
    return out


def chosen(
    plans: Sequence[SweepPlan],
    points: Sequence[str],
    starting: Mapping[str, frozenset[str]] | None = None,
) -> list[Awaited]:
    """The submitted points of each sweep (of `points`, when named), and those a submit on this
    machine is to start (`starting`, by sweep); RunnerError when there is none. A named point
    not submitted yet and not starting is said on stderr and not awaited."""
    rows = [(p, r) for ref in points for p, r in find_point(plans, ref)]
    if not points:
        rows = [(p, r) for p in plans for r in p.rows if r.status != PlanStatus.ORPHAN]
    starting = starting or {}

    def waits(plan: SweepPlan, row: Row) -> bool:
        return row.entry is not None or row.name in starting.get(plan.sweep.name, ())

    unsent = [r.name for p, r in rows if not waits(p, r)]
    if unsent:
        more = " ..." if len(unsent) > 5 else ""
        stderr(f"{len(unsent)} point(s) not submitted, not awaited: {' '.join(unsent[:5])}{more}")
    awaited = [
        Awaited(plan, frozenset(r.experiment for p, r in rows if p is plan and waits(p, r)))
        for plan in plans
    ]
    awaited = [a for a in awaited if a.names]
    if not awaited:
        raise RunnerError("nothing to wait for: no submitted point matches")
    return awaited


def _only(sweep: Observation, names: frozenset[str]) -> Observation:
    return dataclasses.replace(
        sweep, points=tuple(p for p in sweep.points if p.experiment in names)
    )


def ended(waited: Waited, asked: Timing) -> Exit:
    """Name the points that failed, or were still going at the timeout; the exit code."""
    if waited.failed:
        stderr(f"failed: {_names(waited.failed)}")
    if waited.ending is Ending.TIMED_OUT:
        after = elapsed_text(asked.timeout or 0)
        stderr(f"timed out after {after}, still not ended: {_names(waited.pending)}")
    if waited.ending is Ending.GONE:
        stderr(f"not found, though the ledger records it (deleted?): {_names(waited.gone)}")
    return EXITS[waited.ending]


def _names(points: Sequence[PointResult]) -> str:
    return ", ".join(f"{p.experiment} ({p.state})" for p in points)
