"""An automatic round's decision record (`runner.core.locked.Decision`), made from the search's
step and what it read, and read back into what the search is told. Pure.

A record says what the round read (each point it was told: key, experiment, row, result and
values, and the commit), how it chose (a halving: each rung ranked by key and where the cut
fell; an adaptive search: the sampler's seed), and what it chose (each new point's round or
rung and row). `runner.locking.replay` recomputes it from the manifest and these inputs.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from runner.core.locked import Cutoff, Decision, Heard, Locked, RungLock
from runner.core.model import Cell
from runner.core.sample import row_identity
from runner.core.search import Search
from runner.core.values import StrEnum, canonical_json
from runner.search import rungs
from runner.search.points import Result, Told
from runner.search.rounds import Next
from runner.search.rungs import SuccessiveHalving

_RESULT = {r: r.name.lower() for r in Result}
"""How the lock spells a result (`done`, `failed`, `pending`)."""
_BY_NAME = {v: k for k, v in _RESULT.items()}

Chosen = tuple[tuple[int, tuple[Cell, ...]], ...]
"""What a round appends: each point's round (or rung) and row."""


def heard(t: Told) -> Heard:
    values = t.values or (() if t.value is None else (t.value,))
    return Heard(t.key, t.name, tuple(t.row), _RESULT[t.result], tuple(values), t.excess)


def told(h: Heard) -> Told:
    """A recorded point as the search is told it again (`runner.analysis.told`'s form);
    ValueError for a result the lock cannot hold."""
    if h.result not in _BY_NAME:
        raise ValueError(f"{h.name or h.key}: no result is called {h.result!r}")
    first = h.values[0] if h.values else None
    values = h.values if len(h.values) > 1 else ()
    return Told(h.row, _BY_NAME[h.result], first, h.key, h.name, values, h.excess)


def belonging(search: Search, halving: SuccessiveHalving | None) -> str:
    """What a decision of this search belongs to: the rungs' `of`, or the sample's digest."""
    if halving is not None:
        return halving.of
    sample = search.sample
    return sample.digest if sample is not None else ""


def chosen(step: Next, before: int) -> Chosen:
    """What the step appends to the lock: its rows after the first `before`, each with its round
    (or rung)."""
    return tuple(zip(step.rounds[before:], step.rows[before:], strict=True))


def same(a: Chosen, b: Chosen) -> bool:
    """Byte for byte, as the lock writes them."""
    return canonical_json([[k, list(r)] for k, r in a]) == canonical_json(
        [[k, list(r)] for k, r in b]
    )


@dataclass(frozen=True)
class Read:
    """What the round read and ran inside: the points it was told, the commit, the envelope."""

    told: tuple[Told, ...]
    commit: str
    envelope: str
    gpu_hours: float | None


def decision(
    search: Search, halving: SuccessiveHalving | None, step: Next, before: int, read: Read
) -> Decision:
    """The record of a proposed step that appended points after the lock's first `before`."""
    told_in = tuple(sorted(read.told, key=lambda t: (t.key, row_identity(t.row))))
    cuts: tuple[Cutoff, ...] = ()
    seed = None
    if halving is not None:
        cuts = _cuts(halving, step)
    elif search.sample is not None:
        seed = search.sample.seed + step.number
    return Decision(
        round=step.number,
        of=belonging(search, halving),
        ledger=read.commit,
        before=before,
        told=tuple(map(heard, told_in)),
        chose=chosen(step, before),
        envelope=read.envelope,
        gpu_hours=read.gpu_hours,
        cuts=cuts,
        seed=seed,
    )


def _cuts(halving: SuccessiveHalving, step: Next) -> tuple[Cutoff, ...]:
    """Each rung promoted from: its points ranked (by key) and how many go on."""
    if step.cuts:  # asynchronous: every rung's decision, those that promoted
        return tuple(
            Cutoff(c.rung, tuple(t.key for t in c.ranked), c.ended, c.keep)
            for c in step.cuts
            if c.promoted
        )
    ranked = rungs.ranked(halving, step.previous)
    ended = sum(t.result != Result.PENDING for t in step.previous)
    return (
        Cutoff(step.number - 1, tuple(t.key for t in ranked), ended, halving.kept(len(ranked))),
    )


def before_of(lock: Locked | None, halving: SuccessiveHalving | None) -> int:
    """How many points (or promotions) the lock holds now: a new round's `before`."""
    if lock is None:
        return 0
    if halving is not None:
        return len(rungs.so_far(halving, lock)[0])
    return len(lock.rows)


def prefix(lock: Locked, halving: SuccessiveHalving | None, before: int) -> Locked:
    """The lock as it was before a round that appended after its first `before` points."""
    if halving is not None and lock.rungs is not None:
        kept = RungLock(lock.rungs.of, lock.rungs.names, lock.rungs.promoted[:before])
        return replace(lock, rungs=kept, decisions=())
    rounds = lock.rounds[:before]
    return replace(lock, rows=lock.rows[:before], rounds=rounds, decisions=())


def appended(lock: Locked, halving: SuccessiveHalving | None, d: Decision) -> Chosen:
    """What the lock holds where the decision says it appended."""
    end = d.before + len(d.chose)
    if halving is not None:
        promoted = lock.rungs.promoted if lock.rungs is not None else ()
        return tuple(promoted[d.before : end])
    rounds = lock.rounds or (0,) * len(lock.rows)
    return tuple(zip(rounds[d.before : end], lock.rows[d.before : end], strict=True))


class Approval(StrEnum):
    """Who approved a round: a person's merge of its pull request, or the reviewed envelope."""

    PERSON = "person"
    ENVELOPE = "envelope"


def history(search: Search) -> dict[int, Approval]:
    """Who approved each round (or rung) the lock holds: `envelope` when an automatic decision
    appended every point of it, else `person` (a merge: round 0, rung 0, and every round a
    pull request brought)."""
    lock = search.lock
    out: dict[int, Approval] = {0: Approval.PERSON}
    if lock is None:
        return out
    numbers = [k for k, _ in lock.rungs.promoted] if lock.rungs is not None else lock.rounds
    automatic = {d.before + i for d in lock.decisions for i in range(len(d.chose))}
    for i, k in enumerate(numbers):
        manual = out.get(k) is Approval.PERSON or i not in automatic
        out[k] = Approval.PERSON if manual else Approval.ENVELOPE
    return dict(sorted(out.items()))
