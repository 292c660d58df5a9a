"""YAML 1.2 core-schema scalars: what a plain scalar means, and what each standard tag accepts."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

STD = "tag:yaml.org,2002:"
_NULLS = frozenset({"", "~", "null", "Null", "NULL"})
_BOOLS = {"true": True, "True": True, "TRUE": True, "false": False, "False": False, "FALSE": False}
_INT10 = re.compile(r"[-+]?[0-9]+")
_INT8 = re.compile(r"0o[0-7]+")
_INT16 = re.compile(r"0x[0-9a-fA-F]+")
_FLOAT = re.compile(r"[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?")
_INF_NAN = re.compile(r"[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN)")


class Invalid(Exception):
    """A scalar's text does not fit its tag."""


def to_int(text: str) -> int:
    try:
        if _INT10.fullmatch(text):
            return int(text)
        if _INT8.fullmatch(text) or _INT16.fullmatch(text):
            return int(text, 0)
    except ValueError:  # more digits than Python will convert (sys.get_int_max_str_digits)
        raise Invalid(f"integer {text[:20]}... has too many digits") from None
    raise Invalid(f"{text!r} is not a valid !!int")


def to_float(text: str) -> float:
    if _INF_NAN.fullmatch(text):
        return float(text.replace(".", "", 1))
    if _FLOAT.fullmatch(text):
        return float(text)
    try:
        return float(to_int(text))
    except (Invalid, OverflowError):
        raise Invalid(f"{text!r} is not a valid !!float") from None


def to_bool(text: str) -> bool:
    if text in _BOOLS:
        return _BOOLS[text]
    raise Invalid(f"{text!r} is not a valid !!bool (use true or false)")


def to_null(text: str) -> None:
    if text not in _NULLS:
        raise Invalid(f"{text!r} is not a valid !!null")


SCALAR_TAGS: dict[str, Callable[[str], Any]] = {
    STD + "str": str,
    STD + "int": to_int,
    STD + "float": to_float,
    STD + "bool": to_bool,
    STD + "null": to_null,
}
SEQ, MAP = STD + "seq", STD + "map"


def resolve_plain(text: str) -> Any:
    """The YAML 1.2 core-schema value of an untagged plain scalar."""
    if text in _NULLS:
        return None
    if text in _BOOLS:
        return _BOOLS[text]
    if not text or text[0] not in "0123456789+-.":
        return text
    if _INT10.fullmatch(text) or _INT8.fullmatch(text) or _INT16.fullmatch(text):
        return to_int(text)
    if _FLOAT.fullmatch(text) or _INF_NAN.fullmatch(text):
        return to_float(text)
    return text


def show_tag(tag: str) -> str:
    if tag.startswith(STD):
        return "!!" + tag[len(STD) :]
    return tag if tag.startswith("!") else f"!<{tag}>"
