"""Apply the plan (Terraform's word, beside `plan`): everything a submit does on an open backend.

`apply(plans, backend, options, listener) -> Applied` runs a fixed sequence of steps. Each step
is a function `(Run, Applied) -> Applied`: it reads what the steps before it found and returns
the value with its own finding added. Steps decide and act; they never print. The listener is
told what happens (`planned` once the plan is final, then the Submitter's calls), and
`runner.report` turns the returned `Applied` into text; the command prints it.

1. PLANNING, run in every mode (a dry run stops after them, having changed nothing):
   `advance_searches` (an automatic search's recorded rounds replayed, or the run refused; its
   next round written into its lock and planned), `check_priorities` (a priority above the workspace's maximum stops the run as a refusal
   before anything is done), `resume_local_runs` (local runs a stopped runner left: `+` again),
   `resume_preempted_points` (what Beaker preempted or lost to a node failure, on every
   submit; in a dry run, what it would resume), `restart_failed_points` (or, in a dry run,
   what it would restart), `hold_back_unreviewed`
   (plan pins), `hold_back_over_budget` (the budget policy's approval), `cap_running` (each
   sweep's max_running against its live experiments), `stop_guarded_sweeps` (max_failures,
   stop_when, a point that could not be scheduled), `hold_over_allocation` (the team's priority allocation, from one listing of the
   workspace). Once the run is stopped no later planning step restarts or reads, and a read
   Beaker fails after the restarts stops it instead of raising (`runner.apply.reading`).
2. ACTING, run unless `options.dry_run`, under SIGINT/SIGTERM handlers that stop in order:
   `submit_points` (the exactly-once `Submitter`), `group_sweeps` (level-triggered group
   membership; skipped after an early stop), `announce_events` (the webhook, if one is set).

The backend is asked about each sweep once per phase (`runner.observe.looks`): one look
before the creates, which the resumes, the restarts, the cap, the stops and the adoption read
(with why each experiment ended, on shared machines), and one after, which the duplicate check
and the notifications read. The plans are made once, by the caller; a step that records
(resumes, restarts, creates) reads the ledger again through the store.

To add a step (a failure budget, a cost check, a target stop): write one function
`def my_step(run: Run, applied: Applied) -> Applied` in its own module, give `Applied` a field
for what it finds if the report must show it, and put the function at its place in PLANNING or
ACTING. A step that must stop the run before anything is created returns the value with `stop`
set (`StopKind.POLICY`: exit 4, as a refusal); the steps after it then create nothing. The exit
code follows from it (`Applied.exit_code`, in `runner.apply.model` with the options).
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import signal
import threading
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass

from runner import operate
from runner.apply import advancing, allocation, guardrails, notify
from runner.apply.model import Applied, ApplyListener, ApplyOptions
from runner.apply.reading import stops_when_unanswered
from runner.apply.resume import unfinished
from runner.backends import Backend, Capability
from runner.ledger.store import LedgerStore
from runner.observe.looks import Observer
from runner.operate import cancels, membership, preempted
from runner.plan import SweepPlan, budget, holds, policy, reread
from runner.plan.policy import Policy
from runner.repo.review import uncovered
from runner.submit import Options, Outcome, OutcomeStatus, Stop, StopKind, Submitter

__all__ = [
    "ACTING",
    "PLANNING",
    "Applied",
    "ApplyListener",
    "ApplyOptions",
    "Run",
    "Step",
    "apply",
]


@dataclass(frozen=True)
class Run:
    """What every step may use: the open backend, the options and who is told."""

    backend: Backend
    options: ApplyOptions
    listener: ApplyListener
    store: LedgerStore
    """The repository's ledgers in the backend's layout: every step reads and records here."""
    observer: Observer
    """The look at each sweep before the creates."""
    after: Observer
    """The look at each sweep after them."""
    policy: Policy
    """`sweeps/policy.yaml` at HEAD, read before any step acts (a restart must not come first)."""
    submitter: Submitter | None = None
    """Set for the acting steps."""


Step = Callable[[Run, Applied], Applied]


# -- planning ---------------------------------------------------------------------------------


@stops_when_unanswered
def advance_searches(run: Run, applied: Applied) -> Applied:
    """Automatic searches (`advance: auto`, `runner.apply.advancing`): every recorded round
    replayed (or the run refused, exit 4), then each search's next round inside its envelope
    written into its lock and planned."""
    done = advancing.advance(run.backend, run.observer, run.store, run.options, applied.plans)
    if done.refused:
        return dataclasses.replace(applied, stop=Stop(StopKind.POLICY, done.refused))
    return dataclasses.replace(applied, plans=done.plans, rounds=done.rounds)


def resume_local_runs(run: Run, applied: Applied) -> Applied:
    """Local runs a stopped runner left unfinished go back to `+` (`LocalBackend.create`
    resumes them); nothing changes on a backend that does not resume runs."""
    return dataclasses.replace(applied, plans=tuple(unfinished(run.backend, applied.plans)))


@stops_when_unanswered
def resume_preempted_points(run: Run, applied: Applied) -> Applied:
    """Every submit: points Beaker preempted or lost to a node failure restarted in place, once
    per preemption (`runner.operate.preempted`); in a dry run, what it would resume."""
    if run.options.dry_run:
        found = preempted.would_resume(run.observer, applied.plans)
        return dataclasses.replace(applied, would_resume=tuple(found))
    done = preempted.resume(run.observer, applied.plans, run.store)
    plans = _reread(run, applied.plans) if done else applied.plans
    return dataclasses.replace(applied, plans=plans, resumes=tuple(done))


def restart_failed_points(run: Run, applied: Applied) -> Applied:
    """`--restart-failed` (or `--restart --points`): restart failed points in place (in a dry
    run: say what it would)."""
    only = run.options.restart_points or None
    if applied.stop is not None or not (run.options.restart_failed or only):
        return applied
    if run.options.dry_run:
        found = operate.restart_candidates(run.observer, applied.plans, only)
        return dataclasses.replace(applied, would_restart=tuple(found))
    store = run.store
    cancels.reconcile_cancels(run.backend, applied.plans, store, run.observer)  # left by a crash
    done = operate.restart_failed(
        run.observer, applied.plans, store, only=only, code=run.options.code
    )
    return dataclasses.replace(applied, plans=_reread(run, applied.plans), restarts=tuple(done))


def _reread(run: Run, plans: Sequence[SweepPlan]) -> tuple[SweepPlan, ...]:
    """The plans with the entries a step recorded (the ledgers read again, not planned)."""
    return tuple(reread(plan, run.store.read(plan.sweep.name).entries) for plan in plans)


def hold_back_unreviewed(run: Run, applied: Applied) -> Applied:
    """Plan pinning: hold back the `+` points no reviewed plan showed."""
    if run.options.pins is None:
        return applied
    checked = holds.hold_back(applied.plans, functools.partial(uncovered, found=run.options.pins))
    return dataclasses.replace(applied, plans=tuple(checked.plans), review=checked)


def hold_back_over_budget(run: Run, applied: Applied) -> Applied:
    """Budget policy (`runner.plan.budget`): with plan pins, hold back the over-budget points of
    a plan nobody approved (judged by the policy at HEAD, the base every merge was judged by)."""
    if run.options.pins is None:
        return applied
    breached = budget.breaches(applied.plans, run.policy)
    approved = [p for p in run.options.pins if p.approved]
    unapproved = functools.partial(uncovered, found=approved)
    over = {b.sweep for b in breached}
    held = holds.hold_unapproved(
        applied.plans, over, [str(b.problem) for b in breached], unapproved
    )
    return dataclasses.replace(applied, plans=held.plans, over_budget=held if held.held else None)


@stops_when_unanswered
def stop_guarded_sweeps(run: Run, applied: Applied) -> Applied:
    """Failure budget and target stop (`runner.apply.guardrails`): a sweep that reached either
    creates no new point; nothing is canceled."""
    stopped = guardrails.apply_stops(run.observer, applied.plans)
    return dataclasses.replace(applied, plans=tuple(stopped))


@stops_when_unanswered
def cap_running(run: Run, applied: Applied) -> Applied:
    """Each sweep's max_running against its experiments queued or running now."""
    return dataclasses.replace(applied, plans=tuple(operate.live_caps(run.observer, applied.plans)))


