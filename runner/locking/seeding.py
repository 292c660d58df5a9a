"""A warm start: which finished points of other sweeps (`seed_from`) a search learns from.

`propose` observes each sweep named (its ledger and one bulk look, as `status` does) once, before
round 0, and hands the observations here with which commits ran the code checked out now. A point
is a prior when it succeeded, lies in this search's space (each sampled parameter within its
distribution, a conditional one present exactly where its condition holds; parameters this
search does not sample are not read, and said so), reports every metric the search is judged by,
and (with `commit: same`) was submitted at a commit whose code is the code checked out now.
Of a successive halving, only the last rung's points are priors: they ran the full length, as
the search's own points do; a shorter rung's value is of another budget (a loss at 30 steps is
not a loss at 270), so those points are left out, each saying its rung. Every other point is
left out with why. `seeding` is pure; `sources` reads the other sweeps.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from runner.backends import Backend, ExperimentState
from runner.core.errors import ManifestError
from runner.core.ladder import Ladder
from runner.core.locked import Seed, Seeds
from runner.core.sample import Commits, Sample, SeedFrom
from runner.core.search import Search
from runner.manifest.known import placed
from runner.manifest.seeds import LeftOut, Seeding
from runner.observe.looks import Context, Observer, always
from runner.observe.model import ROUND, Absent, Observation, PointResult
from runner.plan import catalog
from runner.plan.catalog import Catalog, named

SameCode = Callable[[str], str]
"""Why a commit's code (every file outside sweeps/) is not the code checked out now; empty when
it is."""


@dataclass(frozen=True)
class Source:
    """One sweep to learn from, as observed."""

    asked: SeedFrom
    observation: Observation


def seeding(search: Search, sources: Sequence[Source], same: SameCode) -> Seeding:
    """The prior points of every source, in the order named and each sweep's own order, each
    with the metrics the search is judged by (its aims')."""
    sample, metrics = search.sample, search.aims.metrics
    if sample is None:
        raise ValueError("only a sampled search starts warm")
    seeds: list[Seed] = []
    left: list[LeftOut] = []
    notes: list[str] = []
    for source in sources:
        observed = source.observation
        ladder = observed.halving.ladder if observed.halving is not None else None
        for point in observed.points:
            short = _short(ladder, point) if ladder is not None else ""
            seed, why = (None, short) if short else _seed(sample, metrics, source, point, same)
            if seed is not None:
                seeds.append(seed)
            elif why:
                left.append(LeftOut(observed.name, point.experiment, why))
        if ladder is not None:
            notes.append(
                f"{observed.name} is a successive halving: only its last rung's points"
                f" ({ladder.param}={ladder.values[-1]}) are priors, its shorter rungs' are left out"
            )
        budget = ladder.names if ladder is not None else ()
        unread = [a for a in observed.axes if a not in (*sample.names, ROUND, *budget)]
        if unread:
            notes.append(
                f"{observed.name}'s parameters {', '.join(unread)} are not in this search's space:"
                " its points were judged without them"
            )
    return Seeding(Seeds(metrics, tuple(seeds)), tuple(left), tuple(notes))


def _seed(
    sample: Sample, metrics: Sequence[str], source: Source, point: PointResult, same: SameCode
) -> tuple[Seed | None, str]:
    """The point as a prior, or why not ("" for a point never submitted: nothing to learn)."""
    if point.state == Absent.NOT_SUBMITTED:
        return None, ""
    if point.state != ExperimentState.SUCCEEDED:
        return None, f"not finished ({point.state})"
    if source.asked.commit is Commits.SAME and (differs := same(point.commit)):
        return None, f"another commit ({point.commit[:12] or 'none recorded'}: {differs})"
    row, why = placed(sample, dict(point.params))
    if row is None:
        return None, f"outside the space: {why}"
    values = [point.number(m) for m in metrics]
    missing = [m for m, v in zip(metrics, values, strict=True) if v is None]
    if missing:
        return None, f"no metric {', '.join(missing)}"
    numbers = tuple(float(v or 0.0) for v in values)
    return Seed(source.observation.name, point.key, row, numbers), ""


def _short(ladder: Ladder, point: PointResult) -> str:
    """Why a halving's point is not a prior: it ran short of the full length ("" when it ran
    it, at the last rung)."""
    rung, last = ladder.rung(dict(point.params)), len(ladder.values) - 1
    if rung == last or point.state == Absent.NOT_SUBMITTED:
        return ""
    return (
        f"rung {rung} of {last} ({ladder.param}={ladder.values[rung]}): a shorter run than the"
        f" full length ({ladder.param}={ladder.values[-1]})"
    )


def sources(cat: Catalog, search: Search, backend: Backend) -> list[Source]:
    """Each sweep the search's `seed_from` names, planned against its ledger and observed in
    one bulk look (its `gpu_hours` too, when the search is judged by it); a manifest that is not
    in `cat` is loaded from the repository. ManifestError when one does not load."""
    sample = search.sample
    if sample is None:
        return []
    looks = Observer(backend, always, Context(asked=frozenset(search.aims.metrics)))
    elsewhere = [a.sweep for a in sample.seed_from if a.sweep not in cat.loaded]
    found = named(cat.root, list(cat.loaded.values())) if elsewhere else {}
    paths = {n: path for n, (path, _) in found.items()}
    out = []
    for asked in sample.seed_from:
        other = (
            cat if asked.sweep in cat.loaded else catalog.load(cat.root, [str(paths[asked.sweep])])
        )
        if other.problems:
            raise ManifestError(list(other.problems))
        (plan,) = other.plans_of([asked.sweep], other.ledgers(backend.layout))
        out.append(Source(asked, looks.observation(plan)))
    return out
