"""The planning step that advances automatic searches (`advance: auto`) inside their envelopes.

For each such sweep this backend runs: every round its lock records must replay
(`runner.locking.replay`) and agree with what the backend says of the points it read
(`runner.locking.auto.contradicted`), or the run stops as a refusal (exit 4) before anything is
created; then the search takes its next step (`runner.locking.auto.advance_auto`: observe
through the phase's observer, decide, check the envelope, record the decision, write the lock),
the new round is replayed like the others, and the sweep is planned again with it, so that the
steps after this one hold, cap and submit its points as any other. A dry run writes nothing.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from runner import manifest, plan
from runner.analysis.told import told
from runner.apply.model import ApplyOptions
from runner.backends import Backend, runs
from runner.core.invoked import invoked
from runner.ledger.store import LedgerStore
from runner.locking.auto import Auto, advance_auto, contradicted
from runner.locking.replay import first_failure
from runner.manifest.lock import lock_path
from runner.observe.looks import Observer
from runner.repo import review
from runner.search.rounds import Next, RoundVerdict
from runner.search.rungs import halving_of


@dataclass(frozen=True)
class Advancing:
    """The plans with every round written, the rounds, and why the run must stop (if so)."""

    plans: tuple[plan.SweepPlan, ...]
    rounds: tuple[Auto, ...] = ()
    refused: str = ""


def advance(
    backend: Backend,
    observer: Observer,
    store: LedgerStore,
    options: ApplyOptions,
    plans: Sequence[plan.SweepPlan],
) -> Advancing:
    """Replay, then advance, each automatic search this backend runs (module docstring)."""
    out, rounds = list(plans), []
    for i, planned in enumerate(out):
        sweep = planned.sweep
        if not sweep.search.auto or not runs(backend, sweep):
            continue
        path = options.root / str(sweep.path)
        loaded = manifest.load(path, str(sweep.path))
        refused = _refused(observer, loaded, planned)
        if refused or options.dry_run:
            if refused:
                return Advancing(tuple(plans), (), refused)
            continue
        if options.pins is not None and not review.approves_envelope(planned, options.pins):
            rounds.append(_unapproved(loaded))  # a round no pin would cover: not written
            continue
        command = f"{invoked()} submit {sweep.path}"
        observe = functools.partial(observer.observation, planned)
        done = advance_auto(loaded, path, observe, options.commit, command)
        rounds.append(done)
        if done.after is None:
            continue
        refused = _refused(observer, done.after, None)
        if refused:  # never: a round made here replays by construction; checked all the same
            return Advancing(tuple(plans), tuple(rounds), refused)
        fresh = plan.build(done.after.sweep, store.read(sweep.name), done.after.renderer)
        out[i] = plan.capped(fresh, running=None)
        observer.forget(sweep.name)  # its look was made for the points before the round
    return Advancing(tuple(out), tuple(rounds))


def _unapproved(loaded: manifest.Loaded) -> Auto:
    """An automatic search whose envelope no reviewed plan's pin approves (an edit nobody
    reviewed, or two pull requests' cross-term): it waits, as an unreviewed point does."""
    sweep = loaded.sweep
    said = (
        "its envelope is in no reviewed plan (an edit nobody reviewed, or a cross-term of two"
        " pull requests): no round is advanced until a pull request's plan approves it"
    )
    idle = Next(RoundVerdict.WAITING, 0, (), ())
    return Auto(str(sweep.path), sweep, idle, lock_path(Path(str(sweep.path))), left=said)


def _refused(observer: Observer, loaded: manifest.Loaded, planned: plan.SweepPlan | None) -> str:
    """Why the sweep's recorded rounds may not be acted on: one that does not replay, or one
    that read a point otherwise than the backend shows it now; empty when none."""
    shown = loaded.sweep.path
    failed = first_failure(loaded)
    if failed is not None:
        return f"{shown}: {failed.name} does not replay: {failed.why} (nothing created)"
    lock = loaded.sweep.search.lock
    if planned is None or lock is None or not lock.decisions:
        return ""
    halving = halving_of(loaded.sweep)
    sample = loaded.sweep.search.sample
    names = halving.told if halving is not None else sample.names if sample else ()
    said = contradicted(lock.decisions, told(observer.observation(planned), names))
    return f"{shown}: {said} (nothing created)" if said else ""
