"""Arguments and helpers shared by several subcommands."""

from __future__ import annotations

import argparse
import dataclasses
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeAlias, TypeVar

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
