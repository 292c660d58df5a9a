"""`report --against REV`: each point's metric at an earlier revision and now, and the change
(what `dvc metrics diff` shows in a pull request: "did my code change help").

*Then* is the sweep as committed at REV (its manifest and its ledger), observed as `report`
observes it now: one bulk look, in the group of its revision. *Now* is the manifest's points as
observed (orphans are not points of the manifest now). A point key present in both is one pair;
where the keys differ only because `revision:` was bumped to re-run the points (a new key for
the same parameters), the point is paired by its parameters. Pure: the two observations are
made by the command.
"""

from __future__ import annotations

from dataclasses import dataclass

from runner.core.aims import Goal
from runner.core.values import params_identity
from runner.observe.model import Absent, Observation, PointResult
from runner.plan import PlanStatus


@dataclass(frozen=True)
class Pair:
    """One point at REV and now."""

    then: PointResult
    now: PointResult
    metric: str
    by_params: bool = False
    """Paired by parameters: the key changed (a `revision:` bump)."""

    @property
    def before(self) -> float | None:
        return self.then.finished(self.metric)

    @property
    def after(self) -> float | None:
        return self.now.finished(self.metric)

    @property
    def change(self) -> float | None:
        before, after = self.before, self.after
        return None if before is None or after is None else after - before


@dataclass(frozen=True)
class Comparison:
    sweep: str
    rev: str
    metric: str
    goal: Goal
    pairs: tuple[Pair, ...]
    only_then: tuple[PointResult, ...]
    """Points submitted at REV that no point of the manifest now pairs with."""
    only_now: tuple[PointResult, ...]
    """The manifest's points now that no point submitted at REV pairs with."""
    unpaired: str = ""
    """Why no point pairs, when none does ("" when some do)."""

    def better(self, pair: Pair) -> bool | None:
        """Whether the point improved (None: no change to judge)."""
        change = pair.change
        if change is None or change == 0:
            return None
        return self.goal.better(pair.after or 0.0, pair.before or 0.0)


def compare(
    now: Observation, then: Observation | None, rev: str, metric: str, goal: Goal
) -> Comparison:
    """The sweep `now` against its observation `then` at REV (None: no such sweep at REV), by
    `metric`."""
    current = [p for p in now.points if p.status != PlanStatus.ORPHAN]
    submitted = [p for p in (then.points if then else ()) if p.state != Absent.NOT_SUBMITTED]
    by_key = {p.key: p for p in submitted}
    by_params = {params_identity(p.params): p for p in submitted}
    pairs, unpaired = [], []
    for point in current:
        old = by_key.get(point.key)
        moved = old is None  # the key changed: paired by its parameters, if at all
        if old is None:
            old = by_params.get(params_identity(point.params))
        if old is None or old.key not in by_key:
            unpaired.append(point)
            continue
        del by_key[old.key]
        pairs.append(Pair(old, point, metric, moved))
    why = "" if pairs else _why_none(now.name, then, rev, len(submitted), len(current))
    return Comparison(
        now.name, rev, metric, goal, tuple(pairs), tuple(by_key.values()), tuple(unpaired), why
    )


def _why_none(name: str, then: Observation | None, rev: str, submitted: int, now: int) -> str:
    """Why no point of the sweep now pairs with one at `rev`."""
    if then is None:
        return f"there is no sweep {name} at {rev} (its manifest came later, or was renamed)"
    if not submitted:
        return (
            f"the ledger at {rev} records no point of {name}: nothing had been submitted then,"
            " or its runs were local (recorded in .runs/, which git does not keep: only a"
            " committed ledger, a Beaker submit's, can be compared)"
        )
    if not now:
        return f"the manifest now has no point (at {rev}: {submitted} submitted)"
    return (
        f"none of the {submitted} point(s) submitted at {rev} has the parameters of one of the"
        f" {now} point(s) now"
    )
