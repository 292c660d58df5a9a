"""`propose`: the next round of an adaptive search (`params.sample.method: tpe`), into the lock.

For each manifest named (or all) with an adaptive sample: read the lock (every point so far and
its round) and each point's result, the same as `status` reads (a finished point's metric; a
failed one; one queued, running or not submitted yet is pending). Once the last round has
finished (`proceed` of it, by default all), ask Optuna for the next `batch` points
(`runner.manifest.adaptive`) and append them to the lock as the next round; a pull request then
shows and submits them like any edit. The same lock, results and seed propose the same points.
Stops at `n`, at the sweep's `stop_when` or `max_failures`, and says which.

Exit 0: proposed, waiting for a round, or stopped (one line each); 1: a manifest problem, a
sweep with axes besides the sample, or Optuna missing; 3: unexpected.
"""

from __future__ import annotations

import argparse
import math
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from runner.commands.common import BACKEND_CHOICES, Subparsers, add_paths, stderr
from runner.core.errors import RunnerError

if TYPE_CHECKING:
    from runner.backends import Backend
    from runner.core.model import Sweep
    from runner.core.values import Value
    from runner.manifest.adaptive import Told
    from runner.manifest.sample import Sample
    from runner.operate.results import SweepResults


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

    base = directory.resolve()
    root = catalog.find_root(base)
    backend = None
    try:
        for path in catalog.manifests(root, paths, base):
            shown = catalog.display(root, path)
            sample = manifest.load_sample(path, shown)
            if sample is None or not sample.adaptive:
                continue
            if backend is None:
                backend = open_backend(backend_name, root, stderr)
            stderr(_one(root, path, shown, sample, backend))
    finally:
        if backend is not None:
            backend.close()
    return 0


def _one(root: Path, path: Path, shown: str, sample: Sample, backend: Backend) -> str:
    from runner import manifest
    from runner.core import files
    from runner.manifest import adaptive
    from runner.manifest.sample import lock_path, lock_text, read_lock

    before = read_lock(lock_path(path), sample.names)
    if before is None or before.sample != sample.digest:
        rows: tuple[tuple[Value, ...], ...] = ()
        rounds: tuple[int, ...] = ()
    else:
        rows, rounds = before.rows, before.rounds or (0,) * len(before.rows)
    if len(rows) >= sample.n:
        return f"{shown}: search complete: {len(rows)} of n={sample.n} points proposed"
    told: list[Told] = []
    if rows:
        sweep, results = _results(root, path, shown, backend)
        told = _told(sample, rows, results)
        last = max(rounds)
        mine = [t for t, k in zip(told, rounds, strict=True) if k == last]
        done = sum(t.result != adaptive.Result.PENDING for t in mine)
        if done < math.ceil(sample.proceed * len(mine)):
            return (
                f"{shown}: round {last} has {done} of {len(mine)} point(s) finished: the next"
                " round waits for it"
            )
        from runner.apply.guardrails import stop_of

        stop = stop_of(sweep, results)
        if stop is not None:
            return f"{shown}: the search {stop.reason}: no round proposed"
    round_ = max(rounds) + 1 if rows else 0
    count = min(sample.batch, sample.n - len(rows))
    new = adaptive.propose(sample, told, count, round_)
    if not new:
        return f"{shown}: no new point left in the space after rounding: search complete"
    text = lock_text(
        sample, [*rows, *new], f"python -m runner propose {shown}", [*rounds, *[round_] * len(new)]
    )
    files.write_atomic(lock_path(path), text)
    manifest.load(path, shown)  # the manifest with its new lock must be valid
    total = len(rows) + len(new)
    return f"{shown}: round {round_}: proposed {len(new)} point(s), {total} of n={sample.n}"


def _results(root: Path, path: Path, shown: str, backend: Backend) -> tuple[Sweep, SweepResults]:
    """What `status` shows of the sweep: its plan against its ledger, joined with the backend."""
    from runner import manifest
    from runner.ledger import LedgerStore
    from runner.operate.results import collect
    from runner.plan import build, capped

    loaded = manifest.load(path, shown)
    sweep = loaded.sweep
    if len(sweep.space.axes) != 1 or sweep.space.include:
        raise RunnerError(
            f"{shown}: propose needs a sweep whose only parameters are params.sample's"
            " (no grid or zip axes beside it)"
        )
    record = LedgerStore(root, backend.kind).read(sweep.name)
    plan = capped(build(sweep, record, loaded.renderer), running=None)
    return sweep, collect(plan, backend, root)


def _told(sample: Sample, rows: Sequence[tuple[Value, ...]], results: SweepResults) -> list[Told]:
    from runner.backends import ExperimentState
    from runner.core.values import canonical_json, identity
    from runner.manifest.adaptive import Result, Told

    def ident(values: Sequence[Value]) -> str:
        return canonical_json([identity(v) for v in values])

    by_values = {ident([dict(p.params)[n] for n in sample.names]): p for p in results.points}
    told = []
    for row in rows:
        point = by_values.get(ident(row))
        state = point.state if point is not None else ""
        if state == ExperimentState.SUCCEEDED:
            value = point.number(sample.metric) if point is not None else None
            result = Result.DONE if value is not None else Result.FAILED
            told.append(Told(tuple(row), result, value))
        elif state in (ExperimentState.FAILED, ExperimentState.CANCELED):
            told.append(Told(tuple(row), Result.FAILED))
        else:
            told.append(Told(tuple(row), Result.PENDING))
    return told
