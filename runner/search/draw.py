"""Drawing sampled points: the one module that imports scipy and numpy (the `[search]` extra).

Only `sweep-runner lock` comes here (through `runner.search.rounds.proposer`). A draw is a function of (method, seed, dimension) and
the index range asked for: the first `start` points of a longer draw are the points of the
shorter one, so growing `n` only appends. The lock keeps the values drawn before, so a newer
scipy that drew them differently never changes a locked point.
"""

from __future__ import annotations

import inspect
import warnings
from collections.abc import Sequence
from typing import Any

from runner.core.aims import Aims
from runner.core.errors import MissingExtra
from runner.core.model import Cell
from runner.core.sample import Method, Sample
from runner.search.points import Told, row

INSTALL_HINT = "pip install 'beaker-sweep-runner[search]'"


def _libraries() -> tuple[Any, Any]:
    try:
        import numpy
        from scipy.stats import qmc
    except ImportError as exc:
        raise MissingExtra(
            f"`lock` draws points with scipy, which is not installed ({exc.name}): {INSTALL_HINT}"
        ) from None
    return numpy, qmc


def quantiles(
    method: Method, dimension: int, seed: int, start: int, count: int
) -> list[list[float]]:
    """Points `start` to `start + count` of the seeded draw, each in [0, 1)^dimension."""
    numpy, qmc = _libraries()
    if method == Method.RANDOM:
        generator = numpy.random.Generator(numpy.random.PCG64(seed))
        drawn = generator.random((start + count, dimension))[start:]
    else:
        engine_class = {Method.SOBOL: qmc.Sobol, Method.HALTON: qmc.Halton}[method]
        # scipy 1.15 renamed `seed` to `rng`; both mean a seeded generator here.
        keyword = "rng" if "rng" in inspect.signature(engine_class).parameters else "seed"
        engine = engine_class(dimension, scramble=True, **{keyword: numpy.random.default_rng(seed)})
        with warnings.catch_warnings():  # Sobol's "balance needs a power of 2": n is the user's
            warnings.simplefilter("ignore", UserWarning)
            if start:  # Sobol's fast_forward(0) overflows
                engine.fast_forward(start)
            drawn = engine.random(count)
    return [[float(u) for u in point] for point in drawn]


def draw(sample: Sample, start: int, count: int) -> list[tuple[Cell, ...]]:
    """Points `start` to `start + count` of the sample, mapped to their values."""
    if count <= 0:
        return []
    found = quantiles(sample.method, len(sample.params), sample.seed, start, count)
    return [row(sample, point) for point in found]


def propose(
    sample: Sample, aims: Aims, told: Sequence[Told], count: int, round_: int
) -> list[tuple[Cell, ...]]:
    """The sample's next `count` points after those told (the `Proposer` of a drawn sample):
    points `len(told)` onwards of its seeded draw, whatever their results and aims."""
    return draw(sample, len(told), count)
