"""The searches the lab drives, each deciding with the runner's own functions, never a copy:
synchronous halving (`runner.search.rounds.next_rung`, which promotes with
`runner.search.rungs.promote`), asynchronous halving (`runner.search.asha.step`, the rule
`asha.promotable` on every rung) and TPE in rounds (`runner.search.rounds.next_round` with
Optuna). The searches know nothing of time: the lab decides when they are asked
(`world.Mode`)."""

from __future__ import annotations

from collections.abc import Sequence

from runner.core.aims import Aim, Aims, Goal
from runner.core.ladder import Ladder
from runner.core.locked import Locked, Rows, RungLock
from runner.core.model import Cell
from runner.core.sample import Distribution, Kind, Method, Sample
from runner.manifest.fidelity import rung_values
from runner.search import asha
from runner.search.draw import draw
from runner.search.points import Told
from runner.search.rounds import Next, RoundVerdict, SoFar, next_round, next_rung
from runner.search.rungs import SuccessiveHalving
from tests.benchmarks.lab.families import Objective
from tests.benchmarks.lab.world import Point

NAMES = ("x1", "x2", "x3")
SPACE = tuple(Distribution(n, Kind.UNIFORM, (0.0, 1.0)) for n in NAMES)
LOSS = Aim("loss", Goal.MINIMIZE)
DIGITS = 6
MIN_STEPS, MAX_STEPS = 100, 8100


def xs(row: Sequence[Cell]) -> list[float]:
    """A configuration's values as the objective reads them (the first three cells)."""
    return [float(v) for v in row[: len(NAMES)] if isinstance(v, int | float)]


def halving_of(configurations: int, seed: int, eta: int = 3) -> SuccessiveHalving:
    """A halving of `configurations` drawn by Sobol from the unit cube (the seed's), from
    `MIN_STEPS` to `MAX_STEPS` steps (`rung_values`: 100, 300, 900, 2 700, 8 100 for eta 3)."""
    ladder = Ladder("steps", rung_values(MIN_STEPS, MAX_STEPS, eta), eta)
    sample = Sample(Method.SOBOL, configurations, seed, DIGITS, SPACE)
    rows = tuple(draw(sample, 0, configurations))
    return SuccessiveHalving(ladder, LOSS, NAMES, rows, "lab")


class _Halving:
    """What both halvings share: rung 0 is every configuration, a point's row is its
    configuration, budget and rung (`SuccessiveHalving.told`)."""

    def __init__(self, halving: SuccessiveHalving, loss: Objective, seed: int) -> None:
        self.halving, self.loss, self.seed = halving, loss, seed
        self._done = False

    @property
    def done(self) -> bool:
        return self._done

    def point(self, configuration: tuple[Cell, ...], rung: int) -> Point:
        steps = self.halving.ladder.values[rung]
        assert isinstance(steps, int)
        value = self.loss(xs(configuration), steps, self.seed)
        return Point((*configuration, steps, rung), steps / MAX_STEPS, value, rung)

    def first(self) -> list[Point]:
        return [self.point(row, 0) for row in self.halving.configurations]


class SyncHalving(_Halving):
    """A rung waits for its last point, then its best `kept(n)` go on: `next_rung`, told the
    lock (the configurations promoted so far) and what is observed."""

    def __init__(self, halving: SuccessiveHalving, loss: Objective, seed: int) -> None:
        super().__init__(halving, loss, seed)
        self.lock: Locked | None = None
        self.steps: list[Next] = []

    def step(self, observed: Sequence[Told]) -> list[Point]:
        found = next_rung(self.halving, self.lock, SoFar(tuple(observed)))
        if found.verdict is RoundVerdict.COMPLETE:
            self._done = True
        if found.verdict is not RoundVerdict.PROPOSED:
            _expected(found, RoundVerdict.WAITING, RoundVerdict.COMPLETE)
            return []
        self.steps.append(found)
        promoted = tuple(zip(found.rounds, found.rows, strict=True))
        self.lock = Locked("", (), rungs=RungLock(self.halving.of, self.halving.names, promoted))
        return [self.point(row, found.number) for row in found.new]


class AsyncHalving(_Halving):
    """Every rung's points go on as soon as they rank in the top floor(m / eta) of its ended
    points (`asha.step`); done once every rung below the last is settled."""

    def __init__(self, halving: SuccessiveHalving, loss: Objective, seed: int) -> None:
        super().__init__(halving, loss, seed)
        self.rows: Rows = ()
        self.rungs: tuple[int, ...] = ()
        self.cuts: list[tuple[asha.Cut, ...]] = []

    def step(self, observed: Sequence[Told]) -> list[Point]:
        cuts = asha.step(self.halving, (self.rows, self.rungs), observed)
        self.cuts.append(cuts)
        new = [(c.rung + 1, row) for c in cuts for row in c.promoted]
        self.rows = (*self.rows, *(row for _, row in new))
        self.rungs = (*self.rungs, *(k for k, _ in new))
        self._done = not new and all(c.settled for c in cuts)
        return [self.point(row, k) for k, row in new]


class Rounds:
    """TPE in rounds of `batch` (`next_round`: the next round once the last has ended), every
    point at the full budget."""

    def __init__(self, loss: Objective, seed: int, batch: int = 16, rounds: int = 8) -> None:
        self.sample = Sample(Method.TPE, batch * rounds, seed, DIGITS, SPACE, batch=batch)
        self.aims = Aims((LOSS,))
        self.loss, self.seed = loss, seed
        self.lock: Locked | None = None
        self._done = False

    @property
    def done(self) -> bool:
        return self._done

    def point(self, row: tuple[Cell, ...]) -> Point:
        return Point(row, 1.0, self.loss(xs(row), MAX_STEPS, self.seed))

    def first(self) -> list[Point]:
        return self.step(())

    def step(self, observed: Sequence[Told]) -> list[Point]:
        found = next_round(self.sample, self.aims, self.lock, SoFar(tuple(observed)))
        if found.verdict is RoundVerdict.COMPLETE:
            self._done = True
        if found.verdict is not RoundVerdict.PROPOSED:
            _expected(found, RoundVerdict.WAITING, RoundVerdict.COMPLETE)
            return []
        self.lock = Locked(self.sample.digest, found.rows, found.rounds)
        return [self.point(row) for row in found.new]


def _expected(found: Next, *verdicts: RoundVerdict) -> None:
    """A verdict the lab cannot produce (a stop, an exhausted space) is a bug, not a figure."""
    if found.verdict not in verdicts:
        raise RuntimeError(f"unexpected verdict {found.verdict} at step {found.number}")
