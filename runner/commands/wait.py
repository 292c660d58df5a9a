"""`wait`: wait for a sweep's submitted points to end, for CI: a progress line on stderr each
time it changes, the final table on stdout, and an exit code that says how it ended (0 every
awaited point succeeded, 6 some failed or were canceled, 124 the timeout came first, 5 the
backend did not answer, 1 nothing to wait for). One listing per sweep per interval
(`runner.observe.watch`), and one status look at the end for the table."""

from __future__ import annotations

import argparse
import dataclasses
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from runner.backends.opening import open_backend
from runner.commands.common import args_from, split_points, stderr
from runner.commands.loading import checked_out, load_catalog, raise_if_problems
from runner.core.clock import Clock
from runner.core.errors import Exit, RunnerError
from runner.observe import sweeps, watch
from runner.observe.model import Observation, PointResult
from runner.observe.watch import Awaited, Ending, OnFailure, Tally, Timing, Waited
from runner.operate.finding import find_point
from runner.plan import PlanStatus, SweepPlan
from runner.render.durations import elapsed_text, to_nanoseconds
from runner.report import status

EXITS = {
    Ending.ALL_SUCCEEDED: Exit.OK,
    Ending.SOME_FAILED: Exit.RUNS_FAILED,
    Ending.TIMED_OUT: Exit.TIMED_OUT,
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


def run(args: argparse.Namespace) -> int:
    points, paths = split_points(args.directory, args.points, args.paths)
    on_failure = OnFailure.STOP if args.fail_fast else OnFailure.WAIT
    given = args_from(args, WaitArgs, paths=paths, points=points, on_failure=on_failure)
    return wait(Path(args.directory), given)


def seconds(option: str, text: str) -> float:
    """A duration option in seconds; a RunnerError (one line, exit 1) for one that is not."""
    try:
        return to_nanoseconds(text.strip()) / 1e9
    except ValueError:
        raise RunnerError(f"{option} {text!r}: not a duration (examples: 30s, 5m, 1h30m)") from None


def timing(args: WaitArgs) -> Timing:
    interval = seconds("--interval", args.interval)
    if interval <= 0:
        raise RunnerError(f"--interval {args.interval!r}: must be more than 0s")
    timeout = None if args.timeout is None else seconds("--timeout", args.timeout)
    return Timing(interval, timeout, args.on_failure)


def wait(directory: Path, args: WaitArgs, clock: Clock | None = None) -> Exit:
    """`clock`: what the wait reads the time and sleeps by (tests pass one that jumps)."""
    asked = timing(args)  # a bad duration is refused before anything is read
    cat = load_catalog(directory, args.paths)
    raise_if_problems(cat)
    backend = open_backend(args.backend, cat.root, stderr)
    try:
        awaited = chosen(cat.plans(cat.ledgers(backend.layout)), args.points)
        said = [""]

        def told(tally: Tally) -> None:
            if tally.text != said[0]:
                said[0] = tally.text
                stderr(tally.text)

        waited = watch.wait(backend, awaited, clock or Clock(), asked, told)
        # The final table: one look at each sweep, as `status` observes it (its search, rungs).
        observer = sweeps.observer(cat, backend, checked_out(cat, backend))
        final = [_only(observer.observation(a.plan), a.names) for a in awaited]
    finally:
        backend.close()
    sys.stdout.write(status.render(final, "table"))
    return ended(waited, asked)


def chosen(plans: Sequence[SweepPlan], points: Sequence[str]) -> list[Awaited]:
    """The submitted points of each sweep (of `points`, when named); RunnerError when there is
    none. A named point not submitted yet is said on stderr and not awaited."""
    rows = [(p, r) for ref in points for p, r in find_point(plans, ref)]
    if not points:
        rows = [(p, r) for p in plans for r in p.rows if r.status != PlanStatus.ORPHAN]
    unsent = [r.name for _, r in rows if r.entry is None]
    if unsent:
        more = " ..." if len(unsent) > 5 else ""
        stderr(f"{len(unsent)} point(s) not submitted, not awaited: {' '.join(unsent[:5])}{more}")
    awaited = [
        Awaited(plan, frozenset(r.experiment for p, r in rows if p is plan and r.entry))
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
    return EXITS[waited.ending]


def _names(points: Sequence[PointResult]) -> str:
    return ", ".join(f"{p.experiment} ({p.why or p.state})" for p in points)
