"""Durations as written in manifests ('5m', '1h30m') and as Beaker specs carry them (nanoseconds),
on the command line (`seconds_of`: the same, or bare seconds), and elapsed time as the runner
shows it (`elapsed_text`)."""

from __future__ import annotations

import re

_PART = re.compile(r"([0-9]+(?:\.[0-9]+)?)(ns|us|ms|s|m|h)")
_BARE = re.compile(r"[0-9]+(?:\.[0-9]+)?")
_NANOS = {"ns": 1, "us": 10**3, "ms": 10**6, "s": 10**9, "m": 60 * 10**9, "h": 3600 * 10**9}


def elapsed_text(seconds: float) -> str:
    """`42s`, `3m`, `3m05s`, `2h03m`: the one format of elapsed time in every report."""
    whole = round(seconds)
    if whole < 60:
        return f"{whole}s"
    if whole < 3600:
        minutes, rest = divmod(whole, 60)
        return f"{minutes}m{rest:02d}s" if rest else f"{minutes}m"
    return f"{whole // 3600}h{whole % 3600 // 60:02d}m"


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
