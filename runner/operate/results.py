"""A sweep's results: every point of the manifest, in manifest order, with what the backend says.

The plan gives the rows (its `+ = ~ -` status, points in the order the manifest expands them,
then orphans); `Backend.results` gives, in bulk, each recorded experiment's state, exit code,
duration and metrics, and the sweep's group. Points not submitted yet are rows too, so a
sweep's table always has one row per point.
"""

from __future__ import annotations

import dataclasses
import json
import math
import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from runner.backends import Backend, Capability, ExperimentState, Group, Results, recorded
from runner.core.values import Value, canonical_json
from runner.manifest.sample import lock_path
from runner.plan import PlanStatus, Row, SweepPlan
from runner.render.code import uses_code

PROGRESS = re.compile(r"\[\s*\d+(?:\.\d+)?\s*%[^\]]*\]")
"""Progress as OLMo-core's BeakerCallback writes it: `[3%, 30/1,000]`."""
LINK = re.compile(r"https?://[^\s\])>\"']+")
NOT_SUBMITTED = "not submitted"
MISSING = "missing"
"""Recorded in the ledger but not found on the backend."""


@dataclass(frozen=True)
class PointResult:
    status: str
    """The plan's: + to submit, = submitted, ~ drifted, - orphan."""
    experiment: str
    key: str
    params: tuple[tuple[str, Value], ...]
    state: str
    exit_code: int | None = None
    seconds: float | None = None
    metrics: Mapping[str, object] = field(default_factory=dict)
    url: str = ""
    restarts: int = 0
    """Restarts `submit --restart-failed` made (from the ledger)."""
    canceled_at: str | None = None
    """Set when `cancel` canceled it."""
    code: str = ""
    """`code:` sweeps: the commit the point runs (the ledger's)."""
    description: str = ""
    """What the job says about itself (`Experiment.description`), as it wrote it."""

    @property
    def progress(self) -> str | None:
        """The progress in the description (`[3%, 30/1,000]`), if it shows one."""
        found = PROGRESS.search(self.description)
        return found.group(0) if found else None

    @property
    def link(self) -> str | None:
        """The first URL in the description (the run's W&B or Comet page, as jobs write)."""
        found = LINK.search(self.description)
        return found.group(0) if found else None

    head: str = ""
    """Local `code:` runs: the commit checked out now, when it is not the one the point ran."""

    commit: str = ""
    """The commit the ledger records for the point's submission (any sweep)."""

    @property
    def state_text(self) -> str:
        """The state, with what was done to the experiment on request."""
        extra = [f"restarted {self.restarts}x"] if self.restarts else []
        extra += ["canceled on request"] if self.canceled_at else []
        extra += [f"code {self.code[:12]}"] if self.code else []
        extra += [f"not HEAD {self.head[:12]}"] if self.head else []
        return self.state + (f" ({', '.join(extra)})" if extra else "")

    def number(self, metric: str) -> float | None:
        """The metric as a finite number, or None (absent, text, a flag, NaN)."""
        value = self.metrics.get(metric)
        if isinstance(value, bool) or not isinstance(value, int | float):
            return None
        return float(value) if math.isfinite(value) else None


@dataclass(frozen=True)
class SweepResults:
    name: str
    path: str
    draft: bool
    axes: tuple[str, ...]
    """The sweep's parameter names, in axis order (what a plot can be drawn against)."""
    points: tuple[PointResult, ...]
    group: Group | None = None
    note: str = ""
    warnings: tuple[str, ...] = ()
    """Lines for stderr: points with more than one live experiment carrying their key."""

    @property
    def metric_names(self) -> list[str]:
        return sorted({m for p in self.points for m in p.metrics})


def collect(
    plan: SweepPlan, backend: Backend, root: Path, head: str = "", found: Results | None = None
) -> SweepResults:
    """The plan's rows joined with the backend's results, in one bulk look-up per sweep (none
    when given what a look found: `runner.backends.observed`). `head`: the commit checked out,
    which local `code:` points are compared with."""
    found = _looked_up(plan, backend) if found is None else found
    points = [_point(plan, row, found) for row in plan.rows]
    rounds = adaptive_rounds(root / plan.sweep.path)
    if rounds:  # an adaptive search: each point's round, as a parameter a plot can use
        points = [
            dataclasses.replace(p, params=(*p.params, (ROUND, rounds.get(_values(p), -1))))
            for p in points
        ]
    group = found.group
    if group is None and plan.sweep.placement.group and plan.group:
        group = Group("", plan.group)  # the URL the last submit recorded in the ledger's header
    sweep = plan.sweep
    warnings = tuple(duplicate_warnings(plan, found))
    reruns = Capability.RERUNS in backend.capabilities and uses_code(plan.sweep)
    points = against_head(points, head if reruns else "")
    notes = [cap_note(plan, found), found.note, rerun_note(points, head)]
    return SweepResults(
        sweep.name,
        str(sweep.path),
        sweep.draft,
        (*(sweep.space.axis_names or _param_names(points)), *((ROUND,) if rounds else ())),
        tuple(points),
        group,
        "; ".join(n for n in notes if n),
        warnings,
    )