def check_priorities(run: Run, applied: Applied) -> Applied:
    """Before anything is created (a restart too): a sweep above its workspace's maximum
    priority stops the run as a refusal, in one line (`runner.apply.allocation`)."""
    restarting = run.options.restart_failed or bool(run.options.restart_points)
    acting = [
        p for p in applied.plans if p.pending or (restarting and any(r.entry for r in p.rows))
    ]
    refused = allocation.refuse_over_maximum(run.backend, acting)
    if refused is None:
        return applied
    return dataclasses.replace(applied, stop=Stop(StopKind.POLICY, refused))


@stops_when_unanswered
def hold_over_allocation(run: Run, applied: Applied) -> Applied:
    """The team's priority allocation (the policy at HEAD): the points that would not fit wait,
    as under max_running. After the restarts, as a restarted point takes its GPUs again."""
    held = allocation.allocate(run.backend, applied.plans, run.policy.priority_allocation)
    return applied if held is None else dataclasses.replace(applied, plans=held.plans)


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
    groups = membership.ensure_groups(run.backend, applied.plans, run.store, deadline, clock.now)
    return dataclasses.replace(applied, groups=tuple(groups))


def announce_events(run: Run, applied: Applied) -> Applied:
    """The webhook told what is new (a sweep finished or stopped, points failed), each event
    once (`runner.apply.notify`), from the look after the creates; never fails the run."""
    if not run.options.webhook or Capability.SHARED not in run.backend.capabilities:
        return applied  # a local run's events are on this machine's screen already
    plans = _reread(run, applied.plans)
    done = notify.announce(run.after, plans, run.store, run.options.webhook)
    return dataclasses.replace(applied, announced=done)


