"""Apply the plan (Terraform's word, beside `plan`): everything a submit does on an open backend.

`apply(plans, backend, options, listener) -> Applied` runs a fixed sequence of steps. Each step
is a function `(Run, Applied) -> Applied`: it reads what the steps before it found and returns
the value with its own finding added. Steps decide and act; they never print. The listener is
told what happens (`planned` once the plan is final, then the Submitter's calls), and
`runner.report` turns the returned `Applied` into text; the command prints it.

1. PLANNING, run in every mode (a dry run stops after them, having changed nothing):
   `restart_failed_points` (or, in a dry run, what it would restart), `hold_back_unreviewed` (plan
   pins), `hold_over_budget` (the budget policy's approval), `cap_running` (each sweep's
   max_running against its live experiments), `stop_guarded_sweeps` (max_failures, stop_when).
2. ACTING, run unless `options.dry_run`, under SIGINT/SIGTERM handlers that stop in order:
   `submit_points` (the exactly-once `Submitter`), `group_sweeps` (level-triggered group
   membership; skipped after an early stop).

To add a step (a failure budget, a cost check, a target stop): write one function
`def my_step(run: Run, applied: Applied) -> Applied` in its own module, give `Applied` a field
for what it finds if the report must show it, and put the function at its place in PLANNING or
ACTING. A step that must stop the run before anything is created returns the value with `stop`
set; the acting steps then do nothing. The exit code follows from the value (`Applied.exit_code`,
the one exit-code policy of a submit).
"""

from __future__ import annotations

import contextlib
import dataclasses
import signal
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from runner import operate
from runner.apply import guardrails
from runner.backends import Backend
from runner.core.errors import EXIT_INCOMPLETE, EXIT_REJECTED
from runner.operate import Candidate, Restart, RestartVerdict, cancels, membership
from runner.operate.membership import GroupOutcome
from runner.plan import Held, SweepPlan, policy
from runner.render.code import Code
from runner.repo import review
from runner.repo.review import Pin
from runner.submit import (
    Clock,
    Duplicate,
    Listener,
    Options,
    Outcome,
    OutcomeStatus,
    Stop,
    StopKind,
    Submitter,
)
from runner.submit.options import DEFAULT_CONCURRENCY, DEFAULT_MAX_UNREACHABLE

EXIT_OK = 0
EXIT_RUNS_FAILED = 6
RUNS_FAILED = "runs-failed"
"""The result word of exit 6 (the `result` step output and the JSON summary)."""
"""Local runs end inside submit: one that failed makes the command fail, as its run did."""
EXIT_SIGNAL = {StopKind.SIGINT: 130, StopKind.SIGTERM: 143}


@dataclass(frozen=True)
class ApplyOptions:
    root: Path
    commit: str = "uncommitted"
    """The commit the manifests were read at, recorded in each new ledger entry."""
    dry_run: bool = False
    restart_failed: bool = False
    restart_points: tuple[str, ...] = ()
    """`--restart --points`: restart only these points, canceled ones included."""
    pins: Sequence[Pin] | None = None
    """Plan pins (`--reviewed`): only the `+` points they cover are submitted. None: no pinning."""
    concurrency: int = DEFAULT_CONCURRENCY
    timeout: float | None = None
    """Seconds the whole run may take, counted from `started`; None: no deadline."""
    started: float = field(default_factory=time.monotonic)
    """When the run started (time.monotonic)."""
    max_unreachable: float = DEFAULT_MAX_UNREACHABLE
    clock: Clock = field(default_factory=Clock)
    code: Code | None = None
    """`code:` sweeps: the commit their experiments check out (the one that submits them)."""
    replan: Callable[[], Sequence[SweepPlan]] | None = None
    """The plans read again from the ledgers, after restarts recorded in them."""


class ApplyListener(Listener, Protocol):
    def planned(self, applied: Applied) -> None:
        """The plan is final (restarts done, points held back, caps applied); nothing created."""
        ...


