"""`logs`: one point's logs, from Beaker (the chosen replica's latest job) or its local run."""

from __future__ import annotations

import argparse
import dataclasses
import sys
from dataclasses import dataclass
from pathlib import Path

from runner import operate
from runner.backends import LogQuery, NotStarted, Rejected, Transient
from runner.backends.opening import open_backend
from runner.commands.common import stderr
from runner.commands.limits import bounds, show_waits, unanswered
from runner.commands.loading import load_catalog
from runner.core.clock import Clock
from runner.core.defaults import DEFAULT_READ_TIMEOUT
from runner.core.errors import Exit, RunnerError


@dataclass(frozen=True)
class LogsArgs:
    point: str
    replica: int = 0
    task: str | None = None
    tail: int | None = None
    follow: bool = False
    backend: str = "auto"
    timeout: str | None = None
    """A duration; None: `DEFAULT_READ_TIMEOUT`, or none with `follow` (which waits for the
    job's lines as long as it runs; reaching Beaker is still bounded by `max_unreachable`)."""
    max_unreachable: str | None = None


def run(args: argparse.Namespace) -> int:
    given = LogsArgs(args.point, args.replica, args.task, args.tail, args.follow, args.backend)
    given = dataclasses.replace(given, timeout=args.timeout, max_unreachable=args.max_unreachable)
    return logs(Path(args.directory), given)


def logs(directory: Path, args: LogsArgs, clock: Clock | None = None) -> int:
    """Exit 0 with the lines; 1 with one line when the point is unknown or ambiguous, the
    task or replica does not exist, or its job has not started yet; 5 when Beaker did not
    answer in time. `clock`: what the deadline is on (tests pass one that jumps)."""

    if args.tail is not None and args.tail < 1:
        raise RunnerError("--tail must be at least 1")
    default = None if args.follow else DEFAULT_READ_TIMEOUT
    limits = bounds(clock or Clock(), args.timeout, args.max_unreachable, default)
    cat = load_catalog(directory, ())  # a manifest with problems is left out, not fatal here
    backend = open_backend(args.backend, cat.root, stderr, bounds=limits)
    show_waits(backend.health)
    try:
        plans, broken = cat.readable_plans(
            cat.ledgers(backend.layout)
        )  # another sweep's ledger may not
        for problem in broken:
            stderr(f"warning: left out: {problem}")
        [(plan, row)] = operate.find_point(plans, args.point)
        recorded = row.entry.id if row.entry is not None else ""
        query = LogQuery(args.task, args.replica, args.tail, args.follow, recorded)
        for line in backend.logs(plan.sweep, row.experiment, query):  # recorded, if renamed
            sys.stdout.write(line if line.endswith("\n") else line + "\n")
            if args.follow:
                sys.stdout.flush()
    except NotStarted as exc:
        stderr(f"no logs yet: {exc}")
        return Exit.USER_ERROR
    except Rejected as exc:
        raise RunnerError(str(exc)) from None
    except Transient as exc:
        with unanswered():
            raise exc from None
    finally:
        backend.close()
    return Exit.OK
