"""`when:` conditions: parsed from the manifest and checked against the parameters they name.

A conditional parameter exists in a point only where its condition holds. The checks here are
the ones the schema cannot make: the names a condition reads must be parameters, the values it
asks for must be values those parameters take, and conditions may chain but never loop.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any

from runner.core.marks import KeyPath
from runner.core.model import Condition, in_order
from runner.core.values import InvalidValue, Value, checked, identity

Add = Callable[[KeyPath, str, bool], None]
"""Where problems go: (document path, message, whether the path names a key)."""

GRID, SAMPLE = "grid", "sample"


def parse(name: str, raw: Mapping[str, Any], path: KeyPath, add: Add) -> Condition | None:
    """The `when:` mapping at `path` (schema-valid) as a Condition; None after a problem."""
    pairs: list[tuple[str, tuple[Value, ...]]] = []
    for on, wanted in raw.items():
        listed = wanted if isinstance(wanted, list) else [wanted]
        try:
            pairs.append((on, tuple(checked(v) for v in listed)))
        except InvalidValue as exc:
            add((*path, on), str(exc), False)
            return None
    return Condition(name, tuple(pairs), path)


def check(
    conditions: Sequence[tuple[str, Condition]],
    domains: Mapping[str, tuple[str, tuple[Value, ...] | None]],
    add: Add,
) -> tuple[Condition, ...]:
    """The conditions that pass every check, in dependency order (parents first).

    `conditions`: (section, condition), section GRID or SAMPLE. `domains`: each parameter's
    section and the values it takes (None for a sampled range)."""
    good = [c for section, c in conditions if _names_ok(section, c, domains, add)]
    looped = set(_cycles(good, add))
    return in_order(tuple(c for c in good if c.name not in looped))


def _names_ok(
    section: str,
    condition: Condition,
    domains: Mapping[str, tuple[str, tuple[Value, ...] | None]],
    add: Add,
) -> bool:
    ok = True
    known = ", ".join(domains) or "none"
    for on, wanted in condition.when:
        where: KeyPath = (*condition.path, on)
        if on not in domains:
            add(where, f"the condition names unknown parameter {on!r} (parameters: {known})", True)
            ok = False
            continue
        kind, values = domains[on]
        if section == SAMPLE and kind != SAMPLE:
            add(
                where,
                f"a sampled parameter's condition may name only sampled parameters: {on!r} is"
                " not one (the lock draws its points without the grid)",
                True,
            )
            ok = False
        elif values is None:
            add(
                where,
                f"{on!r} is sampled from a range: a condition needs a parameter with listed"
                " values (a grid axis or a choice)",
                True,
            )
            ok = False
        else:
            taken = {identity(v) for v in values}
            shown = ", ".join(identity(v) for v in values)
            for i, value in enumerate(wanted):
                if identity(value) not in taken:
                    add(
                        (*where, i) if len(wanted) > 1 else where,
                        f"{identity(value)} is not a value of {on!r} (values: {shown})",
                        False,
                    )
                    ok = False
    return ok


def _cycles(conditions: Sequence[Condition], add: Add) -> Iterator[str]:
    """The names of every condition on a cycle, each cycle reported once at its first member."""
    by_name = {c.name: c for c in conditions}
    state: dict[str, int] = {}  # 1: on the current path, 2: done

    def visit(name: str, trail: list[str]) -> Iterator[str]:
        state[name] = 1
        for on in by_name[name].on:
            if on not in by_name:
                continue
            if state.get(on) == 1:
                loop = [*trail[trail.index(on) :], name, on] if on in trail else [name, on]
                first = by_name[loop[0]]
                add(first.path, "conditions form a cycle: " + " -> ".join(loop), True)
                yield from loop
            elif on not in state:
                yield from visit(on, [*trail, name])
        state[name] = 2

    for c in conditions:
        if c.name not in state:
            yield from visit(c.name, [])