@dataclass(frozen=True)
class Applied:
    """What a submit found and did, step by step."""

    plans: tuple[SweepPlan, ...]
    restarts: tuple[Restart, ...] | None = None
    """With `restart_failed`: what became of each failed point; None when not asked."""
    would_restart: tuple[Candidate, ...] | None = None
    """In a dry run with `restart_failed`: what it would restart, skip or fail."""
    review: Held | None = None
    """With plan pins: the points held back."""
    over_budget: Held | None = None
    """With plan pins: the points of over-budget sweeps no approved plan showed, held back."""
    outcomes: tuple[Outcome, ...] = ()
    stop: Stop | None = None
    duplicates: tuple[Duplicate, ...] = ()
    groups: tuple[GroupOutcome, ...] = ()

    @property
    def result(self) -> str:
        return self._verdict()[0]

    @property
    def exit_code(self) -> int:
        """0 all submitted; 4 some rejected (or a restart failed); 5 incomplete; 6 some local
        runs failed; 130/143 signal."""
        return self._verdict()[1]

    def _verdict(self) -> tuple[str, int]:
        if self.stop is not None and self.stop.kind in EXIT_SIGNAL:
            return "interrupted", EXIT_SIGNAL[self.stop.kind]
        if any(o.status.incomplete for o in self.outcomes):
            return "incomplete", EXIT_INCOMPLETE
        if any(o.status == OutcomeStatus.REJECTED for o in self.outcomes):
            return "rejected", EXIT_REJECTED
        if any(r.status == RestartVerdict.FAILED for r in self.restarts or ()):
            return "rejected", EXIT_REJECTED  # Beaker refused a restart: a rerun does the same
        if any(o.run_failed for o in self.outcomes):
            return RUNS_FAILED, EXIT_RUNS_FAILED  # local runs end inside submit: theirs failed
        return "ok", EXIT_OK


@dataclass(frozen=True)
class Run:
    """What every step may use: the open backend, the options and who is told."""

    backend: Backend
    options: ApplyOptions
    listener: ApplyListener
    submitter: Submitter | None = None
    """Set for the acting steps."""


Step = Callable[[Run, Applied], Applied]


# -- planning ---------------------------------------------------------------------------------


def restart_failed_points(run: Run, applied: Applied) -> Applied:
    """`--restart-failed` (or `--restart --points`): restart failed points in place (in a dry
    run: say what it would)."""
    only = run.options.restart_points or None
    if not (run.options.restart_failed or only):
        return applied
    if run.options.dry_run:
        found = operate.restart_candidates(run.backend, applied.plans, only)
        return dataclasses.replace(applied, would_restart=tuple(found))
    cancels.reconcile_cancels(run.backend, applied.plans, run.options.root)  # left by a crash
    options = run.options
    done = operate.restart_failed(
        run.backend, applied.plans, options.root, only=only, code=options.code
    )
    replan = run.options.replan
    plans = tuple(replan()) if replan is not None else applied.plans  # the restarts recorded
    return dataclasses.replace(applied, plans=plans, restarts=tuple(done))


def hold_back_unreviewed(run: Run, applied: Applied) -> Applied:
    """Plan pinning: hold back the `+` points no reviewed plan showed."""
    if run.options.pins is None:
        return applied
    checked = review.hold_back(applied.plans, run.options.pins)
    return dataclasses.replace(applied, plans=tuple(checked.plans), review=checked)


def hold_over_budget(run: Run, applied: Applied) -> Applied:
    """Budget policy (`runner.plan.budget`): with plan pins, hold back the over-budget points of
    a plan nobody approved (judged by the policy at HEAD, the base every merged pull request was
    judged by)."""
    if run.options.pins is None:
        return applied
    rules = policy.read(run.options.root)
    held = review.hold_unapproved(applied.plans, run.options.pins, rules)
    return dataclasses.replace(applied, plans=held.plans, over_budget=held if held.held else None)


