"""The submit protocol at its edges, each over the real wire against a fault of the fake Beaker:
a reply cut mid-body, two accounts (under both name scopes), Beaker down, retries shown, SIGTERM,
the deadline with creates in flight, and exit codes a script can tell apart."""

from __future__ import annotations

import dataclasses
import io
import json
import queue
import re
import signal
import threading
import time
from pathlib import Path
from typing import TypeVar

import grpc
import pytest

from runner import ledger
from runner.backends.beaker import BeakerBackend, credentials
from runner.cli import main
from runner.commands.submit import submit as submit_command
from runner.commands.submit_args import SubmitArgs
from runner.core.clock import Bounds
from runner.core.defaults import DEFAULT_MAX_UNREACHABLE
from runner.core.errors import Exit
from runner.plan import catalog
from runner.report.progress import Progress
from runner.submit import Clock, Options, Outcome, OutcomeStatus, RetryPolicy, Submitter
from tests.clock import VirtualClock
from tests.fake_beaker.server import FakeBeaker
from tests.helpers import (
    POINTS,
    SWEEP,
    assert_exactly_once,
    interrupted_submit,
    write_manifest,
)

T = TypeVar("T")


def checkout(tmp_path: Path, name: str) -> Path:
    """Another checkout of the same sweep (another person's, or CI's), beside the `repo`
    fixture's sweeps/ (a command there reads its own sweeps/ alone)."""
    write_manifest(tmp_path / name, SWEEP, "exact.yaml")
    return tmp_path / name


def backend_for(token: str | None = None, clock: Clock | None = None) -> BeakerBackend:
    config = credentials()
    assert config is not None
    config = config if token is None else dataclasses.replace(config, user_token=token)
    return BeakerBackend(config, bounds=Bounds(clock or Clock(), None, DEFAULT_MAX_UNREACHABLE))


def run(
    root: Path,
    *,
    token: str | None = None,
    concurrency: int = 3,
    clock: Clock | None = None,
    deadline: float | None = None,
    err: io.StringIO | None = None,
    live: bool = False,
) -> tuple[list[Outcome], Submitter]:
    backend = backend_for(token, clock)  # the run's one clock
    options = Options(
        root=root,
        commit="c0ffee",
        concurrency=concurrency,
        deadline=deadline,
        policy=RetryPolicy(sleep=lambda seconds: None),
        clock=clock or Clock(),
    )
    submitter = Submitter(backend, options, Progress(io.StringIO(), err or io.StringIO(), live))
    try:
        return submitter.run(catalog.load(root, []).plans()), submitter
    finally:
        backend.close()


def alice_then_bob(tmp_path: Path, repo: Path, fake: FakeBeaker) -> tuple[Path, str]:
    """Alice has submitted `repo`; Bob, in a checkout of his own, starts before he can see her
    experiments (his first listing was taken before her creates landed). His checkout and
    token; he has not run yet."""
    alice, bob = fake.add_user("alice"), fake.add_user("bob")
    run(repo, token=alice)
    fake.empty_listing(times=1)
    return checkout(tmp_path, "bob"), bob


def recorded(root: Path) -> dict[str, str]:
    """Experiment name -> id, as the ledger records them."""
    entries = ledger.read(ledger.ledger_path(root, "exact"), "exact").entries.values()
    return {e.experiment: e.id for e in entries}


# 1. A reply cut mid-body.


def test_a_reply_cut_mid_body_is_looked_up_and_adopted(repo: Path, fake_beaker: FakeBeaker) -> None:
    fake_beaker.cut_reply_after_commit(times=2)  # ChunkedEncodingError after the commit
    outcomes, _ = run(repo)
    assert sorted(o.status for o in outcomes) == [OutcomeStatus.ADOPTED] * 2 + [
        OutcomeStatus.CREATED
    ] * (POINTS - 2)
    assert_exactly_once(repo, fake_beaker)


# 2. Two accounts.


def test_a_point_another_account_created_meanwhile_is_found_and_adopted(
    tmp_path: Path, repo: Path, fake_beaker: FakeBeaker
) -> None:
    other, bob = alice_then_bob(tmp_path, repo, fake_beaker)
    outcomes, _ = run(other, token=bob)
    assert [o.status for o in outcomes] == [OutcomeStatus.ADOPTED] * POINTS, [
        o.error for o in outcomes
    ]
    assert {e.author for e in fake_beaker.experiments()} == {"alice"}
    assert_exactly_once(other, fake_beaker)
    assert recorded(other) == recorded(repo)


