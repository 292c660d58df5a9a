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

Two or more objectives make a multi-objective study (TPE's and GP's own: the trials below are
the first non-dominated ranks); constraints are each trial's constraint values, which both
samplers read to steer away from infeasible points. A warm start's prior points are complete
trials like the search's own.
"""

from __future__ import annotations

import contextlib
import importlib.util
import inspect
import json
import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from runner.core.aims import Aims, Goal
from runner.core.errors import MissingExtra, RunnerError
from runner.core.model import Cell
from runner.core.output import writing
from runner.core.sample import Distribution, Kind, Method, Sample, row_identity
from runner.core.values import Value
from runner.search.points import Result, Told, parents_first, rounded
from runner.search.ranking import Estimator, Importance, normalised, too_few

ATTEMPTS = 50
"""Asks per new point before giving up on finding one not proposed yet (after rounding)."""
FANOVA_TREES = 16
"""fANOVA's forest: this many trees of at most this depth (Optuna's 64 x 64 took 57 s on 1 000
points and 4 parameters, 16 x 16 took 13 s with the same shares to 3 decimals)."""
CONSTRAINTS = "constraints"
"""Where a trial keeps its constraint values (Optuna's own key, read by Optuna 4 and 5)."""
FANOVA_POINTS = 1000
"""fANOVA judges at most about this many finished points: every k-th, in the sweep's order."""


def _optuna() -> Any:
    try:
        import optuna
    except ImportError:
        raise MissingExtra(
            "adaptive search needs Optuna: pip install 'beaker-sweep-runner[adaptive]'"
        ) from None
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    return optuna


def _sampler(optuna: Any, sample: Sample, aims: Aims, round_: int) -> Any:
    """The method's sampler, seeded by the sample's seed and the round."""
    seed = sample.seed + round_
    samplers = optuna.samplers
    constrained: dict[str, Any] = {}
    if aims.constraints and "constraints" not in _trial_arguments(optuna):
        # Optuna 4 reads a trial's constraints only for a sampler given `constraints_func`
        # (Optuna 5 reads them always, and warns of that argument).
        constrained["constraints_func"] = _constraints
    if sample.method == Method.GP:
        if importlib.util.find_spec("torch") is None:
            raise MissingExtra(
                "method gp needs PyTorch (Optuna's GPSampler): pip install torch (the CPU build"
                " is enough), or use method tpe"
            )
        return samplers.GPSampler(seed=seed, **constrained)
    return samplers.TPESampler(seed=seed, constant_liar=True, **constrained)


def _trial_arguments(optuna: Any) -> Any:
    """What this Optuna's `create_trial` takes (5 takes `constraints`, 4 does not)."""
    return inspect.signature(optuna.trial.create_trial).parameters


def _constraints(trial: Any) -> Any:
    """A trial's constraint values, as `_trial` stored them."""
    return trial.system_attrs.get(CONSTRAINTS, ())


def _distribution(optuna: Any, d: Distribution) -> Any:
    dists = optuna.distributions
    if d.kind == Kind.CHOICE:
        return dists.CategoricalDistribution(list(d.bounds))
    low, high = d.bounds
    if d.kind.integer:
        return dists.IntDistribution(int(low), int(high), log=d.kind.log)
    return dists.FloatDistribution(float(low), float(high), log=d.kind.log)


def _suggest(trial: Any, d: Distribution) -> Any:
    """Ask the trial for one parameter, with the same distribution as `_distribution`'s."""
    if d.kind == Kind.CHOICE:
        return trial.suggest_categorical(d.name, list(d.bounds))
    low, high = d.bounds
    if d.kind.integer:
        return trial.suggest_int(d.name, int(low), int(high), log=d.kind.log)
    return trial.suggest_float(d.name, float(low), float(high), log=d.kind.log)


def _round(d: Distribution, value: Any, digits: int) -> Value:
    if d.kind == Kind.CHOICE:
        return value  # type: ignore[no-any-return]
    if d.kind.integer:
        return int(value)
    low, high = float(d.bounds[0]), float(d.bounds[1])
    return min(max(rounded(float(value), digits), low), high)


def propose(
    sample: Sample, aims: Aims, told: Sequence[Told], count: int, round_: int
) -> list[tuple[Cell, ...]]:
    """`count` new points (fewer when the space has no more after rounding), never one told:
    Optuna's study toward the sweep's objectives (`aims`), kept from its constraints."""
    optuna = _optuna()
    directions = [str(a.goal) for a in aims.objectives] or [str(Goal.MINIMIZE)]
    sampler = _sampler(optuna, sample, aims, round_)
    study = optuna.create_study(directions=directions, sampler=sampler)
    space = {d.name: _distribution(optuna, d) for d in sample.params}
    for point in told:
        study.add_trial(_trial(optuna, space, point))
    seen = {row_identity(p.row) for p in told}
    new: list[tuple[Cell, ...]] = []
    order = parents_first(sample)
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


def _trial(optuna: Any, space: dict[str, Any], point: Told) -> Any:
    """A point so far as a frozen trial: complete with its value, running, or failed. A
    conditional parameter absent from the point is absent from its trial too."""
    params = {n: v for n, v in zip(space, point.row, strict=True) if v is not None}
    dists = {n: space[n] for n in params}
    states = optuna.trial.TrialState
    values = point.values or ((point.value,) if point.value is not None else ())
    if point.result == Result.DONE and values and all(math.isfinite(v) for v in values):
        stored = {CONSTRAINTS: list(point.excess)} if point.excess else None
        return optuna.trial.create_trial(
            params=params, distributions=dists, values=list(values), system_attrs=stored
        )
    state = states.RUNNING if point.result == Result.PENDING else states.FAIL
    return optuna.trial.create_trial(params=params, distributions=dists, state=state)


def fanova_available() -> bool:
    """Whether fANOVA can run: Optuna (the `[adaptive]` extra) and scikit-learn, whose random
    forests Optuna's fANOVA fits. Finding is not importing."""
    return all(importlib.util.find_spec(m) is not None for m in ("optuna", "sklearn"))


def estimator() -> Estimator:
    """The best importance this machine can judge: fANOVA where it runs, else main effects."""
    return Estimator.FANOVA if fanova_available() else Estimator.VARIANCE


def fanova(
    space: Sequence[Distribution],
    rows: Sequence[Sequence[Cell]],
    values: Sequence[float],
    trees: int = FANOVA_TREES,
) -> Importance:
    """fANOVA (`optuna.importance`, seeded) over the finished points: a study rebuilt from them,
    one complete trial each, in the space given (one distribution per column of `rows`); a
    forest of `trees` trees that deep (smaller than Optuna's default), on at most about
    FANOVA_POINTS points."""
    refused = too_few(Estimator.FANOVA, [d.name for d in space], len(values))
    if refused is not None:
        return refused
    stride = math.ceil(len(values) / FANOVA_POINTS)  # an even, deterministic subsample
    rows, values = rows[::stride], values[::stride]
    optuna = _optuna()
    dists = {d.name: _distribution(optuna, d) for d in space}
    study = optuna.create_study(direction=str(Goal.MINIMIZE))
    for row, value in zip(rows, values, strict=True):
        study.add_trial(_trial(optuna, dists, Told(tuple(row), Result.DONE, value)))
    evaluator = optuna.importance.FanovaImportanceEvaluator(n_trees=trees, max_depth=trees, seed=0)
    try:
        raw = optuna.importance.get_param_importances(study, evaluator=evaluator)
    except (ImportError, RuntimeError, ValueError) as exc:  # scikit-learn missing, a flat metric
        return Importance(Estimator.FANOVA, note=f"fANOVA could not run: {exc}")
    return normalised(Estimator.FANOVA, {n: float(v) for n, v in raw.items()})


SQLITE = (".db", ".sqlite", ".sqlite3")


NOT_A_STUDY = "not an Optuna SQLite database or journal file"


def _storage(optuna: Any, path: Path) -> Any:
    """The study file opened (made where there is none): SQLite by its suffix, else an Optuna
    journal. A RunnerError for a file already there of another kind, or a database SQLite
    cannot open; an OSError for a journal that cannot be made."""
    from sqlalchemy.exc import DatabaseError, OperationalError  # Optuna's SQLite storage's

    if path.suffix.lower() in SQLITE:
        try:
            return optuna.storages.RDBStorage(f"sqlite:///{path.resolve()}")
        except OperationalError as exc:  # no file can be made there, or it is locked
            raise RunnerError(f"cannot write {path}: {exc.orig}") from None
        except DatabaseError:
            raise RunnerError(f"{path}: {NOT_A_STUDY}") from None
    from optuna.storages.journal import JournalFileBackend

    if not _journal_lines(path):
        raise RunnerError(f"{path}: {NOT_A_STUDY}")
    backend = JournalFileBackend(str(path))
    try:  # replaying the operations: another file's fail in any of these ways
        return optuna.storages.JournalStorage(backend)
    except (ValueError, LookupError, TypeError, AttributeError, AssertionError):
        raise RunnerError(f"{path}: {NOT_A_STUDY}") from None


def _journal_lines(path: Path) -> bool:
    """Whether every line of the file (if there is one) is an operation of an Optuna journal,
    a JSON object with its `op_code`. Checked before Optuna opens it: Optuna takes a last line
    that does not parse for one being written, appends after it, and only then fails."""
    try:
        with path.open("rb") as lines:
            return all(
                isinstance(op := json.loads(line), dict) and "op_code" in op for line in lines
            )
    except FileNotFoundError:
        return True
    except ValueError:  # not JSON, not text
        return False


def write_study(
    path: Path, name: str, goal: Goal, space: Sequence[Distribution], told: Sequence[Told]
) -> None:
    """The sweep as the Optuna study `name` in a file optuna-dashboard opens offline: SQLite
    (`.db`, `.sqlite`, `.sqlite3`) or else an Optuna journal; a study of that name is replaced."""
    optuna = _optuna()
    with writing(path):
        path.parent.mkdir(parents=True, exist_ok=True)
        storage = _storage(optuna, path)
    with contextlib.suppress(KeyError):  # no study of that name yet
        optuna.delete_study(study_name=name, storage=storage)
    study = optuna.create_study(study_name=name, storage=storage, direction=str(goal))
    dists = {d.name: _distribution(optuna, d) for d in space}
    study.add_trials([_trial(optuna, dists, point) for point in told])