def stop_guarded_sweeps(run: Run, applied: Applied) -> Applied:
    """Failure budget and target stop (`runner.apply.guardrails`): a sweep that reached either
    creates no new point; nothing is canceled."""
    stopped = guardrails.apply_stops(run.backend, applied.plans, run.options.root)
    return dataclasses.replace(applied, plans=tuple(stopped))


def cap_running(run: Run, applied: Applied) -> Applied:
    """Each sweep's max_running against its experiments queued or running now."""
    return dataclasses.replace(applied, plans=tuple(operate.live_caps(run.backend, applied.plans)))


# -- acting -----------------------------------------------------------------------------------


def submit_points(run: Run, applied: Applied) -> Applied:
    """Create every `+` point exactly once and record it (`runner.submit`). After a step
    before it stopped the run, every point is reported as never started."""
    submitter = run.submitter
    if submitter is None:
        return applied
    if applied.stop is not None:
        why = f"never started: {applied.stop.reason}"
        jobs = submitter.jobs(applied.plans)
        left = (Outcome(s.name, p, OutcomeStatus.NOT_STARTED, error=why) for s, p in jobs)
        return dataclasses.replace(applied, outcomes=tuple(left))
    outcomes = submitter.run(applied.plans)
    return dataclasses.replace(
        applied,
        outcomes=tuple(outcomes),
        stop=submitter.stopped,
        duplicates=tuple(submitter.duplicates),
    )


def group_sweeps(run: Run, applied: Applied) -> Applied:
    """Every grouped sweep's experiments in its group; never after an early stop (a signal, or
    the backend down), and never changing the exit code."""
    if applied.stop is not None or run.submitter is None:
        return applied
    deadline, clock = run.submitter.options.deadline, run.options.clock  # the run's one deadline
    groups = membership.ensure_groups(
        run.backend, applied.plans, run.options.root, deadline, clock.now
    )
    return dataclasses.replace(applied, groups=tuple(groups))


PLANNING: tuple[Step, ...] = (
    restart_failed_points,
    hold_back_unreviewed,
    hold_over_budget,
    cap_running,
    stop_guarded_sweeps,
)
ACTING: tuple[Step, ...] = (submit_points, group_sweeps)


def apply(
    plans: Sequence[SweepPlan],
    backend: Backend,
    options: ApplyOptions,
    listener: ApplyListener,
    *,
    planning: Sequence[Step] = PLANNING,
    acting: Sequence[Step] = ACTING,
) -> Applied:
    """Run the planning steps, tell the listener the plan, then (unless a dry run) the acting
    steps. `planning` and `acting` are the module's sequences; tests pass their own."""
    run = Run(backend, options, listener)
    applied = Applied(tuple(plans))
    for step in planning:
        applied = step(run, applied)
    listener.planned(applied)
    if options.dry_run:
        return applied
    run = dataclasses.replace(run, submitter=Submitter(backend, _submit_options(options), listener))
    assert run.submitter is not None
    with _stopping_on_signals(run.submitter):
        for step in acting:
            applied = step(run, applied)
    return applied


def _submit_options(options: ApplyOptions) -> Options:
    clock, timeout = options.clock, options.timeout
    # The deadline on the run's clock, counted from when the command started.
    elapsed = time.monotonic() - options.started
    return Options(
        root=options.root,
        commit=options.commit,
        concurrency=options.concurrency,
        deadline=None if timeout is None else clock.now() - elapsed + timeout,
        clock=clock,
        max_unreachable=options.max_unreachable,
        code=options.code,
    )


@contextlib.contextmanager
def _stopping_on_signals(submitter: Submitter) -> Iterator[None]:
    """SIGINT and SIGTERM (what CI sends to cancel a job) stop the run in order: no new
    creates, a short wait for those in flight, the ledger written, the summary printed."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def handler(signum: int, frame: object) -> None:
        submitter.request_stop(signal.Signals(signum).name)

    previous = {sig: signal.signal(sig, handler) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield
    finally:
        for sig, old in previous.items():
            signal.signal(sig, old)
