"""Steps 2-5 of the protocol for one point: create under its name, look it up after anything
ambiguous, adopt it when it carries the point's key, and never invent another name."""

from __future__ import annotations

from collections.abc import Callable

from runner.backends import Backend, Canceled, Experiment, NameTaken, Rejected, Transient
from runner.core import retry
from runner.core.model import Rendered, Sweep
from runner.core.retry import OnRetry, RetryPolicy
from runner.render.code import Code, at_commit, uses_code
from runner.submit.outcome import Outcome, OutcomeStatus


class NameClash(Exception):
    """The experiment name is taken by an experiment that is not this point's."""


def adopt(point: Rendered, found: Experiment) -> Experiment:
    if found.key != point.key:
        raise NameClash(
            f"experiment {found.name} ({found.url}) already exists but records key"
            f" {found.key or 'none'}, not this point's {point.key}; it was not created by this"
            " sweep, so it is left alone (rename the sweep or bump its revision)"
        )
    return found


class PointSubmitter:
    def __init__(
        self,
        backend: Backend,
        policy: RetryPolicy,
        remaining: Callable[[], float | None],
        on_retry: OnRetry,
        stopping: Callable[[], bool],
        code: Code | None = None,
    ) -> None:
        self.backend = backend
        self.code = code
        """`code:` sweeps' commit, added to what is created (never to the point's key)."""
        self.policy = policy
        self.remaining = remaining
        """Seconds the run has left (0 once it is stopping); None without a deadline."""
        self.on_retry = on_retry
        self.stopping = stopping

    def _find(self, sweep: Sweep, name: str) -> Experiment | None:
        """The oldest experiment of that name, whoever created it (a list of one)."""
        found = self.backend.experiments(sweep, [name]).get(name)
        return found[0] if found else None

    def submit(self, sweep: Sweep, point: Rendered) -> Outcome:
        ambiguous = False

        def attempt() -> tuple[Experiment, OutcomeStatus]:
            nonlocal ambiguous
            if ambiguous:
                found = self._find(sweep, point.name)
                if found is not None:
                    return adopt(point, found), OutcomeStatus.ADOPTED
            try:
                sent = at_commit(point, self.code) if self.code and uses_code(sweep) else point
                return self.backend.create(sweep, sent), OutcomeStatus.CREATED
            except NameTaken:
                found = self._find(sweep, point.name)
                if found is None:
                    ambiguous = True
                    raise Transient(f"name {point.name} is taken but cannot be found yet") from None
                return adopt(point, found), OutcomeStatus.ADOPTED
            except Transient as exc:
                ambiguous = ambiguous or exc.maybe_committed
                raise

        retrying = retry.retrying(self.policy, self.remaining, Transient, self.on_retry)
        try:
            experiment, status = retrying(attempt)
        except Transient as exc:
            if self.stopping() and ambiguous:
                return Outcome(
                    sweep.name,
                    point,
                    OutcomeStatus.UNKNOWN,
                    error=f"run stopped while retrying: {exc}",
                )
            return Outcome(
                sweep.name, point, OutcomeStatus.FAILED, error=f"gave up after retries: {exc}"
            )
        except Canceled as exc:
            return Outcome(sweep.name, point, OutcomeStatus.CANCELED, error=str(exc))
        except (Rejected, NameClash) as exc:
            return Outcome(sweep.name, point, OutcomeStatus.REJECTED, error=str(exc))
        return Outcome(sweep.name, point, status, experiment)
