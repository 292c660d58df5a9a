"""How a submit run records its successes: in batches, by one writer, losing nothing."""

from __future__ import annotations

import io
import signal
import subprocess
import sys
import textwrap
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from runner import ledger
from runner.backends.beaker import BeakerBackend
from runner.core.errors import LedgerError
from runner.core.retry import RetryPolicy
from runner.plan import SweepPlan, catalog
from runner.report.progress import Progress
from runner.submit import Options, Outcome, OutcomeStatus, Submitter
from tests.clock import VirtualClock
from tests.conftest import PROJECT
from tests.fake_beaker.server import FakeBeaker
from tests.helpers import POINTS, assert_exactly_once, submit_process

NEVER = 3600.0
"""A record_every no test outlives: nothing is written before the run ends."""


def entries(root: Path) -> set[str]:
    return {
        e.experiment
        for e in ledger.read(ledger.ledger_path(root, "exact"), "exact").entries.values()
    }


class Watching(Progress):
    """Progress that notes how many ledger entries exist as each outcome arrives, and can fail."""

    def __init__(
        self, root: Path, fail_at: int | None = None, then: Callable[[], None] | None = None
    ) -> None:
        super().__init__(io.StringIO(), io.StringIO(), live=False)
        self.root = root
        self.fail_at = fail_at
        self.then = then
        self.seen: list[int] = []

    def done(self, outcome: Outcome) -> None:
        super().done(outcome)
        self.seen.append(len(entries(self.root)))
        if len(self.seen) == self.fail_at:
            if self.then is not None:
                self.then()
                return
            raise RuntimeError("progress broke")


def run(
    root: Path,
    progress: Progress,
    record_every: float,
    deadline: float | None = None,
    plans: list[SweepPlan] | None = None,
    clock: VirtualClock | None = None,
) -> list[Outcome]:
    plans = catalog.load(root, []).plans() if plans is None else plans
    backend = BeakerBackend()
    options = Options(
        root=root,
        commit="c0ffee",
        concurrency=3,
        deadline=deadline,
        policy=RetryPolicy(sleep=lambda seconds: None),
        record_every=record_every,
        clock=clock or VirtualClock(jumping=False),
    )
    try:
        return Submitter(backend, options, progress).run(plans)
    finally:
        backend.close()


def test_entries_wait_and_all_land_by_the_end_of_the_run(
    repo: Path, fake_beaker: FakeBeaker
) -> None:
    progress = Watching(repo)
    outcomes = run(repo, progress, record_every=NEVER)
    assert progress.seen == [0] * POINTS  # one write, after the last outcome
    assert [o.status for o in outcomes] == [OutcomeStatus.CREATED] * POINTS
    assert_exactly_once(repo, fake_beaker)


def test_with_no_wait_each_entry_is_written_before_the_next_outcome_is_taken(
    repo: Path, fake_beaker: FakeBeaker
) -> None:
    progress = Watching(repo)
    run(repo, progress, record_every=0.0)
    assert progress.seen == list(range(POINTS))


def test_entries_are_written_when_the_run_fails(repo: Path, fake_beaker: FakeBeaker) -> None:
    progress = Watching(repo, fail_at=POINTS)
    with pytest.raises(RuntimeError, match="progress broke"):
        run(repo, progress, record_every=NEVER)
    assert progress.seen == [0] * POINTS
    assert_exactly_once(repo, fake_beaker)


def test_entries_are_written_when_the_run_reaches_its_deadline(
    repo: Path, fake_beaker: FakeBeaker
) -> None:
    fake_beaker.reply_late_after_commit(delay=60, times=1)  # one worker is stuck past the deadline
    clock = VirtualClock(jumping=False)  # time stands still until every other point is done,

    def run_out_of_time() -> None:  # then jumps past the deadline and the grace period
        clock.jumping = True

    progress = Watching(repo, fail_at=POINTS - 1, then=run_out_of_time)
    outcomes = run(repo, progress, NEVER, deadline=clock.now() + 5, clock=clock)
    created = {o.point.name for o in outcomes if o.status == OutcomeStatus.CREATED}
    stuck = [o for o in outcomes if o.status not in (OutcomeStatus.CREATED, OutcomeStatus.ADOPTED)]
    assert len(created) == POINTS - 1 and [o.status for o in stuck] == [OutcomeStatus.UNKNOWN]
    assert "in flight" in stuck[0].error and "the next run adopts it" in stuck[0].error
    assert entries(repo) == created


# A run in its own process that writes nothing until it ends, so killing it loses every entry.
_NEVER_WRITES = """\
import io, sys
from pathlib import Path
from runner.plan import catalog
from runner.backends.beaker import BeakerBackend
from runner.report.progress import Progress
from runner.submit import Options, Submitter

root = Path(sys.argv[1])
options = Options(root=root, commit="c0ffee", concurrency=1, record_every={never})
Submitter(BeakerBackend(), options, Progress(io.StringIO(), io.StringIO(), live=False)).run(
    catalog.load(root, []).plans()
)
"""


@pytest.mark.slow
def test_a_run_killed_before_it_writes_loses_nothing_a_rerun_cannot_adopt(
    repo: Path, fake_beaker: FakeBeaker
) -> None:
    fake_beaker.latency = 0.3
    script = textwrap.dedent(_NEVER_WRITES.format(never=NEVER))
    proc = subprocess.Popen([sys.executable, "-c", script, str(repo)], cwd=PROJECT)
    for _ in range(600):
        if len(fake_beaker.count_by_name()) >= 2:
            break
        assert proc.poll() is None, "the run ended before it was killed"
        time.sleep(0.05)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    assert entries(repo) == set()
    created_before = set(fake_beaker.count_by_name())
    fake_beaker.latency = 0.0
    again = submit_process(repo)
    out, err = again.communicate(timeout=120)
    assert again.returncode == 0, err
    adopted = {
        line.split()[1] for line in out.splitlines() if line.startswith(f"{OutcomeStatus.ADOPTED} ")
    }
    assert created_before <= adopted
    assert_exactly_once(repo, fake_beaker)


def test_a_ledger_that_cannot_be_written_fails_the_run_and_a_rerun_adopts(
    repo: Path, fake_beaker: FakeBeaker
) -> None:
    plans = catalog.load(repo, []).plans()
    blocker = ledger.ledger_path(repo, "exact").parent
    blocker.write_text("a file where the ledger directory should be")
    err = io.StringIO()
    with pytest.raises(LedgerError, match="run submit again to adopt them"):
        run(repo, Progress(io.StringIO(), err, live=False), record_every=0.0, plans=plans)
    assert "could not write the ledger" in err.getvalue()  # tried during the run, then at its end
    assert len(fake_beaker.count_by_name()) == POINTS
    blocker.unlink()
    outcomes = run(repo, Watching(repo), record_every=0.0)
    assert [o.status for o in outcomes] == [OutcomeStatus.ADOPTED] * POINTS
    assert_exactly_once(repo, fake_beaker)
