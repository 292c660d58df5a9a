"""Parse the `params:` section into a Space, with every semantic check the schema cannot express."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from runner.core.aims import Aim
from runner.core.errors import Problem
from runner.core.ladder import Ladder
from runner.core.locked import Locked
from runner.core.marks import Document, KeyPath, Mark, field_path
from runner.core.model import (
    BUILTINS,
    DEFAULT_MAX_POINTS,
    Assignment,
    Axis,
    Condition,
    Derived,
    Space,
    param_env_name,
)
from runner.core.sample import Kind, Sample
from runner.core.search import Search, strategy
from runner.core.values import InvalidValue, Value, canonical_json, checked, identity
from runner.manifest import conditions, fidelity, known
from runner.manifest import sample as sampled
from runner.manifest.aims import sweep_aims
from runner.manifest.assignments import check_assignments
from runner.manifest.lock import LockFile, collisions, locked_rows, stale_problem


class _Collector:
    def __init__(self, doc: Document) -> None:
        self.doc = doc
        self.problems: list[Problem] = []

    def add(self, path: KeyPath, message: str, key: bool = False) -> None:
        self.problems.append(Problem.at(self.doc.marks, self.doc.source, path, message, key))

    def mark(self, path: KeyPath) -> Mark:
        return self.doc.marks.value(path)


@dataclass(frozen=True)
class ParsedSpace:
    """The params section: its space and its search (with the lock as read), and problems."""

    space: Space
    problems: list[Problem]
    search: Search


def parse_params(doc: Document, lock: LockFile | None = None) -> ParsedSpace:
    """The params section of a schema-valid document; problems are returned, not raised.

    `lock`: the lock file of a `params.sample` section (`runner.manifest.lock`); its points
    are the first axis, so points appended by a larger `n` come last in manifest order."""
    raw: Mapping[str, Any] = doc.data.get("params") or {}
    out = _Collector(doc)
    base: KeyPath = ("params",)
    axes: list[Axis] = []
    seen: dict[str, KeyPath] = {}

    def claim(name: str, path: KeyPath) -> bool:
        if name in BUILTINS:
            out.add(path, f"{name!r} is reserved (built-ins: {', '.join(BUILTINS)})", key=True)
            return False
        if name in seen:
            out.add(
                path,
                f"parameter {name!r} is defined twice (first at {field_path(seen[name])})",
                key=True,
            )
            return False
        seen[name] = path
        return True

    found: list[tuple[str, Condition]] = []
    axes += _grid_axes(raw.get("grid") or {}, out, claim, found)
    for g, group in enumerate(raw.get("zip") or []):
        axes += _zip_axis(group, (*base, "zip", g), out, claim)

    before = len(out.problems)
    aims = sweep_aims(doc, out.add)
    sample = known.extended(sampled.parse_sample(doc, out.add, claim), aims, doc, out.add)
    conditional = bool(found) or (sample is not None and bool(sample.conditions))
    domains = _domains(axes, sample) if conditional else {}  # a pass over every value
    ladder = fidelity.parse_fidelity(doc, out.add, seen.get, sample)
    for name in fidelity.names_of(ladder):  # so that no derived value takes them
        seen.setdefault(name, fidelity.FIDELITY)
    found_lock = lock.read(sample.names if sample else ()) if lock and (sample or ladder) else None
    sample_axis = _sample_axis(doc, sample, (lock, found_lock), out, len(out.problems) > before)
    if sample_axis is not None:
        axes.insert(0, sample_axis)
        found += [(conditions.SAMPLE, c) for c in sample.conditions] if sample else []
    axes += fidelity.ladder_axes(ladder, doc) if ladder is not None else []
    space = Space(
        axes=tuple(axes),
        exclude=tuple(_assignments(raw.get("exclude") or [], (*base, "exclude"), out)),
        include=tuple(_assignments(raw.get("include") or [], (*base, "include"), out)),
        derived=tuple(_derived(raw.get("derived") or {}, (*base, "derived"), out, claim)),
        max_points=int(raw.get("max_points", DEFAULT_MAX_POINTS)),
        conditions=conditions.check(found, domains, out.add),
        ladder=ladder,
        enqueued=known.enqueued(sample),
    )
    if ladder is not None and aims.first is not None and not out.problems:
        space, stale = _promoted(space, ladder, aims.first, (lock, found_lock), doc)
        out.problems += stale
    check_assignments(space, out.add)
    _check_env_names(seen, out)
    return ParsedSpace(space, out.problems, Search(strategy(sample, ladder), aims, found_lock))


def _promoted(
    space: Space,
    ladder: Ladder,
    aim: Aim,
    lock: tuple[LockFile | None, Locked | None],
    doc: Document,
) -> tuple[Space, list[Problem]]:
    """The space with a successive halving's promoted points (the lock's rungs): a lock edited
    by hand, or rungs of another rung 0, are a problem (`propose` writes them again)."""
    source, found = lock
    unreadable = found is None and source is not None and source.exists()  # edited by hand
    space, stale = fidelity.with_rungs(space, ladder, aim, found.rungs if found else None, doc)
    return space, [fidelity.stale_rungs(doc)] if unreadable else stale


def _grid_axes(
    grid: Mapping[str, Any],
    out: _Collector,
    claim: Callable[[str, KeyPath], bool],
    found: list[tuple[str, Condition]],
) -> list[Axis]:
    """The grid's axes, each conditional one's condition appended to `found`."""
    axes = []
    for name, values, path in _flatten(grid, ("params", "grid")):
        if not claim(name, path):
            continue
        optional = isinstance(values, Mapping)  # a conditional axis: {values: [...], when: {...}}
        if optional:
            condition = conditions.parse(name, values["when"], (*path, "when"), out.add)
            found += [] if condition is None else [(conditions.GRID, condition)]
            values, path = values["values"], (*path, "values")
        column = _column(values, path, out)
        axes.append(Axis((name,), tuple((v,) for v in column), out.mark(path), optional))
    return axes


def _zip_axis(
    group: Mapping[str, Any], gpath: KeyPath, out: _Collector, claim: Callable[[str, KeyPath], bool]
) -> list[Axis]:
    """One zip group as one axis (none when it names no parameter)."""
    # A zip member may repeat a value (gpus: [8, 8]); only whole rows must differ.
    members = []
    for n, v, p in _flatten(group, gpath):
        if isinstance(v, Mapping):
            out.add(
                (*p, "when"),
                "a zip group's members vary together: `when` is not allowed in one (make the"
                " parameter a grid axis)",
                key=True,
            )
        elif claim(n, p):
            members.append((n, _column(v, p, out, unique=False), p))
    if not members:
        return []
    names = tuple(n for n, _, _ in members)
    lengths = {len(col) for _, col, _ in members}
    if len(lengths) > 1:
        sizes = ", ".join(f"{n} has {len(col)}" for n, col, _ in members)
        out.add(gpath, f"zip lists must have equal lengths: {sizes}")
        # Keep the names known (truncated rows) so exclude/include naming them do not cascade.
        rows = tuple(zip(*(col for _, col, _ in members), strict=False))
        return [Axis(names, rows, out.mark(gpath))]
    rows = tuple(zip(*(col for _, col, _ in members), strict=True))
    _no_duplicate_rows(rows, gpath, out)
    return [Axis(names, rows, out.mark(gpath))]


def _domains(
    axes: list[Axis], sample: Sample | None
) -> dict[str, tuple[str, tuple[Value, ...] | None]]:
    """Each parameter's section and the values it takes (None: a sampled range), for `when:`."""
    out: dict[str, tuple[str, tuple[Value, ...] | None]] = {}
    for axis in axes:
        for i, name in enumerate(axis.names):
            out[name] = (conditions.GRID, tuple(v for r in axis.values if (v := r[i]) is not None))
    for d in sample.params if sample is not None else ():
        out[d.name] = (conditions.SAMPLE, d.bounds if d.kind is Kind.CHOICE else None)
    return out


