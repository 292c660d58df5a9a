"""`propose`: the next round of each adaptive search named (or all), into its lock, one line
each: the search's one use case (`runner.operate.advance`) with the sweep's observation, the same
one `status` shows (`runner.observe.sweeps`).

In GitHub Actions the step output `rounds` lists each round proposed (sweep, lock path and text,
round, a branch name and the pull request's title and body, `runner.report.rounds`) for the
workflow that opens one pull request per sweep and round (.github/workflows/propose.yml).

Exit 0: proposed, waiting for a round, or stopped (one line each); 1: a manifest problem (a grid,
zip or include beside the sample is one), a manifest named that has nothing to propose, a bad
duration, or Optuna missing; 5: Beaker did not answer in time (`--timeout`, `--max-unreachable`;
the rounds written before are kept); 3: unexpected.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from pathlib import Path

from runner.commands.limits import bounds, unanswered
from runner.commands.searches import propose_rounds
from runner.core.clock import Clock
from runner.core.defaults import DEFAULT_READ_TIMEOUT
from runner.core.errors import Exit


def run(args: argparse.Namespace) -> Exit:
    limits = (args.timeout, args.max_unreachable)
    return propose(Path(args.directory), args.paths, args.backend, limits)


def propose(
    directory: Path,
    paths: Sequence[str],
    backend_name: str = "auto",
    limits: tuple[str | None, str | None] = (None, None),
    clock: Clock | None = None,
) -> Exit:
    """`limits`: `--timeout` and `--max-unreachable` (durations; the timeout's default is
    `DEFAULT_READ_TIMEOUT`); `clock`: what the deadline is on (tests pass one that jumps)."""
    given = bounds(clock or Clock(), *limits, DEFAULT_READ_TIMEOUT)
    with unanswered(lambda: "the rounds proposed before it are written, no other"):
        return propose_rounds(directory, paths, backend_name, given)
