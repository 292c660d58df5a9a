"""The reporting lines of a sweep's points, read from their logs through the port's `logs`.

At most one read per point (replica 0 of its first task, its latest job), never a listing per
point: which points are read is decided from the look the observation already made; none is
read twice (`read`). On Beaker
a read asks for the last `TAIL_LINES` lines (one bounded StreamJobLogs, after the job listing
that finds the replica's job); on a backend whose logs are files on this machine
(`Capability.LOCAL_LOGS`) the whole file is read, so a finished run's curve is whole. A point
whose job has not started has nothing to read, and one whose logs cannot be read now is named
in the sweep's note: neither is an error, and neither has live values.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from runner.backends import (
    Backend,
    Capability,
    Experiment,
    ExperimentState,
    LogQuery,
    NotStarted,
    Rejected,
    Results,
    Transient,
)
from runner.core.model import Sweep
from runner.observe.live import (
    TAIL_LINES,
    Live,
    Reading,
    Reported,
    Scanned,
    Skipped,
    Tails,
    scan,
    skipped_text,
)


@dataclass(frozen=True)
class Tailed:
    """What the reads found: each read point's reports (by experiment name), and why some
    could not be read."""

    reported: Mapping[str, tuple[Reported, ...]] = field(default_factory=dict)
    note: str = ""
    skipped: Mapping[str, Skipped] = field(default_factory=dict)
    """The reporting lines each read point printed that report nothing (`live.Skipped`)."""
    missing: Mapping[str, str] = field(default_factory=dict)
    """The checkpoint a read point's trainer said is missing (`live.CHECKPOINT_MISSING`)."""


NOTHING_READ = Tailed()


def reads(sweep: Sweep, backend: Backend, reading: Reading) -> bool:
    """Whether the reader reads this sweep's logs at all: `--live`, the sweep's own `live:
    true`, or (for curves) logs that are files here and cost no call."""
    if reading.tails is Tails.NONE:
        return False
    local = reading.tails is Tails.CURVES and Capability.LOCAL_LOGS in backend.capabilities
    return reading.live is Live.ON or sweep.live or local


def chosen(found: Results, tails: Tails) -> dict[str, Experiment]:
    """The experiments whose logs are read, by the name the plan knows them by: the running
    ones, and for curves the finished ones too (a queued one has no job to read)."""
    wanted = {ExperimentState.RUNNING}
    if tails is Tails.CURVES:
        wanted |= {ExperimentState.SUCCEEDED, ExperimentState.FAILED, ExperimentState.CANCELED}
    return {n: e for n, e in found.experiments.items() if e.state in wanted}


def read(backend: Backend, sweep: Sweep, experiments: Mapping[str, Experiment]) -> Tailed:
    """Each experiment's reports, from one `logs` read of its replica 0 (by its id, which
    holds even where it was renamed), by the name the plan knows it by.

    At most one read per experiment (an id under two names is read once), and none sent twice
    (the backend's read is one log request: a stream cut off is a failure, not a second
    request). Those that fail are named in the note; once the backend has given up on the
    service (its deadline, its unreachable limit) every read left fails at once, unsent."""
    tail = None if Capability.LOCAL_LOGS in backend.capabilities else TAIL_LINES
    found: dict[str, tuple[Reported, ...]] = {}
    skipped: dict[str, Skipped] = {}
    missing: dict[str, str] = {}
    by_id: dict[str, Scanned] = {}
    unread: list[str] = []
    for name, experiment in experiments.items():
        query = LogQuery(tail=tail, recorded=experiment.id)
        try:
            scanned = by_id.get(experiment.id) or scan(backend.logs(sweep, name, query))
        except NotStarted:
            continue
        except (Rejected, Transient) as exc:
            unread.append(f"{name} ({exc})")
            continue
        by_id[experiment.id] = scanned
        found[name] = scanned.reported
        if scanned.skipped is not None:
            skipped[name] = scanned.skipped
        if scanned.missing:
            missing[name] = scanned.missing
    notes = [skipped_text(skipped)]
    if unread:
        shown = "; ".join(unread[:3]) + ("; ..." if len(unread) > 3 else "")
        notes.append(f"live values of {len(unread)} point(s) not read: {shown}")
    return Tailed(found, "; ".join(n for n in notes if n), skipped, missing)
