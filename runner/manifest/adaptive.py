"""Adaptive search: the next round of points, from Optuna's ask-and-tell interface (the one
optuna user; the optional `[adaptive]` extra, never imported on the submit path). Methods: tpe
(TPESampler) and gp (GPSampler, which needs PyTorch). Not CMA-ES: Optuna's CmaEsSampler keeps its
state in its own trials' attributes, which a study rebuilt from the lock does not have, so each
round would start it afresh (measured: worse than random after 64 points on Branin).

The study lives in memory only, rebuilt on each call from the lock (every point so far, in order)
and each point's result: a finished point with its metric is a complete trial, a failed one (or
one without the metric) a failed trial, one queued or running a running trial, which TPE's
`constant_liar` counts so a batch spreads out instead of piling onto one spot. The sampler's
seed is the sample's seed plus the round, so the same lock, results and seed always propose the
same points, byte for byte. Conditional parameters (`when:`) are asked for define-by-run: each
parameter in turn, parents first, and a conditional one only where its condition holds.
"""

from __future__ import annotations

import importlib.util
import math
from collections.abc import Sequence
from dataclasses import dataclass
from enum import Enum, auto
from typing import Any

from runner.core.errors import MissingExtra
from runner.core.model import Cell
from runner.core.values import Value
from runner.manifest.sample import Distribution, Sample, row_identity

ATTEMPTS = 50
"""Asks per new point before giving up on finding one not proposed yet (after rounding)."""


class Result(Enum):
    """How a point so far ended, as Optuna's trial states: complete, failed, still running."""

    DONE = auto()
    FAILED = auto()
    PENDING = auto()


@dataclass(frozen=True)
class Told:
    """What a point so far says: its values, and how it ended (with its metric, when done)."""

    row: tuple[Cell, ...]
    """None where a conditional parameter is absent."""
    result: Result
    value: float | None = None


def _optuna() -> Any:
    try:
        import optuna
    except ImportError:
        raise MissingExtra(
            "adaptive search needs Optuna: pip install 'beaker-sweep-runner[adaptive]'"
        ) from None
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    return optuna


def _sampler(optuna: Any, sample: Sample, round_: int) -> Any:
    """The method's sampler, seeded by the sample's seed and the round."""
    seed = sample.seed + round_
    samplers = optuna.samplers
    if sample.method == "gp":
        if importlib.util.find_spec("torch") is None:
            raise MissingExtra(
                "method gp needs PyTorch (Optuna's GPSampler): pip install torch (the CPU build"
                " is enough), or use method tpe"
            )
        return samplers.GPSampler(seed=seed)
    return samplers.TPESampler(seed=seed, constant_liar=True)


def _distribution(optuna: Any, d: Distribution) -> Any:
    dists = optuna.distributions
    if d.kind == "choice":
        return dists.CategoricalDistribution(list(d.bounds))
    low, high = d.bounds
    if d.kind in ("int", "log_int"):
        return dists.IntDistribution(int(low), int(high), log=d.kind == "log_int")
    return dists.FloatDistribution(float(low), float(high), log=d.kind == "log_uniform")


def _suggest(trial: Any, d: Distribution) -> Any:
    """Ask the trial for one parameter, with the same distribution as `_distribution`'s."""
    if d.kind == "choice":
        return trial.suggest_categorical(d.name, list(d.bounds))
    low, high = d.bounds
    if d.kind in ("int", "log_int"):
        return trial.suggest_int(d.name, int(low), int(high), log=d.kind == "log_int")
    return trial.suggest_float(d.name, float(low), float(high), log=d.kind == "log_uniform")


def _round(d: Distribution, value: Any, digits: int) -> Value:
    if d.kind == "choice":
        return value  # type: ignore[no-any-return]
    if d.kind in ("int", "log_int"):
        return int(value)
    low, high = float(d.bounds[0]), float(d.bounds[1])
    return min(max(float(f"{float(value):.{digits}g}"), low), high)


def propose(
    sample: Sample, told: Sequence[Told], count: int, round_: int
) -> list[tuple[Cell, ...]]:
    """`count` new points (fewer when the space has no more after rounding), never one told."""
    optuna = _optuna()
    direction = "maximize" if sample.goal == "maximize" else "minimize"
    study = optuna.create_study(direction=direction, sampler=_sampler(optuna, sample, round_))
    space = {d.name: _distribution(optuna, d) for d in sample.params}
    states = optuna.trial.TrialState
    for point in told:
        # A conditional parameter absent from a point is absent from its trial too.
        params = {n: v for n, v in zip(sample.names, point.row, strict=True) if v is not None}
        dists = {n: space[n] for n in params}
        if point.result == Result.DONE and point.value is not None and math.isfinite(point.value):
            trial = optuna.trial.create_trial(params=params, distributions=dists, value=point.value)
        elif point.result == Result.PENDING:
            trial = optuna.trial.create_trial(
                params=params, distributions=dists, state=states.RUNNING
            )
        else:
            trial = optuna.trial.create_trial(params=params, distributions=dists, state=states.FAIL)
        study.add_trial(trial)
    seen = {row_identity(p.row) for p in told}
    new: list[tuple[Cell, ...]] = []
    order = _parents_first(sample)
    for _ in range(count * ATTEMPTS):
        if len(new) == count:
            break
        # Define-by-run: a conditional parameter is asked for only where its condition holds,
        # so the sampler never models a value the point does not have. The trial stays
        # running: the next asks lie about it (constant_liar).
        trial = study.ask()
        values: dict[str, Cell] = {}
        for d in order:
            if d.when is None or d.when.holds(values):
                values[d.name] = _round(d, _suggest(trial, d), sample.digits)
        row = tuple(values.get(n) for n in sample.names)
        if row_identity(row) not in seen:
            seen.add(row_identity(row))
            new.append(row)
    return new


def _parents_first(sample: Sample) -> list[Distribution]:
    """The sampled parameters in the order written, each conditional one after those its
    condition reads (acyclic: checked on load)."""
    by_name = {d.name: d for d in sample.params}
    out: list[Distribution] = []

    def visit(d: Distribution) -> None:
        if d in out:
            return
        for name in d.when.on if d.when is not None else ():
            if name in by_name and by_name[name] not in out:
                visit(by_name[name])
        out.append(d)

    for d in sample.params:
        visit(d)
    return out
