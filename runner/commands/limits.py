"""A command's bounds on Beaker (`runner.core.clock.Bounds`) from its `--timeout` and
`--max-unreachable` (`runner.commands.common.add_bounds`), and what it says when Beaker does not
answer within them: its waits while they last, then one line. Imported by the commands that
run (`common`, which `--help` loads, holds only the arguments)."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator

from runner.backends.failures import Transient
from runner.backends.health import Health, Wait
from runner.commands.common import duration
from runner.core.clock import Bounds, Clock
from runner.core.defaults import DEFAULT_MAX_UNREACHABLE
from runner.report.progress import Progress


def bounds(
    clock: Clock,
    timeout: str | None,
    max_unreachable: str | None,
    default: float | None,
    started: float | None = None,
) -> Bounds:
    """A command's bounds from its `--timeout` (else `default`; None: no deadline) and
    `--max-unreachable`, on its clock, from when it started (by default now)."""
    seconds = duration("--timeout", timeout)
    limit = duration("--max-unreachable", max_unreachable)
    unreachable = DEFAULT_MAX_UNREACHABLE if limit is None else limit
    return Bounds.after(clock, default if seconds is None else seconds, unreachable, started)


@contextlib.contextmanager
def unanswered(done: Callable[[], str] = lambda: "nothing was changed") -> Iterator[None]:
    """A backend that did not answer (`Transient`, exit 5) ends the command in one line that
    says what was done (`done()`, e.g. 'nothing was changed') and to run it again."""
    try:
        yield
    except Transient as exc:
        said = f"{exc}: {done()}; run it again"
        raise Transient(said, exc.maybe_committed, unreachable=exc.unreachable) from None


def show_waits(health: Health) -> None:
    """Say on stderr what the backend waits for while it retries (at most a line every few
    seconds): a command that waits for Beaker is never silent about it."""
    shown = Progress(live=False)

    def heard(wait: Wait | None) -> None:
        if wait is not None and wait.seconds > 0:
            shown.wait(wait.text(health.service))

    health.listen(heard)
