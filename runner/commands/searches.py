"""What `lock` and `propose` do, below their argparse: the one search use case
(`runner.operate.advance`) over every sampled manifest (and successive halving) named, each parsed once (a missing or
stale lock is what these two commands mend, so it is no problem here), one line each.

Imported only when one of the two runs: it loads the whole pipeline.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Collection, Sequence
from pathlib import Path

from runner.backends.opening import open_backend
from runner.commands.common import stderr
from runner.commands.limits import show_waits
from runner.commands.loading import load_catalog, report_problems
from runner.core.clock import Bounds
from runner.core.errors import Exit, MissingExtra, RunnerError
from runner.core.invoked import invoked
from runner.manifest import Loaded, Locks
from runner.manifest.seeds import Seeding
from runner.observe import sweeps
from runner.observe.looks import Observer
from runner.observe.model import Observation
from runner.operate.advance import Advanced, advance_search, halving_of
from runner.operate.seeding import SameCode, seeding, sources
from runner.plan.catalog import SWEEPS_DIR, Catalog
from runner.repo import github, gitrepo
from runner.report.rounds import line, lock_line, pull_request, seeding_lines
from runner.report.rungs import rung_line
from runner.search.rounds import Round, RoundVerdict


def lock_samples(cat: Catalog, placed: Collection[str] = ()) -> bool:
    """`lock`'s second step: draw (or keep) each drawn sample's points (a halving's rung 0 too:
    its later rungs are `propose`'s); an adaptive one is `propose`'s. One manifest's problem
    does not stop the others; True when one failed. `placed`: the sweeps whose clusters the
    first step locked (nothing else to say of them)."""
    failed = False
    for sweep in cat.sweeps:
        loaded = cat.loaded[sweep.name]
        shown, sample = str(sweep.path), loaded.sample
        if sample is None:
            if sweep.name not in placed:
                stderr(f"{shown}: no params.sample nor cluster selector: nothing to lock")
            continue
        if sample.adaptive:
            stderr(
                f"{shown}: method {sample.method} proposes its points round by round from the"
                f" results: run {invoked()} propose {shown}"
            )
            continue
        try:
            command = f"{invoked()} lock {shown}"
            done = advance_search(loaded, cat.root / shown, command, _no_results)
        except MissingExtra:
            raise  # every drawn sample needs scipy: one line, not one per manifest
        except RunnerError as exc:
            stderr(str(exc))
            failed = True
            continue
        stderr(lock_line(shown, sample, done))
    return failed


def _no_results() -> Observation:
    raise AssertionError("a drawn sample's points never depend on results")


def propose_rounds(
    directory: Path, paths: Sequence[str], backend_name: str, bounds: Bounds | None = None
) -> Exit:
    """`propose`: each adaptive search's next round, from its observation; the rounds proposed
    as the step output `rounds` (one pull request each, in the Propose workflow). `bounds`: the
    command's deadline, which every Beaker call is held to."""
    cat = load_catalog(directory, paths, Locks.MAY_BE_STALE)
    if report_problems(cat):
        return Exit.USER_ERROR
    searches = [s for s in cat.sweeps if _has_rounds(cat.loaded[s.name])]
    if paths and not searches:
        named = ", ".join(str(s.path) for s in cat.sweeps)
        stderr(
            f"{named}: nothing to propose: only an adaptive search (method tpe or gp) and a"
            " successive halving (params.fidelity) have rounds"
        )
        return Exit.USER_ERROR
    rounds: list[Round] = []
    if searches:
        backend = open_backend(backend_name, cat.root, stderr, bounds=bounds)
        show_waits(backend.health)
        try:
            rounds = proposed(cat, sweeps.observer(cat, backend))
        finally:
            backend.close()
    pulls = [pull_request(r) for r in rounds]
    github.set_outputs({"rounds": json.dumps(pulls, sort_keys=True)})
    github.append_summary("".join(f"- {p['title']}\n" for p in pulls) or "No round proposed.\n")
    return Exit.OK


def proposed(cat: Catalog, looks: Observer) -> list[Round]:
    """Each adaptive search's step (one line each on stderr), from the phase's observer (the
    readers' one: `runner.observe.sweeps.observer`); the rounds proposed and written."""
    rounds = []
    for sweep in cat.sweeps:
        if _has_rounds(cat.loaded[sweep.name]):
            found = _next(cat, sweep.name, looks)
            rounds += [found] if found is not None else []
    return rounds


def _has_rounds(loaded: Loaded) -> bool:
    """An adaptive search, or a successive halving: what `propose` advances."""
    return loaded.fidelity is not None or (loaded.sample is not None and loaded.sample.adaptive)


def same_code(root: Path) -> SameCode:
    """Why a commit's code (every file outside sweeps/) is not the code checked out now (`git
    diff` against the working tree, once per commit); empty when it is."""
    top = gitrepo.toplevel(root)
    if top is None:
        return lambda commit: "not a git checkout"
    sweeps = (root.resolve() / SWEEPS_DIR).relative_to(top.resolve()).as_posix() + "/"

    @functools.cache
    def differs(commit: str) -> str:
        changed = gitrepo.changed_since(root, commit) if commit else None
        if changed is None:
            return "not in this checkout: fetch its history, or use commit: any"
        return "" if all(p.startswith(sweeps) for p in changed) else "its code differs"

    return differs


def _next(cat: Catalog, name: str, looks: Observer) -> Round | None:
    """One search's step, said on stderr; the round, when one was proposed and written."""
    loaded = cat.loaded[name]
    sample, shown, halving = loaded.sample, str(loaded.sweep.path), halving_of(loaded)

    def observe() -> Observation:
        (plan,) = cat.plans_of([name], cat.ledgers(looks.backend.layout))
        return looks.observation(plan)

    def others() -> Seeding:
        assert sample is not None
        return seeding(sample, sources(cat, sample, looks.backend), same_code(cat.root))

    command = f"{invoked()} propose {shown}"
    done: Advanced = advance_search(loaded, cat.root / shown, command, observe, others, halving)
    if halving is not None:
        stderr(rung_line(shown, halving, done.step))
    else:
        assert sample is not None
        stderr(line(shown, sample, done.step))
    for said in seeding_lines(done.step) if done.text is not None else ():
        stderr(f"{shown}: {said}")
    if done.step.verdict is not RoundVerdict.PROPOSED or done.text is None:
        return None
    lock = done.lock.relative_to(cat.root).as_posix()
    return Round(name, lock, done.text, sample, done.step, halving, done.hours)