def _sample_axis(
    doc: Document,
    sample: Sample | None,
    lock: tuple[LockFile | None, Locked | None],
    out: _Collector,
    failed: bool,
) -> Axis | None:
    """The locked points of `params.sample` as one axis (like a zip group), or None."""
    if sample is None:
        return None
    path: KeyPath = ("params", "sample")
    if failed:  # the names stay known, so templates do not cascade
        return Axis(sample.declared, (), out.mark(path))
    source, found = lock
    rows = locked_rows(sample, found)
    if rows is None:
        missing = source is None or not source.exists()
        out.problems.append(stale_problem(doc, doc.source, missing))
        return Axis(sample.names, (), out.mark(path))  # names stay known: no cascade
    for first, second in collisions(rows):
        out.add(
            path,
            f"sampled points {first} and {second} are the same after rounding to"
            f" {sample.digits} digits: raise params.sample.digits",
            key=True,
        )
    return Axis(sample.names, rows, out.mark(path))


def _flatten(
    node: Mapping[str, Any], path: KeyPath, prefix: str = ""
) -> Iterator[tuple[str, Any, KeyPath]]:
    """Nested mappings of axes become dotted names: optim: {lr: [...]} is `optim.lr`. A
    conditional axis ({values: [...], when: {...}}) is yielded as its mapping."""
    for key, value in node.items():
        name = f"{prefix}{key}"
        if isinstance(value, Mapping) and "when" not in value:
            yield from _flatten(value, (*path, key), f"{name}.")
        else:
            yield name, value, (*path, key)


