"""Successive halving's rungs as the space, the renderer and the plan see them: the budget
parameter's value at each rung, and the names every point of a halving carries.

`runner.manifest.fidelity` parses and checks the `params.fidelity` section that makes one.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from fractions import Fraction

from runner.core.values import Value

RUNG = "rung"
"""A successive halving's points carry their rung (0 first) as this parameter, in their key."""
PARENT = "parent"
"""`{parent}` in a task of a successive halving: the experiment name of the point a promoted
point came from (absent at rung 0, whose points have none)."""
CHECKPOINT = "checkpoint"
"""`{checkpoint}` in a task of a halving with `params.fidelity.checkpoint`: where this point
writes its checkpoint (the template at its own experiment name); also `SWEEP_CHECKPOINT`."""
PARENT_CHECKPOINT = "parent_checkpoint"
"""`{parent_checkpoint}`: where a promoted point's parent wrote its checkpoint, which it resumes
(the template at the parent's name; absent at rung 0); also `SWEEP_PARENT_CHECKPOINT`."""
SECOND = 10**9
"""Nanoseconds, as a spec's `timeout` counts them: a rung's timeout is whole seconds."""
MIN_TIMEOUT = 600 * SECOND
"""`params.fidelity.min_timeout` when the manifest leaves it out (10m): what a short rung is
given at least, for start-up (pulling the image, loading the parent's checkpoint)."""


@dataclass(frozen=True)
class Ladder:
    """Successive halving's rungs, as the space and the renderer see them: the fidelity
    parameter, its value at each rung (rung 0 first, the last at `max`) and the factor
    `eta` by which each rung keeps fewer points (`runner.manifest.fidelity` checks it)."""

    param: str
    values: tuple[Value, ...]
    eta: int
    min_timeout: int = MIN_TIMEOUT
    """The least timeout (ns) a rung point's tasks get (`timeout`)."""
    checkpoint: str | None = None
    """`params.fidelity.checkpoint` as written: the path template (naming `{experiment}`) of
    where each point writes its checkpoint, and so where a promoted point finds its parent's;
    None: the runner knows nothing of checkpoints."""

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

    def share(self, rung: int) -> Fraction:
        """The share of the full length (`value / max`) a point of rung `rung` runs: exact, the
        values read as written (0.3 of 0.9 is 1/3), so every machine renders the same timeout."""
        return _exact(self.values[rung]) / _exact(self.values[-1])

    def timeout(self, full: int, rung: int) -> int:
        """The timeout (ns) of a rung-`rung` point's tasks when a full-length point's is `full`:
        its share of it, at least `min_timeout`, rounded up to whole seconds, never above
        `full`; the last rung's is `full` itself. This is what Beaker enforces and what the
        plan prices (`runner.plan.cost`)."""
        share = self.share(rung)
        if share >= 1:
            return full
        floored = max(math.ceil(full * share), self.min_timeout)
        return min(-(-floored // SECOND) * SECOND, full)

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
        return None if rung == 0 else self.moved(params, rung - 1)

    def moved(
        self, params: tuple[tuple[str, Value], ...], rung: int
    ) -> tuple[tuple[str, Value], ...]:
        """The same configuration's parameters at rung `rung` (its budget and rung replaced)."""
        there = dict(self.at(rung))
        return tuple((n, there.get(n, v)) for n, v in params)


def _exact(value: Value) -> Fraction:
    """A budget as written: an int as itself, a float as its shortest decimal (`repr`)."""
    return Fraction(value) if isinstance(value, int) else Fraction(repr(value))
