"""The run: adoption in bulk, workers creating points, one writer recording outcomes, and the
ways a run ends early (deadline, backend unreachable, SIGINT/SIGTERM) without losing a record."""

from __future__ import annotations

import functools
import queue
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from runner.backends import Backend, Capability, Experiment, RunsInCreate, Transient, runs
from runner.backends.health import Wait
from runner.core.model import Rendered, Sweep
from runner.core.retry import RetryPolicy
from runner.ledger.store import LedgerStore
from runner.observe.looks import Observer, chosen, never
from runner.plan import SweepPlan
from runner.render.durations import elapsed_text
from runner.submit import duplicates
from runner.submit.options import Options
from runner.submit.outcome import Duplicate, Listener, Outcome, OutcomeStatus, Stop, StopKind
from runner.submit.point import NameClash, PointSubmitter, adopt
from runner.submit.record import Recorder

Job = tuple[Sweep, Rendered]


@dataclass(frozen=True)
class _Started:
    """A point's run has started inside its create (the local backend): record it now."""

    outcome: Outcome


@dataclass(frozen=True)
class _Reply:
    """What a call awaited by the run loop returned (or raised)."""

    token: object
    value: object


class Submitter:
    def __init__(
        self,
        backend: Backend,
        options: Options,
        progress: Listener,
        observers: tuple[Observer, Observer] | None = None,
        store: LedgerStore | None = None,
    ) -> None:
        """`observers`: the looks at each sweep before the creates (what exists to adopt) and
        after them (the duplicate check); by default, looks of their own. `store`: the
        repository's ledgers (by default, those of `options.root` in the backend's layout)."""
        self.backend = backend
        before, after = observers or (Observer(backend, never), Observer(backend, never))
        self.observer, self.after = before, after
        self.options = options
        self.progress = progress
        self.clock = options.clock
        self.policy = options.policy or RetryPolicy(sleep=self.clock.sleep)
        self.stopped: Stop | None = None
        """Why the run ended before every point had an outcome; None when it did not."""
        self.duplicates: list[Duplicate] = []
        self._signals: list[str] = []  # appended to by signal handlers, which take no locks
        self._stopping = threading.Event()
        self._events: queue.Queue[object] = queue.Queue()  # outcomes, replies, None = look again
        self._lock = threading.Lock()
        self._started: set[tuple[str, str]] = set()
        self._outcomes: dict[tuple[str, str], Outcome] = {}
        self._down_since: float | None = None
        self._grace_until: float | None = None
        store = store or LedgerStore(options.root, backend.layout)
        self.record = Recorder(
            store, options.commit, options.record_every, progress, self.clock.now
        )
        if isinstance(backend, RunsInCreate):
            backend.on_start = self._run_started
        self.points = PointSubmitter(
            backend,
            self.policy,
            self._remaining,
            self._retrying,
            self._stopping.is_set,
            options.code,
        )

    # -- what is submitted, and stopping from outside -----------------------------------------

    def jobs(self, plans: Sequence[SweepPlan]) -> list[Job]:
        """Every point this run submits, in order: the plans' '+' rows."""
        return [
            (p.sweep, r.rendered)
            for p in plans
            for r in p.to_submit_on(runs(self.backend, p.sweep))
            if r.rendered
        ]

    def request_stop(self, signal_name: str) -> None:
        """Stop starting creates (a signal handler calls this: it only appends to a list). A
        second request ends the wait for creates in flight."""
        self._signals.append(signal_name)

    # -- the run ------------------------------------------------------------------------------

    def run(self, plans: Sequence[SweepPlan]) -> list[Outcome]:
        jobs = self.jobs(plans)
        if isinstance(self.backend, RunsInCreate):  # a `wait` elsewhere waits for them all
            for plan in plans:
                if names := [p.name for s, p in jobs if s is plan.sweep]:
                    self.backend.will_start(plan.sweep, names)
        self.progress.start(len(jobs))
        self.backend.health.listen(self._heard)
        try:
            self._start_workers(self._adopt_existing(plans, jobs))
            while len(self._outcomes) < len(jobs) and not self._may_end():
                self._next_event()
            self._check_duplicates(plans)
        finally:
            self.record.write_last()  # at the end, at the deadline, on a signal and on errors
        self.progress.finish()
        return [self._final(sweep, point) for sweep, point in jobs]

    def _adopt_existing(self, plans: Sequence[SweepPlan], jobs: list[Job]) -> list[Job]:
        """Step 1: adopt, from one listing per sweep, what exists already with the point's key."""
        pending = []
        for plan in plans:
            mine = [(s, p) for s, p in jobs if s is plan.sweep]
            if not mine:
                continue
            found = self._await(functools.partial(self._adoptable, plan))
            if self.stopped is not None:
                return []
            if isinstance(found, Exception):
                self.progress.note(
                    f"bulk look-up failed ({found}); checking point by point instead"
                )
            for sweep, point in mine:
                experiment = found.get(point.name) if isinstance(found, dict) else None
                if experiment is None:
                    pending.append((sweep, point))
                    continue
                try:
                    self._take(
                        Outcome(sweep.name, point, OutcomeStatus.ADOPTED, adopt(point, experiment))
                    )
                except NameClash as exc:
                    self._take(Outcome(sweep.name, point, OutcomeStatus.REJECTED, error=str(exc)))
        return pending

    def _adoptable(self, plan: SweepPlan) -> dict[str, Experiment]:
        seen = self.observer.look(plan)
        return chosen(seen.listed, seen.mine, Capability.RESUMES in self.backend.capabilities)

    def _start_workers(self, pending: list[Job]) -> None:
        work: queue.Queue[Job] = queue.Queue()
        for job in pending:
            work.put(job)
        for _ in range(min(self.options.concurrency, len(pending))):
            threading.Thread(target=self._worker, args=(work,), daemon=True).start()

    def _worker(self, work: queue.Queue[Job]) -> None:
        while True:
            with self._lock:  # taking a job and marking it started is one step for `_final`
                if self._stopping.is_set() or work.empty():
                    return
                sweep, point = work.get_nowait()
                self._started.add((sweep.name, point.key))
            try:
                outcome = self.points.submit(sweep, point)
            except Exception as exc:  # a bug must fail this point, not hang the run
                error = f"unexpected {type(exc).__name__}: {exc}"
                outcome = Outcome(sweep.name, point, OutcomeStatus.FAILED, error=error)
            self._events.put(outcome)

    def _check_duplicates(self, plans: Sequence[SweepPlan]) -> None:
        created = [o for o in self._outcomes.values() if o.status == OutcomeStatus.CREATED]
        if not created or (self.stopped is not None and self.stopped.kind == StopKind.UNREACHABLE):
            return
        check = functools.partial(duplicates.check, self.after, plans, created)
        value = self._await(check, patient=True)
        if not isinstance(value, tuple):
            why = value if isinstance(value, Exception) else "the run stopped first"
            self.progress.note(
                f"could not check for duplicate experiments ({why}); `status` shows any"
            )
            return
        replaced, self.duplicates = value
        for outcome in replaced:
            self._outcomes[(outcome.sweep, outcome.point.key)] = outcome
            self.record.add(outcome)
        for duplicate in self.duplicates:
            self.progress.note(duplicate.text())

    # -- the loop's events --------------------------------------------------------------------

    def _await(self, call: Callable[[], object], patient: bool = False) -> object:
        """Run `call` on a thread and return what it returns or raises, taking outcomes as they
        come; None when the run stops first (`patient`: after the grace for creates in flight)."""
        token = object()

        def target() -> None:
            try:
                value = call()
            except Exception as exc:
                value = exc
            self._events.put(_Reply(token, value))

        threading.Thread(target=target, daemon=True).start()
        while not (self._may_end() if patient else self._check_stop()):
            event = self._next_event()
            if isinstance(event, _Reply) and event.token is token:
                return event.value
        return None

    def _next_event(self) -> object:
        """Write the ledger when a write is due, then wait for the next event, at most until
        something else is due; take an outcome. Every wait of the run goes through here, so
        no wait spins on a write that is due (the duplicate check waits here too)."""
        if self.record.due_in() == 0.0:
            self.record.write()
        now = self.clock.now()
        deadline = None if self.stopped is not None else self.options.deadline
        waits = [w for w in (self.record.due_in(),) if w is not None]
        waits += [
            t - now for t in (self._grace_until, self._give_up_at(), deadline) if t is not None
        ]
        try:
            event = self.clock.take(self._events, max(0.0, min(waits)) if waits else None)
        except queue.Empty:
            return None
        if isinstance(event, Outcome):
            self._take(event)
        elif isinstance(event, _Started):
            self.record.add(event.outcome)
            self.progress.started(event.outcome)
        return event

    def _run_started(self, sweep: Sweep, point: Rendered, experiment: Experiment) -> None:
        """From a worker: the run exists now, as a Beaker experiment does once created; the
        ledger gets its entry at the next write, and its outcome replaces it when it ends."""
        self._events.put(_Started(Outcome(sweep.name, point, OutcomeStatus.CREATED, experiment)))

    def _take(self, outcome: Outcome) -> None:
        self._outcomes[(outcome.sweep, outcome.point.key)] = outcome
        self.record.add(outcome)
        self.progress.done(outcome)

    def _heard(self, wait: Wait | None) -> None:
        """From backend threads: a retry to show, or the service answering again."""
        if wait is not None:
            self.progress.wait(wait.text(self.backend.health.service))
        self._events.put(None)

    def _retrying(self, error: BaseException, seconds: float, attempt: int) -> None:
        down = error.unreachable if isinstance(error, Transient) else None
        reason = down or str(error)  # 'connection refused', as the gateway's own waits say
        wait = Wait("", reason, seconds, attempt, self.policy.attempts, unreachable=bool(down))
        self.backend.health.waiting(wait)

    # -- ending early -------------------------------------------------------------------------

    def _may_end(self) -> bool:
        """Stopping, and no create in flight or no more time to wait for them."""
        if not self._check_stop():
            return False
        with self._lock:
            in_flight = bool(self._started - self._outcomes.keys())
        return not in_flight or self._grace_until is None or self.clock.now() >= self._grace_until

    def _check_stop(self) -> bool:
        """Begin stopping when a signal, the deadline or a long outage says so; True if stopping."""
        now = self.clock.now()
        down = self.backend.health.down()
        if down is None or self._down_since is None:
            self._down_since = None if down is None else now
        if self.stopped is None:
            stop = None
            if self._signals:
                stop = Stop(StopKind(self._signals[0]), f"{self._signals[0]} received")
            elif self.options.deadline is not None and now >= self.options.deadline:
                stop = Stop(StopKind.DEADLINE, "the run's deadline passed")
            elif (
                self._down_since is not None
                and now >= self._down_since + self.options.max_unreachable
            ):
                # The limit it reached (workers' retry sleeps on a shared virtual clock can
                # carry `now` past it before the loop looks again).
                health, lasted = self.backend.health, elapsed_text(self.options.max_unreachable)
                stop = Stop(
                    StopKind.UNREACHABLE,
                    f"{health.service} at {health.address} unreachable for {lasted} ({down})",
                )
            if stop is not None:
                self._begin_stop(stop, now)
        elif len(self._signals) > (1 if self.stopped.kind.signal else 0):
            self._grace_until = now  # another signal: stop waiting for creates in flight
        return self.stopped is not None

    def _begin_stop(self, stop: Stop, now: float) -> None:
        self.stopped = stop
        with self._lock:
            self._stopping.set()
            in_flight = len(self._started - self._outcomes.keys())
        grace = self.options.signal_grace if stop.kind.signal else self.options.grace
        self._grace_until = now + grace
        if in_flight:
            self.progress.note(
                f"{stop.reason}: starting no more creates; waiting up to {grace:.0f} s for the"
                f" {in_flight} in flight"
            )

    def _give_up_at(self) -> float | None:
        if self._down_since is None or self.stopped is not None:
            return None
        return self._down_since + self.options.max_unreachable

    def _remaining(self) -> float | None:
        if self._stopping.is_set():
            return 0.0
        if self.options.deadline is None:
            return None
        return max(0.0, self.options.deadline - self.clock.now())

    # -- the record ---------------------------------------------------------------------------

    def _final(self, sweep: Sweep, point: Rendered) -> Outcome:
        outcome = self._outcomes.get((sweep.name, point.key))
        if outcome is not None:
            return outcome
        why = self.stopped.reason if self.stopped is not None else "the run ended"
        if (sweep.name, point.key) in self._started:
            error = f"in flight when the run stopped ({why}): outcome unknown; the next run adopts it if it exists"
            return Outcome(sweep.name, point, OutcomeStatus.UNKNOWN, error=error)
        return Outcome(sweep.name, point, OutcomeStatus.NOT_STARTED, error=f"never started: {why}")
