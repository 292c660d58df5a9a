"""`python -m runner`: argparse front end; the one place exceptions become exit codes."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from runner.commands import expand, github, status, submit, validate
from runner.errors import RunnerError

EXIT_USER_ERROR = 1
EXIT_UNEXPECTED = 3
EXIT_INTERRUPTED = 130


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m runner",
        description="GitOps sweep runner for Beaker: validate, plan, submit and track sweeps.",
    )
    parser.add_argument("--debug", action="store_true", help="show tracebacks for errors")
    parser.add_argument("-C", dest="directory", default=".", help="repository root (default: .)")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for command in (validate, expand, submit, status, github):
        command.register(commands)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return int(args.run(args))
    except RunnerError as exc:
        print(f"error: {exc}" if "\n" not in str(exc) else str(exc), file=sys.stderr)
        return EXIT_USER_ERROR
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    except Exception as exc:
        if args.debug:
            raise
        print(
            f"unexpected error: {type(exc).__name__}: {exc} (rerun with --debug for a traceback)",
            file=sys.stderr,
        )
        return EXIT_UNEXPECTED