def _column(
    values: list[Any], path: KeyPath, out: _Collector, unique: bool = True
) -> tuple[Value, ...]:
    column: list[Value] = []
    seen: dict[str, int] = {}
    for i, raw in enumerate(values):
        try:
            value = checked(raw)
        except InvalidValue as exc:
            out.add((*path, i), str(exc))
            continue
        ident = identity(value)
        if unique and ident in seen:
            out.add((*path, i), f"duplicate value {ident} (also item {seen[ident]})")
            continue
        seen[ident] = i
        column.append(value)
    return tuple(column)


def _no_duplicate_rows(rows: tuple[tuple[Value, ...], ...], path: KeyPath, out: _Collector) -> None:
    seen: dict[str, int] = {}
    for i, row in enumerate(rows):
        ident = canonical_json(list(row))
        if ident in seen:
            out.add(path, f"positions {seen[ident]} and {i} are the same combination {ident}")
        seen.setdefault(ident, i)


def _assignments(items: list[Any], path: KeyPath, out: _Collector) -> Iterator[Assignment]:
    for i, item in enumerate(items):
        pairs: list[tuple[str, Value]] = []
        paths: list[KeyPath] = []
        for name, raw, vpath in _flatten(item, (*path, i)):
            if any(name == other for other, _ in pairs):
                # `optim.lr` and `optim: {lr: ...}` in one assignment: which value would win?
                out.add(vpath, f"parameter {name!r} is assigned twice", key=True)
                continue
            try:
                pairs.append((name, checked(raw)))
                paths.append(vpath)
            except InvalidValue as exc:
                out.add(vpath, str(exc))
        yield Assignment(tuple(pairs), out.mark((*path, i)), tuple(paths))


def _derived(
    node: Mapping[str, Any], path: KeyPath, out: _Collector, claim: Callable[[str, KeyPath], bool]
) -> Iterator[Derived]:
    for name, text in node.items():
        if claim(name, (*path, name)):
            yield Derived(name, text, out.mark((*path, name)))


def _check_env_names(seen: Mapping[str, KeyPath], out: _Collector) -> None:
    by_env: dict[str, str] = {}
    for name, path in seen.items():
        env = param_env_name(name)
        if env in by_env:
            out.add(path, f"{name!r} and {by_env[env]!r} would both be passed as {env}", key=True)
        by_env.setdefault(env, name)
