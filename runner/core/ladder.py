"""Successive halving's rungs as the space, the renderer and the plan see them: the budget
parameter's value at each rung, and the names every point of a halving carries.

`runner.manifest.fidelity` parses and checks the `params.fidelity` section that makes one.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from runner.core.values import Value

RUNG = "rung"
"""A successive halving's points carry their rung (0 first) as this parameter, in their key."""
PARENT = "parent"
"""`{parent}` in a task of a successive halving: the experiment name of the point a promoted
point came from (absent at rung 0, whose points have none)."""


@dataclass(frozen=True)
class Ladder:
    """Successive halving's rungs, as the space and the renderer see them: the fidelity
    parameter, its value at each rung (rung 0 first, the last at `max`) and the factor
    `eta` by which each rung keeps fewer points (`runner.manifest.fidelity` checks it)."""

    param: str
    values: tuple[Value, ...]
    eta: int

    @property
    def names(self) -> tuple[str, str]:
        """The two parameters every point of the halving carries: the fidelity and the rung."""
        return (self.param, RUNG)

    def at(self, rung: int) -> tuple[tuple[str, Value], tuple[str, Value]]:
        """The fidelity parameter and the rung, as a point of rung `rung` carries them."""
        return ((self.param, self.values[rung]), (RUNG, rung))

    def rung(self, params: Mapping[str, Value]) -> int:
        """The rung of a point's parameters (0 for one that names none)."""
        found = params.get(RUNG, 0)
        return found if isinstance(found, int) and not isinstance(found, bool) else 0

    def fraction(self, params: Mapping[str, Value]) -> float:
        """The share of the full length (`value / max`) a point of these parameters runs."""
        last = float(self.values[-1])
        return float(params.get(self.param, last)) / last

    def kept(self, points: int) -> int:
        """How many of a rung of `points` go on to the next: `max(1, points // eta)`."""
        return max(1, points // self.eta)

    def sizes(self, first: int) -> tuple[int, ...]:
        """How many points each rung holds when rung 0 holds `first` (`kept`, rung by rung)."""
        out = [first]
        for _ in self.values[1:]:
            out.append(self.kept(out[-1]) if first else 0)
        return tuple(out)

    def parent(self, params: tuple[tuple[str, Value], ...]) -> tuple[tuple[str, Value], ...] | None:
        """The parameters of the point a promoted point came from: the same configuration one
        rung lower; None at rung 0."""
        rung = self.rung(dict(params))
        if rung == 0:
            return None
        below = dict(self.at(rung - 1))
        return tuple((n, below.get(n, v)) for n, v in params)
