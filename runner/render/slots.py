"""Templated fields of a sweep's tasks, compiled once, and their values at one point."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from runner.core.errors import ManifestError, Problem
from runner.core.marks import KeyPath
from runner.core.model import Point, Sweep
from runner.core.values import Value, as_text, normalize
from runner.render import template

Check = Callable[[str], "str | None"]
"""A check of a rendered string: the problem with it, or None."""


@dataclass(frozen=True)
class Slot:
    """One templated string in the task template, with where it came from."""

    template: template.Template
    path: KeyPath
    literal: str | None = dataclasses.field(init=False, compare=False)
    """The text, when the template has no field: most slots, rendered once instead of per point."""

    def __post_init__(self) -> None:
        literal = self.template.literal() if self.template.is_literal else None
        object.__setattr__(self, "literal", literal)

    def text(self, env: Mapping[str, Value]) -> str:
        return self.literal if self.literal is not None else self.template.render(env)


class PointContext:
    """Rendering state of one point: evaluates compiled slots, checking each."""

    __slots__ = (
        "checkpoint",
        "derived",
        "env",
        "key",
        "literal_numbers",
        "name",
        "parent",
        "parent_checkpoint",
        "point",
        "replicas",
        "sweep",
    )

    def __init__(
        self,
        sweep: Sweep,
        point: Point,
        env: Mapping[str, Value],
        identity: tuple[str, str],
        literal_numbers: dict[KeyPath, int | float],
    ) -> None:
        self.sweep, self.point, self.env = sweep, point, env
        self.key, self.name = identity
        self.literal_numbers = literal_numbers
        # Checked values of literal numeric slots (`replicas: 1`, `gpus: 8`), by slot path.
        self.derived: tuple[tuple[str, Value], ...] = ()
        self.replicas: tuple[int, ...] = ()
        self.parent = ""
        """A promoted point's parent's key (`SWEEP_PARENT_KEY`); empty at rung 0."""
        self.checkpoint = ""
        """Where it writes its checkpoint (`params.fidelity.checkpoint`), or empty."""
        self.parent_checkpoint = ""
        """A promoted point's: where its parent wrote the checkpoint it resumes, or empty."""

    def fail(self, slot: Slot, message: str) -> ManifestError:
        sweep = self.sweep
        where = ", ".join(f"{k}={as_text(v)}" for k, v in self.point.params) or "the only point"
        text = f"{message} (point {where})"
        return ManifestError([Problem.at(sweep.marks, str(sweep.path), slot.path, text)])

    def text(self, slot: Slot, check: Check | None = None) -> str:
        if slot.literal is not None:
            text = slot.literal
        else:
            try:
                text = slot.template.render(self.env)
            except template.TemplateError as exc:
                raise self.fail(slot, str(exc)) from None
        problem = check(text) if check else None
        if problem:
            raise self.fail(slot, problem)
        return text

    def value(self, slot: Slot) -> Value:
        try:
            return slot.template.render_value(self.env)
        except template.TemplateError as exc:
            raise self.fail(slot, str(exc)) from None

    def number(self, slot: Slot, what: str, minimum: int, integer: bool = True) -> int | float:
        known = self.literal_numbers.get(slot.path)
        if known is not None:
            return known
        value = self.value(slot)
        try:
            number = normalize(value if not isinstance(value, str) else json.loads(value))
        except (ValueError, TypeError):
            number = value
        if (
            isinstance(number, bool)
            or not isinstance(number, int | float)
            or (integer and not isinstance(number, int))
        ):
            kind = "an integer" if integer else "a number"
            raise self.fail(slot, f"{what} renders to {value!r}, which is not {kind}")
        if number < minimum:
            raise self.fail(slot, f"{what} renders to {number}, must be at least {minimum}")
        if slot.literal is not None:
            self.literal_numbers[slot.path] = number
        return number
