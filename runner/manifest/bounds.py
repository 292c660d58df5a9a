"""How many points a manifest has, checked before and after the values are: the `max_points`
refusal from list lengths alone (a refused grid of a million points costs nothing), then the
exact count where conditional axes make the product only a bound, and excludes and includes
that match nothing or repeat a point."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from runner.core.errors import Problem
from runner.core.marks import Document, KeyPath
from runner.core.model import DEFAULT_MAX_POINTS, Space
from runner.core.space import count_points, duplicate_includes, unmatched_excludes, upper_bound


def _problem(doc: Document, path: KeyPath, message: str) -> Problem:
    return Problem.at(doc.marks, doc.source, path, message)


def too_many_points(doc: Document) -> list[Problem]:
    """The max_points refusal, from list lengths alone, before anything looks at each value.

    The schema and parameter checks cost time in proportion to the values written, which a
    refused grid of a million points should not spend. For a well-formed params section this is
    exactly `upper_bound`; for anything else it says nothing and the full checks report it.
    """
    params = doc.data.get("params")
    if not isinstance(params, Mapping):
        return []
    limit = params.get("max_points", DEFAULT_MAX_POINTS)
    grid, groups, include = params.get("grid", {}), params.get("zip", []), params.get("include", [])
    if type(limit) is not int or limit < 1 or not isinstance(groups, list):
        return []
    if not isinstance(include, list):
        return []
    lengths = _lengths(grid)
    sample = params.get("sample")
    if isinstance(sample, Mapping) and "n" in sample:
        n = sample["n"]
        lengths.append(n if type(n) is int and n >= 1 else None)
    for group in groups:
        sizes = set(_lengths(group) or [None])
        lengths.append(sizes.pop() if len(sizes) == 1 else None)
    if None in lengths:
        return []
    bound = math.prod(n for n in lengths if n is not None) + len(include)
    return _max_points_problem(doc, bound, limit, "at least " if _conditional(grid) else "")


def _conditional(node: Any) -> bool:
    return isinstance(node, Mapping) and any(
        isinstance(v, Mapping) and ("when" in v or _conditional(v)) for v in node.values()
    )


def _lengths(node: Any) -> list[int | None]:
    """Lengths of the axes of a grid or zip mapping (nested mappings included); None: malformed."""
    if not isinstance(node, Mapping):
        return [None]
    out: list[int | None] = []
    for value in node.values():
        if isinstance(value, Mapping) and "when" in value:
            # A conditional axis: at least one point (absent) for each of the others' points, so
            # the bound counts it once and refuses only what is too many whatever the conditions.
            out.append(1 if _length(value.get("values")) else None)
        else:
            out += _lengths(value) if isinstance(value, Mapping) else [_length(value)]
    return out


def _length(value: Any) -> int | None:
    return len(value) if isinstance(value, list) and value else None


def _max_points_problem(doc: Document, bound: int, limit: int, word: str = "") -> list[Problem]:
    if bound <= limit:
        return []
    where = ("params", "max_points") if "max_points" in doc.data.get("params", {}) else ("params",)
    return [
        _problem(
            doc,
            where,
            f"the sweep has {word}{bound} points (before exclusions), more than max_points"
            f" {limit}; raise params.max_points if you mean it",
        )
    ]


def _conditional_count(space: Space) -> int:
    """The points of a space with conditional grid axes, counted (those axes make the product
    only a bound); counted only when the other axes alone are not already too many."""
    fixed = math.prod(len(a.values) for a in space.axes if not a.optional) + len(space.include)
    return fixed if fixed > space.max_points else count_points(replace(space, exclude=()))


def space_problems(doc: Document, space: Space) -> list[Problem]:
    bound = upper_bound(space)
    if bound > space.max_points and space.conditions:
        bound = _conditional_count(space)
    too_many = _max_points_problem(doc, bound, space.max_points)
    if too_many:
        return too_many
    problems = [
        _problem(doc, ("params", "exclude", i), "matches no point of the grid")
        for i in unmatched_excludes(space)
    ]
    problems += [
        _problem(doc, ("params", "include", i), f"duplicate point: {reason}")
        for i, reason in duplicate_includes(space)
    ]
    return problems
