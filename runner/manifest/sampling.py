"""Drawing sampled points: the one module that imports scipy and numpy (the `[search]` extra).

Only `python -m runner lock` comes here. A draw is a function of (method, seed, dimension) and
the index range asked for: the first `start` points of a longer draw are the points of the
shorter one, so growing `n` only appends. The lock keeps the values drawn before, so a newer
scipy that drew them differently never changes a locked point.
"""

from __future__ import annotations

import inspect
import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from runner import manifest
from runner.core import files
from runner.core.errors import MissingExtra, RunnerError
from runner.core.model import Cell
from runner.manifest.sample import Sample, collisions, lock_path, lock_text, read_lock

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


def quantiles(method: str, dimension: int, seed: int, start: int, count: int) -> list[list[float]]:
    """Points `start` to `start + count` of the seeded draw, each in [0, 1)^dimension."""
    numpy, qmc = _libraries()
    if method == "random":
        generator = numpy.random.Generator(numpy.random.PCG64(seed))
        drawn = generator.random((start + count, dimension))[start:]
    else:
        engine_class = {"sobol": qmc.Sobol, "halton": qmc.Halton}[method]
        # scipy 1.15 renamed `seed` to `rng`; both mean a seeded generator here.
        keyword = "rng" if "rng" in inspect.signature(engine_class).parameters else "seed"
        engine = engine_class(dimension, scramble=True, **{keyword: numpy.random.default_rng(seed)})
        with warnings.catch_warnings():  # Sobol's "balance needs a power of 2": n is the user's
            warnings.simplefilter("ignore", UserWarning)
            if start:  # Sobol's fast_forward(0) overflows
                engine.fast_forward(start)
            drawn = engine.random(count)
    return [[float(u) for u in row] for row in drawn]


def draw(sample: Sample, start: int, count: int) -> list[tuple[Cell, ...]]:
    """Points `start` to `start + count` of the sample, mapped to their values."""
    if count <= 0:
        return []
    found = quantiles(sample.method, len(sample.params), sample.seed, start, count)
    return [sample.row(row) for row in found]


def extend(sample: Sample, kept: Sequence[tuple[Cell, ...]]) -> list[tuple[Cell, ...]]:
    """The sample's n points: those kept (already locked for it), then newly drawn ones."""
    kept = list(kept[: sample.n])
    return kept + draw(sample, len(kept), sample.n - len(kept))


def lock_manifest(path: Path, shown: str) -> tuple[str, ...]:
    """Write (or keep) the lock of one manifest; the lines to print. ManifestError when its
    sample section or the points drawn are not acceptable: then nothing is written."""
    sample = manifest.load_sample(path, shown)
    target = lock_path(path)
    if sample is None:
        return (f"{shown}: no params.sample: nothing to lock",)
    if sample.adaptive:
        return (
            f"{shown}: method {sample.method} proposes its points round by round from the results:"
            f" run python -m runner propose {shown}",
        )
    before = read_lock(target, sample.names)
    same = before is not None and before.sample == sample.digest
    kept = before.rows if before is not None and same else ()
    rows = extend(sample, kept)
    clashes = collisions(rows)
    if clashes:
        first, second = clashes[0]
        raise RunnerError(
            f"{shown}: params.sample: points {first} and {second} are the same after rounding to"
            f" {sample.digits} significant digits: raise params.sample.digits (nothing written)"
        )
    text = lock_text(sample, rows, f"python -m runner lock {shown}")
    shown_lock = target.name
    if target.exists() and target.read_text(encoding="utf-8") == text:
        return (f"{shown}: {shown_lock} is up to date ({len(rows)} points)",)
    files.write_atomic(target, text)
    manifest.load(path, shown)  # the whole manifest, with its new lock, must now be valid
    if same:
        verb = f"kept {min(len(kept), sample.n)}, drew {max(0, sample.n - len(kept))}"
    elif before is None:
        verb = f"drew {len(rows)}"
    else:
        verb = f"a new sample: drew {len(rows)} (the sample section changed)"
    return (f"{shown}: wrote {shown_lock}: {verb} point(s) ({sample.method}, seed {sample.seed})",)
