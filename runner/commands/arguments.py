"""Every subcommand's arguments (argparse), apart from the commands that use them: `--help`
and a usage error load only this module, `common` and `submit_args`, and none of the pipeline;
`runner.cli` imports the one command that runs (`runner.commands.<name>`), whose own imports
then load what it needs at the top of its module."""

from __future__ import annotations

import argparse

from runner.commands.common import (
    BACKEND_CHOICES,
    DURATIONS,
    FORMATS,
    Subparsers,
    add_bounds,
    add_paths,
)
from runner.commands.submit_args import add_arguments
from runner.core.defaults import DEFAULT_READ_TIMEOUT
from runner.core.errors import Exit

STATUS_FORMATS = ("table", "markdown", "json", "csv")
REPORT_FORMATS = ("markdown", "json")
GOALS = ("minimize", "maximize")
"""`runner.manifest.sample.Goal`, spelled here: `--help` loads none of the pipeline."""
READS = f"{DEFAULT_READ_TIMEOUT / 60:.0f}m"
"""The default `--timeout` of every command but `submit`, `wait` and `logs --follow`."""


def _parser(
    commands: Subparsers, name: str, text: str, handler: str = ""
) -> argparse.ArgumentParser:
    """A subcommand's parser, run by the module `runner.commands.<handler>` (by default its
    name, `-` as `_`)."""
    parser = commands.add_parser(name, help=text)
    parser.set_defaults(handler=handler or name.replace("-", "_"))
    return parser


def register(commands: Subparsers) -> None:
    """Every subcommand, in the order `--help` lists them."""
    for add in (
        _init,
        _validate,
        _expand,
        _lock,
        _propose,
        _replay,
        _submit,
        _status,
        _wait,
        _report,
        _plan_comment,
        _cancel,
        _logs,
        _reviewed,
    ):
        add(commands)


def _init(commands: Subparsers) -> None:
    parser = _parser(
        commands, "init", "make a git repository a sweeps repository (workflows, example, schema)"
    )
    parser.add_argument("dir", nargs="?", default=".", metavar="DIR", help="default: here")
    parser.add_argument(
        "--ref",
        help="the tag or commit of beaker-sweep-runner the workflows and the hook call"
        " (default: the latest release, v<this version>)",
    )
    parser.add_argument(
        "--branch", help="the default branch merges submit from (default: the current one)"
    )
    parser.add_argument("--force", action="store_true", help="overwrite files that differ")


def _validate(commands: Subparsers) -> None:
    parser = _parser(commands, "validate", "check manifests without planning")
    add_paths(parser)


def _expand(commands: Subparsers) -> None:
    parser = _parser(
        commands, "expand", "expand sweeps into points; with --plan, compare with the ledgers"
    )
    add_paths(parser)
    parser.add_argument(
        "--plan", action="store_true", help="show each point's status against its ledger"
    )
    parser.add_argument("--format", choices=FORMATS, default="table")
    parser.add_argument(
        "--detailed-exitcode",
        action="store_true",
        help="exit 2 when the plan has points to submit (0: nothing to do, 1: invalid)",
    )
    parser.add_argument(
        "--save-specs", metavar="DIR", help="write each point's Beaker spec as YAML under DIR"
    )
    parser.add_argument(
        "--output", metavar="FILE", help="write the report to FILE instead of stdout"
    )


def _lock(commands: Subparsers) -> None:
    parser = _parser(
        commands, "lock", "draw the points of params.sample into the manifest's lock file"
    )
    add_paths(parser)
    add_bounds(parser, READS)


def _propose(commands: Subparsers) -> None:
    parser = _parser(
        commands, "propose", "adaptive search: append the next round of points to the sample's lock"
    )
    add_paths(parser)
    parser.add_argument("--backend", choices=BACKEND_CHOICES, default="auto")
    add_bounds(parser, READS)
    parser.add_argument(
        "--verbose",
        action="store_true",
        help="a warm start's every point left out, with why (else the first few)",
    )


def _replay(commands: Subparsers) -> None:
    parser = _parser(
        commands,
        "replay",
        "automatic search: recompute every round its lock records (exit 4: one does not replay)",
    )
    add_paths(parser)


def _submit(commands: Subparsers) -> None:
    parser = _parser(commands, "submit", "submit every point the plan marks '+'")
    add_arguments(parser)


def _status(commands: Subparsers) -> None:
    parser = _parser(commands, "status", "every point with its state and metrics")
    add_paths(parser)
    parser.add_argument("--format", choices=STATUS_FORMATS, default="table")
    parser.add_argument("--backend", choices=BACKEND_CHOICES, default="auto")
    parser.add_argument(
        "--plot",
        metavar="METRIC",
        help="plot METRIC against a parameter (`auto`: each sweep's first numeric metric): into"
        " --output FILE (.png or .svg: needs the [plot] extra; .md: Mermaid), or as a Mermaid"
        " block with --format markdown",
    )
    parser.add_argument("--by", metavar="PARAM", help="with --plot: the parameter on the x axis")
    parser.add_argument("--output", metavar="FILE", help="with --plot: the file to write")
    parser.add_argument(
        "--best",
        metavar="METRIC",
        help="print the point with the best METRIC; with METRIC,METRIC,... the Pareto set;"
        " `auto`: each sweep's own objectives (no --min or --max)",
    )
    _live(parser, "each running point's latest reported step and values")
    goal = parser.add_mutually_exclusive_group()
    goal.add_argument("--min", dest="goal", action="store_const", const="minimize")
    goal.add_argument("--max", dest="goal", action="store_const", const="maximize")
    add_bounds(parser, READS)


