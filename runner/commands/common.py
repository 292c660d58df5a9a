"""Arguments and helpers shared by several subcommands."""

from __future__ import annotations

import argparse
import dataclasses
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeAlias, TypeVar

from runner.core.errors import ManifestError

if TYPE_CHECKING:  # only for annotations: importing the catalog loads the whole pipeline
    from _typeshed import DataclassInstance

    from runner.manifest import Locks
    from runner.observe.model import Observation
    from runner.plan.catalog import Catalog

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


def load_catalog(directory: Path, paths: Sequence[str], locks: Locks | None = None) -> Catalog:
    """The manifests named (or all), each parsed once; `locks`: what is asked of a sample's
    lock (by default, that it is current)."""
    from runner.manifest import Locks
    from runner.plan import catalog

    return catalog.load(directory, paths, locks or Locks.CURRENT)


def observed_sweeps(directory: Path, paths: Sequence[str], backend: str) -> list[Observation]:
    """`status` and `report`: every sweep named (or all) observed once, from one bulk look each
    (`runner.observe.sweeps`); a manifest problem raises before the backend is asked anything."""
    from runner.backends import Capability, open_backend
    from runner.observe import sweeps
    from runner.render.code import uses_code
    from runner.repo import gitrepo

    cat = load_catalog(directory, paths)
    raise_if_problems(cat)
    opened = open_backend(backend, cat.root, lambda text: None)  # falls back quietly
    head = ""  # local `code:` points say when they ran another commit than this
    if Capability.RERUNS in opened.capabilities and any(uses_code(s) for s in cat.sweeps):
        head = gitrepo.head_commit(cat.root).replace("uncommitted", "")
    try:
        return sweeps.observe(cat, opened, head)
    finally:
        opened.close()


def report_problems(cat: Catalog) -> bool:
    """Print every manifest problem (and warning) to stderr; True when there were problems."""
    warnings = [w for sweep in cat.sweeps for w in sweep.warnings]
    for problem in sorted([*cat.problems, *warnings]):
        print(problem, file=sys.stderr)
    return bool(cat.problems)


def raise_if_problems(cat: Catalog) -> None:
    if cat.problems:
        raise ManifestError(list(cat.problems))


def write_output(text: str, output: str | None) -> None:
    """The report to --output FILE, or to stdout."""
    if output:
        Path(output).write_text(text, encoding="utf-8")
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
