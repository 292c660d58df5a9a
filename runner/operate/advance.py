"""The search's one use case, behind `lock` and `propose`: advance a sampled sweep (or a successive
halving, by one rung) by one step and write its lock.

Read the lock (as the manifest loaded it, once), observe the sweep if the step depends on
results (an adaptive search between rounds: the caller's observation, the same one `status`
shows), let the search decide (`runner.search.rounds.advance`, pure), check the new lock with
the manifest (`runner.manifest.relock`, from the document already parsed) and only then write it.
Rerunning with nothing new changes no byte.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from runner.core.errors import RunnerError
from runner.core.files import write_atomic
from runner.core.invoked import invoked
from runner.core.ladder import RUNG
from runner.manifest import Loaded, relock
from runner.manifest.fidelity import (
    RUNGS,
    RungLock,
    belonging,
    configuration_names,
    rung_zero,
    rungs_json,
)
from runner.manifest.lock import LockFile, collisions, lock_path, lock_text, locked_rows, sections
from runner.manifest.sample import Sample
from runner.manifest.seeds import SEEDS, Seeding, seeds_json
from runner.observe.aiming import told_search
from runner.observe.findings import told
from runner.observe.model import Observation
from runner.plan.cost import point_cost
from runner.search import rungs
from runner.search.rounds import Next, RoundVerdict, SoFar, advance, observes, reads_others
from runner.search.rungs import Halving


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


def so_far(observed: Observation, names: Sequence[str], metric: str) -> SoFar:
    """What an observation says to a search: each submitted point as told by `names`, and the
    stop."""
    stop = observed.stop.reason if observed.stop is not None else ""
    return SoFar(told(observed, names, metric), stop)


def sample_so_far(observed: Observation, sample: Sample) -> SoFar:
    """What an observation says to a sampled search: each submitted point as told by the
    sample's parameters, with every objective's value and its constraints (`told_search`)."""
    stop = observed.stop.reason if observed.stop is not None else ""
    return SoFar(told_search(observed, sample), stop)


def _no_seeding() -> Seeding:
    raise AssertionError("only a warm start's round 0 reads other sweeps")


def halving_of(loaded: Loaded) -> Halving | None:
    """The manifest's successive halving as the search sees it (rung 0 from its space, and
    whether the load found the lock's rungs stale)."""
    fidelity = loaded.fidelity
    if fidelity is None:
        return None
    space = loaded.sweep.space
    names, configurations = configuration_names(space), rung_zero(space)
    of = belonging(fidelity, names, configurations)
    return Halving(fidelity, names, configurations, of, loaded.stale is not None)


def advance_search(
    loaded: Loaded,
    path: Path,
    command: str,
    observe: Callable[[], Observation],
    others: Callable[[], Seeding] = _no_seeding,
    halving: Halving | None = None,
) -> Advanced:
    """Advance the manifest at `path`'s search by one step; write the lock when it changed:
    its sample's (`lock`, `propose` of an adaptive one), or with `halving` (`halving_of`, for
    `propose`), its next rung. `observe`: the sweep's observation, asked only when the step
    depends on results; `others`: what a warm start learns from the sweeps it names
    (`runner.operate.seeding`), asked only before round 0. `command`: what the lock's header
    says wrote it. ManifestError (nothing written) when the new lock does not make a valid
    manifest."""
    sample, lock = loaded.sample, loaded.lock
    target = lock_path(path)
    if halving is not None:
        _rung_zero_locked(loaded)
        before, replaced = len(rungs.so_far(halving, lock)[0]), rungs.replaced(halving, lock)
    else:
        assert sample is not None
        same = lock is not None and lock.sample == sample.digest
        before = len(lock.rows) if lock is not None and same else 0
        replaced = lock is not None and not same
    said = SoFar()
    if observes(sample, lock, halving):
        observed = observe()
        if halving is not None:
            said = so_far(observed, halving.told, halving.fidelity.metric)
        else:
            assert sample is not None
            said = sample_so_far(observed, sample)
    if halving is None and sample is not None and reads_others(sample, lock):
        said = replace(said, seeding=others())
    step = advance(sample, lock, said, halving)
    if step.verdict is not RoundVerdict.PROPOSED:
        return Advanced(step, target, None, before, replaced)
    text = _lock_text(loaded, step, command, halving, LockFile(target))
    if target.exists() and target.read_text(encoding="utf-8") == text:
        return Advanced(step, target, None, before, replaced)
    after = relock(loaded, path, text)  # the whole manifest, with its new lock, must be valid
    write_atomic(target, text)
    return Advanced(step, target, text, before, replaced, _hours(after, step, halving))


def _lock_text(
    loaded: Loaded, step: Next, command: str, halving: Halving | None, old: LockFile
) -> str:
    """The new lock: a sample's points (and an adaptive search's rounds), or, for a halving,
    the sample's points as locked and the rungs promoted so far; the lock's other sections
    (its clusters) kept as they are. A new draw of the sample drops the rungs built on the old
    one (the next `propose` starts them again)."""
    sample, lock = loaded.sample, loaded.lock
    kept = {k: v for k, v in sections(old.content()).items() if k not in (RUNGS, SEEDS)}
    if step.seeding is not None:  # a warm start's prior points, copied at round 0 and kept
        kept[SEEDS] = seeds_json(step.seeding.seeds)
    if halving is not None:
        promoted = RungLock(
            halving.of, halving.names, tuple(zip(step.rounds, step.rows, strict=True))
        )
        rows = lock.rows if lock is not None and sample is not None else ()
        # after a reset: none promoted yet
        return lock_text(sample, rows, command, None, {**kept, RUNGS: rungs_json(promoted)})
    assert sample is not None
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
    sample, shown = loaded.sample, loaded.sweep.path
    if sample is not None and locked_rows(sample, loaded.lock) is None:
        raise RunnerError(
            f"{shown}: params.sample: rung 0's configurations are not locked yet: run"
            f" {invoked()} lock {shown} first"
        )


def _hours(after: Loaded, step: Next, halving: Halving | None) -> tuple[float | None, ...]:
    """The GPU-hours the plan expects of each point of a new rung (None: no upper bound)."""
    if halving is None or not step.new:
        return ()
    sweep = after.sweep
    points = [p for p in sweep.space.promoted if dict(p.params).get(RUNG) == step.number]
    costs = [point_cost(sweep, after.renderer.render(p)) for p in points]
    return tuple(None if c.unbounded else c.expected for c in costs)
