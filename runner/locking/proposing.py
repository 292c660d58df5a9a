"""What `lock` and `propose` decide for each sweep named, as data: the search's one use case
(`runner.locking.step`) over every manifest whose search it concerns (each parsed once; a missing
or stale lock is what these two commands mend, so it is no problem here). The commands print what
is returned (`runner.report.rounds`); nothing here prints.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass

from runner.backends import ExperimentState
from runner.core.errors import ManifestError, MissingExtra, Problem, RunnerError
from runner.core.invoked import invoked
from runner.core.marks import KeyPath
from runner.core.model import Sweep
from runner.core.search import Adaptive
from runner.locking.auto import leaves
from runner.locking.seeding import SameCode, seeding, sources
from runner.locking.step import Advanced, advance_search, draw_sample, so_far
from runner.manifest.lock import lock_path
from runner.manifest.seeds import Seeding
from runner.observe.looks import Observer
from runner.observe.model import Observation
from runner.plan.catalog import Catalog
from runner.search.rounds import Round, RoundVerdict, advance
from runner.search.rungs import halving_of


@dataclass(frozen=True)
class Proposed:
    """One search's step: what was decided (`done.step`), and the round written, if any."""

    shown: str
    """The manifest's path, as the lines name it."""
    sweep: Sweep
    """The sweep as loaded (before this step): its search."""
    done: Advanced
    round: Round | None = None
    """The round (or rung) proposed and written to the lock; None when none was."""
    inside: bool = False
    """An automatic search whose next round stays inside its envelope: the schedule's submit
    advances it, so no pull request is proposed."""


@dataclass(frozen=True)
class Drew:
    """What `lock` did (or did not do) for one manifest's sample."""

    shown: str
    sweep: Sweep
    done: Advanced | None = None
    """The draw, when there was one."""
    said: str = ""
    """Why there was none, or what went wrong (the draw's error), in one line."""
    failed: bool = False


def draws(cat: Catalog, placed: Collection[str] = ()) -> list[Drew]:
    """`lock`'s second step: draw (or keep) each drawn sample's points (a halving's rung 0 too:
    its later rungs are `propose`'s); an adaptive one is `propose`'s. One manifest's problem
    does not stop the others. `placed`: the sweeps whose clusters the first step locked
    (nothing else to say of them)."""
    out: list[Drew] = []
    for sweep in cat.sweeps:
        loaded, shown, search = cat.loaded[sweep.name], str(sweep.path), sweep.search
        sample = search.sample
        if sample is None:
            if sweep.name not in placed:
                said = "no params.sample nor cluster selector: nothing to lock"
                out.append(Drew(shown, sweep, said=said))
            continue
        if isinstance(search.strategy, Adaptive):
            said = (
                f"method {sample.method} proposes its points round by round from the results:"
                f" run {invoked()} propose {shown}"
            )
            out.append(Drew(shown, sweep, said=said))
            continue
        try:
            command = f"{invoked()} lock {shown}"
            done = draw_sample(loaded, cat.root / shown, command)
        except MissingExtra:
            raise  # every drawn sample needs scipy: one line, not one per manifest
        except RunnerError as exc:
            out.append(Drew(shown, sweep, said=str(exc), failed=True))
            continue
        out.append(Drew(shown, sweep, done))
    return out


def searching(cat: Catalog) -> list[str]:
    """The sweeps whose search advances step by step from results (`propose`'s): an adaptive
    search, or a successive halving."""
    return [s.name for s in cat.sweeps if s.search.steps]


def proposals(cat: Catalog, looks: Observer, same: SameCode) -> list[Proposed]:
    """Each stepping search's next step (`searching`), from the phase's observer (the readers'
    one: `runner.observe.sweeps.observer`); `same`: whether a commit ran the code checked out
    now (a warm start's `commit: same`)."""
    return [_next(cat, name, looks, same) for name in searching(cat)]


def _names(sweep: Sweep) -> tuple[str, ...]:
    """What the search's points are told by: a halving's configuration, budget and rung, or
    the sample's parameters."""
    halving, sample = halving_of(sweep), sweep.search.sample
    return halving.told if halving is not None else sample.names if sample is not None else ()


def unwritten(sweep: Sweep, observed: Observation) -> None:
    """ManifestError (exit 1, nothing written) when points have succeeded and none wrote a
    metric the search is judged by (a misspelt `metric`, a job that writes another name): the
    search would rank nothing, so it is said now, naming the metrics the points did write,
    instead of after a rung or a round ran for nothing."""
    finished = [p for p in observed.points if p.state == ExperimentState.SUCCEEDED]
    if not finished:
        return
    wrote = sorted({m for p in finished for m in p.metrics if p.number(m) is not None})
    problems = []
    for metric in sweep.search.aims.metrics:
        if metric in wrote:
            continue
        said = (
            f"no finished point wrote {metric} (of {len(finished)} finished, in metrics.json):"
            f" they wrote {', '.join(wrote) or 'no numeric metric'}; name one of those, or have"
            f" the job write {metric}"
        )
        problems.append(Problem.at(sweep.marks, str(sweep.path), _written_at(sweep, metric), said))
    if problems:
        raise ManifestError(problems)


def _written_at(sweep: Sweep, metric: str) -> KeyPath:
    """Where the manifest names `metric`: a constraint, the halving's metric (which the sample's
    must agree with), or the sample's."""
    aims = sweep.search.aims
    if all(a.metric != metric for a in aims.objectives):
        return ("params", "sample", "constraints")
    if sweep.search.halving is not None:
        return ("params", "fidelity", "metric")
    return ("params", "sample", "metric")


def _next(cat: Catalog, name: str, looks: Observer, same: SameCode) -> Proposed:
    loaded = cat.loaded[name]
    sweep, shown = loaded.sweep, str(loaded.sweep.path)

    def observe() -> Observation:
        (plan,) = cat.plans_of([name], cat.ledgers(looks.backend.layout))
        observed = looks.observation(plan)
        unwritten(sweep, observed)
        return observed

    def others() -> Seeding:
        return seeding(sweep.search, sources(cat, sweep.search, looks.backend), same)

    command = f"{invoked()} propose {shown}"
    if sweep.search.auto:  # a pull request only for a round that would leave its envelope
        step = advance(sweep, so_far(observe(), _names(sweep)), loaded.stale is not None)
        # round 0 is the author's (proposed for the review), the rounds after it the schedule's
        later = step.number > 0 and bool(step.new)
        inside = later and not leaves(loaded, cat.root / shown, step, command)
        if step.verdict is RoundVerdict.PROPOSED and inside:
            return Proposed(shown, sweep, Advanced(step, lock_path(cat.root / shown)), inside=True)
    done = advance_search(loaded, cat.root / shown, command, observe, others)
    if done.step.verdict is not RoundVerdict.PROPOSED or done.text is None:
        return Proposed(shown, sweep, done)
    lock = done.lock.relative_to(cat.root).as_posix()
    round_ = Round(sweep, lock, done.text, done.step, done.hours)
    return Proposed(shown, sweep, done, round_)
