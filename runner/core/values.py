"""Parameter values: normalisation, canonical JSON and the text form used in templates and env."""

from __future__ import annotations

import enum
import json
import math
import sys
from collections.abc import Iterable
from typing import Any, Union

Value = Union[str, int, float, bool]  # noqa: UP007  (a runtime alias; `|` needs 3.10 objects)


if sys.version_info >= (3, 11):
    from enum import StrEnum
else:  # the runner's vocabularies (states, statuses) are StrEnums; Python 3.10 has none yet

    class StrEnum(str, enum.Enum):
        """An enum whose members are their string values (`f"{member}"` is the value)."""

        def __str__(self) -> str:
            return str(self.value)


class InvalidValue(ValueError):
    """A value that cannot take part in a key (NaN, infinity, an unsupported type)."""


def checked(value: object) -> Value:
    """A parameter value as written, its type kept: `3e6` stays the float 3000000.0.

    A float written in YAML is rendered as a float everywhere (`--lr=3000000.0`); only keys
    normalise (see `normalize`). NaN, infinities and non-scalar types are refused.
    """
    if isinstance(value, bool | str):
        return value
    if isinstance(value, int):
        return int(value)
    if isinstance(value, float):
        if math.isnan(value) or math.isinf(value):
            raise InvalidValue(f"{value!r} is not allowed (NaN and infinity have no stable key)")
        return value
    raise InvalidValue(
        f"{type(value).__name__} values are not allowed (use a string, number or bool)"
    )


def normalize(value: object) -> Value:
    """The identity form of a parameter value, for keys and comparisons only.

    Integral floats become ints, so `3e6` and `3000000` are the same point; booleans stay
    booleans, so `true` never equals `1`; NaN and infinities are refused.
    """
    value = checked(value)
    if type(value) is float and value.is_integer():
        return int(value)
    return value


_CANONICAL = json.JSONEncoder(
    sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False
)
"""What `json.dumps` would build on every call with these arguments; it holds no state."""


def canonical_json(obj: Any) -> str:
    """Compact JSON with sorted keys: the byte form that keys and hashes are computed over."""
    return _CANONICAL.encode(obj)


def identity(value: Value) -> str:
    """A string that is equal for two values exactly when they are the same parameter value."""
    return canonical_json(normalize(value))


def params_identity(params: Iterable[tuple[str, Value]]) -> str:
    """A string that is equal for two points exactly when they have the same parameters (1.0 is
    1): matches a point across two observations, or a parent among a sweep's points."""
    return canonical_json({name: normalize(value) for name, value in params})


def as_text(value: Value) -> str:
    """How a value is written into argv, env vars and names: `true`, `3000000`, `3000000.0`."""
    kind = type(value)  # exact types first: this runs for every field of every point
    if kind is str:
        return value  # type: ignore[return-value]  # mypy does not narrow on `type(x) is`
    if kind is int:
        return int.__repr__(value)
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return repr(value)
    return str(value)


def type_name(value: object) -> str:
    """How messages name a value's type: 'a string', 'an integer', 'a mapping', 'null'."""
    if value is None:
        return "null"
    words = {
        bool: "a boolean",
        str: "a string",
        int: "an integer",
        float: "a number",
        dict: "a mapping",
        list: "a list",
    }
    return words.get(type(value), type(value).__name__)
