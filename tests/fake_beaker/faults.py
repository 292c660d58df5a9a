"""Thread-safe, count-exact fault injection and call counting for the fake Beaker."""

from __future__ import annotations

import math
import threading
import time
from collections import Counter, deque
from dataclasses import dataclass
from typing import Any, Literal

CreateFaultKind = Literal["status", "reset", "late", "garbled", "cut"]

# Bodies the fake sends with injected statuses, unless the test passes ``message``. 502/503
# get a plain-text body, like a load balancer, so beaker-py re-raises requests' HTTPError.
DEFAULT_MESSAGES: dict[int, str | None] = {
    429: "rate limit exceeded",
    500: "internal server error",
    502: None,
    503: None,
}


@dataclass(frozen=True)
class CreateFault:
    """What to do with one create request.

    ``status``: answer ``status`` without committing. ``reset``: commit, then close the
    connection without a response. ``late``: commit, then answer after ``delay`` seconds.
    ``garbled``: commit, then answer 200 with an HTML page instead of the experiment, as a
    misconfigured proxy in between might. ``cut``: commit, then send the status line, headers
    and half the body with a Content-Length for all of it, and close the connection.
    """

    kind: CreateFaultKind
    status: int = 0
    message: str | None = None
    retry_after: float | None = None
    delay: float = 0.0

    def retry_after_header(self) -> str | None:
        return None if self.retry_after is None else str(math.ceil(self.retry_after))


class CallCounter:
    """Counts calls by name (gRPC method name, or ``http:create``) from many threads."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._counts: Counter[str] = Counter()

    def add(self, name: str) -> None:
        with self._lock:
            self._counts[name] += 1

    def snapshot(self) -> Counter[str]:
        with self._lock:
            return Counter(self._counts)

    def reset(self) -> None:
        with self._lock:
            self._counts.clear()


class FaultPlan:
    """Faults queued for the next N calls, added latency, and a create rate limit."""

    def __init__(self, latency: float = 0.0) -> None:
        self._lock = threading.Lock()
        self._creates: deque[CreateFault] = deque()
        self._rpcs: dict[str, deque[Any]] = {}
        self._lost: Counter[str] = Counter()
        self._held: dict[str, list[float]] = {}
        self._log_cuts: deque[int] = deque()
        self._empty_listings = 0
        self._latency = latency
        self._rate_limit: float | None = None
        self._admitted: deque[float] = deque()

    @property
    def latency(self) -> float:
        with self._lock:
            return self._latency

    @latency.setter
    def latency(self, seconds: float) -> None:
        if seconds < 0:
            raise ValueError("latency must be >= 0")
        with self._lock:
            self._latency = seconds

    def add_create_faults(self, fault: CreateFault, times: int) -> None:
        if times < 1:
            raise ValueError("times must be >= 1")
        with self._lock:
            self._creates.extend([fault] * times)

    def next_create_fault(self) -> CreateFault | None:
        with self._lock:
            return self._creates.popleft() if self._creates else None

    def add_rpc_faults(self, rpc: str, code: Any, times: int, after: int = 0) -> None:
        """Queue gRPC status ``code`` (a grpc.StatusCode) for the next ``times`` calls, once
        ``after`` calls have been answered (queued as None: no fault)."""
        if times < 1 or after < 0:
            raise ValueError("times must be >= 1 and after >= 0")
        with self._lock:
            self._rpcs.setdefault(rpc, deque()).extend([None] * after + [code] * times)

    def next_rpc_fault(self, rpc: str) -> Any | None:
        with self._lock:
            queue = self._rpcs.get(rpc)
            return queue.popleft() if queue else None

    def add_lost_replies(self, rpc: str, times: int) -> None:
        """The next ``times`` calls of ``rpc`` that succeed commit, then answer UNAVAILABLE."""
        if times < 1:
            raise ValueError("times must be >= 1")
        with self._lock:
            self._lost[rpc] += times

    def add_held_replies(self, rpc: str, seconds: float, times: int) -> None:
        """The next ``times`` calls of ``rpc`` that succeed commit, then hold the reply."""
        if times < 1:
            raise ValueError("times must be >= 1")
        with self._lock:
            self._held.setdefault(rpc, []).extend([seconds] * times)

    def next_held_reply(self, rpc: str) -> float:
        """Seconds to hold this call's reply after it committed (0.0: none)."""
        with self._lock:
            held = self._held.get(rpc)
            return held.pop(0) if held else 0.0

    def next_lost_reply(self, rpc: str) -> bool:
        with self._lock:
            if self._lost[rpc] <= 0:
                return False
            self._lost[rpc] -= 1
            return True

    def add_log_cuts(self, after_lines: int, times: int) -> None:
        """The next ``times`` log streams end with UNAVAILABLE after ``after_lines`` lines."""
        if times < 1 or after_lines < 0:
            raise ValueError("times must be >= 1 and after_lines >= 0")
        with self._lock:
            self._log_cuts.extend([after_lines] * times)

    def next_log_cut(self) -> int | None:
        with self._lock:
            return self._log_cuts.popleft() if self._log_cuts else None

    def add_empty_listings(self, times: int) -> None:
        if times < 1:
            raise ValueError("times must be >= 1")
        with self._lock:
            self._empty_listings += times

    def next_empty_listing(self) -> bool:
        with self._lock:
            if self._empty_listings <= 0:
                return False
            self._empty_listings -= 1
            return True

    def set_rate_limit(self, per_second: float | None) -> None:
        if per_second is not None and per_second <= 0:
            raise ValueError("rate limit must be > 0 creates per second")
        with self._lock:
            self._rate_limit = per_second
            self._admitted.clear()

    def admit_create(self) -> float | None:
        """Record a create under the rate limit; return seconds to wait if it is over."""
        now = time.monotonic()
        with self._lock:
            if self._rate_limit is None:
                return None
            while self._admitted and self._admitted[0] <= now - 1.0:
                self._admitted.popleft()
            if len(self._admitted) >= self._rate_limit:
                return max(self._admitted[0] + 1.0 - now, 0.001)
            self._admitted.append(now)
            return None

    def clear(self) -> None:
        """Drop queued faults and the rate limit; keep the latency."""
        with self._lock:
            self._creates.clear()
            self._rpcs.clear()
            self._lost.clear()
            self._held.clear()
            self._log_cuts.clear()
            self._empty_listings = 0
            self._rate_limit = None
            self._admitted.clear()
