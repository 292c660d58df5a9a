"""An automatic search's envelope: what its pull request approved once, so that every round
inside it may run without another (`advance: auto`, `runner.core.search.Advance`).

The envelope is what may run and what it may cost: the method, the space (a sample's digest, or
rung 0's configurations), the seed, `n` and `batch` or the fidelity ladder and its promotion,
the aims, the stop rules, the point's template (tasks, placement, name, revision: every round's
points are rendered from it) and a maximum of GPU-hours for the whole search. Its digest is one
pure function of the sweep (`digest`): the plan comment's pin carries it, and a round is covered
when the pin's digest is the sweep's and the round replays (`runner.locking.replay`).

Its GPU-hours are read from specs, as every price is (`runner.plan.cost`): a halving's whole
search projected from rung 0 alone (`halving_cost`, each later rung as its dearest
configurations); an adaptive search's `n` points at the price of the dearest point of round 0.
Both are read only from what the review saw (the lock's later rounds never move them). Without
`max_gpu_hours` the projection is the limit; the budget policy judges the limit.
"""

from __future__ import annotations

import dataclasses
import hashlib
import math
from dataclasses import dataclass
from typing import Any

from runner.core.sample import row_identity
from runner.core.search import Adaptive, Halving
from runner.core.values import canonical_json
from runner.manifest.fidelity import configuration_names
from runner.plan import SweepPlan
from runner.plan.cost import figure, halving_cost, rows_cost
from runner.plan.model import Row


@dataclass(frozen=True)
class Envelope:
    """An automatic search's envelope, as a reviewer approves it."""

    digest: str
    projected: float
    """The plan's projection of the whole search's GPU-hours (infinite: unbounded)."""
    max_gpu_hours: float | None = None
    """`advance.max_gpu_hours`, when the manifest sets it."""

    @property
    def limit(self) -> float:
        """The most GPU-hours the whole search may use."""
        return self.projected if self.max_gpu_hours is None else self.max_gpu_hours

    @property
    def short(self) -> str:
        """The digest as a person reads it (12 hex)."""
        return self.digest[:12]


def digest(plan: SweepPlan) -> str:
    """The envelope's digest: of everything a round may not change (module docstring)."""
    sweep = plan.sweep
    search = sweep.search
    strategy, sample = search.strategy, search.sample
    identity: dict[str, Any] = {
        "method": search.method,
        "sample": None if sample is None else sample.digest,
        "n": None if sample is None else sample.n,
        "batch": None if sample is None or not sample.adaptive else sample.batch,
        "proceed": None if sample is None or not sample.adaptive else sample.proceed,
        "aims": [[a.metric, a.goal] for a in search.aims.objectives],
        "constraints": [str(c) for c in search.aims.constraints],
        "stop": [
            sweep.limits.max_failures,
            None if sweep.limits.stop_when is None else dataclasses.asdict(sweep.limits.stop_when),
        ],
        "max_gpu_hours": search.advance.max_gpu_hours,
        "template": [
            list(sweep.tasks),
            dataclasses.asdict(sweep.placement),
            sweep.name_template,
            sweep.revision,
        ],
    }
    if isinstance(strategy, Halving):
        ladder = strategy.ladder
        identity["fidelity"] = [ladder.param, list(ladder.values), ladder.eta, ladder.min_timeout]
        identity["promotion"] = strategy.promotion
        identity["rung 0"] = sorted({r.key for r in _rung_zero(plan)})
    return hashlib.sha256(canonical_json(identity).encode()).hexdigest()


def envelope(plan: SweepPlan) -> Envelope:
    """The envelope of an automatic search (its plan against any ledger: only its points are
    read)."""
    return Envelope(digest(plan), projected(plan), plan.sweep.search.advance.max_gpu_hours)


def projected(plan: SweepPlan) -> float:
    """The whole search's GPU-hours, as the budget judges them, from what the review saw: a
    halving's rung 0 and its later rungs projected; an adaptive search's n points at the price
    of round 0's dearest. Infinite when a point is unbounded (or, before round 0, unknown)."""
    sweep = plan.sweep
    strategy = sweep.search.strategy
    if isinstance(strategy, Halving):
        first = dataclasses.replace(plan, rows=_rung_zero(plan))
        halved = halving_cost(first)
        return 0.0 if halved is None else figure(sweep, halved.total)
    sample = sweep.search.sample
    if isinstance(strategy, Adaptive) and sample is not None:
        rounds = sweep.search.rounds()
        names = sample.names
        first_round = frozenset(
            r.key
            for r in plan.rows
            if rounds.get(row_identity(tuple(dict(r.params).get(n) for n in names))) == 0
        )
        if not first_round:
            return math.inf
        dearest = max(
            figure(sweep, rows_cost(plan, frozenset({key}))) for key in sorted(first_round)
        )
        return dearest * sample.n
    return figure(sweep, rows_cost(plan))


def spent(plan: SweepPlan) -> float:
    """What every point of the plan costs, whatever its status: a search's points so far (and
    a round's, once its lock holds them), as the budget judges them."""
    return figure(plan.sweep, rows_cost(plan))


def automatic(plan: SweepPlan) -> frozenset[str]:
    """The keys of the plan's points that an automatic round chose (the lock's decisions):
    those a pin's envelope covers, once the round replays (`runner.locking.replay`)."""
    search = plan.sweep.search
    lock, ladder, sample = search.lock, plan.sweep.space.ladder, search.sample
    if lock is None or not lock.decisions:
        return frozenset()
    chosen = [(k, row) for d in lock.decisions for k, row in d.chose]
    if ladder is not None:
        names = (*configuration_names(plan.sweep.space), *ladder.names)
        wanted = {row_identity((*row, ladder.values[k], k)) for k, row in chosen}
    else:
        names = sample.names if sample is not None else ()
        wanted = {row_identity(row) for _, row in chosen}
    return frozenset(
        r.key
        for r in plan.rows
        if row_identity(tuple(dict(r.params).get(n) for n in names)) in wanted
    )


def _rung_zero(plan: SweepPlan) -> tuple[Row, ...]:
    ladder = plan.sweep.space.ladder
    if ladder is None:
        return plan.rows
    return tuple(r for r in plan.rows if ladder.rung(dict(r.params)) == 0)
