"""The one way to Beaker: every call the backend makes goes through its `Gateway`, where the
command's deadline lives (`runner.core.clock.Bounds`).

The client refuses to be used outside a gateway call (`client.admitted`, checked on every RPC and
every HTTP request), so a path that forgets the gateway fails loudly instead of hanging the day
Beaker is down. For each call the gateway:

- refuses to start it once the deadline has passed, or once Beaker has been unreachable for
  `max_unreachable` seconds (every later call of the command then fails at once, in one line);
- runs it on a courier thread (`couriers`) and waits for its reply on the command's clock, at
  most until the deadline (a write: until the deadline and a grace, `DEFAULT_GRACE`, so a create
  on its way lands and is recorded) and at most `max_unreachable` seconds (a call that does not
  answer is as good as unreachable), unless it follows a log (`Patience`);
- ends beaker-py's own retry loop at its first announced retry (`Client.watch_retries`: beaker-py
  retries a Get/List/Resolve on UNAVAILABLE forever, 2 s apart, and announces each retry on its
  logger before it sleeps; `Retried` raised from there ends the loop), so no wait escapes the
  clock;
- retries a read itself (`read`) where beaker-py would have (`Transient.again`: what beaker-py
  decides is worth retrying, the gateway decides when and for how long), with backoff, sleeping
  on the command's clock, until it answers, the deadline or the unreachable limit; a failure
  that is not unreachability, `READ_ATTEMPTS` times at most. A write (`once`) is sent once: its caller's protocol decides (a create looks
  its name up after an ambiguous failure; a restart or cancel looks the experiment up first);
- tells `health` of every wait and success, as the progress line and the submit loop read it.

The one line a command ends with when Beaker cannot be reached names it, where, for how long
and why: `Beaker at https://beaker.org unreachable for 3m (connection refused): list experiments
of exact`.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable
from typing import TypeVar, cast

from runner.backends import Transient
from runner.backends.beaker.client import Client, Retried, admitted
from runner.backends.beaker.couriers import Couriers
from runner.backends.beaker.errors import call
from runner.backends.health import Health, Wait
from runner.core.clock import Bounds, Clock
from runner.core.defaults import DEFAULT_GRACE
from runner.core.values import StrEnum
from runner.render.durations import elapsed_text

T = TypeVar("T")

READ_ATTEMPTS = 6
"""Attempts of a read whose failure is not unreachability (a 5xx, INTERNAL, a lost reply):
beaker-py's own five retries."""
FIRST_WAIT = 1.0
LONGEST_WAIT = 30.0
"""A read is retried 1, 2, 4, ... seconds apart, at most this far (and never past the bounds)."""
SLICE = 1.0
"""Longest single wait for a reply, between two looks at the bounds (a clock that jumps while
nothing happens, tests/clock.py's, jumps this far at a time)."""


class Patience(StrEnum):
    """How long a call's reply is awaited."""

    READ = "read"
    """Until the deadline, and `max_unreachable` seconds at most: a read is retried after."""
    ONCE = "once"
    """A call sent at most once (a write, a stream's next lines): until the deadline and the
    grace (a create on its way lands and is recorded), `max_unreachable` seconds at most."""
    FOLLOW = "follow"
    """A followed log's next lines: as long as they take, until the deadline and the grace."""

    @property
    def graced(self) -> bool:
        return self is not Patience.READ


def backoff(attempt: int) -> float:
    """Seconds before attempt `attempt + 1`."""
    return min(FIRST_WAIT * 2.0 ** (attempt - 1), LONGEST_WAIT)


