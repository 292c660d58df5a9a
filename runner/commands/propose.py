"""`propose`: the next round of each adaptive search named (or all), into its lock, one line
each: observe the sweep (what `status` shows, and its stop), let the search decide
(`runner.search.rounds.next_round`, pure), write the lock.

In GitHub Actions the step output `rounds` lists each round proposed (sweep, lock path and text,
round, a branch name and the pull request's title and body, `runner.report.rounds`) for the
workflow that opens one pull request per sweep and round (.github/workflows/propose.yml).

Exit 0: proposed, waiting for a round, or stopped (one line each); 1: a manifest problem (a grid,
zip or include beside the sample is one), or Optuna missing; 3: unexpected.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from runner.commands.common import BACKEND_CHOICES, Subparsers, add_paths, stderr

if TYPE_CHECKING:
    from runner.backends import Backend
    from runner.manifest.sample import Sample
    from runner.search.rounds import Round, SoFar


def register(commands: Subparsers) -> None:
    parser = commands.add_parser(
        "propose", help="adaptive search: append the next round of points to the sample's lock"
    )
    add_paths(parser)
    parser.add_argument("--backend", choices=BACKEND_CHOICES, default="auto")
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    return propose(Path(args.directory), args.paths, args.backend)


def propose(directory: Path, paths: Sequence[str], backend_name: str = "auto") -> int:
    from runner import manifest
    from runner.backends import open_backend
    from runner.plan import catalog
    from runner.repo import github
    from runner.report.rounds import pull_request

    base = directory.resolve()
    root = catalog.find_root(base)
    backend = None
    rounds: list[Round] = []
    try:
        for path in catalog.manifests(root, paths, base):
            shown = catalog.display(root, path)
            sample = manifest.load_sample(path, shown)
            if sample is None or not sample.adaptive:
                continue
            if backend is None:
                backend = open_backend(backend_name, root, stderr)
            proposed = next_round(root, path, shown, sample, backend)
            rounds += [proposed] if proposed is not None else []
    finally:
        if backend is not None:
            backend.close()
    pulls = [pull_request(r) for r in rounds]
    github.set_outputs({"rounds": json.dumps(pulls, sort_keys=True)})
    github.append_summary("".join(f"- {p['title']}\n" for p in pulls) or "No round proposed.\n")
    return 0


def next_round(
    root: Path, path: Path, shown: str, sample: Sample, backend: Backend
) -> Round | None:
    """One sweep's next round, written into its lock (and said on stderr), when one is proposed."""
    from runner import manifest
    from runner.core import files
    from runner.core.invoked import invoked
    from runner.manifest.sample import lock_path, lock_text, read_lock
    from runner.report.rounds import line
    from runner.search import rounds
    from runner.search.rounds import Round, RoundVerdict

    target = lock_path(path)
    lock = read_lock(target, sample.names)
    observed = (
        _observe(root, path, shown, sample, backend) if rounds.observes(sample, lock) else None
    )
    step = rounds.next_round(sample, lock, observed or rounds.SoFar())
    if step.verdict is not RoundVerdict.PROPOSED:
        stderr(line(shown, sample, step))
        return None
    text = lock_text(sample, step.rows, f"{invoked()} propose {shown}", step.rounds)
    files.write_atomic(target, text)
    sweep = manifest.load(path, shown).sweep  # the manifest with its new lock must be valid
    stderr(line(shown, sample, step))
    return Round(sweep.name, target.relative_to(root).as_posix(), text, sample, step)


def _observe(root: Path, path: Path, shown: str, sample: Sample, backend: Backend) -> SoFar:
    """What `status` shows of the sweep's points (its plan against its ledger, joined with the
    backend), and its stop (`max_failures`, `stop_when`)."""
    from runner import manifest
    from runner.apply.guardrails import stop_of
    from runner.ledger import LedgerStore
    from runner.operate.findings import observed
    from runner.operate.results import collect
    from runner.plan import build, capped
    from runner.search.rounds import SoFar

    loaded = manifest.load(path, shown)  # refuses a grid, zip or include beside the sample
    record = LedgerStore(root, backend.kind).read(loaded.sweep.name)
    plan = capped(build(loaded.sweep, record, loaded.renderer), running=None)
    results = collect(plan, backend, root)
    stop = stop_of(loaded.sweep, results)
    told = observed(results, sample.names, sample.metric)
    return SoFar(told, stop.reason if stop is not None else "")
