"""The lab's learning curves: a configuration in the unit cube [0, 1]^3, a budget in steps
(100 and up) and a seed give the loss a run of that length ends with.

`curve` is `runner.examples.objectives.curve` (power-law decay to a floor the configuration
sets; the rate grows with x1, so fast and slow learners cross). `saturating` is the second
family: an exponential approach to its floor, `floor + amp · exp(-steps / tau)`, the `exp`
family of Domhan, Springenberg and Hutter (IJCAI 2015) that learning-curve extrapolation fits
beside the power law, plus per-run noise.

Why it is a fair second family: it is another standard shape, not a variant of the first; the
time constant grows with x2 (from 150 to 3 000 steps) independently of where the floor is
lowest, so a slow learner with the best floor looks poor at 100 steps, as with a small
learning rate or a long warm-up; and each run's loss carries its own noise (sd 0.01, a training
seed's spread), so a rung's ranking is not exactly the truth at its budget. Neither strategy
is told anything the other is not: both see the same values of the same runs. If anything it
is harder for asynchronous promotion, which decides on fewer points: its early rankings predict
the final one less well than `curve`'s do (the lab's notes give the rank correlations).
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from runner.examples.objectives import curve

Objective = Callable[[Sequence[float], float, int], float]


def saturating(x: Sequence[float], steps: float, seed: int = 0) -> float:
    """The loss after `steps` of the configuration `x` of instance `seed` (see the module)."""
    centre = random.Random(f"saturating/{seed}")
    c = [centre.uniform(0.2, 0.8) for _ in range(3)]
    floor = 0.2 + 0.8 * (x[0] - c[0]) ** 2 + 1.6 * (x[1] - c[1]) ** 2 + 0.4 * (x[2] - c[2]) ** 2
    tau = 150 * 20 ** x[1]
    amp = 0.5 + x[2]
    noise = random.Random(f"saturating/{seed}/{x[0]!r}/{x[1]!r}/{x[2]!r}/{steps!r}")
    return floor + amp * math.exp(-steps / tau) + noise.gauss(0, 0.01)


@dataclass(frozen=True)
class Family:
    name: str
    said: str
    """How the results table names it."""
    loss: Objective


FAMILIES = (
    Family("curve", "the learning curve, a power law", curve),
    Family("saturating", "saturating curves with per-run noise", saturating),
)


def spearman(a: Sequence[float], b: Sequence[float]) -> float:
    """The rank correlation of two equally long sequences (no ties expected: continuous)."""
    n = len(a)
    if n < 2:
        return math.nan
    rank_a = {i: r for r, i in enumerate(sorted(range(n), key=lambda i: a[i]))}
    rank_b = {i: r for r, i in enumerate(sorted(range(n), key=lambda i: b[i]))}
    d2 = sum((rank_a[i] - rank_b[i]) ** 2 for i in range(n))
    return 1 - 6 * d2 / (n * (n * n - 1))
