"""What a sweep's observation says, for its results page (`report`): the points ranked by a
metric, each parameter's importance, and the best value so far; and each point as a search is
told it (`told`, for `propose` and the Optuna study). Pure.

A point is *finished* when it succeeded with the metric as a number; only finished points are
ranked and judged, every other point (failed, running, not submitted, succeeded without the
metric) stays in the page's tables with its state. Progress runs in the sweep's order, which is
the order `submit` creates points in, or by round for an adaptive search.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass

from runner.analysis import aiming
from runner.analysis.aiming import Front, counts, sweep_front
from runner.analysis.curves import Curves, learning_curves
from runner.analysis.told import told
from runner.backends import ExperimentState
from runner.core.aims import Aim, Aims, Goal
from runner.core.errors import RunnerError
from runner.core.invoked import invoked
from runner.core.sample import Distribution
from runner.core.values import Value
from runner.observe.model import ROUND, Absent, Observation, PointResult
from runner.search import ranking
from runner.search.importance import Judgement, judge
from runner.search.points import Told
from runner.search.ranking import Estimator


@dataclass(frozen=True)
class Step:
    """One step of the best-so-far curve."""

    x: int
    """The point's place in the sweep's order (from 1), or the round."""
    value: float
    """The point's value, or the best of the round."""
    best: float
    """The best value up to here."""


@dataclass(frozen=True)
class Findings:
    results: Observation
    metric: str
    goal: Goal
    params: tuple[str, ...]
    """The swept parameters (not an adaptive search's round)."""
    log: tuple[str, ...]
    """The parameters drawn on a log scale: sampled `log_uniform`, `log_int`; a grid axis whose
    numbers span a factor of ten or more (`logarithmic`)."""
    ranked: tuple[PointResult, ...]
    """The finished points, best first (a successive halving's: the highest rung first)."""
    importance: Judgement
    progress: tuple[Step, ...]
    by_round: bool
    space: tuple[Distribution, ...] = ()
    """Each parameter's distribution: the search's own, else what its values span."""
    curves: Curves | None = None
    """Each point's learning curve, where its reporting lines were read (`runner.analysis.curves`);
    None: none was."""
    front: Front | None = None
    """Two or more objectives, or constraints: the Pareto set and the points ruled out."""

    @property
    def best(self) -> PointResult | None:
        return self.ranked[0] if self.ranked else None


LOG_SPAN = 10
"""A numeric axis whose positive values span this factor or more is drawn logarithmic."""


def logarithmic(numbers: Sequence[float]) -> bool:
    """The one rule of a logarithmic axis (`status --plot`, the results page's parallel
    coordinates): positive numbers spanning a factor of LOG_SPAN or more."""
    return bool(numbers) and min(numbers) > 0 and max(numbers) / min(numbers) >= LOG_SPAN


def _log(
    space: Sequence[Distribution], sampled: Collection[str], columns: Mapping[str, list[Value]]
) -> tuple[str, ...]:
    """The parameters drawn on a log scale: a sampled one by its distribution (`log_uniform`,
    `log_int`), any other by what its numbers span (`logarithmic`)."""
    out = []
    for d in space:
        numbers = [
            float(v)
            for v in columns[d.name]
            if isinstance(v, int | float) and not isinstance(v, bool)
        ]
        numeric = len(numbers) == len(columns[d.name])
        if d.kind.log if d.name in sampled else numeric and logarithmic(numbers):
            out.append(d.name)
    return tuple(out)


def defaults(results: Observation, metric: str | None) -> str:
    """The metric asked for; else the sweep's own (an adaptive search's, a `stop_when`'s); else
    the first (by name) with a number anywhere. RunnerError when there is none."""
    if metric:
        return metric
    if results.objective is not None:
        return results.objective.metric
    numeric = results.numeric_metrics
    if not numeric:
        raise RunnerError(f"{results.name}: {_nothing_to_rank(results)}")
    return numeric[0]


def _nothing_to_rank(results: Observation) -> str:
    """Why a sweep has no metric to rank by, and what helps (never `--metric`, which needs a
    metric some point has)."""
    ended = [p for p in results.points if p.state == ExperimentState.SUCCEEDED]
    if ended:
        return (
            f"the {len(ended)} point(s) that succeeded wrote no numeric metric: a job writes its"
            " metrics as numbers to $RESULTS_DIR/metrics.json (`status` shows what each wrote)"
        )
    going = sum(isinstance(p.state, ExperimentState) and p.state.live for p in results.points)
    unsent = sum(p.state == Absent.NOT_SUBMITTED for p in results.points)
    if going:
        then = f"{going} queued or running: `{invoked()} wait {results.path}` waits for them"
    elif unsent:
        then = f"{unsent} not submitted: `{invoked()} submit {results.path}` runs them"
    else:
        then = "none succeeded: `status` shows why each ended"
    return (
        f"no point has finished yet, so there is no metric to rank by ({then}; report again then)"
    )


