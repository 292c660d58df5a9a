"""The readers' entry: every sweep of a catalog observed once, in one bulk look each.

`status`, `report` and `propose` all start here: one `Observer` for the phase, with each sampled
sweep's search (its sample and lock, as the catalog loaded them: no manifest is parsed twice),
and one observation per sweep from it. A reader that lists the backend itself is a second truth
waiting to disagree.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence

from runner.backends import Backend
from runner.observe.live import NO_TAILS, Reading
from runner.observe.looks import Context, Observer, always
from runner.observe.model import Observation, Search
from runner.plan import SweepPlan
from runner.plan.catalog import Catalog


def searches(cat: Catalog) -> dict[str, Search]:
    """Each sampled sweep's search, by sweep name."""
    return {
        name: Search(loaded.sample, loaded.lock)
        for name, loaded in cat.loaded.items()
        if loaded.sample is not None
    }


def observer(
    cat: Catalog,
    backend: Backend,
    head: str = "",
    reading: Reading = NO_TAILS,
    asked: Collection[str] = (),
) -> Observer:
    """The readers' observer of the catalog's sweeps: every look carries results. `head`: the
    commit checked out, which local `code:` points that rerun are compared with; `reading`:
    which points' reporting lines are read from their logs; `asked`: the metrics a reader asked
    for by name."""
    halvings = {n: f for n, loaded in cat.loaded.items() if (f := loaded.fidelity) is not None}
    context = Context(searches(cat), head, reading, fidelities=halvings, asked=frozenset(asked))
    return Observer(backend, always, context)


def observe(
    cat: Catalog,
    backend: Backend,
    head: str = "",
    plans: Sequence[SweepPlan] | None = None,
    reading: Reading = NO_TAILS,
    asked: Collection[str] = (),
) -> list[Observation]:
    """Each sweep's observation (or each of `plans`'), planned against the backend's ledgers."""
    looks = observer(cat, backend, head, reading, asked)
    chosen = cat.plans(cat.ledgers(backend.layout)) if plans is None else plans
    return [looks.observation(plan) for plan in chosen]
