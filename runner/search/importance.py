"""Each parameter's importance, judged where it exists and only where there are points enough.

A parameter present at every finished point is judged over all of them. A conditional one
(`when:`, or any parameter some points lack) is judged among the points where it exists, its
*branch*, together with the parameters that vary there: its share is of the metric's variance
within the branch, reported with its condition. Judged over every point, "absent" would be one
of its values, and it would take its parent's effect (the other optimizer) for its own; fANOVA
drops such a parameter without a word (Optuna keeps only the parameters of every trial).

A forest (fANOVA) judges a population of at least FLOOR finished points; below that, the main
effects judge it, whose share subtracts what chance gives that many groups, so a parameter with
no effect gets nothing (a forest on six points gives `seed` a tenth). A parameter with a value
seen at a single point cannot be told from noise: it is listed as too few points to judge, and
so is every parameter of a population below `ranking.min_points`. Pure; fANOVA is Optuna's, in
`runner.search.adaptive`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from runner.core.model import Cell
from runner.core.sample import Distribution
from runner.core.values import identity
from runner.search import adaptive, ranking
from runner.search.ranking import Estimator, Importance

FLOOR = 20
"""The fewest finished points a forest (fANOVA) judges; fewer are judged by main effects."""
WHERE_SET = "where it is set"
"""The condition of a parameter some points lack that the manifest gives no `when:` (an
orphan's, an `include:` entry's)."""


@dataclass(frozen=True)
class Share:
    """One parameter's importance: its share of the metric's variance among the points where
    it exists, or why it has none."""

    name: str
    value: float | None
    """In [0, 1]; None: not judged (`note` says why)."""
    method: Estimator
    points: int
    """The finished points it was judged among (its branch's, for a conditional one)."""
    condition: str = ""
    """A conditional parameter's `when opt: sgd`: judged only where it holds."""
    note: str = ""


@dataclass(frozen=True)
class Judgement:
    """Every swept parameter's `Share` (judged first, largest first), by the method asked for
    (a population too small for it is judged by main effects: each share names its method)."""

    method: Estimator
    shares: tuple[Share, ...] = ()
    note: str = ""
    """Why no parameter has a share, when none has."""

    @property
    def values(self) -> dict[str, float]:
        """The judged parameters' shares, by name."""
        return {s.name: s.value for s in self.shares if s.value is not None}

    @property
    def judged(self) -> tuple[Share, ...]:
        return tuple(s for s in self.shares if s.value is not None)


@dataclass(frozen=True)
class _Population:
    """The finished points where some parameters exist (all of them, or a branch)."""

    indices: tuple[int, ...]
    home: tuple[str, ...]
    """The parameters whose points these are exactly: the ones this population reports."""
    condition: str


def judge(
    space: Sequence[Distribution],
    rows: Sequence[Sequence[Cell]],
    values: Sequence[float],
    conditions: Mapping[str, str],
    estimator: Estimator,
) -> Judgement:
    """Each parameter of `space` (one column of `rows` each, None where a point lacks it) judged
    where it exists; `conditions`: a conditional parameter's condition, as the manifest says it."""
    names = [d.name for d in space]
    shares: list[Share] = []
    for population in _populations(names, rows, conditions):
        shares += _judge(population, space, rows, values, estimator)
    judged = sorted((s for s in shares if s.value is not None), key=lambda s: -(s.value or 0))
    unjudged = [s for s in shares if s.value is None]
    note = "" if judged else _why_none(shares, len(values))
    return Judgement(estimator, (*judged, *unjudged), note)


def _why_none(shares: Sequence[Share], finished: int) -> str:
    notes = list(dict.fromkeys(s.note for s in shares if s.note))
    if not shares:
        return "no parameter is swept"
    return notes[0] if len(notes) == 1 else f"no parameter could be judged on {finished} point(s)"


def _populations(
    names: Sequence[str], rows: Sequence[Sequence[Cell]], conditions: Mapping[str, str]
) -> list[_Population]:
    """Every point, then each branch (in the order of the parameters that live there)."""
    homes: dict[tuple[int, ...], list[str]] = {tuple(range(len(rows))): []}
    for j, name in enumerate(names):
        where = tuple(i for i, row in enumerate(rows) if row[j] is not None)
        homes.setdefault(where, []).append(name)
    out = []
    for indices, home in homes.items():
        if not home:
            continue
        conditional = len(indices) < len(rows)
        condition = conditions.get(home[0], WHERE_SET) if conditional else ""
        out.append(_Population(indices, tuple(home), condition))
    return out


def _judge(
    population: _Population,
    space: Sequence[Distribution],
    rows: Sequence[Sequence[Cell]],
    values: Sequence[float],
    estimator: Estimator,
) -> list[Share]:
    """The shares of the population's home parameters, judged with every parameter that exists
    and varies at each of its points."""
    at = population.indices
    columns = {d.name: [rows[i][j] for i in at] for j, d in enumerate(space)}
    present = [d for d in space if all(v is not None for v in columns[d.name])]
    varying = [
        d for d in present if len({identity(v) for v in columns[d.name] if v is not None}) > 1
    ]
    too_few = {d.name for d in varying if min(map(len, ranking.groups(columns[d.name]))) < 2}
    judged = [d for d in varying if d.name not in too_few]
    method = (
        estimator if estimator is not Estimator.FANOVA or len(at) >= FLOOR else Estimator.VARIANCE
    )
    found = _estimate(
        method,
        judged,
        [[columns[d.name][k] for d in judged] for k in range(len(at))],
        [values[i] for i in at],
    )
    out = []
    for name in population.home:
        note = found.note
        if name in too_few:
            note = "too few points to judge: a value of it was seen at one point only"
        elif name not in {d.name for d in varying}:
            note = "it has one value among these points"
        value = dict(found.shares).get(name)
        out.append(
            Share(
                name,
                value,
                found.method,
                len(at),
                population.condition,
                "" if value is not None else note,
            )
        )
    return out


def _estimate(
    method: Estimator,
    space: Sequence[Distribution],
    rows: Sequence[Sequence[Cell]],
    values: Sequence[float],
) -> Importance:
    if method is Estimator.FANOVA:
        return adaptive.fanova(space, rows, values)
    return ranking.main_effects([d.name for d in space], rows, values)