def _wait(commands: Subparsers) -> None:
    parser = _parser(
        commands,
        "wait",
        "wait until a sweep's submitted points have ended (for CI): progress on stderr, the"
        " table on stdout",
    )
    add_paths(parser)
    parser.add_argument(
        "--points", nargs="+", default=(), metavar="NAME", help="only these (names or key prefixes)"
    )
    parser.add_argument(
        "--timeout",
        metavar="DURATION",
        help=f"give up waiting after DURATION ({DURATIONS}) and exit {int(Exit.TIMED_OUT)}"
        " (default: never); Beaker unreachable this long ends it too, exit 5",
    )
    parser.add_argument(
        "--interval", metavar="DURATION", default="30s", help="between two looks (default 30s)"
    )
    parser.add_argument(
        "--fail-fast",
        action="store_true",
        help=f"exit {int(Exit.RUNS_FAILED)} at the first failed point instead of waiting for all",
    )
    parser.add_argument("--backend", choices=BACKEND_CHOICES, default="auto")
    add_bounds(parser, None)


def _report(commands: Subparsers) -> None:
    parser = _parser(
        commands, "report", "each sweep's results page: best point, importance, images, CSV"
    )
    add_paths(parser)
    parser.add_argument(
        "--metric",
        metavar="NAME",
        help="the metric to rank by (default: the sweep's objective, else the first numeric"
        " metric by name)",
    )
    parser.add_argument(
        "--goal",
        choices=GOALS,
        help="which way is better (default: the sweep's own for one of its objectives; required"
        " for another --metric)",
    )
    parser.add_argument(
        "--output",
        metavar="DIR",
        help="write each sweep's page (NAME.md), CSV (NAME.csv) and images (PNG with the [plot]"
        " extra) into DIR, and every sweep's web page (index.html)",
    )
    parser.add_argument(
        "--optuna-storage",
        metavar="FILE",
        help="also write each sweep as an Optuna study (named after the sweep) that"
        " optuna-dashboard opens offline: SQLite for .db/.sqlite/.sqlite3, else a journal file"
        " (the [adaptive] extra)",
    )
    parser.add_argument(
        "--against",
        metavar="REV",
        help="print each point's metric in the ledger committed at REV and now, and the change"
        " (points paired by key, or by parameters across a revision bump), instead of the page",
    )
    parser.add_argument("--format", choices=REPORT_FORMATS, default="markdown")
    parser.add_argument("--backend", choices=BACKEND_CHOICES, default="auto")
    add_bounds(parser, READS)
    _live(parser, "each point's learning curve (running and finished points; always locally)")


def _live(parser: argparse.ArgumentParser, what: str) -> None:
    """`--live`: a `runner.observe.live.Live`, spelled here (`--help` loads none of it)."""
    parser.add_argument(
        "--live",
        action="store_const",
        const="on",
        default="manifest",
        help=f"read {what} from the `[sweep-metric]` lines of its log's tail (one bounded read per"
        " point), as `live: true` in a manifest does",
    )


def _plan_comment(commands: Subparsers) -> None:
    parser = _parser(
        commands,
        "plan-comment",
        "the plan as the markdown of a pull request comment, also added to the job summary",
    )
    add_paths(parser)
    parser.add_argument(
        "--output", metavar="FILE", help="write the comment to FILE (default: stdout)"
    )
    parser.add_argument(
        "--base",
        metavar="REV",
        help="the pull request's base commit: only the sweeps changed since are shown in full",
    )
    parser.add_argument(
        "--artifact",
        metavar="DIR",
        help="also write the whole plan to DIR/sweep-plan.md and DIR/sweep-plan.json",
    )


def _cancel(commands: Subparsers) -> None:
    parser = _parser(
        commands, "cancel", "cancel a sweep's queued and running experiments (asks for --yes)"
    )
    parser.add_argument("paths", nargs="*", metavar="PATH", help="manifests or directories")
    which = parser.add_mutually_exclusive_group()
    which.add_argument(
        "--orphans", action="store_true", help="only points in the ledger but not the manifest"
    )
    which.add_argument(
        "--points", nargs="+", default=(), metavar="NAME", help="only these (names or key prefixes)"
    )
    parser.add_argument(
        "--yes",
        action="store_true",
        help=f"really cancel; without it, show what would be canceled and exit {int(Exit.WOULD_CHANGE)}",
    )
    parser.add_argument("--backend", choices=BACKEND_CHOICES, default="auto")
    parser.add_argument("--commit", action="store_true", help="then commit the changed ledgers")
    parser.add_argument("--push", action="store_true", help="with --commit: push that commit")
    add_bounds(parser, READS)


def _logs(commands: Subparsers) -> None:
    parser = _parser(commands, "logs", "a point's logs (one replica of one task)")
    parser.add_argument("point", metavar="NAME|KEY-PREFIX", help="experiment name or key prefix")
    parser.add_argument("--replica", type=int, default=0, metavar="N", help="rank (default 0)")
    parser.add_argument("--task", metavar="NAME", help="task name (default: the first task)")
    parser.add_argument("--tail", type=int, metavar="N", help="only the last N lines")
    parser.add_argument("--follow", action="store_true", help="keep printing until the job ends")
    parser.add_argument("--backend", choices=BACKEND_CHOICES, default="auto")
    add_bounds(parser, f"{READS}; with --follow, none")


def _reviewed(commands: Subparsers) -> None:
    parser = _parser(
        commands,
        "reviewed-plans",
        "in GitHub Actions: what the plans of the merged pull requests showed (for submit --reviewed)",
        "reviewed",
    )
    parser.add_argument("--output", metavar="FILE", help="write the pins to FILE (default: stdout)")
