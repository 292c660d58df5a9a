"""The readers' entry: every sweep of a catalog observed once, in one bulk look each.

`status`, `report` and `propose` all start here: one `Observer` for the phase, and one
observation per sweep from it (each sweep carries its own search: what any other observer of it
sees is the same). A reader that lists the backend itself is a second truth waiting to disagree.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence

from runner.backends import Backend
from runner.observe.live import NO_TAILS, Reading
from runner.observe.looks import Context, Observer, always
from runner.observe.model import Observation
from runner.plan import SweepPlan
from runner.plan.catalog import Catalog


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
    context = Context(head, reading, asked=frozenset(asked))
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
