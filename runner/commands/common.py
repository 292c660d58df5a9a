"""Arguments and helpers shared by several subcommands."""

from __future__ import annotations

import argparse
import dataclasses
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeAlias, TypeVar

from runner.core.defaults import DEFAULT_MAX_UNREACHABLE
from runner.core.durations import seconds_of
from runner.core.errors import Exit, RunnerError
from runner.core.output import write_text

if TYPE_CHECKING:  # only for annotations: importing the catalog loads the whole pipeline
    from _typeshed import DataclassInstance


Subparsers: TypeAlias = "argparse._SubParsersAction[argparse.ArgumentParser]"
FORMATS = ("table", "markdown", "json")
BACKEND_CHOICES = ("auto", "beaker", "local")
"""`--backend`: auto, or a `runner.backends.BackendKind` (spelled here: `--help` loads no backend)."""
Args = TypeVar("Args", bound="DataclassInstance")


def args_from(
    namespace: argparse.Namespace,
    into: type[Args],
    renamed: Mapping[str, str] | None = None,
    **given: Any,
) -> Args:
    """A command's arguments (the dataclass `into`) from argparse's namespace: each field from
    the attribute of its name, or of `renamed[field]` where the two differ; a list (`nargs`) as
    a tuple. Values worked out from several attributes come in `given`. A field with neither an
    attribute nor a given value is a mistake in the command, raised, not hidden by its default."""
    values = dict(given)
    for field in dataclasses.fields(into):
        if field.name in values or not field.init:
            continue
        attribute = (renamed or {}).get(field.name, field.name)
        if not hasattr(namespace, attribute):
            raise TypeError(f"{into.__name__}.{field.name}: the command line has no {attribute!r}")
        value = getattr(namespace, attribute)
        values[field.name] = tuple(value) if isinstance(value, list) else value
    return into(**values)


def add_paths(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "paths",
        nargs="*",
        metavar="PATH",
        help="manifests or directories (default: every manifest under sweeps/)",
    )


def write_output(text: str, output: str | None) -> None:
    """The report to --output FILE (a RunnerError where it cannot be written), or to stdout."""
    if output:
        write_text(Path(output), text)
    else:
        sys.stdout.write(text)


def stderr(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


def split_points(
    directory: str, words: Sequence[str], paths: Sequence[str]
) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(points, paths): `--points NAME... PATH` reads PATH as one more name (argparse takes
    every word after --points), so a manifest (`.yaml`, `.yml`, a `/`, an existing directory)
    among the names is a PATH. Point names (experiment names, key prefixes) are none of those."""
    points: list[str] = []
    found = list(paths)
    for word in words:
        is_dir = (Path(directory) / word).is_dir()
        path = word.endswith((".yaml", ".yml")) or "/" in word or is_dir
        (found if path else points).append(word)
    return tuple(points), tuple(found)


DURATIONS = "90s, 5m, 1h30m, or seconds"


def add_bounds(parser: argparse.ArgumentParser, timeout: str | None) -> None:
    """`--timeout` (unless `timeout` is None: the command has its own) and `--max-unreachable`,
    every command that talks to Beaker's (`timeout`: its default, in words). Both are
    durations, parsed by the command (`duration`): a bad one is one line, exit 1."""
    if timeout is not None:
        parser.add_argument(
            "--timeout",
            metavar="DURATION",
            help=f"the command's deadline ({DURATIONS}): exit {int(Exit.INCOMPLETE)} if Beaker"
            f" has not answered by then (default: {timeout})",
        )
    parser.add_argument(
        "--max-unreachable",
        metavar="DURATION",
        help="give up (exit 5) once Beaker has been unreachable, or left a call unanswered, this"
        f" long (default {DEFAULT_MAX_UNREACHABLE:.0f}s)",
    )


def duration(option: str, text: str | None) -> float | None:
    """A duration option in seconds (None when not given); a RunnerError (one line, exit 1)
    for one that is not a duration."""
    if text is None:
        return None
    try:
        return seconds_of(text)
    except ValueError:
        raise RunnerError(f"{option} {text!r}: not a duration ({DURATIONS})") from None
