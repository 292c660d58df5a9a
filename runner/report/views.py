"""What the results page shows of a sweep for each choice its reader can make: a metric (its
picker: the sweep's objectives, then every other numeric metric) and, for a successive halving,
a rung (its filter; `ALL` for every point). Each view has the points ranked, the best so far and
each parameter's importance, computed here by the same functions as the markdown page
(`ranking.ranked`, `findings.progress`, `findings.importance`), so the page's script only
chooses and draws.

A halving's rungs run at different budgets, so a loss at 100 steps and one at 900 are never one
population: each rung has its own ranking, best so far and importance, and `ALL` ranks the
highest rung first (as `Findings.ranked` does) and has neither. A point that breaks one of the
sweep's constraints is never ranked; it is counted as ruled out, with why (`ruled_out`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from runner.analysis.aiming import counts
from runner.analysis.findings import Findings, importance, progress
from runner.backends import ExperimentState
from runner.core.aims import Goal, broken
from runner.core.values import identity
from runner.observe.model import PointResult
from runner.report.shares import NO_EXTRA, method_text, share_json, why_none
from runner.search import ranking
from runner.search.importance import Judgement
from runner.search.ranking import Estimator

ALL = "all"
"""The view of every point (a sweep without rungs has only this one)."""


@dataclass(frozen=True)
class Metric:
    """A metric the page's picker offers, with the goal its points are ranked toward."""

    name: str
    goal: Goal
    said: str
    """Where the goal comes from, as the page says it."""


@dataclass(frozen=True)
class Population:
    """The points of one view by one metric."""

    points: tuple[PointResult, ...]
    """The view's points (the rung's, or all), in the sweep's order."""
    ranked: tuple[PointResult, ...]
    """Those finished with the metric that keep every constraint, best first."""
    ruled_out: tuple[PointResult, ...]
    """Those finished with the metric that break a constraint (or cannot be judged on one)."""


def rung_of(f: Findings, point: PointResult) -> int | None:
    """A halving's point's rung; None for a sweep without rungs."""
    halving = f.results.halving
    return None if halving is None else halving.ladder.rung(dict(point.params))


def rungs(f: Findings) -> list[str]:
    """The filter's choices, the last rung first, then `ALL`; `ALL` alone without rungs."""
    halving = f.results.halving
    last = -1 if halving is None else len(halving.ladder.values) - 1
    return [*(str(k) for k in range(last, -1, -1)), ALL]


def judged_rung(f: Findings) -> str:
    """The view whose importance `Findings.importance` judged: a halving's rung 0, where every
    configuration ran at one budget; else every point."""
    return ALL if f.results.halving is None else "0"


def default_rung(f: Findings) -> str:
    """The view the page opens on: the highest rung with a ranked point, else `ALL`."""
    if f.results.halving is None:
        return ALL
    done = [rung_of(f, p) or 0 for p in f.ranked]
    return str(max(done)) if done else ALL


def population(f: Findings, metric: str, goal: Goal, rung: str) -> Population:
    points = tuple(p for p in f.results.points if rung == ALL or str(rung_of(f, p)) == rung)
    limits = f.results.constraints
    finished = [p for p in points if p.finished(metric) is not None]
    kept = [p for p in finished if counts(p, limits)]
    ranked = ranking.ranked(kept, lambda p: p.finished(metric), goal)
    if rung == ALL and f.results.halving is not None:  # the highest rung first
        ranked = sorted(ranked, key=lambda p: -(rung_of(f, p) or 0))
    out = tuple(p for p in finished if not counts(p, limits))
    return Population(points, tuple(ranked), out)


def ruled_out(f: Findings, point: PointResult) -> str:
    """Why a point that succeeded is never ranked: the constraints it breaks or cannot be
    judged on (as `Front.ruled_out` says it); empty for one that keeps them or did not succeed."""
    limits = f.results.constraints
    if point.state != ExperimentState.SUCCEEDED or counts(point, limits):
        return ""
    return "; ".join(broken(limits, point.number))


