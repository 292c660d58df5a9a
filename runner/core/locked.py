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
