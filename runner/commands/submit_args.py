"""What `submit` is asked to do: its arguments, and a workflow_dispatch event's inputs applied."""

from __future__ import annotations

import argparse
from dataclasses import dataclass

from runner.commands.common import (
    BACKEND_CHOICES,
    DURATIONS,
    add_paths,
    args_from,
    duration,
    split_points,
)
from runner.core.defaults import DEFAULT_CONCURRENCY, DEFAULT_MAX_UNREACHABLE, DEFAULT_TIMEOUT
from runner.core.errors import RunnerError
from runner.core.invoked import invoked


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
    restart_points: tuple[str, ...] = ()
    """`--restart --points NAME...`: restart these points (canceled ones included)."""
    max_unreachable: float = DEFAULT_MAX_UNREACHABLE
    summary_json: str | None = None
    reviewed: str | None = None
    """A file of plan pins (`reviewed-plans`): submit only the points they cover."""


DRY_RESTART = (
    "--restart-failed: which points failed is not checked in this dry run without credentials;"
    " `submit --restart-failed --dry-run --backend beaker` lists them"
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
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
        metavar="DURATION",
        help=f"deadline for the whole run ({DURATIONS}; default on Beaker:"
        f" {DEFAULT_TIMEOUT:.0f}s, locally: none)",
    )
    parser.add_argument(
        "--max-unreachable",
        metavar="DURATION",
        help="stop early once Beaker has been unreachable this long"
        f" (default {DEFAULT_MAX_UNREACHABLE:.0f}s)",
    )
    parser.add_argument(
        "--summary-json",
        metavar="FILE",
        help="also write what happened to each point, and the result, as JSON to FILE",
    )
    _add_git_arguments(parser)


def _add_git_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--backend",
        choices=BACKEND_CHOICES,
        default="auto",
        help="auto: Beaker when credentials exist, else local (an error in CI)",
    )
    parser.add_argument(
        "--http-timeout",
        metavar="DURATION",
        help="how long to wait for one Beaker HTTP reply (beaker-py's default: 30s)",
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
        "--restart",
        action="store_true",
        help="with --points: restart those points' failed or canceled tasks in place, those"
        " canceled with `cancel` too (at most max_restarts times, within max_running)",
    )
    parser.add_argument(
        "--points",
        nargs="+",
        default=(),
        metavar="NAME",
        help="with --restart: the points to restart (experiment names or key prefixes)",
    )
    parser.add_argument(
        "--reviewed",
        metavar="FILE",
        help="submit only the points a reviewed plan showed (FILE: written by reviewed-plans);"
        " hold back and list the rest. A dispatch with `unreviewed` ticked submits them too",
    )


def name_the_manifests() -> str:
    """Why `submit` with no PATH refuses to fall back to the local backend."""
    return (
        "no Beaker credentials, and the local backend runs only the manifests you name"
        f" (e.g. `{invoked()} submit sweeps/quickstart.yaml`), or pass --backend local"
    )


def from_namespace(args: argparse.Namespace) -> SubmitArgs:
    points, paths = split_points(args.directory, args.points, args.paths)
    if bool(args.restart) != bool(points):
        raise RunnerError("--restart and --points go together: `submit --restart --points NAME...`")
    limit = duration("--max-unreachable", args.max_unreachable)
    return args_from(
        args,
        SubmitArgs,
        paths=paths,
        restart_points=points,
        timeout=duration("--timeout", args.timeout),
        max_unreachable=DEFAULT_MAX_UNREACHABLE if limit is None else limit,
        http_timeout=duration("--http-timeout", args.http_timeout),
    )


def _positive(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError("must be at least 1")
    return value
