"""The reporting line: what a job prints while it runs, so a reader sees how it is going.

Any line of a job's output that contains `[sweep-metric]` followed by one JSON object with an
integer `step` and numeric values reports them (text before the marker, a timestamp or a rank,
is allowed): `[sweep-metric] {"step": 1200, "loss": 2.31, "tokens_per_s": 9800}`. The field's
convention (Syne Tune's `[tune-metric]:`, Katib's stdout collector): a job's logs are readable
while it runs, while its `metrics.json` is read only once it has finished. A line with the
marker whose JSON is malformed (a Python dict's quotes), or whose `step` is missing or not an
integer, is skipped and counted (`Skipped`: how many, the first and why), so a job that reports
wrongly is told apart from one that reports nothing; values that are not finite numbers are
left out. Pure: `runner.observe.tails` reads the lines.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from runner.core.values import StrEnum

MARKER = "[sweep-metric]"
CHECKPOINT_MISSING = "[sweep-checkpoint-missing]"
"""The line a trainer told to resume prints when the checkpoint is not there, then exits
(`runner.examples.checkpoints`): `[sweep-checkpoint-missing] PATH: why`."""
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


@dataclass(frozen=True)
class Skipped:
    """The reporting lines of one log that report nothing: a line with the marker whose JSON
    is malformed, or whose step is missing or not an integer."""

    count: int
    first: str
    """The first one, as printed (cut to `SHOWN_LINE` characters)."""
    why: str
    """Why the first one reports nothing."""

    def as_json(self) -> dict[str, object]:
        return {"count": self.count, "first": self.first, "why": self.why}


SHOWN_LINE = 160
"""Characters of a skipped line a reader shows."""


@dataclass(frozen=True)
class Scanned:
    """What a log's lines report, in the order printed, and the reporting lines skipped."""

    reported: tuple[Reported, ...] = ()
    skipped: Skipped | None = None
    missing: str = ""
    """The checkpoint a `CHECKPOINT_MISSING` line names (its first), or empty."""


def _read(line: str) -> Reported | str | None:
    """The line's report; why a line with the marker reports nothing; None without the marker."""
    at = line.find(MARKER)
    if at < 0:
        return None
    try:
        data, _ = json.JSONDecoder().raw_decode(line[at + len(MARKER) :].lstrip(" :\t"))
    except ValueError:
        return "not a JSON object (JSON quotes names with double quotes: not a Python dict)"
    if not isinstance(data, dict):
        return "not a JSON object"
    step = data.get("step")
    if step is None:
        return 'no "step"'
    if isinstance(step, bool) or not isinstance(step, int):
        return f'"step" is {json.dumps(step)}, not an integer'
    values = {str(k): float(v) for k, v in data.items() if k != "step" and _number(v)}
    return Reported(step, values)


def parse(line: str) -> Reported | None:
    """The line's report, or None (no marker, malformed JSON, no integer `step`)."""
    found = _read(line)
    return found if isinstance(found, Reported) else None


def _number(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


def reports(lines: Iterable[str]) -> tuple[Reported, ...]:
    """Every report among the lines, in the order they were printed."""
    return scan(lines).reported


def scan(lines: Iterable[str]) -> Scanned:
    """Every report among the lines, and the reporting lines skipped. A last line without its
    newline may still be being written: it is neither a report nor skipped."""
    reported: list[Reported] = []
    skipped: list[tuple[str, str]] = []
    last: tuple[str, str] | None = None
    missing = ""
    for line in lines:
        if last is not None:
            skipped.append(last)
        last = None
        if not missing and CHECKPOINT_MISSING in line:
            missing = line.split(CHECKPOINT_MISSING, 1)[1].strip().split(": ", 1)[0]
        found = _read(line)
        if isinstance(found, Reported):
            reported.append(found)
        elif found is not None:
            last = (line, found)
    if last is not None and last[0].endswith("\n"):
        skipped.append(last)
    if not skipped:
        return Scanned(tuple(reported), missing=missing)
    first, why = skipped[0]
    shown = first.strip()
    shown = shown if len(shown) <= SHOWN_LINE else shown[: SHOWN_LINE - 1] + "…"
    return Scanned(tuple(reported), Skipped(len(skipped), shown, why), missing)


def skipped_text(skipped: Mapping[str, Skipped]) -> str:
    """The reporting lines skipped in a sweep's logs, as one sentence ("" when none): how many,
    in how many points, and the first with why."""
    if not skipped:
        return ""
    name, first = next(iter(skipped.items()))
    count = sum(s.count for s in skipped.values())
    return (
        f"{count} reporting line(s) skipped in {len(skipped)} point(s), {MARKER} lines that"
        f" report nothing: the first, in {name}: `{first.first}` ({first.why})"
    )


def step_text(step: int) -> str:
    """`1 200`: a step with thin groups, as the status table shows it."""
    return f"{step:,}".replace(",", " ")
