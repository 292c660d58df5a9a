"""`status`: every point of each sweep with its state, exit code, duration and metrics, a plot
of one metric against a parameter, or the best point; from a few bulk calls per sweep."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from runner.commands.common import args_from, stderr
from runner.commands.limits import bounds, unanswered
from runner.commands.loading import observed_sweeps
from runner.core.aims import Goal
from runner.core.clock import Bounds, Clock
from runner.core.defaults import DEFAULT_READ_TIMEOUT
from runner.core.errors import Exit, RunnerError
from runner.core.output import write_text
from runner.observe.live import Live, Reading, Tails
from runner.observe.model import Observation
from runner.report import charts, plot
from runner.report import status as report
from runner.report.best import OWN, best

AUTO = "auto"
"""`--plot auto`: each sweep's first metric (by name) that has numbers."""


@dataclass(frozen=True)
class StatusArgs:
    paths: tuple[str, ...] = ()
    fmt: str = "table"
    backend: str = "auto"
    plot: str | None = None
    by: str | None = None
    output: str | None = None
    best: str | None = None
    goal: str | None = None
    """`--min` or `--max`: a `Goal` (spelled as text: `--help` loads none of the pipeline)."""
    live: Live = Live.MANIFEST
    """`--live`: every sweep's running points with their latest reported values."""
    timeout: str | None = None
    """A duration (`--timeout`); None: `DEFAULT_READ_TIMEOUT`."""
    max_unreachable: str | None = None


def run(args: argparse.Namespace) -> Exit:
    given = args_from(args, StatusArgs, {"fmt": "format"}, live=Live(args.live))
    return status(Path(args.directory), given)


def check(args: StatusArgs) -> None:
    """Refuse a contradictory command line before any backend is asked anything."""
    if args.best == OWN and args.goal is not None:
        raise RunnerError("--best auto takes each sweep's own goals: leave out --min and --max")
    if args.best not in (None, OWN) and args.goal is None:
        raise RunnerError("--best needs --min or --max (which way is better), or --best auto")
    if args.best is None and args.goal is not None:
        raise RunnerError("--min and --max go with --best METRIC")
    if args.plot is None and (args.by or args.output):
        raise RunnerError("--by and --output go with --plot METRIC")
    if args.plot is not None and args.output is None and args.fmt != "markdown":
        raise RunnerError(
            "--plot draws into --output FILE (.png, .svg, .md) or, with --format markdown, into"
            " the report"
        )
    if args.output and Path(args.output).suffix.lower() not in (".png", ".svg", ".md", ".mmd"):
        raise RunnerError(f"{args.output}: --output must end in .png, .svg, .md or .mmd")
    if args.plot is not None and args.output:
        plot.check_can_save(Path(args.output))


def status(directory: Path, args: StatusArgs, clock: Clock | None = None) -> Exit:
    """`clock`: what the command's deadline is on (tests pass one that jumps)."""
    check(args)
    limits = bounds(clock or Clock(), args.timeout, args.max_unreachable, DEFAULT_READ_TIMEOUT)
    with unanswered():
        sweeps = collect(directory, args, limits)
    if args.best is not None:
        goal = Goal(args.goal) if args.goal is not None else None
        sys.stdout.write(best(sweeps, args.best, goal, args.fmt))
        return Exit.OK

    if args.plot is not None and args.output is None:  # markdown, each sweep with its chart
        blocks = [report.markdown(s) + "\n\n" + _mermaid(s, args) for s in sweeps]
        sys.stdout.write(report.HEADING + "\n\n".join(blocks))
        return Exit.OK
    sys.stdout.write(report.render(sweeps, args.fmt))
    if args.plot is not None and args.output is not None:
        return write_plots(sweeps, args)
    return Exit.OK


def collect(directory: Path, args: StatusArgs, limits: Bounds) -> list[Observation]:
    """Each sweep's observation (stderr: its duplicate warnings)."""
    reading = Reading(Tails.LATEST, args.live)
    asked = [*(args.best or "").split(","), args.plot or ""]  # gpu_hours is measured if named
    sweeps = observed_sweeps(directory, args.paths, args.backend, reading, asked, limits)
    for sweep in sweeps:
        for warning in sweep.warnings:
            stderr(warning)
    return sweeps


def _metric(sweep: Observation, asked: str) -> str:
    if asked != AUTO:
        return asked
    numeric = sweep.numeric_metrics
    if not numeric:
        raise RunnerError(f"{sweep.name}: no numeric metric to plot yet")
    return numeric[0]


def _mermaid(sweep: Observation, args: StatusArgs) -> str:

    assert args.plot is not None
    try:
        return charts.mermaid(charts.chart(sweep, _metric(sweep, args.plot), args.by))
    except RunnerError as exc:  # a sweep with nothing to plot yet is not an error here
        return f"_No plot: {exc}_\n"


def write_plots(sweeps: Sequence[Observation], args: StatusArgs) -> Exit:
    """One file per sweep (FILE itself when there is one sweep); exit 1 if none was written."""

    assert args.plot is not None and args.output is not None
    target = Path(args.output)
    written = 0
    for sweep in sweeps:
        path = target if len(sweeps) == 1 else target.with_stem(f"{target.stem}-{sweep.name}")
        try:
            chart = charts.chart(sweep, _metric(sweep, args.plot), args.by)
            if path.suffix.lower() in (".md", ".mmd"):
                write_text(path, charts.mermaid(chart))
            else:
                plot.save(chart, path)
        except RunnerError as exc:
            if len(sweeps) == 1:
                raise
            stderr(f"no plot for {sweep.name}: {exc}")
            continue
        written += 1
        stderr(f"plot: {chart.metric} by {chart.x} written to {path}")
    return Exit.OK if written else Exit.USER_ERROR
