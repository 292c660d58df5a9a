"""`propose`: the next step of each stepping search named (or all) into its lock, one line each:
an adaptive search's round, a successive halving's rung (`runner.locking.proposing`, from the
sweep's observation, the same one `status` shows: `runner.observe.sweeps`).

In GitHub Actions the step output `rounds` lists each round proposed (sweep, lock path and text,
round, a branch name and the pull request's title and body, `runner.report.rounds`) for the
workflow that opens one pull request per sweep and round (.github/workflows/propose.yml).

Exit 0: proposed, waiting for a round, or stopped (one line each); 1: a manifest problem (a grid,
zip or include beside the sample is one), a metric the search is judged by that no finished point
wrote (the line names those they wrote), a manifest named that has nothing to propose, a bad
duration, or Optuna missing; 5: Beaker did not answer in time (`--timeout`, `--max-unreachable`;
the rounds written before are kept); 3: unexpected.
"""

from __future__ import annotations

import argparse
import functools
import json
from collections.abc import Sequence
from pathlib import Path

from runner.backends.opening import open_backend
from runner.commands.common import stderr
from runner.commands.limits import bounds, show_waits, unanswered
from runner.commands.loading import load_catalog, report_problems
from runner.core.clock import Bounds, Clock
from runner.core.defaults import DEFAULT_READ_TIMEOUT
from runner.core.errors import Exit
from runner.locking.proposing import Proposed, proposals, searching
from runner.locking.seeding import SameCode
from runner.manifest import Locks
from runner.observe import sweeps
from runner.plan.catalog import SWEEPS_DIR
from runner.repo import github, gitrepo
from runner.report.rounds import Listed, proposed_lines, pull_request


def run(args: argparse.Namespace) -> Exit:
    limits = (args.timeout, args.max_unreachable)
    listed = Listed.EVERY if args.verbose else Listed.FEW
    return propose(Path(args.directory), args.paths, args.backend, limits, listed)


def propose(
    directory: Path,
    paths: Sequence[str],
    backend_name: str = "auto",
    limits: tuple[str | None, str | None] = (None, None),
    listed: Listed = Listed.FEW,
    clock: Clock | None = None,
) -> Exit:
    """Each stepping search's next step, from its observation; the rounds proposed as the step
    output `rounds` (one pull request each, in the Propose workflow). `limits`: `--timeout` and
    `--max-unreachable` (durations; the timeout's default is `DEFAULT_READ_TIMEOUT`); `listed`:
    a warm start's every point left out, one a line (`--verbose`), else the first few; `clock`:
    what the deadline is on (tests pass one that jumps)."""
    given = bounds(clock or Clock(), *limits, DEFAULT_READ_TIMEOUT)
    with unanswered(lambda: "the rounds proposed before it are written, no other"):
        return _propose(directory, paths, backend_name, given, listed)


def _propose(
    directory: Path, paths: Sequence[str], backend_name: str, given: Bounds, listed: Listed
) -> Exit:
    cat = load_catalog(directory, paths, Locks.MAY_BE_STALE)
    if report_problems(cat):
        return Exit.USER_ERROR
    stepping = searching(cat)
    if paths and not stepping:
        named = ", ".join(str(s.path) for s in cat.sweeps)
        stderr(
            f"{named}: nothing to propose: only an adaptive search (method tpe or gp) and a"
            " successive halving (params.fidelity) have rounds"
        )
        return Exit.USER_ERROR
    found: list[Proposed] = []
    if stepping:
        backend = open_backend(backend_name, cat.root, stderr, bounds=given)
        show_waits(backend.health)
        try:
            found = proposals(cat, sweeps.observer(cat, backend), same_code(cat.root))
        finally:
            backend.close()
    for one in found:
        for line in proposed_lines(one, listed):
            stderr(line)
    pulls = [pull_request(one.round) for one in found if one.round is not None]
    github.set_outputs({"rounds": json.dumps(pulls, sort_keys=True)})
    github.append_summary("".join(f"- {p['title']}\n" for p in pulls) or "No round proposed.\n")
    return Exit.OK


def same_code(root: Path) -> SameCode:
    """Why a commit's code (every file outside sweeps/) is not the code checked out now (`git
    diff` against the working tree, once per commit); empty when it is."""
    top = gitrepo.toplevel(root)
    if top is None:
        return lambda commit: "not a git checkout"
    inside = (root.resolve() / SWEEPS_DIR).relative_to(top.resolve()).as_posix() + "/"

    @functools.cache
    def differs(commit: str) -> str:
        changed = gitrepo.changed_since(root, commit) if commit else None
        if changed is None:
            return "not in this checkout: fetch its history, or use commit: any"
        return "" if all(p.startswith(inside) for p in changed) else "its code differs"

    return differs