def test_author_scoped_names_keep_the_older_copy_and_cancel_ours_once(
    tmp_path: Path, repo: Path, fake_beaker: FakeBeaker, capsys: pytest.CaptureFixture[str]
) -> None:
    fake_beaker.name_scope = "author"
    other, bob = alice_then_bob(tmp_path, repo, fake_beaker)
    fake_beaker.lose_reply("CancelWorkloads", times=1)  # a cancel that commits, reply lost
    err = io.StringIO()
    outcomes, submitter = run(other, token=bob, err=err)

    assert [o.status for o in outcomes] == [OutcomeStatus.ADOPTED] * POINTS
    theirs = {e.name: e.id for e in fake_beaker.experiments() if e.author == "alice"}
    mine = [e for e in fake_beaker.experiments() if e.author == "bob"]
    assert len(mine) == POINTS and recorded(other) == theirs == recorded(repo)
    assert {fake_beaker.experiment(e.id).status for e in mine} == {"canceled"}
    assert [fake_beaker.cancels(e.id) for e in mine] == [1] * POINTS  # never twice
    assert sorted(d.canceled[0] for d in submitter.duplicates) == sorted(e.id for e in mine)
    assert err.getvalue().count("DUPLICATE exact/") == POINTS
    capsys.readouterr()
    assert main(["-C", str(other), "status"]) == 0
    assert "DUPLICATE" not in capsys.readouterr().err  # resolved: only one is live


