"""Durations as written in manifests ('5m', '1h30m') and as Beaker specs carry them (nanoseconds)."""

from __future__ import annotations

import re

_PART = re.compile(r"([0-9]+(?:\.[0-9]+)?)(ns|us|ms|s|m|h)")
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