class Gateway:
    def __init__(
        self, client: Client, health: Health, bounds: Bounds, grace: float = DEFAULT_GRACE
    ) -> None:
        self.client = client
        self.health = health
        self.bounds = bounds
        self.grace = grace
        self._lock = threading.Lock()
        self._down_since: float | None = None
        """When Beaker stopped answering (on the clock); None while it answers."""
        self._down = ""
        """Why, in a few words ('connection refused')."""
        self._couriers = Couriers(client.release_session)
        client.watch_retries(self._retried)

    @property
    def clock(self) -> Clock:
        return self.bounds.clock

    def left(self) -> float | None:
        """Seconds until the deadline (0 once passed); None without one: the `remaining` of a
        retry loop above the gateway (a restart's, a cancel's, a group's)."""
        return self.bounds.left()

    def close(self) -> None:
        self._couriers.close()

    # -- the calls ---------------------------------------------------------------------------

    def read(self, what: str, fn: Callable[[], T]) -> T:
        """A call that changes nothing, retried until it answers or the bounds say stop."""
        attempt = 1
        while True:
            try:
                return self._attempt(what, fn, Patience.READ)
            except Transient as exc:
                if not exc.again or (exc.unreachable is None and attempt >= READ_ATTEMPTS):
                    raise
                self.pause(what, exc, attempt)
                attempt += 1

    def pause(self, what: str, exc: Transient, attempt: int) -> None:
        """Wait before attempt `attempt + 1` of a call that failed with `exc` (backoff, or the
        Retry-After it said), on the command's clock, shown as a wait; Transient, without
        waiting, when the bounds leave no time for it."""
        wait = max(backoff(attempt), exc.retry_after or 0.0)
        bound = self._retry_bound()
        if bound is not None:
            wait = min(wait, bound - self.clock.now())
        if wait <= 0:
            raise self._stopped(what, exc) from None
        unreachable = exc.unreachable is not None
        reason = exc.unreachable or _reason(exc, what)
        attempts = None if unreachable else READ_ATTEMPTS
        self.health.waiting(Wait(what, reason, wait, attempt + 1, attempts, unreachable))
        self.clock.sleep(wait)

    def once(self, what: str, fn: Callable[[], T], patience: Patience = Patience.ONCE) -> T:
        """A call sent at most once (a write, a stream's next lines): its caller decides what a
        failure means. `patience`: `FOLLOW`, awaited as long as it takes within the deadline (a
        followed log waits for lines)."""
        try:
            return self._attempt(what, fn, patience)
        except Transient as exc:
            if exc.unreachable is not None:
                self.health.waiting(Wait(what, exc.unreachable, 0.0, unreachable=True))
            raise

    def _attempt(self, what: str, fn: Callable[[], T], patience: Patience) -> T:
        self._admit(what)
        started = self.clock.now()

        def carried() -> T:
            with admitted(what):
                return call(what, fn)

        box = self._couriers.send(carried)
        bound = self._wait_bound(started, patience)
        while True:
            left = None if bound is None else bound - self.clock.now()
            if left is not None and left <= 0:
                raise self._unanswered(what, started, patience)
            try:
                reply = self.clock.take(box, None if left is None else min(left, SLICE))
            except queue.Empty:
                continue
            if reply.error is not None:
                if isinstance(reply.error, Transient) and reply.error.unreachable is not None:
                    self._mark_down(reply.error.unreachable, started)
                raise reply.error
            self._mark_up()
            return cast(T, reply.value)

    # -- the bounds --------------------------------------------------------------------------

    def _admit(self, what: str) -> None:
        """Transient, without sending anything, once the deadline has passed or Beaker has been
        unreachable too long."""
        now, deadline = self.clock.now(), self.bounds.deadline
        with self._lock:
            since, down = self._down_since, self._down
        gave_up = since is not None and now >= since + self.bounds.max_unreachable
        if gave_up or (deadline is not None and now >= deadline):
            if since is not None:
                raise self._unreachable(what, now - since, down)
            raise Transient(f"{what}: not sent, the deadline has passed", maybe_committed=False)

    def _retry_bound(self) -> float | None:
        """When a read stops being retried: the deadline, or the unreachable limit."""
        bounds = [self.bounds.deadline]
        with self._lock:
            if self._down_since is not None:
                bounds.append(self._down_since + self.bounds.max_unreachable)
        found = [b for b in bounds if b is not None]
        return min(found) if found else None

    def _wait_bound(self, started: float, patience: Patience) -> float | None:
        """How long a call's reply is awaited (`Patience`)."""
        deadline = self.bounds.deadline
        if deadline is not None and patience.graced:
            deadline += self.grace
        following = patience is Patience.FOLLOW
        found = [deadline] + ([] if following else [started + self.bounds.max_unreachable])
        bounds = [b for b in found if b is not None]
        return min(bounds) if bounds else None

    def _stopped(self, what: str, exc: Transient) -> Transient:
        """Why a read is not tried again: unreachable for so long, or the deadline."""
        with self._lock:
            since, down = self._down_since, self._down
        if since is not None:
            return self._unreachable(what, self.clock.now() - since, down)
        return Transient(f"{exc} (the deadline has passed)", exc.maybe_committed)

    def _unreachable(self, what: str, lasted: float, reason: str) -> Transient:
        where = f"{self.health.service} at {self.health.address}"
        return Transient(
            f"{where} unreachable for {elapsed_text(lasted)} ({reason}): {what}",
            maybe_committed=False,
            unreachable=reason,
        )

    def _unanswered(self, what: str, started: float, patience: Patience) -> Transient:
        """A call abandoned unanswered: Beaker is as good as unreachable since it was sent."""
        lasted, reason = elapsed_text(self.clock.now() - started), "no answer"
        self._mark_down(reason, started)
        where = f"{self.health.service} at {self.health.address}"
        self.health.waiting(Wait(what, reason, 0.0, unreachable=True))
        sent = patience.graced  # a write may have taken effect
        return Transient(f"{where} did not answer in {lasted}: {what}", sent, unreachable=reason)

    def _mark_down(self, reason: str, since: float) -> None:
        with self._lock:
            if self._down_since is None:
                self._down_since = since
            self._down = reason

    def _mark_up(self) -> None:
        with self._lock:
            self._down_since, self._down = None, ""
        self.health.ok()

    # -- beaker-py's retries -----------------------------------------------------------------

    def _retried(self, error: BaseException, seconds: float) -> None:
        """beaker-py is about to sleep and retry: end its loop here, on the courier's thread
        (the gateway retries a read on the command's clock; a write is never sent twice)."""
        raise Retried(error)


def _reason(exc: Transient, what: str) -> str:
    """A failure's message without the call's name it starts with."""
    return str(exc).removeprefix(f"{what}: ")
