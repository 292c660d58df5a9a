"""Durations as people write them: in manifests ('5m', '1h30m'; `to_nanoseconds`, as Beaker
specs carry them) and on the command line (`seconds_of`: the same, or bare seconds). The one
parser of both; `runner.render.durations` adds how elapsed time is shown."""

from __future__ import annotations

import re

_PART = re.compile(r"([0-9]+(?:\.[0-9]+)?)(ns|us|ms|s|m|h)")
_BARE = re.compile(r"[0-9]+(?:\.[0-9]+)?")
_NANOS = {"ns": 1, "us": 10**3, "ms": 10**6, "s": 10**9, "m": 60 * 10**9, "h": 3600 * 10**9}


def to_nanoseconds(text: str) -> int:
    """'1h30m' -> 5_400_000_000_000. The schema has already checked the syntax."""
    pos, total = 0, 0
    for match in _PART.finditer(text):
        if match.start() != pos:
            break
        total += int(float(match.group(1)) * _NANOS[match.group(2)])
        pos = match.end()
    if pos != len(text) or not text:
        raise ValueError(f"invalid duration {text!r} (examples: '30s', '5m', '1h30m')")
    return total


def seconds_of(text: str) -> float:
    """A command line's duration in seconds: '90s', '5m', '1h30m' (as in manifests), or bare
    seconds ('20', '2.5'); ValueError for anything else (a sign, a unit it does not know)."""
    text = text.strip()
    if _BARE.fullmatch(text):
        return float(text)
    return to_nanoseconds(text) / 1e9
