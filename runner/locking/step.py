"""The search's one use case, behind `lock` and `propose`: advance a sweep's search (a drawn
sample, an adaptive search's round, a successive halving's rung) by one step and write its lock.

Read the lock (as the manifest loaded it, once: `Sweep.search.lock`), observe the sweep if the
step depends on results (the caller's observation, the same one `status` shows), let the search
decide (`runner.search.rounds.advance`, pure), check the new lock with the manifest
(`runner.manifest.relock`, from the document already parsed) and only then write it. Rerunning
with nothing new changes no byte.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from runner.analysis.told import told
from runner.core.errors import RunnerError
from runner.core.files import write_atomic
from runner.core.invoked import invoked
from runner.core.ladder import RUNG
from runner.core.locked import RungLock
from runner.manifest import Loaded, relock
from runner.manifest.decisions import DECISIONS
from runner.manifest.fidelity import RUNGS, rungs_json
from runner.manifest.lock import LockFile, collisions, lock_path, lock_text, locked_rows, sections
from runner.manifest.seeds import SEEDS, Seeding, seeds_json
from runner.observe.model import Observation
from runner.plan.cost import point_cost
from runner.search import rungs
from runner.search.rounds import Next, RoundVerdict, SoFar, advance, drawn, observes, reads_others
from runner.search.rungs import SuccessiveHalving, halving_of


@dataclass(frozen=True)
class Advanced:
    """One sweep's step, and its lock as written (`text`), or None when nothing changed."""

    step: Next
    lock: Path
    text: str | None = None
    before: int = 0
    """The points its lock held for this sample section before (0: none, or another section)."""
    replaced: bool = False
    """The lock held another sample section's points (its method, seed, digits or space
    changed since), or rungs of another fidelity section or rung 0: new ones replaced them."""
    hours: tuple[float | None, ...] = ()
    """A new rung's points' GPU-hours, as the plan prices them (None: no bound)."""


def so_far(observed: Observation, names: tuple[str, ...]) -> SoFar:
    """What an observation says to a search: each submitted point as told by `names` (judged by
    the sweep's aims), and the stop."""
    stop = observed.stop.reason if observed.stop is not None else ""
    return SoFar(told(observed, names), stop)


def _no_seeding() -> Seeding:
    raise AssertionError("only a warm start's round 0 reads other sweeps")


def draw_sample(loaded: Loaded, path: Path, command: str) -> Advanced:
    """`lock`: draw the manifest at `path`'s sample (a drawn one, or the one a halving halves:
    its rung 0), keeping the points locked for the same section; write the lock when it
    changed. ValueError for a manifest without a drawn sample."""
    search = loaded.sweep.search
    sample = search.sample
    if sample is None or sample.adaptive:
        raise ValueError(f"{loaded.sweep.path}: no drawn sample")
    before, replaced = _before(loaded, None)
    step = drawn(sample, search.aims, search.lock)
    return _written(loaded, path, command, step, None, (before, replaced))


def advance_search(
    loaded: Loaded,
    path: Path,
    command: str,
    observe: Callable[[], Observation],
    others: Callable[[], Seeding] = _no_seeding,
) -> Advanced:
    """`propose`: advance the manifest at `path`'s search by one step, an adaptive search's next
    round or a successive halving's next rung; write the lock when it changed. `observe`: the
    sweep's observation, asked only when the step depends on results; `others`: what a warm
    start learns from the sweeps it names (`runner.locking.seeding`), asked only before round 0.
    `command`: what the lock's header says wrote it. ManifestError (nothing written) when the
    new lock does not make a valid manifest."""
    search = loaded.sweep.search
    halving = halving_of(loaded.sweep, loaded.stale is not None)
    if halving is not None:
        _rung_zero_locked(loaded)
    said = SoFar()
    if observes(search):
        sample = search.sample
        names = halving.told if halving is not None else sample.names if sample else ()
        said = so_far(observe(), names)
    if reads_others(search):
        said = replace(said, seeding=others())
    step = advance(loaded.sweep, said, loaded.stale is not None)
    return _written(loaded, path, command, step, halving, _before(loaded, halving))


