"""The join that makes an observation: the plan's rows (its `+ = ~ -` status, points in the order
the manifest expands them, then orphans) with what one bulk look at the backend found (each
recorded experiment's state, exit code, duration, metrics and what the job says, and the
sweep's group), its stop and its search's rounds. Points not submitted yet are rows too, so a
sweep's table always has one row per point. Pure: the look is made by `runner.observe.looks`.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from runner.backends import Experiment, ExperimentState, Group, Results
from runner.core.ladder import Ladder
from runner.core.sample import row_identity
from runner.core.values import params_identity
from runner.observe.model import ROUND, Absent, Observation, PointResult
from runner.observe.stops import guarded, stop_of
from runner.observe.tails import NOTHING_READ, Tailed
from runner.plan import PlanStatus, Row, SweepPlan
from runner.render.code import uses_code


@dataclass(frozen=True)
class Seen:
    """What a join needs besides the plan (whose sweep carries its search): the look, and what
    the reader read besides it."""

    found: Results
    head: str = ""
    """Local `code:` runs (`Capability.RERUNS`): the commit checked out now; empty elsewhere."""
    tailed: Tailed = NOTHING_READ
    """The reporting lines read from the points' logs (`runner.observe.tails`), if any."""


def observation(plan: SweepPlan, seen: Seen) -> Observation:
    """The plan's rows joined with the look, with the sweep's stop, notes and rounds."""
    sweep, found, search = plan.sweep, seen.found, plan.sweep.search
    points = [
        _point(plan, row, found.experiments.get(row.experiment), seen.tailed) for row in plan.rows
    ]
    rounds, sample = search.rounds(), search.sample
    if rounds and sample is not None:  # an adaptive search: each point's round, a parameter
        points = [_with_round(p, rounds, sample.names) for p in points]
    if sweep.space.ladder is not None:  # a successive halving: each promoted point's parent
        points = with_parents(points, sweep.space.ladder)
    group = found.group
    if group is None and sweep.placement.group and plan.group:
        group = Group("", plan.group)  # the URL the last submit recorded in the ledger's header
    points = against_head(points, seen.head if uses_code(sweep) else "")
    stop = stop_of(sweep, points) if guarded(sweep) else None
    notes = [
        stop.reason if stop is not None else "",
        cap_note(plan, found),
        found.note,
        seen.tailed.note,
        rerun_note(points, seen.head),
    ]
    return Observation(
        sweep.name,
        str(sweep.path),
        sweep.draft,
        (*(sweep.space.axis_names or _param_names(points)), *((ROUND,) if rounds else ())),
        tuple(points),
        group,
        "; ".join(n for n in notes if n),
        tuple(duplicate_warnings(plan, found)),
        stop,
        search,
        sweep.space.conditions,
    )


def _with_round(point: PointResult, rounds: dict[str, int], names: Sequence[str]) -> PointResult:
    params = dict(point.params)
    ident = row_identity([params.get(n) for n in names])
    round_ = rounds.get(ident)
    if round_ is None:
        return point  # an orphan of an earlier sample: in no round of this one
    return dataclasses.replace(point, params=(*point.params, (ROUND, round_)))


def with_parents(points: Sequence[PointResult], ladder: Ladder) -> list[PointResult]:
    """Each promoted point with its parent's experiment: the point of its configuration one
    rung lower (found among the points, so a parent the manifest no longer has stays unnamed)."""
    by_params = {params_identity(p.params): p.experiment for p in points}
    out = []
    for point in points:
        above = ladder.parent(point.params)
        parent = by_params.get(params_identity(above)) if above is not None else None
        out.append(dataclasses.replace(point, parent=parent) if parent else point)
    return out


def _point(plan: SweepPlan, row: Row, exp: Experiment | None, tailed: Tailed) -> PointResult:
    """One row of the plan with what the backend says of its experiment."""
    if row.entry is None:
        return PointResult(PlanStatus.SUBMIT, row.name, row.key, row.params, Absent.NOT_SUBMITTED)
    entry, name = row.entry, row.experiment  # a renamed point is shown by its experiment's name
    if exp is None:
        return PointResult(
            row.status,
            name,
            row.key,
            row.params,
            Absent.MISSING,
            url=entry.url,
            commit=entry.commit,
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
        exp.url or entry.url,
        entry.restarts,
        entry.canceled,
        entry.commit if uses_code(plan.sweep) else "",
        exp.description,
        commit=entry.commit,
        reported=tailed.reported.get(row.experiment, ()),
        skipped=tailed.skipped.get(row.experiment),
    )


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
