"""The reporting line: what a job prints while it runs, so a reader sees how it is going.

Any line of a job's output that contains `[sweep-metric]` followed by one JSON object with an
integer `step` and numeric values reports them (text before the marker, a timestamp or a rank,
is allowed): `[sweep-metric] {"step": 1200, "loss": 2.31, "tokens_per_s": 9800}`. The field's
convention (Syne Tune's `[tune-metric]:`, Katib's stdout collector): a job's logs are readable
while it runs, while its `metrics.json` is read only once it has finished. A line whose JSON
is malformed, or whose `step` is not an integer, is skipped; values that are not finite numbers
are left out. Pure: `runner.observe.tails` reads the lines.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from runner.core.values import StrEnum

MARKER = "[sweep-metric]"
TAIL_LINES = 1000
"""The lines of a Beaker job's log a live read asks for (its last ones): one bounded read."""


class Live(StrEnum):
    """Whether a reader reads the reporting lines of its points' logs."""

    MANIFEST = "manifest"
    """Only for sweeps that set `live: true`."""
    ON = "on"
    """For every sweep (`--live`)."""


class Tails(StrEnum):
    """Which points a reader reads the log tails of, where live values are read at all."""

    NONE = "none"
    """None: the readers that must not cost more (a submit's looks, `wait`'s intervals)."""
    LATEST = "latest"
    """The running points' latest values (`status`)."""
    CURVES = "curves"
    """Running and finished points (`report`): the learning curves."""


@dataclass(frozen=True)
class Reading:
    """What a reader reads of its points' logs (`runner.observe.tails`): which points, and
    for which sweeps."""

    tails: Tails = Tails.NONE
    live: Live = Live.MANIFEST


NO_TAILS = Reading()
"""What a reader that reads no log reads: nothing (a submit's looks, `propose`, `wait`)."""


@dataclass(frozen=True)
class Reported:
    """One reporting line: the step and the values a job printed at it."""

    step: int
    values: Mapping[str, float]


def parse(line: str) -> Reported | None:
    """The line's report, or None (no marker, malformed JSON, no integer `step`)."""
    at = line.find(MARKER)
    if at < 0:
        return None
    try:
        data, _ = json.JSONDecoder().raw_decode(line[at + len(MARKER) :].lstrip(" :\t"))
    except ValueError:
        return None
    if not isinstance(data, dict):
        return None
    step = data.get("step")
    if isinstance(step, bool) or not isinstance(step, int):
        return None
    values = {str(k): float(v) for k, v in data.items() if k != "step" and _number(v)}
    return Reported(step, values)


def _number(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


def reports(lines: Iterable[str]) -> tuple[Reported, ...]:
    """Every report among the lines, in the order they were printed."""
    found = (parse(line) for line in lines)
    return tuple(r for r in found if r is not None)


def step_text(step: int) -> str:
    """`1 200`: a step with thin groups, as the status table shows it."""
    return f"{step:,}".replace(",", " ")
