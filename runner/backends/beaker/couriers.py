"""The threads that carry Beaker calls for the gateway, so that a caller can stop waiting for a
call at its deadline however the call hangs (beaker-py's gRPC calls carry no timeout of their
own, and a connect or a DNS look-up can block in C).

A courier is a daemon thread that runs one call at a time and then waits for the next: kept,
so the HTTP session a create holds on its thread (`Client.hold_session`) carries the next
create too. A caller takes an idle courier or starts one; a call its caller stopped waiting
for is left to end on its courier, which is idle again only then. At `close` the idle couriers
end, each releasing what it holds (`on_exit`, on its own thread); a busy one ends after its call.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable
from dataclasses import dataclass


@dataclass(frozen=True)
class Reply:
    """What a call returned, or raised."""

    value: object = None
    error: BaseException | None = None


Job = tuple[Callable[[], object], "queue.Queue[Reply]"]


class Couriers:
    def __init__(self, on_exit: Callable[[], None] = lambda: None) -> None:
        self.on_exit = on_exit
        """Run on a courier's own thread as it ends (release its HTTP session)."""
        self._idle: list[queue.Queue[Job | None]] = []
        self._lock = threading.Lock()
        self._closed = False
        self.started = 0
        """Couriers started so far (no more than calls ever in flight at once)."""

    def send(self, fn: Callable[[], object]) -> queue.Queue[Reply]:
        """Run `fn` on a courier; its reply arrives in the box returned."""
        box: queue.Queue[Reply] = queue.Queue(maxsize=1)
        with self._lock:
            inbox = self._idle.pop() if self._idle else None
            if inbox is None:
                self.started += 1
        if inbox is None:
            inbox = queue.Queue()
            thread = threading.Thread(target=self._serve, args=(inbox,), daemon=True)
            thread.name = f"beaker-call-{self.started}"
            thread.start()
        inbox.put((fn, box))
        return box

    def _serve(self, inbox: queue.Queue[Job | None]) -> None:
        try:
            while (job := inbox.get()) is not None:
                fn, box = job
                try:
                    reply = Reply(fn())
                except BaseException as exc:  # handed to the caller, who raises it
                    reply = Reply(error=exc)
                with self._lock:  # idle before the reply: the caller's next call may take it
                    closed = self._closed
                    if not closed:
                        self._idle.append(inbox)
                box.put(reply)
                if closed:
                    return
        finally:
            self.on_exit()

    def close(self) -> None:
        """End the idle couriers (each releases what it holds); the busy ones after their call."""
        with self._lock:
            self._closed = True
            idle, self._idle = self._idle, []
        for inbox in idle:
            inbox.put(None)
