"""Load a manifest file into a validated Sweep: YAML 1.2, schema, then semantic checks."""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import Enum, auto
from pathlib import Path, PurePosixPath
from typing import Any

from runner.core.errors import ManifestError, Problem
from runner.core.marks import Document, KeyPath
from runner.core.model import Limits, Placement, Priority, Space, StopWhen, Sweep
from runner.core.search import Search
from runner.manifest import clusters
from runner.manifest.advance import parse_advance, promoted
from runner.manifest.bounds import space_problems, too_many_points
from runner.manifest.fidelity import stale_rungs
from runner.manifest.lock import LockFile, lock_path, stale_problem
from runner.manifest.params import ParsedSpace, parse_params
from runner.manifest.schema import schema_problems
from runner.render import Renderer
from runner.render.durations import to_nanoseconds
from runner.yaml12 import load_file

_FILE_STEM = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")


@dataclass(frozen=True)
class Loaded:
    """A checked manifest, parsed once per command: the sweep (its search and lock as read are
    `sweep.search`), the renderer its checks compiled (so nothing compiles twice) and its
    document (so a new lock is checked against it without reading the file again: `relock`)."""

    sweep: Sweep
    renderer: Renderer = field(compare=False, repr=False)
    doc: Document | None = field(default=None, compare=False, repr=False)
    stale: Problem | None = None
    """With `Locks.MAY_BE_STALE`: why the lock does not serve the sample (missing, out of
    date); the sweep then has no sampled point yet (or, its rungs: no promoted point)."""


class Locks(Enum):
    """What `load` asks of a sample's lock."""

    CURRENT = auto()
    """Every command but the two that write it: a missing or stale lock is a problem."""
    MAY_BE_STALE = auto()
    """`lock` and `propose`, which write it: a missing or stale lock is what they mend."""


def load_manifest(path: Path, display: str | None = None) -> Sweep:
    """Parse and check one manifest; raises ManifestError listing every problem found."""
    return load(path, display).sweep


def load(path: Path, display: str | None = None, locks: Locks = Locks.CURRENT) -> Loaded:
    """Parse and check one manifest (and its sample's lock); ManifestError lists every problem."""
    shown = display or str(path)
    doc = load_file(path, shown)
    problems = too_many_points(doc)  # before the checks that cost time per value written
    if problems:
        raise ManifestError(problems)
    problems = schema_problems(doc)
    if problems:
        raise ManifestError(problems + _params_problems_despite(problems, doc, path))
    return _checked(doc, path, LockFile(lock_path(path)), locks)


def relock(loaded: Loaded, path: Path, text: str, locks: Locks = Locks.CURRENT) -> Loaded:
    """The manifest as it would load with `text` as its lock (ManifestError if not valid):
    checked before the lock is written, from the document already parsed. `locks`: whether a
    part of the lock that another step writes next may still be stale."""
    assert loaded.doc is not None
    return _checked(loaded.doc, path, LockFile(lock_path(path), text), locks)


def _checked(doc: Document, path: Path, lock: LockFile, locks: Locks) -> Loaded:
    parsed = _advancing(doc, parse_params(doc, lock))
    stale = (
        {stale_problem(doc, doc.source, missing) for missing in (False, True)}
        if parsed.search.sample is not None
        else set()
    )
    stale |= {stale_rungs(doc)} if parsed.search.halving is not None else set()
    found = [p for p in parsed.problems if p in stale]
    problems = parsed.problems
    if locks is Locks.MAY_BE_STALE:
        problems = [p for p in problems if p not in stale]
    space = parsed.space
    problems += _file_problems(path, doc) + _budget_problems(doc) + _preemption_problems(doc)
    placed = clusters.check(doc, lock)
    problems += placed.problems
    if placed.stale is not None and locks is Locks.CURRENT:
        problems.append(placed.stale)
    if not problems:
        problems += space_problems(doc, space)
    sweep = _build(doc, doc.source, space, placed, parsed.search)
    try:
        renderer = Renderer(sweep)  # compiles every template: unknown names, bad syntax fail here
    except ManifestError as exc:
        problems += exc.problems
    if problems:
        raise ManifestError(problems)
    stale_lock = found[0] if found else None
    return Loaded(sweep, renderer, doc, stale_lock)


def _advancing(doc: Document, parsed: ParsedSpace) -> ParsedSpace:
    """The search with who approves its rounds (`advance:`) and when its rungs promote, and
    the problems of `advance:`."""
    said: list[Problem] = []

    def add(at: KeyPath, text: str, key: bool) -> None:
        said.append(Problem.at(doc.marks, doc.source, at, text, key))

    advance = parse_advance(doc, parsed.search, add)
    strategy = promoted(doc, parsed.search.strategy)
    search = dataclasses.replace(parsed.search, strategy=strategy, advance=advance)
    return dataclasses.replace(parsed, search=search, problems=parsed.problems + said)


def _build(
    doc: Document, shown: str, space: Space, placed: clusters.Selected, search: Search
) -> Sweep:
    data = doc.data
    beaker = data["beaker"]
    named = tuple(beaker.get("clusters", ()))
    return Sweep(
        path=PurePosixPath(shown),
        name=data["name"],
        description=data.get("description", ""),
        revision=data.get("revision", 0),
        draft=data.get("draft", False),
        live=data.get("live", False),
        placement=Placement(
            workspace=beaker["workspace"],
            clusters=named if placed.selector is None else tuple(c.name for c in placed.clusters),
            hostnames=tuple(beaker.get("hostnames", ())),
            budget=beaker.get("budget"),
            priority=beaker.get("priority"),
            preemptible=beaker.get("preemptible"),
            retries=beaker.get("retries"),
            timeout=beaker.get("timeout"),
            group=beaker.get("group", True),
            min_runtime=beaker.get("min_runtime"),
            auto_resume=beaker.get("auto_resume"),
            expected_runtime=beaker.get("expected_runtime"),
            selector=placed.selector,
            locked=placed.clusters,
        ),
        name_template=data.get("experiment_name"),
        tasks=tuple(data["tasks"]),
        space=space,
        marks=doc.marks,
        limits=Limits(
            data.get("max_running"),
            data.get("max_restarts"),
            data.get("max_failures"),
            _target(data.get("stop_when")),
            data.get("max_preemptions"),
        ),
        warnings=(*_warnings(doc), *([placed.note] if placed.note else [])),
        search=search,
    )


