"""`logs`: one point's logs, from Beaker (the chosen replica's latest job) or its local run."""

from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass
from pathlib import Path

from runner import operate
from runner.backends import LogQuery, NotStarted, Rejected, Transient
from runner.backends.opening import open_backend
from runner.commands.common import stderr
from runner.commands.loading import load_catalog
from runner.core.errors import Exit, RunnerError


@dataclass(frozen=True)
class LogsArgs:
    point: str
    replica: int = 0
    task: str | None = None
    tail: int | None = None
    follow: bool = False
    backend: str = "auto"


def run(args: argparse.Namespace) -> int:
    return logs(
        Path(args.directory),
        LogsArgs(args.point, args.replica, args.task, args.tail, args.follow, args.backend),
    )


def logs(directory: Path, args: LogsArgs) -> int:
    """Exit 0 with the lines; 1 with one line when the point is unknown or ambiguous, the
    task or replica does not exist, or its job has not started yet."""

    if args.tail is not None and args.tail < 1:
        raise RunnerError("--tail must be at least 1")
    cat = load_catalog(directory, ())  # a manifest with problems is left out, not fatal here
    backend = open_backend(args.backend, cat.root, stderr)
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
    except (Rejected, Transient) as exc:
        raise RunnerError(str(exc)) from None
    finally:
        backend.close()
    return Exit.OK
