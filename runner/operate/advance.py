"""The search's one use case, behind `lock` and `propose`: advance a sampled sweep by one step and
write its lock.

Read the lock (as the manifest loaded it, once), observe the sweep if the step depends on
results (an adaptive search between rounds: the caller's observation, the same one `status`
shows), let the search decide (`runner.search.rounds.advance`, pure), check the new lock with
the manifest (`runner.manifest.relock`, from the document already parsed) and only then write it.
Rerunning with nothing new changes no byte.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path

from runner.core.errors import RunnerError
from runner.core.files import write_atomic
from runner.manifest import Loaded, relock
from runner.manifest.lock import collisions, lock_path, lock_text
from runner.manifest.seeds import Seeding
from runner.observe.aiming import told_search
from runner.observe.model import Observation
from runner.search.rounds import Next, RoundVerdict, SoFar, advance, observes, reads_others


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
    changed since): a new sample replaced them."""


def so_far(observed: Observation) -> SoFar:
    """What an observation says to a search: each submitted point as told, and the stop."""
    sample = observed.sample
    assert sample is not None
    stop = observed.stop.reason if observed.stop is not None else ""
    return SoFar(told_search(observed, sample), stop)


def advance_search(
    loaded: Loaded,
    path: Path,
    command: str,
    observe: Callable[[], Observation],
    others: Callable[[], Seeding],
) -> Advanced:
    """Advance the manifest at `path`'s sample by one step; write the lock when it changed.
    `observe`: the sweep's observation, asked only when the step depends on results; `others`:
    what a warm start learns from the sweeps it names (`runner.operate.seeding`), asked only
    before round 0. `command`: what the lock's header says wrote it. ManifestError (nothing
    written) when the new lock does not make a valid manifest."""
    sample, lock = loaded.sample, loaded.lock
    assert sample is not None
    target = lock_path(path)
    same = lock is not None and lock.sample == sample.digest
    before = len(lock.rows) if lock is not None and same else 0
    replaced = lock is not None and not same
    observed = so_far(observe()) if observes(sample, lock) else SoFar()
    if reads_others(sample, lock):
        observed = replace(observed, seeding=others())
    step = advance(sample, lock, observed)
    if step.verdict is not RoundVerdict.PROPOSED:
        return Advanced(step, target, None, before, replaced)
    clashes = collisions(step.rows)
    if clashes:
        first, second = clashes[0]
        raise RunnerError(
            f"{loaded.sweep.path}: params.sample: points {first} and {second} are the same after"
            f" rounding to {sample.digits} significant digits: raise params.sample.digits"
            " (nothing written)"
        )
    seeds = step.seeding.seeds if step.seeding is not None else None
    text = lock_text(sample, step.rows, command, step.rounds if sample.adaptive else None, seeds)
    if target.exists() and target.read_text(encoding="utf-8") == text:
        return Advanced(step, target, None, before, replaced)
    relock(loaded, path, text)  # the whole manifest, with its new lock, must be valid
    write_atomic(target, text)
    return Advanced(step, target, text, before, replaced)
