"""Exactly-once submission: one experiment per point under retries, lost replies and races.

The protocol, per point (its name is derived from its key, so it is the same in every run):
1. Before anything is created, existing experiments are listed in bulk and adopted when they
   carry the point's key. This repairs a ledger commit that never landed.
2. Create under the deterministic name. Successes are recorded in the ledger in batches: one
   writer (the thread that runs `Submitter.run`) writes all that has accumulated once the oldest
   unwritten entry is `Options.record_every` seconds old, and always before the run returns or
   raises, at its deadline too. An experiment that exists but never reached the ledger (the
   runner was killed between two writes) is adopted by step 1 of the next run, so batching
   loses nothing.
3. A transient failure (5xx, 429, reset, timeout, UNAVAILABLE) may have created the experiment
   on the server. The next attempt first looks the name up and adopts what it finds.
4. A name conflict (409) means "look it up": adopt it when it records our key, otherwise fail
   the point loudly, naming the other experiment. A new name is never invented.
5. Client errors are never retried. Attempts are bounded in number and time, and the whole run
   by a deadline: a hung backend call is abandoned (daemon thread) and reported.
"""

from __future__ import annotations

import functools
import queue
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from runner import ledger, retry
from runner.backends import Backend, Experiment, NameTaken, Rejected, Transient
from runner.errors import LedgerError
from runner.files import utc_now
from runner.keys import SPEC_HASH_VERSION, canonical_spec
from runner.model import Rendered, Sweep
from runner.plan import SweepPlan
from runner.retry import RetryPolicy

CREATED, ADOPTED, FAILED, UNFINISHED = "created", "adopted", "failed", "unfinished"


class Listener(Protocol):
    """Who is told what happens during a run (the terminal or CI log: `runner.progress`)."""

    def start(self, total: int) -> None: ...

    def note(self, text: str) -> None: ...

    def done(self, outcome: Outcome) -> None: ...

    def finish(self) -> None: ...


class NameClash(Exception):
    """The experiment name is taken by an experiment that is not this point's."""


@dataclass(frozen=True)
class Outcome:
    sweep: str
    point: Rendered
    status: str
    experiment: Experiment | None = None
    error: str = ""


@dataclass
class Options:
    root: Path
    commit: str
    concurrency: int = 8
    deadline: float | None = None
    """time.monotonic() value after which no new work starts and the run reports."""
    policy: RetryPolicy = field(default_factory=RetryPolicy)
    record_every: float = 0.25
    """Seconds between ledger writes during a run (each write re-reads, merges and fsyncs the
    file, ~1-2 ms, so writing once per success serialised the workers behind it)."""