def _written(
    loaded: Loaded,
    path: Path,
    command: str,
    step: Next,
    halving: SuccessiveHalving | None,
    before: tuple[int, bool],
) -> Advanced:
    """The step, its lock written when it changed (checked with the manifest first)."""
    target = lock_path(path)
    if step.verdict is not RoundVerdict.PROPOSED:
        return Advanced(step, target, None, *before)
    text = lock_text_after(loaded, step, command, halving, LockFile(target))
    if target.exists() and target.read_text(encoding="utf-8") == text:
        return Advanced(step, target, None, *before)
    after = relock(loaded, path, text)  # the whole manifest, with its new lock, must be valid
    write_atomic(target, text)
    return Advanced(step, target, text, *before, new_hours(after, step, halving))


def _before(loaded: Loaded, halving: SuccessiveHalving | None) -> tuple[int, bool]:
    """How many points (or promoted configurations) the lock held for this search before, and
    whether it held another section's (which the new lock replaces)."""
    search = loaded.sweep.search
    lock, sample = search.lock, search.sample
    if halving is not None:
        return len(rungs.so_far(halving, lock)[0]), rungs.replaced(halving, lock)
    same = lock is not None and sample is not None and lock.sample == sample.digest
    return (len(lock.rows) if lock is not None and same else 0), lock is not None and not same


def lock_text_after(
    loaded: Loaded,
    step: Next,
    command: str,
    halving: SuccessiveHalving | None,
    old: LockFile,
    extra: Mapping[str, Any] | None = None,
) -> str:
    """The new lock: a sample's points (and an adaptive search's rounds), or, for a halving,
    the sample's points as locked and the rungs promoted so far; the lock's other sections
    (its clusters) kept as they are, `extra` (an automatic round's decisions) set. A new draw
    of the sample drops the rungs built on the old one (the next `propose` starts them again),
    and the decisions of the rounds it replaces."""
    search = loaded.sweep.search
    sample, lock = search.sample, search.lock
    dropped = (RUNGS, SEEDS, DECISIONS) if _before(loaded, halving)[1] else (RUNGS, SEEDS)
    kept = {k: v for k, v in sections(old.content()).items() if k not in dropped}
    kept.update(extra or {})
    if step.seeding is not None:  # a warm start's prior points, copied at round 0 and kept
        kept[SEEDS] = seeds_json(step.seeding.seeds)
    if halving is not None:
        promoted = RungLock(
            halving.of, halving.names, tuple(zip(step.rounds, step.rows, strict=True))
        )
        rows = lock.rows if lock is not None and sample is not None else ()
        # after a reset: none promoted yet
        return lock_text(sample, rows, command, None, {**kept, RUNGS: rungs_json(promoted)})
    assert sample is not None  # `advance` refused a grid
    clashes = collisions(step.rows)
    if clashes:
        first, second = clashes[0]
        raise RunnerError(
            f"{loaded.sweep.path}: params.sample: points {first} and {second} are the same after"
            f" rounding to {sample.digits} significant digits: raise params.sample.digits"
            " (nothing written)"
        )
    rounds = step.rounds if sample.adaptive else None
    return lock_text(sample, step.rows, command, rounds, kept)


def _rung_zero_locked(loaded: Loaded) -> None:
    """A halving of a drawn sample starts from its locked points: `lock` draws them."""
    search, shown = loaded.sweep.search, loaded.sweep.path
    sample = search.sample
    if sample is not None and locked_rows(sample, search.lock) is None:
        raise RunnerError(
            f"{shown}: params.sample: rung 0's configurations are not locked yet: run"
            f" {invoked()} lock {shown} first"
        )


def new_hours(
    after: Loaded, step: Next, halving: SuccessiveHalving | None
) -> tuple[float | None, ...]:
    """The GPU-hours the plan expects of each point of a new rung (None: no upper bound)."""
    if halving is None or not step.new:
        return ()
    sweep = after.sweep
    points = [p for p in sweep.space.promoted if dict(p.params).get(RUNG) == step.number]
    costs = [point_cost(sweep, after.renderer.render(p)) for p in points]
    return tuple(None if c.unbounded else c.expected for c in costs)