def _point(plan: SweepPlan, row: Row, found: Results) -> PointResult:
    """One row of the plan with what the backend says of its experiment."""
    if row.entry is None:
        return PointResult(PlanStatus.SUBMIT, row.name, row.key, row.params, NOT_SUBMITTED)
    exp = found.experiments.get(row.experiment)
    name = row.experiment  # a renamed point is shown by its experiment's name
    if exp is None:
        return PointResult(
            row.status,
            name,
            row.key,
            row.params,
            MISSING,
            url=row.entry.url,
            commit=row.entry.commit,
        )
    return PointResult(
        row.status,
        name,
        row.key,
        row.params,
        exp.state,
        exp.exit_code,
        exp.seconds,
        dict(exp.metrics),
        exp.url or row.entry.url,
        row.entry.restarts,
        row.entry.canceled,
        row.entry.commit if uses_code(plan.sweep) else "",
        exp.description,
        commit=row.entry.commit,
    )


def _looked_up(plan: SweepPlan, backend: Backend) -> Results:
    names = [row.experiment for row in plan.rows if row.entry is not None]
    mine = recorded(row.record for row in plan.rows)
    return backend.results(plan.sweep, names, mine) if names else Results(None, {})


ROUND = "round"
"""An adaptive search's points carry their round (from the lock) as this extra parameter."""


def adaptive_rounds(manifest: Path) -> dict[str, int]:
    """The round of each point of an adaptive search (by its sampled values, from the lock
    beside the manifest); empty for any other sweep or an unreadable lock."""
    try:
        data = json.loads(lock_path(manifest).read_text(encoding="utf-8"))
        names, rows, rounds = data["params"], data["points"], data["rounds"]
    except (OSError, ValueError, KeyError, TypeError):
        return {}
    return {
        # A conditional parameter absent from a point (null in the lock) is not in its params.
        canonical_json([[n, v] for n, v in zip(names, row, strict=True) if v is not None]): int(k)
        for row, k in zip(rows, rounds, strict=True)
    }


def _values(point: PointResult) -> str:
    return canonical_json([[n, v] for n, v in point.params])


def duplicate_warnings(plan: SweepPlan, found: Results) -> Iterator[str]:
    """One line for each point with more than one live experiment carrying its key."""
    for row in plan.rows:
        if row.entry is None:
            continue
        live = [
            e
            for e in found.copies.get(row.experiment, ())
            if e.key == row.entry.key and e.state != ExperimentState.CANCELED
        ]
        if len(live) > 1:
            ids = ", ".join(e.id for e in live)
            yield (
                f"warning: DUPLICATE {plan.sweep.name}/{row.experiment}: {len(live)} live experiments"
                f" carry this point's key ({ids}); the ledger records {row.entry.id}; cancel the"
                " others"
            )


def against_head(points: Sequence[PointResult], head: str) -> list[PointResult]:
    """The points, each that ran another `code:` commit than `head` marked with it ("": none)."""
    if not head:
        return list(points)
    return [dataclasses.replace(p, head=head) if p.code and p.code != head else p for p in points]


def rerun_note(points: Sequence[PointResult], head: str) -> str:
    """For local `code:` points that ran another commit than HEAD: that the next submit does
    not run them again, and the command that does."""
    older = [p.experiment for p in points if p.head]
    if not older:
        return ""
    named = " ".join(older[:3]) + (" ..." if len(older) > 3 else "")
    return (
        f"{len(older)} point(s) ran a commit other than HEAD {head[:12]}; the next submit does"
        " not run them again (the commit is not part of a point's key):"
        f" `submit --restart --points {named}` runs them at HEAD"
    )


def cap_note(plan: SweepPlan, found: Results) -> str:
    """'max_running N: R queued or running, W waiting' for a capped sweep; '' otherwise."""
    limit = plan.sweep.limits.max_running
    if limit is None:
        return ""
    running = sum(1 for e in found.experiments.values() if e.state.live)
    waiting = sum(1 for row in plan.rows if row.pending)
    return f"max_running {limit}: {running} queued or running, {waiting} waiting"


def _param_names(points: Sequence[PointResult]) -> tuple[str, ...]:
    names: dict[str, None] = {}
    for point in points:
        names.update(dict.fromkeys(k for k, _ in point.params))
    return tuple(names)