@pytest.mark.parametrize("scope", ["workspace", "author"])
def test_two_accounts_at_once_end_with_one_live_experiment_per_point(
    tmp_path: Path, repo: Path, fake_beaker: FakeBeaker, scope: str
) -> None:
    fake_beaker.name_scope = scope  # type: ignore[assignment]
    tokens = [fake_beaker.add_user("alice"), fake_beaker.add_user("bob")]
    roots = [repo, checkout(tmp_path, "bob")]
    fake_beaker.latency = 0.02
    fake_beaker.empty_listing(times=2)  # neither sees the other's experiments when it starts
    results: list[list[Outcome]] = []
    threads = [
        threading.Thread(target=lambda r=r, t=t: results.append(run(r, token=t)[0]))
        for r, t in zip(roots, tokens, strict=True)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert [
        {o.status for o in r} <= {OutcomeStatus.CREATED, OutcomeStatus.ADOPTED} for r in results
    ] == [True, True]
    live = [e for e in fake_beaker.experiments() if e.status != "canceled"]
    assert sorted(e.name for e in live) == sorted(recorded(repo))
    assert recorded(repo) == recorded(roots[1]) == {e.name: e.id for e in live}


def test_status_reports_a_duplicate_that_could_not_be_cancelled(
    tmp_path: Path, repo: Path, fake_beaker: FakeBeaker, capsys: pytest.CaptureFixture[str]
) -> None:
    fake_beaker.name_scope = "author"
    other, bob = alice_then_bob(tmp_path, repo, fake_beaker)
    fake_beaker.fail_rpc("CancelWorkloads", grpc.StatusCode.PERMISSION_DENIED, times=POINTS)
    _, submitter = run(other, token=bob)
    assert all("cancel it by hand" in d.problem for d in submitter.duplicates)
    capsys.readouterr()
    assert main(["-C", str(other), "status"]) == 0
    assert capsys.readouterr().err.count("warning: DUPLICATE exact/") == POINTS


# 3. Beaker down: one clear line, bounded in time.


def test_beaker_down_stops_the_run_early_with_one_line(
    repo: Path, fake_beaker: FakeBeaker, capsys: pytest.CaptureFixture[str]
) -> None:
    fake_beaker.stop()
    started = time.perf_counter()
    assert submit_command(repo, SubmitArgs(), clock=VirtualClock()) == Exit.INCOMPLETE
    print(f"gave up after {time.perf_counter() - started:.2f} s of real time (3 min virtual)")
    err = capsys.readouterr().err
    line = (
        f"Beaker at {fake_beaker.agent_address} unreachable for 3m (connection refused):"
        f" {POINTS} point(s) not submitted; rerun to continue"
    )
    assert err.count(line) == 1
    assert OutcomeStatus.NOT_STARTED not in err and "deadline" not in err  # not one line per point


# 4. Retries are shown.


def test_retries_are_shown_on_the_progress_line(repo: Path, fake_beaker: FakeBeaker) -> None:
    fake_beaker.fail_creates(503, times=2)
    logged, live = io.StringIO(), io.StringIO()
    run(repo, concurrency=1, err=logged)
    pattern = r"Beaker unavailable \(create exact-\w+: HTTP 503\), retrying in \d s, attempt 2/8"
    assert re.search(pattern, logged.getvalue())
    fake_beaker.fail_creates(503, times=1)
    other = repo.parent / "other"
    write_manifest(other, SWEEP.replace("name: exact", "name: other"), "other.yaml")
    run(other, concurrency=1, err=live, live=True)
    assert re.search(r"\] 0/6 done \| Beaker unavailable \(create other-", live.getvalue())


def test_a_read_beaker_py_would_retry_is_retried_on_the_runs_clock_and_shown(
    repo: Path, fake_beaker: FakeBeaker
) -> None:
    """beaker-py retries UNAVAILABLE itself, 2 s apart on the wall clock; the gateway ends that
    loop at its first announcement and retries on the run's clock instead, saying so."""
    fake_beaker.unavailable("ResolveWorkspaceName", times=1)
    err, clock = io.StringIO(), VirtualClock(jumping=False)
    outcomes, _ = run(repo, err=err, clock=clock)
    assert {o.status for o in outcomes} == {OutcomeStatus.CREATED}
    assert clock.slept == [1.0] and fake_beaker.calls["ResolveWorkspaceName"] == 2
    assert (
        "Beaker unreachable (UNAVAILABLE), retrying in 1 s, attempt 2: workspace ai2/sweeps-test"
        in err.getvalue()
    )


# 5. SIGTERM.


@pytest.mark.slow
def test_sigterm_records_every_created_experiment_and_prints_the_summary(
    repo: Path, fake_beaker: FakeBeaker
) -> None:
    proc = interrupted_submit(repo, fake_beaker, signal.SIGTERM, recorded=1, concurrency=2)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 143, err
    assert "SIGTERM received" in err and "submitted: " in err
    assert set(recorded(repo)) == set(fake_beaker.count_by_name())  # none created goes unrecorded
    assert set(fake_beaker.count_by_name().values()) == {1}


# 6. The deadline: in flight versus never started, and a grace for those in flight.


def test_at_the_deadline_in_flight_and_never_started_are_told_apart(
    repo: Path, fake_beaker: FakeBeaker
) -> None:
    fake_beaker.reply_late_after_commit(delay=60, times=1)
    clock = VirtualClock()
    outcomes, submitter = run(repo, concurrency=1, clock=clock, deadline=clock.now() + 5)
    assert [o.status for o in outcomes] == [OutcomeStatus.UNKNOWN] + [OutcomeStatus.NOT_STARTED] * (
        POINTS - 1
    )
    assert submitter.stopped is not None and submitter.stopped.kind == "deadline"
    assert "never started" in outcomes[1].error and "adopts it if it exists" in outcomes[0].error


def test_a_create_in_flight_at_the_deadline_lands_within_the_grace(
    repo: Path, fake_beaker: FakeBeaker
) -> None:
    fake_beaker.reply_late_after_commit(delay=0.5, times=1)
    outcomes, _ = run(repo, concurrency=1, deadline=time.monotonic() + 0.2)
    assert (
        outcomes[0].status == OutcomeStatus.CREATED
    )  # landed after the deadline, before the last write
    assert set(recorded(repo)) == {outcomes[0].point.name} == set(fake_beaker.count_by_name())


# 8. Exit codes and the JSON summary.


def test_a_rejected_point_exits_4_and_says_so_in_the_json_summary(
    repo: Path, fake_beaker: FakeBeaker, monkeypatch: pytest.MonkeyPatch
) -> None:
    fake_beaker.fail_creates(400, times=1, message="spec is invalid: image not found")
    output = repo.parent / "github-output"
    monkeypatch.setenv("GITHUB_OUTPUT", str(output))
    summary = repo.parent / "summary.json"
    code = main(["-C", str(repo), "submit", "--concurrency", "1", "--summary-json", str(summary)])
    assert code == Exit.REJECTED
    data = json.loads(summary.read_text())
    assert (data["result"], data["exit_code"], data["counts"]) == (
        "rejected",
        Exit.REJECTED,
        {"created": POINTS - 1, "rejected": 1},
    )
    assert "result=rejected" in output.read_text()


class CountingClock(Clock):
    """Real time, counting how often the run waits for an event."""

    def __init__(self) -> None:
        self.takes = 0

    def take(self, box: queue.Queue[T], timeout: float | None) -> T:
        self.takes += 1
        return super().take(box, timeout)


@pytest.mark.slow
def test_the_run_waits_instead_of_spinning_while_a_ledger_write_is_due(
    repo: Path, fake_beaker: FakeBeaker
) -> None:
    """While the duplicate check's listing is on its way, the entries of the creates are due to be
    written: the run writes them and then waits, rather than waking up again at once (which it
    did tens of thousands of times a second)."""
    fake_beaker.latency = 0.3  # each call, the listings after the creates too, takes 0.3 s
    clock = CountingClock()
    outcomes, _ = run(repo, clock=clock, concurrency=POINTS)
    assert [o.status for o in outcomes] == [OutcomeStatus.CREATED] * POINTS
    assert set(recorded(repo)) == {o.point.name for o in outcomes}
    # About one wake-up per outcome and per ledger write, plus polls every 0.2 s; not thousands.
    assert clock.takes < 100