class Submitter:
    def __init__(self, backend: Backend, options: Options, progress: Listener) -> None:
        self.backend = backend
        self.options = options
        self.progress = progress

    # -- the run -------------------------------------------------------------------------------

    def run(self, plans: Sequence[SweepPlan]) -> list[Outcome]:
        jobs = [
            (plan.sweep, row.rendered)
            for plan in plans
            for row in plan.to_submit_on(self.backend.kind)
            if row.rendered
        ]
        self.progress.start(len(jobs))
        outcomes: dict[tuple[str, str], Outcome] = {}
        results: queue.Queue[Outcome] = queue.Queue()
        pending = self._adopt_existing(plans, jobs, results)
        work: queue.Queue[tuple[Sweep, Rendered]] = queue.Queue()
        for job in pending:
            work.put(job)
        workers = max(1, min(self.options.concurrency, len(pending)))
        for _ in range(workers if pending else 0):
            threading.Thread(target=self._worker, args=(work, results), daemon=True).start()
        unwritten = ledger.Pending(self.options.record_every)
        try:
            self._collect(len(jobs), results, outcomes, unwritten)
        finally:
            self._write(unwritten, last=True)  # at the end, at the deadline and on errors
        for sweep, point in jobs:
            late = Outcome(
                sweep.name, point, UNFINISHED, error="deadline reached before it finished"
            )
            outcomes.setdefault((sweep.name, point.key), late)
        self.progress.finish()
        return [outcomes[(s.name, p.key)] for s, p in jobs]

    def _collect(
        self,
        expected: int,
        results: queue.Queue[Outcome],
        outcomes: dict[tuple[str, str], Outcome],
        unwritten: ledger.Pending,
    ) -> None:
        """Take outcomes until all are in or the deadline passes, recording successes in batches."""
        while len(outcomes) < expected:
            if unwritten.due_in() == 0.0:
                self._write(unwritten)
            waits = [w for w in (self._remaining(), unwritten.due_in()) if w is not None]
            try:
                outcome = results.get(timeout=min(waits) if waits else None)
            except queue.Empty:
                if self._expired():
                    return  # whatever is still running is abandoned and reported
                continue
            outcomes[(outcome.sweep, outcome.point.key)] = outcome
            if outcome.experiment is not None and outcome.status in (CREATED, ADOPTED):
                path = ledger.ledger_path(self.options.root, outcome.sweep, self.backend.kind)
                unwritten.add(path, outcome.sweep, self._entry(outcome))
            self.progress.done(outcome)

    def _write(self, unwritten: ledger.Pending, last: bool = False) -> None:
        """Write what has accumulated; a failure mid-run is retried at the next write."""
        try:
            unwritten.flush()
        except (OSError, LedgerError) as exc:
            if last:
                raise LedgerError(
                    f"could not write the ledger: {exc}. The experiments exist on the backend;"
                    " run submit again to adopt them into the ledger"
                ) from None
            self.progress.note(f"could not write the ledger ({exc}); trying again")

    def _entry(self, outcome: Outcome) -> ledger.Entry:
        assert outcome.experiment is not None
        point = outcome.point
        return ledger.Entry(
            key=point.key,
            experiment=point.name,
            url=outcome.experiment.url,
            id=outcome.experiment.id,
            spec_hash=point.spec_hash,
            submitted_at=utc_now(),
            commit=self.options.commit,
            params=dict(point.params),
            hash_version=SPEC_HASH_VERSION,
            spec=ledger.pack_spec(canonical_spec(point.spec)),  # so drift can say what changed
        )

    def _remaining(self) -> float | None:
        if self.options.deadline is None:
            return None
        return max(0.0, self.options.deadline - time.monotonic())

    def _expired(self) -> bool:
        remaining = self._remaining()
        return remaining is not None and remaining <= 0

    def _worker(
        self, work: queue.Queue[tuple[Sweep, Rendered]], results: queue.Queue[Outcome]
    ) -> None:
        while True:
            try:
                sweep, point = work.get_nowait()
            except queue.Empty:
                return
            try:
                if self._expired():
                    outcome = Outcome(
                        sweep.name, point, UNFINISHED, error="deadline reached before it started"
                    )
                else:
                    outcome = self.submit_point(sweep, point)
            except Exception as exc:  # a bug must fail this point, not hang the run
                error = f"unexpected {type(exc).__name__}: {exc}"
                outcome = Outcome(sweep.name, point, FAILED, error=error)
            results.put(outcome)

    # -- step 1: bulk adoption -----------------------------------------------------------------

    def _adopt_existing(
        self,
        plans: Sequence[SweepPlan],
        jobs: list[tuple[Sweep, Rendered]],
        results: queue.Queue[Outcome],
    ) -> list[tuple[Sweep, Rendered]]:
        pending = []
        for plan in plans:
            mine = [(s, p) for s, p in jobs if s is plan.sweep]
            if not mine:
                continue
            names = [p.name for _, p in mine]
            found = self._bounded(functools.partial(self.backend.existing, plan.sweep, names))
            for sweep, point in mine:
                experiment = found.get(point.name) if found else None
                if experiment is None:
                    pending.append((sweep, point))
                    continue
                try:
                    results.put(Outcome(sweep.name, point, ADOPTED, self._adopt(point, experiment)))
                except NameClash as exc:
                    results.put(Outcome(sweep.name, point, FAILED, error=str(exc)))
        return pending

    def _bounded(
        self, call: Callable[[], dict[str, Experiment] | object]
    ) -> dict[str, Experiment] | None:
        """Run a bulk look-up, giving up (None) on failure or when the deadline passes."""
        box: queue.Queue[object] = queue.Queue()

        def target() -> None:
            try:
                box.put(call())
            except Exception as exc:
                box.put(exc)

        threading.Thread(target=target, daemon=True).start()
        try:
            value = box.get(timeout=self._remaining())
        except queue.Empty:
            return None
        if isinstance(value, Exception):
            self.progress.note(f"bulk look-up failed ({value}); checking point by point instead")
            return None
        assert isinstance(value, Mapping)
        return dict(value)

    # -- steps 2-5: one point ------------------------------------------------------------------

    def submit_point(self, sweep: Sweep, point: Rendered) -> Outcome:
        ambiguous = False

        def attempt() -> tuple[Experiment, str]:
            nonlocal ambiguous
            if ambiguous:
                found = self.backend.find(sweep, point.name)
                if found is not None:
                    return self._adopt(point, found), ADOPTED
            try:
                return self.backend.create(sweep, point), CREATED
            except NameTaken:
                found = self.backend.find(sweep, point.name)
                if found is None:
                    ambiguous = True
                    raise Transient(f"name {point.name} is taken but cannot be found yet") from None
                return self._adopt(point, found), ADOPTED
            except Transient as exc:
                ambiguous = ambiguous or exc.maybe_committed
                raise

        try:
            experiment, status = retry.retrying(self.options.policy, self._remaining, Transient)(
                attempt
            )
        except Transient as exc:
            return Outcome(sweep.name, point, FAILED, error=f"gave up after retries: {exc}")
        except (Rejected, NameClash) as exc:
            return Outcome(sweep.name, point, FAILED, error=str(exc))
        return Outcome(sweep.name, point, status, experiment)

    def _adopt(self, point: Rendered, found: Experiment) -> Experiment:
        if found.key != point.key:
            raise NameClash(
                f"experiment {found.name} ({found.url}) already exists but records key"
                f" {found.key or 'none'}, not this point's {point.key}; it was not created by this"
                " sweep, so it is left alone (rename the sweep or bump its revision)"
            )
        return found
