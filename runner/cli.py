"""`sweep-runner` (or `python -m runner`): argparse front end; the one place exceptions become
exit codes. The arguments are `runner.commands.arguments`; the command that runs is imported
only then, so `--help` loads none of the pipeline."""

from __future__ import annotations

import argparse
import importlib
import sys
import traceback
from collections.abc import Sequence
from typing import NoReturn, cast

from runner.commands import arguments
from runner.commands.common import Subparsers
from runner.core.errors import Exit, ManifestError, RunnerError
from runner.core.invoked import invoked


class _Parser(argparse.ArgumentParser):
    """Usage errors exit 1, like every other user error: exit 2 means 'points to submit'."""

    def error(self, message: str) -> NoReturn:
        self.print_usage(sys.stderr)
        self.exit(Exit.USER_ERROR, f"{self.prog}: error: {message}\n")


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("beaker-sweep-runner")
    except PackageNotFoundError:
        return "unknown (not installed)"


class _Version(argparse.Action):
    """argparse's `version` action, reading the installed version only when asked: the package
    metadata costs more than the rest of `--help` (importlib.metadata, ~17 ms)."""

    def __call__(self, parser: argparse.ArgumentParser, *args: object, **kwargs: object) -> None:
        print(f"{parser.prog} {_version()}")  # on stdout, as argparse's own action
        parser.exit()


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog=invoked(),
        description="GitOps sweep runner for Beaker: validate, plan, submit and track sweeps.",
    )
    parser.add_argument("--debug", action="store_true", help="show tracebacks for errors")
    parser.add_argument("--version", action=_Version, nargs=0, help="print the version")
    parser.add_argument(
        "-C",
        dest="directory",
        default=".",
        help="run as if started in this directory (the root is found from it; PATHs are relative to it)",
    )
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    arguments.register(cast(Subparsers, commands))  # its parsers are _Parser: usage errors exit 1
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        command = importlib.import_module(f"runner.commands.{args.handler}")
        return int(command.run(args))
    except RunnerError as exc:
        if args.debug:
            traceback.print_exc()
        # Manifest problems are `path:line:col: field: message` lines wherever they are printed.
        plain = isinstance(exc, ManifestError) or "\n" in str(exc)
        print(str(exc) if plain else f"error: {exc}", file=sys.stderr)
        return exc.exit_code
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return Exit.SIGINT
    except Exception as exc:
        if args.debug:
            raise
        print(
            f"unexpected error: {type(exc).__name__}: {exc} (rerun with --debug for a traceback)",
            file=sys.stderr,
        )
        return Exit.UNEXPECTED