def find(
    results: Observation, metric: str, goal: Goal, estimator: Estimator = Estimator.VARIANCE
) -> Findings:
    """The sweep's findings, importance judged by `estimator` (fANOVA needs Optuna and
    scikit-learn: `runner.search.adaptive.fanova_available`)."""
    ladder = results.halving.ladder if results.halving is not None else None
    params = tuple(n for n in results.axes if n not in (ROUND, *(ladder.names if ladder else ())))
    sample = results.sample
    spaces = {d.name: d for d in (sample.params if sample is not None else ())}
    columns = {n: [v for p in results.points for k, v in p.params if k == n] for n in params}
    space = tuple(spaces.get(n) or ranking.spanned(n, columns[n]) for n in params)
    log = _log(space, spaces, columns)
    limits = results.constraints  # a point that breaks one is never ranked, nor "best"
    kept = [p for p in results.points if counts(p, limits)]
    ranked = tuple(aiming.ranked(results, metric, goal))
    judged = ranked
    if ladder is not None:  # the highest rung first; importance at one budget, rung 0's
        ranked = tuple(sorted(ranked, key=lambda p: -ladder.rung(dict(p.params))))
        judged = tuple(p for p in ranked if ladder.rung(dict(p.params)) == 0)
    by_round = ROUND in results.axes
    return Findings(
        results,
        metric,
        goal,
        params,
        log,
        ranked,
        importance(results, space, judged, metric, estimator),
        progress(kept, metric, goal, by_round),
        by_round,
        space,
        learning_curves(results, metric, ranked[0].key if ranked else None),
        sweep_front(results, Aim(metric, goal)) if metric else None,
    )


def importance(
    results: Observation,
    space: Sequence[Distribution],
    points: Sequence[PointResult],
    metric: str,
    estimator: Estimator,
) -> Judgement:
    """Each parameter's share among the finished points where it exists
    (`runner.search.importance`)."""
    rows = [tuple(dict(p.params).get(d.name) for d in space) for p in points]
    values = [float(p.finished(metric) or 0.0) for p in points]
    conditions = {c.name: str(c) for c in results.conditions}
    return judge(space, rows, values, conditions, estimator)


def last_rung_best(results: Observation) -> PointResult | None:
    """A successive halving's best point of the highest rung any point has finished in, by the
    sweep's objective; None for another sweep, or before any point has finished."""
    halving, aim = results.halving, results.objective
    if halving is None or aim is None:
        return None
    ladder, metric = halving.ladder, aim.metric
    done = [p for p in results.points if p.finished(metric) is not None]
    top = max((ladder.rung(dict(p.params)) for p in done), default=0)
    mine = [p for p in done if ladder.rung(dict(p.params)) == top]
    return ranking.best(mine, lambda p: p.finished(metric), aim.goal)


def told_findings(f: Findings) -> tuple[Told, ...]:
    """Each point as an Optuna study of the page's space is told it (`told`): its row in the
    order of `f.space`, judged by the page's metric alone."""
    return told(f.results, [d.name for d in f.space], Aims((Aim(f.metric, f.goal),)))


def progress(
    points: Sequence[PointResult], metric: str, goal: Goal, by_round: bool
) -> tuple[Step, ...]:
    """The best value so far: after each finished point in the sweep's order, or each round."""
    if by_round:
        rounds: dict[int, list[float]] = {}
        for p in points:
            value = p.finished(metric)
            round_ = dict(p.params).get(ROUND)
            if value is not None and isinstance(round_, int) and round_ >= 0:
                rounds.setdefault(round_, []).append(value)
        xs = sorted(rounds)
        values = [ranking.best(rounds[k], float, goal) for k in xs]
    else:
        scored = [(i + 1, p.finished(metric)) for i, p in enumerate(points)]
        kept = [(x, v) for x, v in scored if v is not None]
        xs, values = [x for x, _ in kept], [v for _, v in kept]
    bests = ranking.best_so_far(values, goal)
    return tuple(
        Step(x, float(v), float(b))
        for x, v, b in zip(xs, values, bests, strict=True)
        if v is not None and b is not None
    )
