"""An automatic search's round (`advance: auto`), the use case behind `submit`'s advancing step:
observe, decide, check the envelope, record the decision and write the lock, before any point
of the round is created (write-ahead: a crash leaves a lock whose round replays).

The step is the search's one step (`runner.search.rounds.advance`, the same `propose` takes); what
it adds is the record (`runner.locking.decision`) and the envelope: a round whose points, with
every point so far, would cost more GPU-hours than the envelope allows is not written (a pull
request proposes it: `propose`). `contradicted` checks what the recorded rounds read against
what the backend says now: a point recorded as finished with a value it does not have.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from runner.core.files import write_atomic
from runner.core.locked import Decision
from runner.core.model import Sweep
from runner.ledger import Ledger
from runner.locking import decision as records
from runner.locking.step import lock_text_after, so_far
from runner.manifest import Loaded, relock
from runner.manifest.decisions import DECISIONS, decisions_json
from runner.manifest.lock import LockFile, lock_path
from runner.observe.model import Observation
from runner.plan import build, cost
from runner.plan.envelope import envelope, spent
from runner.search.points import Result, Told
from runner.search.rounds import Next, RoundVerdict, advance
from runner.search.rungs import halving_of


@dataclass(frozen=True)
class Auto:
    """One automatic search's step: what was decided, and the round written, if any."""

    shown: str
    sweep: Sweep
    """The sweep as loaded, before this step."""
    step: Next
    lock: Path
    text: str | None = None
    """The lock as written, when a round was."""
    decision: Decision | None = None
    after: Loaded | None = None
    """The manifest with the new lock (its new points to plan)."""
    left: str = ""
    """Why the round proposed was not written: it would leave the envelope."""

    @property
    def written(self) -> bool:
        return self.text is not None


def advance_auto(
    loaded: Loaded, path: Path, observe: Callable[[], Observation], commit: str, command: str
) -> Auto:
    """The search's next round inside its envelope, recorded and written into its lock (or why
    not). `observe`: the sweep's observation (the phase's one look); `commit`: the commit whose
    ledger it reads; `command`: what the lock's header says wrote it."""
    sweep, shown = loaded.sweep, str(loaded.sweep.path)
    search = sweep.search
    halving = halving_of(sweep, loaded.stale is not None)
    sample = search.sample
    names = halving.told if halving is not None else sample.names if sample else ()
    said = so_far(observe(), names)
    step = advance(sweep, said, loaded.stale is not None)
    target = lock_path(path)
    if step.verdict is not RoundVerdict.PROPOSED or not step.new:
        return Auto(shown, sweep, step, target)
    before = records.before_of(search.lock, halving)
    grown = relock(loaded, path, lock_text_after(loaded, step, command, halving, LockFile(target)))
    plan = build(grown.sweep, Ledger(sweep.name, {}), grown.renderer)
    judged, hours = envelope(plan), spent(plan)
    left = _leaves(step, hours, judged.limit)
    if left:
        return Auto(shown, sweep, step, target, left=left)
    read = records.Read(said.told, commit, judged.digest, None if math.isinf(hours) else hours)
    record = records.decision(search, halving, step, before, read)
    mine = records.belonging(search, halving)  # a replaced lock's decisions are not this search's
    kept = tuple(d for d in (search.lock.decisions if search.lock else ()) if d.of == mine)
    section = {DECISIONS: decisions_json((*kept, record))}
    text = lock_text_after(loaded, step, command, halving, LockFile(target), section)
    after = relock(loaded, path, text)  # the whole manifest, with its new lock, must be valid
    write_atomic(target, text)
    return Auto(shown, sweep, step, target, text, record, after)


def leaves(loaded: Loaded, path: Path, step: Next, command: str) -> str:
    """Why a proposed round would leave the sweep's envelope (`propose` opens its pull request
    then); empty when it stays inside (the schedule's `submit` advances it)."""
    if step.verdict is not RoundVerdict.PROPOSED or not step.new:
        return ""
    halving = halving_of(loaded.sweep, loaded.stale is not None)
    text = lock_text_after(loaded, step, command, halving, LockFile(lock_path(path)))
    grown = relock(loaded, path, text)
    plan = build(grown.sweep, Ledger(loaded.sweep.name, {}), grown.renderer)
    return _leaves(step, spent(plan), envelope(plan).limit)


def _leaves(step: Next, hours: float, limit: float) -> str:
    if hours <= limit:
        return ""
    return (
        f"round {step.number} would leave the envelope: {_hours(hours)} GPU-hours with every"
        f" point so far, over {_hours(limit)} (advance.max_gpu_hours, or the plan's"
        " projection): a pull request proposes it (propose)"
    )


def contradicted(decisions: Sequence[Decision], observed: Sequence[Told]) -> str:
    """The first recorded point a round read as finished with values that the backend no
    longer shows it with (same key); empty when none. A point not seen now says nothing."""
    now = {t.key: t for t in observed if t.key}
    for d in decisions:
        for heard in d.told:
            seen = now.get(heard.key)
            if records.told(heard).result is not Result.DONE or seen is None:
                continue
            values = records.heard(seen).values
            if seen.result is not Result.DONE or not _close(values, heard.values):
                return (
                    f"round {d.round} read {heard.name or heard.key} as done with"
                    f" {list(heard.values)}, and the backend says"
                    f" {records.heard(seen).result} {list(values)}"
                )
    return ""


def _close(a: Sequence[float], b: Sequence[float]) -> bool:
    return len(a) == len(b) and all(
        math.isclose(x, y, rel_tol=1e-12) for x, y in zip(a, b, strict=False)
    )


def _hours(value: float) -> str:
    return "unbounded" if math.isinf(value) else cost.number(value)
