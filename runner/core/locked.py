"""What a sweep's lock file holds, as values (`runner.manifest.lock` reads and writes it): a
sample's points and an adaptive search's rounds, a successive halving's promoted points and a
warm start's prior points. The lock is part of the sweep: the points a pull request shows are
the lock's, and the merge submits the same ones.
"""

from __future__ import annotations

from dataclasses import dataclass

from runner.core.conditions import Cell

Rows = tuple[tuple[Cell, ...], ...]
"""Points as rows of values (None where a conditional parameter is absent)."""


@dataclass(frozen=True)
class RungLock:
    """The lock's `rungs`: each configuration promoted so far, with its rung (1 and up)."""

    of: str
    """What the rungs belong to (`runner.manifest.fidelity.belonging`): the fidelity section
    and rung 0's configurations."""
    names: tuple[str, ...]
    """The parameters of a configuration: every parameter but the fidelity one and the rung."""
    promoted: tuple[tuple[int, tuple[Cell, ...]], ...]


@dataclass(frozen=True)
class Seed:
    """One finished point of another sweep, as a prior trial."""

    sweep: str
    key: str
    """The point's key in that sweep (its ledger's)."""
    row: tuple[Cell, ...]
    """Its values of this search's parameters, in the sample's order (None: absent)."""
    values: tuple[float, ...]
    """Its value of each metric in `Seeds.metrics`."""


@dataclass(frozen=True)
class Seeds:
    """The prior points a warm start used (none found is an answer too: it is not asked again)."""

    metrics: tuple[str, ...]
    points: tuple[Seed, ...] = ()

    def values(self, seed: Seed, names: tuple[str, ...]) -> tuple[float | None, ...]:
        """The seed's value of each metric named (None: one it was not copied with)."""
        by_name = dict(zip(self.metrics, seed.values, strict=True))
        return tuple(by_name.get(n) for n in names)


@dataclass(frozen=True)
class Heard:
    """One point as an automatic round read it: what anyone needs to tell the search the same."""

    key: str
    name: str
    """Its experiment's name."""
    row: tuple[Cell, ...]
    """Its values, in the order the search is told them (a halving's: configuration, budget
    and rung)."""
    result: str
    """`done`, `failed` or `pending` (`runner.search.points.Result`, by name)."""
    values: tuple[float, ...] = ()
    """Every objective's value, when done with them."""
    excess: tuple[float, ...] = ()
    """How far it breaks each constraint (above 0: broken)."""


@dataclass(frozen=True)
class Cutoff:
    """How a halving's round chose from one rung: its points ranked, how many had ended and
    how many go on."""

    rung: int
    ranked: tuple[str, ...]
    """The keys of the rung's points, best first (`runner.search.rungs.ranked`)."""
    ended: int
    kept: int
    """How many go on: `max(1, n // eta)` of a finished rung (synchronous), or `floor(m / eta)`
    of the `m` ended (asynchronous), before those promoted already are taken out."""


@dataclass(frozen=True)
class Decision:
    """An automatic round (`advance: auto`), as the lock records it before its points are
    created: what it read, how it chose and what it chose, so that anyone can recompute it
    (`runner.locking.replay`)."""

    round: int
    """The round proposed (an adaptive search), or the highest rung promoted to."""
    of: str
    """What it belongs to: the sample's digest (an adaptive search) or the rungs' `of`."""
    ledger: str
    """The commit whose ledger (and manifest) it read."""
    before: int
    """The points (an adaptive search) or promotions (a halving) the lock held before it."""
    told: tuple[Heard, ...]
    """Every point it read, as the search was told it."""
    chose: tuple[tuple[int, tuple[Cell, ...]], ...]
    """What it appended: each point's round (or rung) and row."""
    envelope: str
    """The digest of the envelope it ran inside (`runner.plan.envelope`)."""
    gpu_hours: float | None
    """Every point so far and the round's, in GPU-hours as the budget judges them; None:
    unbounded."""
    cuts: tuple[Cutoff, ...] = ()
    """A halving's: each rung it promoted from."""
    seed: int | None = None
    """An adaptive search's: the sampler's seed (the sample's plus the round)."""


@dataclass(frozen=True)
class Locked:
    """A lock file that reads back as it was written."""

    sample: str
    """The digest of the sample section its points belong to (`Sample.digest`); empty for a
    lock without a sample's points."""
    rows: Rows
    """None where a conditional parameter is absent (null in the lock)."""
    rounds: tuple[int, ...] = ()
    """An adaptive search's round of each point; empty otherwise (all round 0)."""
    rungs: RungLock | None = None
    """A successive halving's promoted points (`runner.manifest.fidelity`), when proposed."""
    seeds: Seeds | None = None
    """A warm start's prior points, once `propose` copied them."""
    decisions: tuple[Decision, ...] = ()
    """The automatic rounds (`advance: auto`), oldest first; the others a person merged."""
