"""Expansion of a Space into points: lazily, in the order written, last axis fastest."""

from __future__ import annotations

import dataclasses
import itertools
import math
from collections.abc import Iterator

from runner.core.model import Axis, Cell, Point, Space
from runner.core.values import Value, canonical_json, identity


def upper_bound(space: Space) -> int:
    """Points before exclusions: computed from axis lengths alone, never by expanding."""
    product = math.prod(len(axis.values) for axis in space.axes)
    return product + len(space.include) + len(space.promoted)


def iter_points(space: Space) -> Iterator[Point]:
    """Grid points minus exclusions, then the included points. Constant memory.

    A conditional grid axis also offers "absent" (first); a combination is kept where each
    conditional parameter is present exactly when its condition holds, so a grid with
    `optim: [adamw, sgd]` and `momentum` only for sgd has (adamw), (sgd, m1), (sgd, m2).

    A successive halving's later rungs (`promoted`) come last, in the lock's order."""
    yield from _configurations(space)
    yield from space.promoted


def _configurations(space: Space) -> Iterator[Point]:
    """The grid, minus exclusions, then the included points (a halving's rung 0)."""
    names = space.axis_names
    if not (space.exclude or space.conditions):
        plain = _plain_columns(space)
        if plain is not None:  # a grid of single values: nothing to filter, nothing absent
            for row in itertools.product(*plain):
                yield Point(tuple(zip(names, row, strict=True)))
            yield from _included(space)
            return
    excludes = [
        tuple((names.index(name), identity(value)) for name, value in item.values)
        for item in space.exclude
    ]
    columns = [  # identities only where an exclude needs them: a sampled axis has many rows
        [(row, tuple(_ident(v) for v in row) if excludes else ()) for row in _rows(axis)]
        for axis in space.axes
    ]
    conditions = space.conditions
    for combo in itertools.product(*columns):
        values = tuple(v for row, _ in combo for v in row)
        if excludes:
            idents = tuple(i for _, row_ids in combo for i in row_ids)
            if any(all(idents[i] == ident for i, ident in rule) for rule in excludes):
                continue
        if conditions:
            given = dict(zip(names, values, strict=True))
            if any((given[c.name] is not None) != c.holds(given) for c in conditions):
                continue
        yield Point(tuple((n, v) for n, v in zip(names, values, strict=True) if v is not None))
    yield from _included(space)


def _included(space: Space) -> Iterator[Point]:
    names = space.axis_names
    rung_zero = dict(space.ladder.at(0)) if space.ladder is not None else {}
    for i, item in enumerate(space.include):
        assigned = {**rung_zero, **item.as_dict()}
        yield Point(tuple((n, assigned[n]) for n in names if n in assigned), origin=f"include[{i}]")


def _plain_columns(space: Space) -> list[list[Value]] | None:
    """Each axis's values, when every axis is one parameter that is never absent."""
    if any(len(axis.names) != 1 or axis.optional for axis in space.axes):
        return None
    columns = []
    for axis in space.axes:
        column = [value for row in axis.values if (value := row[0]) is not None]
        if len(column) != len(axis.values):
            return None
        columns.append(column)
    return columns


def _rows(axis: Axis) -> tuple[tuple[Cell, ...], ...]:
    return ((None,), *axis.values) if axis.optional else axis.values


def _ident(value: Cell) -> str:
    """A value's identity; "" for absent, which no value's identity (JSON) equals."""
    return "" if value is None else identity(value)


def count_points(space: Space) -> int:
    """Exact number of points, streaming (no list of points is built)."""
    return sum(1 for _ in iter_points(space))


def _consistent(
    axis_rows: list[tuple[str, ...]], names: tuple[str, ...], given: dict[str, str]
) -> bool:
    """Whether some row of an axis agrees with every assigned value that belongs to this axis."""
    checks = [(i, given[n]) for i, n in enumerate(names) if n in given]
    return any(all(row[i] == ident for i, ident in checks) for row in axis_rows)


def _identities(space: Space) -> list[list[tuple[str, ...]]]:
    return [[tuple(_ident(v) for v in row) for row in _rows(axis)] for axis in space.axes]


def unmatched_excludes(space: Space) -> list[int]:
    """Indices of exclude rules that remove no grid point (a typo, most likely)."""
    if not space.exclude:
        return []
    if space.conditions:  # a rule may agree with every axis and still name no point
        return _unmatched_among_points(space)
    rows = _identities(space)
    out = []
    for i, rule in enumerate(space.exclude):
        given = {name: identity(value) for name, value in rule.values}
        if not all(
            _consistent(r, axis.names, given) for r, axis in zip(rows, space.axes, strict=True)
        ):
            out.append(i)
    return out


def _unmatched_among_points(space: Space) -> list[int]:
    """`unmatched_excludes` by going through the points: those of a conditional grid are not
    every combination of its axes' values."""
    rules = [{n: identity(v) for n, v in rule.values} for rule in space.exclude]
    left = set(range(len(rules)))
    for point in iter_points(dataclasses.replace(space, exclude=(), include=(), promoted=())):
        given = {n: identity(v) for n, v in point.params}
        left -= {i for i in left if all(given.get(n) == v for n, v in rules[i].items())}
        if not left:
            break
    return sorted(left)


def duplicate_includes(space: Space) -> list[tuple[int, str]]:
    """(index, reason) for each include that repeats a grid point or an earlier include."""
    if not space.include:
        return []
    rows = _identities(space)
    seen: dict[str, int] = {}
    out = []
    for i, item in enumerate(space.include):
        given = {name: identity(value) for name, value in item.values}
        ident = canonical_json(sorted(given.items()))
        in_grid = all(
            _consistent(r, axis.names, given) for r, axis in zip(rows, space.axes, strict=True)
        )
        excluded = any(
            all(given.get(name) == identity(value) for name, value in rule.values)
            for rule in space.exclude
        )
        if ident in seen:
            out.append((i, f"repeats include[{seen[ident]}]"))
        elif space.axes and in_grid and not excluded:
            out.append((i, "is already a point of the grid"))
        seen.setdefault(ident, i)
    return out
