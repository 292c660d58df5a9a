"""String templates over point parameters: `lr{lr}-bs{batch_size}`, `{lr:.0e}`, `{{` for a brace,
`{task|slug}`: the value made name-safe (letters, digits, `.`, `_`, `-`), for experiment names,
and `{momentum?0.9}`: the text written where a conditional parameter is absent from the point.

Deliberately not `str.format`: no attribute or index access, so a dotted name such as
`{optim.lr}` is one parameter name and a template can never reach into Python objects.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Mapping
from dataclasses import dataclass

from runner.core.values import Value, as_text

_FIELD = re.compile(r"\{\{|\}\}|\{([^{}]*)\}|[{}]")
_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*$")
# [[fill]align][sign][z][#][0][width][grouping][.precision]: only the two sizes matter here.
_SIZES = re.compile(r"(?:.?[<>=^])?[-+ ]?z?#?0?(?P<width>\d*)[,_]?(\.(?P<precision>\d*))?")
MAX_FORMAT_SIZE = 100
"""Largest width or precision in a format spec: `{lr:.999999999f}` would build a gigabyte."""


class TemplateError(Exception):
    """The template text itself is malformed."""


FILTERS = ("slug",)
_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")


def slug(text: str) -> str:
    """`mmlu:mc::olmes` -> `mmlu-mc-olmes`: every run of other characters becomes one `-`."""
    return _UNSAFE.sub("-", text).strip("-")


@dataclass(frozen=True)
class Field:
    name: str
    spec: str
    filter: str = ""
    """`slug`, or empty."""
    default: str | None = None
    """`{name?text}`: written where the parameter is absent (None: no default)."""


@dataclass(frozen=True)
class Template:
    """A parsed template: literal strings and fields, in order."""

    parts: tuple[str | Field, ...]
    _texts: list[str] = dataclasses.field(init=False, compare=False, repr=False)
    """Each part's text, "" where a field goes: a point copies it and fills the fields in."""
    _fields: tuple[tuple[int, str, str, str, str | None], ...] = dataclasses.field(
        init=False, compare=False, repr=False
    )
    """(position, name, format spec, filter, default) of each field."""
    plain: tuple[str, str, str] | None = dataclasses.field(init=False, compare=False, repr=False)
    """(text before, name, text after) when the template is one field with no format spec,
    filter or default (`--lr={lr}`, most templates): it renders without the general loop."""

    def __post_init__(self) -> None:
        texts = [p if isinstance(p, str) else "" for p in self.parts]
        fields = tuple(
            (i, p.name, p.spec, p.filter, p.default)
            for i, p in enumerate(self.parts)
            if isinstance(p, Field)
        )
        object.__setattr__(self, "_texts", texts)
        object.__setattr__(self, "_fields", fields)
        plain = None
        if len(fields) == 1 and fields[0][2:] == ("", "", None):
            i, name = fields[0][:2]
            plain = ("".join(texts[:i]), name, "".join(texts[i + 1 :]))
        object.__setattr__(self, "plain", plain)

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(p.name for p in self.parts if isinstance(p, Field))

    def needs(self, absent: frozenset[str]) -> frozenset[str]:
        """The names in `absent` that a field reads without a default."""
        return frozenset(
            p.name
            for p in self.parts
            if isinstance(p, Field) and p.default is None and p.name in absent
        )

    @property
    def is_literal(self) -> bool:
        return not any(isinstance(p, Field) for p in self.parts)

    def literal(self) -> str:
        return "".join(p for p in self.parts if isinstance(p, str))

    def render(self, params: Mapping[str, Value]) -> str:
        if self.plain is not None:
            before, name, after = self.plain
            return before + as_text(params[name]) + after
        out = self._texts.copy()
        for i, name, spec, filtered, default in self._fields:
            value = params.get(name) if default is not None else params[name]
            if value is None:
                text = default or ""
            else:
                text = _format(value, spec) if spec else as_text(value)
            out[i] = slug(text) if filtered else text
        return "".join(out)

    def render_value(self, params: Mapping[str, Value]) -> Value:
        """Like render, but a template that is exactly one plain field keeps the value's type."""
        only = self.parts[0] if len(self.parts) == 1 else None
        if isinstance(only, Field) and not only.spec and not only.filter:
            if only.default is None:
                return params[only.name]
            return params.get(only.name, only.default)
        return self.render(params)


def _format(value: Value, spec: str) -> str:
    if not spec:
        return as_text(value)
    if isinstance(value, bool):
        # format(True, ">5") is "True" (and "d" gives 1); a bool is written `true` everywhere.
        value = as_text(value)
    try:
        return format(value, spec)
    except ValueError as exc:
        raise TemplateError(f"format spec {spec!r} does not apply to {value!r}: {exc}") from None


def parse(text: str) -> Template:
    """Parse a template; raises TemplateError for a stray brace or a malformed field."""
    parts: list[str | Field] = []
    literal: list[str] = []
    pos = 0
    for match in _FIELD.finditer(text):
        literal.append(text[pos : match.start()])
        pos = match.end()
        token = match.group(0)
        if token in ("{{", "}}"):
            literal.append(token[0])
            continue
        if match.group(1) is None:
            raise TemplateError(
                f"unmatched {token!r} at character {match.start() + 1}"
                f" (write {token * 2} for a literal brace)"
            )
        name, _, spec = match.group(1).partition(":")
        name, _, filtered = name.partition("|")
        name, question, default = name.partition("?")
        name, filtered = name.strip(), filtered.strip()
        if not _NAME.match(name):
            raise TemplateError(
                f"{{{match.group(1)}}} is not a parameter reference"
                " (expected {name}, {name:format}, {name|slug} or {name?default}; for literal"
                " braces, as in"
                " JSON, write {{ and }})"
            )
        if filtered and filtered not in FILTERS:
            raise TemplateError(
                f"{{{match.group(1)}}}: unknown filter {filtered!r} (filters: {', '.join(FILTERS)})"
            )
        sizes = _SIZES.match(spec)
        if sizes and any(int(n or 0) > MAX_FORMAT_SIZE for n in sizes.group("width", "precision")):
            raise TemplateError(
                f"format spec {spec!r} asks for a width or precision above {MAX_FORMAT_SIZE}"
            )
        joined = "".join(literal)
        if joined:
            parts.append(joined)
        literal = []
        parts.append(Field(name, spec, filtered, default if question else None))
    literal.append(text[pos:])
    tail = "".join(literal)
    if tail:
        parts.append(tail)
    return Template(tuple(parts))