def _target(raw: Mapping[str, Any] | None) -> StopWhen | None:
    """`stop_when`, which the schema has checked: a metric and exactly one of below, above."""
    if raw is None:
        return None
    below = "below" in raw
    return StopWhen(raw["metric"], float(raw["below" if below else "above"]), below)


def _problem(doc: Document, path: KeyPath, message: str) -> Problem:
    return Problem.at(doc.marks, doc.source, path, message)


def _file_problems(path: Path, doc: Document) -> list[Problem]:
    if path.suffix in (".yaml", ".yml") and _FILE_STEM.match(path.stem):
        return []
    message = (
        f"file name {path.name!r} is not allowed: use letters, digits, '.', '_' and '-', start with a"
        " letter or digit, and end in .yaml or .yml"
    )
    return [Problem(doc.source, 1, 1, "", message)]


def _params_problems_despite(schema: list[Problem], doc: Document, path: Path) -> list[Problem]:
    """The params checks, when the schema's problems lie elsewhere: one round of fixes, not two."""
    if any(p.field == "(root)" or p.field.startswith("params") for p in schema):
        return []
    if not isinstance(doc.data, Mapping) or "params" not in doc.data:
        return []
    parsed = parse_params(doc, LockFile(lock_path(path)))
    return parsed.problems or space_problems(doc, parsed.space)


def _warnings(doc: Document) -> list[Problem]:
    return _preemptible_warnings(doc) + _code_image_warnings(doc) + _urgent_warnings(doc)


SHORT_JOB = 2 * 3600 * 10**9
"""Under this timeout (2 h), a non-preemptible urgent job is the one that waited a day."""


def _urgent_warnings(doc: Document) -> list[Problem]:
    """`priority: urgent` with a non-preemptible `min_runtime` (or `preemptible: false`) and a
    timeout under 2 h: Beaker finds it whole free nodes it may not preempt from, where the same
    job preemptible starts in minutes (open-instruct#1792)."""
    beaker = doc.data["beaker"]
    held = "min_runtime" if beaker.get("min_runtime") else None
    held = held or ("preemptible" if beaker.get("preemptible") is False else None)
    timeout = beaker.get("timeout")
    if beaker.get("priority") != Priority.URGENT or held is None or timeout is None:
        return []
    if to_nanoseconds(timeout) >= SHORT_JOB or (
        held == "min_runtime" and not to_nanoseconds(beaker[held])
    ):
        return []
    message = (
        f"warning: an urgent job that is not preemptible ({held}) with a timeout of {timeout}"
        " (under 2h) can wait a day for nodes where the same job preemptible starts in minutes"
        f" (open-instruct#1792): drop {held}, or run it at high"
    )
    return [_problem(doc, ("beaker", held), message)]


_NO_GIT = re.compile(r"(^|/)(alpine|busybox|distroless)(:|$)|:[^/]*(slim|alpine)")
"""Docker images without git: Debian's -slim and Alpine variants, busybox, distroless."""


def _code_image_warnings(doc: Document) -> list[Problem]:
    """`code:` clones the commit with git in the container: an image known to lack it fails
    there, on Beaker after the merge. Say so now (a warning: an image may add git on top)."""
    out = []
    for i, task in enumerate(doc.data["tasks"]):
        image = task["image"].get("docker")
        if "code" in task and isinstance(image, str) and _NO_GIT.search(image):
            message = (
                f"warning: {image} has no git, which code: needs to fetch the commit (the"
                " task would fail at its start); use an image with git, such as python:3.12"
            )
            out.append(_problem(doc, ("tasks", i, "image", "docker"), message))
    return out


def _preemptible_warnings(doc: Document) -> list[Problem]:
    if "preemptible" not in doc.data["beaker"]:
        return []
    message = (
        "warning: preemptible is deprecated (beaker-py); it still works, but write min_runtime"
        " (e.g. 2h: not preempted before) and auto_resume (false: not resumed after) instead:"
        " preemptible: true (preemptible from the start) is no min_runtime, preemptible: false"
        " (never preempted) a min_runtime as long as the timeout"
    )
    return [_problem(doc, ("beaker", "preemptible"), message)]


def _preemption_problems(doc: Document) -> list[Problem]:
    beaker = doc.data["beaker"]
    newer = [k for k in ("min_runtime", "auto_resume") if k in beaker]
    if "preemptible" not in beaker or not newer:
        return []
    message = (
        f"preemptible cannot be combined with {' and '.join(newer)} (Beaker refuses a spec"
        " with both); drop preemptible"
    )
    return [_problem(doc, ("beaker", "preemptible"), message)]


def _budget_problems(doc: Document) -> list[Problem]:
    """Beaker refuses every create without a budget (`spec.budget is required`): say so now."""
    data = doc.data
    if data.get("draft") is True or "budget" in data["beaker"]:
        return []
    message = (
        "missing required field 'budget': Beaker refuses experiments without one; add"
        " `budget: org/name` (only a draft may leave it out)"
    )
    return [_problem(doc, ("beaker",), message)]
