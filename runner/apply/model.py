"""The values of the apply use case: what it is asked (`ApplyOptions`), whom it tells
(`ApplyListener`) and what it returns (`Applied`, with the one exit-code policy of a submit)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Protocol

from runner.apply import notify
from runner.core.defaults import DEFAULT_CONCURRENCY, DEFAULT_MAX_UNREACHABLE
from runner.core.errors import Exit, RunResult
from runner.locking.auto import Auto
from runner.operate import Candidate, Restart, RestartVerdict
from runner.operate.membership import GroupOutcome
from runner.operate.preempted import Resume, ResumeVerdict
from runner.plan import Held, SweepPlan
from runner.render.code import Code
from runner.repo.review import Pin
from runner.submit import Clock, Duplicate, Listener, Outcome, OutcomeStatus, Stop, StopKind

EXIT_SIGNAL = {StopKind.SIGINT: Exit.SIGINT, StopKind.SIGTERM: Exit.SIGTERM}


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
    started: float | None = None
    """When the command started, on `clock` (its one clock); None: when `apply` starts."""
    max_unreachable: float = DEFAULT_MAX_UNREACHABLE
    clock: Clock = field(default_factory=Clock)
    code: Code | None = None
    """`code:` sweeps: the commit their experiments check out (the one that submits them)."""
    webhook: str = ""
    """Where notifications go (`runner.apply.notify`); empty: none are sent. The command reads
    it (`notify.webhook_url`): options built anywhere else never read the environment."""


class ApplyListener(Listener, Protocol):
    def planned(self, applied: Applied) -> None:
        """The plan is final (restarts done, points held back, caps applied); nothing created."""
        ...


@dataclass(frozen=True)
class Applied:
    """What a submit found and did, step by step."""

    plans: tuple[SweepPlan, ...]
    resumes: tuple[Resume, ...] = ()
    """What became of each point Beaker preempted or lost to a node failure (resumed, counted,
    waiting, left as it is); in a dry run, `would_resume` instead."""
    would_resume: tuple[Resume, ...] = ()
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
    announced: notify.Announced = field(default_factory=notify.Announced)
    rounds: tuple[Auto, ...] = ()
    """The automatic searches' steps (`advance: auto`): each one's decision, the rounds written."""

    def then(self, later: Applied) -> Applied:
        """This pass and a later one as one run (`apply_rounds`): what either created, restarted
        or advanced; the plans, stop and groups as the later one left them."""
        return replace(
            later,
            restarts=later.restarts
            if self.restarts is None
            else (*self.restarts, *(later.restarts or ())),
            outcomes=(*self.outcomes, *later.outcomes),
            duplicates=(*self.duplicates, *later.duplicates),
            rounds=(*self.rounds, *later.rounds),
        )

    @property
    def advanced(self) -> tuple[Auto, ...]:
        """The rounds written into their locks (committed with the ledgers)."""
        return tuple(r for r in self.rounds if r.written)

    @property
    def result(self) -> RunResult:
        return self.exit_code.result

    @property
    def exit_code(self) -> Exit:
        """The one exit-code policy of a submit: 0 all submitted; 4 some rejected (or a
        restart or a resume failed); 5 incomplete; 6 some local runs failed; 7 `cancel` stopped some local
        points from starting; 130/143 signal."""
        if self.stop is not None and self.stop.kind in EXIT_SIGNAL:
            return EXIT_SIGNAL[self.stop.kind]
        if self.stop is not None and self.stop.kind == StopKind.POLICY:
            return Exit.REJECTED  # refused before any create: a rerun does the same
        if self.stop is not None and not self.outcomes:
            return Exit.INCOMPLETE  # stopped while planning (a dry run too): a rerun continues
        if any(o.status.incomplete for o in self.outcomes):
            return Exit.INCOMPLETE
        if any(o.status == OutcomeStatus.REJECTED for o in self.outcomes):
            return Exit.REJECTED
        if any(r.status == RestartVerdict.FAILED for r in self.restarts or ()):
            return Exit.REJECTED  # Beaker refused a restart: a rerun does the same
        if any(r.verdict == ResumeVerdict.FAILED for r in self.resumes):
            return Exit.REJECTED  # a resume failed: its intent is checked by the next submit
        if any(o.run_failed for o in self.outcomes):
            return Exit.RUNS_FAILED  # local runs end inside submit: theirs failed
        if any(o.status == OutcomeStatus.CANCELED for o in self.outcomes):
            return Exit.CANCELED  # as asked: the next submit starts them
        return Exit.OK