def metrics(f: Findings) -> list[Metric]:
    """The picker's metrics: the page's own first, then the search's objectives and constraints'
    metrics, then every other, by name; each one some point has as a number."""
    if not f.metric:
        return []
    aims = {a.metric: a.goal for a in f.results.search.aims.objectives}
    limits = [c.metric for c in f.results.constraints]
    numeric = f.results.numeric_metrics
    names = [f.metric, *aims, *limits, *numeric]
    out = []
    for name in dict.fromkeys(n for n in names if n == f.metric or n in numeric):
        if name == f.metric:
            out.append(Metric(name, f.goal, "the page's metric"))
        elif name in aims:
            out.append(Metric(name, aims[name], "the sweep's objective"))
        else:
            said = (
                f"assumed: the sweep declares no goal for {name} (`report --metric {name} --goal`)"
            )
            out.append(Metric(name, f.goal, said))
    return out


def reason(f: Findings, metric: str, rung: str) -> str:
    """Why no parameter of `Findings.importance` has a share (empty when some has)."""
    mine = population(f, metric, f.goal, rung)
    return _why_none(f, f.importance, metric, mine)


def _why_none(f: Findings, judgement: Judgement, metric: str, mine: Population) -> str:
    values = [float(p.finished(metric) or 0.0) for p in mine.ranked]
    return why_none(judgement, values, len(mine.ruled_out), metric, len(swept(f)))


def swept(f: Findings) -> tuple[str, ...]:
    """The parameters whose value varies among the sweep's points."""
    seen: dict[str, set[str]] = {n: set() for n in f.params}
    for p in f.results.points:
        for name, value in p.params:
            if name in seen:
                seen[name].add(identity(value))
    return tuple(n for n in f.params if len(seen[n]) > 1)


def view(f: Findings, metric: Metric, rung: str) -> dict[str, object]:
    """One view as the page's JSON: the ranked points' keys (best first), the counts, the best
    so far and the importance (None for every rung of a halving at once)."""
    mine = population(f, metric.name, metric.goal, rung)
    out: dict[str, object] = {
        "ranked": [p.key for p in mine.ranked],
        "ruled_out": len(mine.ruled_out),
        "progress": None,
        "importance": None,
    }
    if rung == ALL and f.results.halving is not None:
        halving = f.results.halving
        budgets = ", ".join(str(v) for v in halving.ladder.values)
        out["apart"] = (
            f"the rungs run at different budgets ({halving.ladder.param} {budgets}): their"
            f" {metric.name} is judged rung by rung; choose one"
        )
        return out
    kept = [p for p in mine.points if counts(p, f.results.constraints)]
    steps = progress(kept, metric.name, metric.goal, f.by_round)
    out["progress"] = [{"x": s.x, "value": s.value, "best": s.best} for s in steps]
    out["importance"] = _importance(f, metric, rung, mine)
    return out


def _importance(f: Findings, metric: Metric, rung: str, mine: Population) -> dict[str, object]:
    asked = f.importance.method
    why = NO_EXTRA
    if metric.name != f.metric and asked is Estimator.FANOVA:
        asked = Estimator.VARIANCE  # a forest per metric and rung would cost minutes
        why = f"fANOVA is fitted for the page's metric only (report --metric {metric.name})"
    if metric.name == f.metric and rung == judged_rung(f):
        judgement = f.importance
    else:
        judgement = importance(f.results, f.space, mine.ranked, metric.name, asked)
    note = _why_none(f, judgement, metric.name, mine)
    return {
        "method": method_text(judgement, why),
        "note": note,
        "points": len(mine.ranked),
        "parameters": [share_json(s) for s in judgement.shares],
    }


def views(f: Findings, picked: Sequence[Metric]) -> dict[str, dict[str, object]]:
    """Every view: by metric, then by rung (`rungs`)."""
    return {m.name: {r: view(f, m, r) for r in rungs(f)} for m in picked}