PLANNING: tuple[Step, ...] = (
    advance_searches,
    check_priorities,
    resume_local_runs,
    resume_preempted_points,
    restart_failed_points,
    hold_back_unreviewed,
    hold_back_over_budget,
    cap_running,
    stop_guarded_sweeps,
    hold_over_allocation,
)
ACTING: tuple[Step, ...] = (submit_points, group_sweeps, announce_events)


def apply(
    plans: Sequence[SweepPlan],
    backend: Backend | None,
    options: ApplyOptions,
    listener: ApplyListener,
    *,
    planning: Sequence[Step] = PLANNING,
    acting: Sequence[Step] = ACTING,
) -> Applied:
    """Run the planning steps, tell the listener the plan, then (unless a dry run) the acting
    steps. `planning` and `acting` are the module's sequences; tests pass their own. No
    backend: the offline dry run (a plan check without credentials), the plans as made."""
    if backend is None:
        offline = Applied(tuple(plans))
        listener.planned(offline)
        return offline
    watched = preempted.watching(backend)  # why its experiments ended: read on shared machines
    observer = Observer(backend, lambda plan: guardrails.reads_results(plan) or watched(plan))
    notifying = bool(options.webhook) and Capability.SHARED in backend.capabilities
    after = observer.next_phase(lambda plan: notifying and not plan.sweep.draft)
    store = LedgerStore(options.root, backend.layout)

    run = Run(backend, options, listener, store, observer, after, policy.read(options.root))
    applied = Applied(tuple(plans))
    for step in planning:
        applied = step(run, applied)
    listener.planned(applied)
    if options.dry_run:
        return applied
    submitter = Submitter(backend, _submit_options(options), listener, (observer, after), store)
    run = dataclasses.replace(run, submitter=submitter)
    with _stopping_on_signals(submitter):
        for step in acting:
            applied = step(run, applied)
    return applied


def _submit_options(options: ApplyOptions) -> Options:
    clock, timeout = options.clock, options.timeout
    started = clock.now() if options.started is None else options.started
    return Options(
        root=options.root,
        commit=options.commit,
        concurrency=options.concurrency,
        deadline=None if timeout is None else started + timeout,  # on the run's one clock
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
