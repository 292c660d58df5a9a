"""The checks of `exclude` and `include` against the space they name: each assigns known
parameters (an exclude, values their axes take), an include every axis parameter (a conditional
one exactly where it applies; a successive halving's budget and rung are the rung's own)."""

from __future__ import annotations

from collections.abc import Mapping

from runner.core.marks import KeyPath
from runner.core.model import Space
from runner.core.values import Value, identity
from runner.manifest.conditions import Add


def check_assignments(space: Space, add: Add) -> None:
    """Every problem of the space's excludes and includes, to `add(path, message, key)`."""
    if not space.exclude and not space.include:
        return  # the domain below costs a pass over every row of every axis
    names = space.axis_names
    domain = {
        n: {identity(v) for row in axis.values if (v := row[i]) is not None}
        for axis in space.axes
        for i, n in enumerate(axis.names)
    }
    known = ", ".join(names) or "none"
    ladder = space.ladder.names if space.ladder is not None else ()
    for kind, items in (("exclude", space.exclude), ("include", space.include)):
        for i, item in enumerate(items):
            ipath: KeyPath = ("params", kind, i)
            for (name, value), vpath in zip(item.values, item.paths, strict=True):
                if name not in domain:
                    add(vpath, f"unknown parameter {name!r} (axes: {known})", True)
                elif kind == "include" and name in ladder:
                    said = f"{name} is the halving's own: the rungs set it (rung 0 at min)"
                    add(vpath, f"{said}; take it out of the include", True)
                elif kind == "exclude" and identity(value) not in domain[name]:
                    add(vpath, f"{identity(value)} is not a value of axis {name!r}", False)
            if kind == "include":
                _check_include(space, item.as_dict(), ipath, add)


def _check_include(space: Space, given: Mapping[str, Value], path: KeyPath, add: Add) -> None:
    """An include assigns every axis parameter, a conditional one exactly where it applies."""
    conditional = {c.name: c for c in space.conditions}
    ladder = space.ladder.names if space.ladder is not None else ()  # set by the rung
    missing = [n for n in space.axis_names if n not in (*given, *conditional, *ladder)]
    if missing:
        add(path, f"include must assign every axis parameter; missing {', '.join(missing)}", False)
    for name, condition in conditional.items():
        if (name in given) != condition.holds(given):
            verb = "assigns" if name in given else "misses"
            add(path, f"include {verb} {name!r}, which exists exactly {condition}", False)
