"""After creating: two experiments for one point, and which one the sweep keeps.

Where Beaker scopes experiment names per author, two accounts starting the same sweep together
both create every point (no 409 stops the second). So after its creates, a run lists the
workspace once per sweep for every experiment of the names it created. Where a key has more
than one, the oldest is kept (creation time, then id: every run agrees), the run cancels the
newer ones *it* created (so each copy is cancelled by exactly one run, its creator, which always
checks after creating it and so sees the older one), records the kept one, and says so loudly.
"""

from __future__ import annotations

from collections.abc import Sequence

from runner.backends import Backend, Experiment, recorded
from runner.core.model import Sweep
from runner.observe.looks import Observer
from runner.plan import SweepPlan
from runner.submit.outcome import Duplicate, Outcome, OutcomeStatus


def check(
    observer: Observer,
    plans: Sequence[SweepPlan],
    outcomes: Sequence[Outcome],
) -> tuple[list[Outcome], list[Duplicate]]:
    """The outcomes to record instead (kept experiments adopted), and every duplicate found
    (from the sweep's look after the creates, which knows the experiments this run made)."""
    replaced: list[Outcome] = []
    found: list[Duplicate] = []
    backend = observer.backend
    for plan in plans:
        sweep = plan.sweep
        created = [
            o for o in outcomes if o.sweep == sweep.name and o.status == OutcomeStatus.CREATED
        ]
        if not created:
            continue
        made = recorded(
            (o.point.name, o.experiment.id, o.point.key) for o in created if o.experiment
        )
        copies = observer.look(plan, made).listed
        for outcome in created:
            assert outcome.experiment is not None
            mine = outcome.experiment
            same = [e for e in copies.get(outcome.point.name, ()) if e.key == outcome.point.key]
            if mine.id not in {e.id for e in same}:
                same.append(mine)  # a listing that does not show it yet: it is the newest
            if len(same) < 2:
                continue
            kept, others = same[0], tuple(same[1:])
            problem = ""
            canceled: tuple[str, ...] = ()
            if kept.id != mine.id:
                problem = _retire(backend, sweep, mine)
                canceled = () if problem else (mine.id,)
                replaced.append(Outcome(sweep.name, outcome.point, OutcomeStatus.ADOPTED, kept))
            found.append(Duplicate(sweep.name, outcome.point.name, kept, others, canceled, problem))
    return replaced, found


def _retire(backend: Backend, sweep: Sweep, mine: Experiment) -> str:
    """Cancel our newer copy (the port's exactly-once `cancel`, by its id); '' when done or
    already finished, else why not (it must be cancelled by hand)."""
    try:
        backend.cancel(sweep, [mine])
    except Exception as exc:  # reported loudly with the duplicate; the kept one is recorded anyway
        return f"could not cancel {mine.id} ({exc}): cancel it by hand"
    return ""
