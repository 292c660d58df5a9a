"""A conditional parameter's `when:` as a value, and the order conditions are checked in: each
after the parameters it reads (acyclic: `runner.manifest.conditions` checks it on load)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Protocol, TypeVar

from runner.core.marks import KeyPath
from runner.core.values import Value, identity

Cell = Value | None
"""A parameter's value in one row of an axis: None where a conditional parameter is absent."""


@dataclass(frozen=True)
class Condition:
    """`when:` of a conditional parameter: it exists in a point only where this holds, that is
    where every parameter named has one of the values listed (absent never matches)."""

    name: str
    when: tuple[tuple[str, tuple[Value, ...]], ...]
    path: KeyPath
    """Where `when:` is written, for messages."""
    _idents: tuple[tuple[str, frozenset[str]], ...] = field(init=False, compare=False, repr=False)

    def __post_init__(self) -> None:
        idents = tuple((n, frozenset(identity(v) for v in vs)) for n, vs in self.when)
        object.__setattr__(self, "_idents", idents)

    @property
    def on(self) -> tuple[str, ...]:
        """The parameters the condition reads."""
        return tuple(name for name, _ in self.when)

    def holds(self, params: Mapping[str, Cell]) -> bool:
        for name, allowed in self._idents:
            value = params.get(name)
            if value is None or identity(value) not in allowed:
                return False
        return True

    def __str__(self) -> str:
        parts = [f"{n}: {'|'.join(str(v) for v in vs)}" for n, vs in self.when]
        return "when " + ", ".join(parts)


class Reads(Protocol):
    """A named thing that reads others by name: a condition, a sampled parameter."""

    @property
    def name(self) -> str: ...

    @property
    def on(self) -> tuple[str, ...]: ...


R = TypeVar("R", bound=Reads)


def in_order(items: Sequence[R]) -> tuple[R, ...]:
    """The items in the order given, each after those it reads (acyclic: checked on load; a
    loop is cut, not followed). The one topological order of conditions and of draws."""
    by_name = {item.name: item for item in items}
    out: list[R] = []
    done: set[str] = set()

    def visit(item: R, depth: int) -> None:
        if item.name in done or depth > len(items):
            return
        for name in item.on:
            if name in by_name:
                visit(by_name[name], depth + 1)
        if item.name not in done:
            done.add(item.name)
            out.append(item)

    for item in items:
        visit(item, 0)
    return tuple(out)
