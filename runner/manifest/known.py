"""What a search starts from and weighs, from `params.sample`: known points (`enqueue`), other
sweeps to learn from (`seed_from`), its objectives and constraints (`runner.manifest.aims`, the sweep's).

`enqueue` lists points someone knows are worth running (a default that works): each is checked
against the space as a drawn point would be (every parameter in its bounds or among its choices,
a conditional one present exactly where its condition holds, nothing else), and they become the
first points of the lock, as written, byte for byte. `seed_from` names sweeps of this repository
whose finished points `propose` gives TPE or GP as prior trials (`runner.locking.seeding`); that
each names a sweep that exists and may report the metric is checked with the catalog
(`runner.plan.sources`).
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping
from typing import Any

from runner.core.aims import Aims
from runner.core.marks import Document, KeyPath
from runner.core.model import Cell, in_order
from runner.core.sample import Commits, Distribution, Kind, Sample, SeedFrom, row_identity
from runner.core.values import InvalidValue, Value, checked, identity
from runner.manifest.conditions import Add


def extended(sample: Sample | None, aims: Aims, doc: Document, add: Add) -> Sample | None:
    """The sample with its known points and warm-start sources (each prior point copied with
    the sweep's `aims`' metrics)."""
    if sample is None:
        return None
    raw = doc.data["params"]["sample"]
    base: KeyPath = ("params", "sample")
    seeds = tuple(
        SeedFrom(item["sweep"], Commits(item.get("commit", Commits.SAME)))
        for item in raw.get("seed_from", ())
    )
    if seeds and not sample.adaptive:
        add(
            (*base, "seed_from"),
            f"method {sample.method} draws its points without looking at results: seed_from"
            " needs an adaptive method (tpe or gp)",
            True,
        )
    if aims.pareto and not sample.adaptive:
        add(
            (*base, "metric"),
            f"method {sample.method} draws its points without looking at results: two or more"
            " objectives need an adaptive method (tpe or gp)",
            False,
        )
    rows = _enqueue(raw.get("enqueue", ()), sample, (*base, "enqueue"), add)
    if len(rows) > sample.n:
        add((*base, "n"), f"n={sample.n} is fewer than the {len(rows)} enqueued point(s)", False)
    seeded = aims.metrics if seeds else ()
    return dataclasses.replace(sample, enqueue=rows, seed_from=seeds, seeded=seeded)


def enqueued(sample: Sample | None) -> tuple[tuple[tuple[str, Value], ...], ...]:
    """Each known point's sampled values (an absent conditional parameter left out)."""
    if sample is None:
        return ()
    return tuple(
        tuple((n, v) for n, v in zip(sample.names, row, strict=True) if v is not None)
        for row in sample.enqueue
    )


def _enqueue(
    raw: list[Mapping[str, Any]], sample: Sample, base: KeyPath, add: Add
) -> tuple[tuple[Cell, ...], ...]:
    """The known points, each checked against the space, as rows in `sample.names` order."""
    rows: list[tuple[Cell, ...]] = []
    seen: dict[str, int] = {}
    for i, point in enumerate(raw):
        row = _point(point, sample, (*base, i), add)
        if row is None:
            continue
        ident = row_identity(row)
        if ident in seen:
            add((*base, i), f"the same point as enqueue[{seen[ident]}]", False)
            continue
        seen[ident] = i
        rows.append(row)
    return tuple(rows)


def _point(
    point: Mapping[str, Any], sample: Sample, path: KeyPath, add: Add
) -> tuple[Cell, ...] | None:
    """One known point as a row; None (each problem said) when it is not in the space."""
    extra = [name for name in point if name not in sample.names]
    for name in extra:
        known = ", ".join(sample.names)
        add((*path, name), f"{name!r} is not a sampled parameter (sampled: {known})", True)
    row, problems = _misfits(point, sample)
    for written, problem in problems:
        add(path if written is None else (*path, written), problem, written is not None)
    return None if extra or problems else row


def placed(sample: Sample, params: Mapping[str, Any]) -> tuple[tuple[Cell, ...] | None, str]:
    """Another sweep's point in this space: its row (parameters this search does not sample
    are not read), or None and why not."""
    row, problems = _misfits(params, sample)
    if not problems:
        return row, ""
    name, problem = problems[0]
    return None, problem if name is None else f"{name}: {problem}"


def _misfits(
    point: Mapping[str, Any], sample: Sample
) -> tuple[tuple[Cell, ...], list[tuple[str | None, str]]]:
    """The point's row, and each way it is not in the space: (the parameter written, or None
    for one missing), the problem."""
    problems: list[tuple[str | None, str]] = []
    given: dict[str, Cell] = {}
    for d in in_order(sample.params):
        if problem := _presence(d, given, point):
            problems.append((d.name if d.name in point else None, problem))
            continue
        if d.name not in point:
            continue
        value, problem = _value(d, point[d.name])
        if problem:
            problems.append((d.name, problem))
        given[d.name] = value
    return tuple(given.get(n) for n in sample.names), problems


def _presence(d: Distribution, given: Mapping[str, Cell], point: Mapping[str, Any]) -> str:
    """Why `d` may not be (or must be) in the point, given its parents' values; empty if fine."""
    present, written = d.when is None or d.when.holds(given), d.name in point
    if present and not written:
        return f"missing {d.name!r} (every sampled parameter that applies has a value)"
    if written and not present:
        assert d.when is not None
        return f"{d.name!r} exists only {d.when}: leave it out of this point"
    return ""


def _value(d: Distribution, raw: Any) -> tuple[Value | None, str]:
    """The value as written (its type kept), or why it is not in `d`."""
    try:
        value = checked(raw)
    except InvalidValue as exc:
        return None, str(exc)
    if d.kind is Kind.CHOICE:
        if identity(value) in {identity(b) for b in d.bounds}:
            return value, ""
        return None, f"{value!r} is not one of {list(d.bounds)}"
    low, high = d.bounds
    number = isinstance(value, int | float) and not isinstance(value, bool)
    if not number or (d.kind.integer and not isinstance(value, int)):
        kind = "an integer" if d.kind.integer else "a number"
        return None, f"{value!r} is not {kind} ({d.kind}: [{low}, {high}])"
    assert isinstance(value, int | float)
    if not (math.isfinite(value) and float(low) <= value <= float(high)):
        return None, f"{value} is outside [{low}, {high}] ({d.kind})"
    return value, ""
