"""Durations as manifests write them and Beaker specs carry them (`runner.core.durations`, the
one parser), and elapsed time as the runner shows it (`elapsed_text`)."""

from __future__ import annotations

from runner.core.durations import seconds_of as seconds_of
from runner.core.durations import to_nanoseconds as to_nanoseconds


def elapsed_text(seconds: float) -> str:
    """`42s`, `3m`, `3m05s`, `2h03m`: the one format of elapsed time in every report."""
    whole = round(seconds)
    if whole < 60:
        return f"{whole}s"
    if whole < 3600:
        minutes, rest = divmod(whole, 60)
        return f"{minutes}m{rest:02d}s" if rest else f"{minutes}m"
    return f"{whole // 3600}h{whole % 3600 // 60:02d}m"
