"""`wait` against the wire fake: scripted transitions between its looks (a clock that jumps, and
plays the next change at each sleep), its exit codes, what it names, and its cost: one listing
per sweep per interval, never a call per point."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import grpc
import pytest

from runner.backends import Listing
from runner.backends.beaker import BeakerBackend
from runner.cli import main
from runner.commands.wait import WaitArgs, wait
from runner.core.errors import Exit, RunnerError
from runner.observe.watch import OnFailure
from runner.plan import catalog
from tests.background import WAIT, Command, wait_for
from tests.clock import VirtualClock
from tests.fake_beaker.certs import CertBundle
from tests.fake_beaker.fixtures import serving
from tests.fake_beaker.server import FakeBeaker
from tests.helpers import SWEEP, halving, head, write_manifest

PAGE = 2
"""The fake's page size here: the six-point sweep is listed in three pages."""


class Scripted(VirtualClock):
    """A clock that jumps, and at each sleep plays the next scripted change (if any is left)."""

    def __init__(self, *changes: Callable[[], None]) -> None:
        super().__init__()
        self.changes = list(changes)

    def sleep(self, seconds: float) -> None:
        super().sleep(seconds)
        if self.changes:
            self.changes.pop(0)()


@pytest.fixture
def fake(
    fake_beaker_ca: CertBundle, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Iterator[FakeBeaker]:
    with serving(fake_beaker_ca, tmp_path / "fake", monkeypatch, page_size=PAGE) as server:
        yield server


@pytest.fixture
def root(tmp_path: Path, fake: FakeBeaker) -> Path:
    """The six-point sweep submitted to the fake: every point queued."""
    write_manifest(tmp_path, SWEEP, "exact.yaml")
    assert main(["-C", str(tmp_path), "submit", "--backend", "beaker"]) == 0
    return tmp_path


def _all(fake: FakeBeaker, status: str, but: int | None = None) -> Callable[[], None]:
    """Every experiment (`but` one) to `status`."""

    def change() -> None:
        for i, exp in enumerate(fake.experiments()):
            if i != but:
                fake.set_job_status(exp.id, status)

    return change


def _one(fake: FakeBeaker, i: int, status: str) -> Callable[[], None]:
    return lambda: fake.set_job_status(fake.experiments()[i].id, status)


def _args(**given: object) -> WaitArgs:
    return WaitArgs(**{"interval": "1s", "backend": "beaker", **given})  # type: ignore[arg-type]


def test_all_succeed_exits_0_with_progress_on_stderr_and_the_table_on_stdout(
    root: Path, fake: FakeBeaker, capsys: pytest.CaptureFixture[str]
) -> None:
    capsys.readouterr()
    clock = Scripted(_all(fake, "running"), _all(fake, "succeeded"))
    assert wait(root, _args(), clock) == Exit.OK
    out, err = capsys.readouterr()
    assert err.splitlines() == [
        "0/6 done, 0 running, 6 queued",
        "0/6 done, 6 running",
        "6/6 done, 0 running",
    ]
    rows = [line.split() for line in out.splitlines() if line.startswith("=   exact-")]
    assert len(rows) == 6 and {row[2] for row in rows} == {"succeeded"}
    assert clock.slept == [1.0, 1.0]


def test_one_failure_exits_6_and_names_it(
    root: Path, fake: FakeBeaker, capsys: pytest.CaptureFixture[str]
) -> None:
    failed = fake.experiments()[4].name
    capsys.readouterr()
    clock = Scripted(_one(fake, 4, "failed"), _all(fake, "succeeded", but=4))
    assert wait(root, _args(), clock) == Exit.RUNS_FAILED
    err = capsys.readouterr().err
    assert err.splitlines()[-2:] == ["6/6 done, 0 running, 1 failed", f"failed: {failed} (failed)"]


def test_fail_fast_returns_at_the_first_failure(
    root: Path, fake: FakeBeaker, capsys: pytest.CaptureFixture[str]
) -> None:
    failed = fake.experiments()[1].name
    later = _all(fake, "succeeded", but=1)
    clock = Scripted(_all(fake, "running"), _one(fake, 1, "failed"), later)
    capsys.readouterr()
    assert wait(root, _args(on_failure=OnFailure.STOP), clock) == Exit.RUNS_FAILED
    assert clock.changes == [later]  # it did not wait for the rest
    err = capsys.readouterr().err
    assert err.splitlines()[-2:] == ["1/6 done, 5 running, 1 failed", f"failed: {failed} (failed)"]


def test_still_running_at_the_timeout_exits_124_naming_them(
    root: Path, fake: FakeBeaker, capsys: pytest.CaptureFixture[str]
) -> None:
    names = [e.name for e in fake.experiments()]
    clock = Scripted(_all(fake, "running"), _one(fake, 0, "succeeded"))
    capsys.readouterr()
    start = clock.now()
    assert wait(root, _args(timeout="2s"), clock) == Exit.TIMED_OUT
    assert clock.now() - start == 2.0  # looks at 0, 1 and 2 s, then no sleep past the timeout
    err = capsys.readouterr().err.splitlines()
    assert err[-1].startswith("timed out after 2s, still not ended: ")
    still = err[-1].split(": ", 1)[1].split(", ")
    assert sorted(still) == sorted(f"{n} (running)" for n in names[1:])


def test_each_interval_lists_each_sweep_once_within_the_pages_status_lists(
    root: Path, fake: FakeBeaker, capsys: pytest.CaptureFixture[str]
) -> None:
    fake.reset_calls()
    assert main(["-C", str(root), "status", "--backend", "beaker"]) == 0
    status_pages = fake.calls["ListWorkloads"]
    assert status_pages == 3  # six points, two a page
    clock = Scripted(_all(fake, "running"), _one(fake, 2, "failed"), _all(fake, "failed", but=2))
    fake.reset_calls()
    assert wait(root, _args(), clock) == Exit.RUNS_FAILED
    calls = fake.calls
    looks = 4  # at 0, 1, 2 and 3 s
    final = status_pages  # the final table's status look
    assert calls["ListWorkloads"] - final <= looks * status_pages
    assert calls["ListWorkloads"] - final == looks * status_pages  # one paged listing a look
    # No call per point: the job listings are the final look's, one per failed experiment.
    assert calls["ListJobs"] == 6 and "StreamJobLogs" not in calls and "GetWorkload" not in calls


def test_points_narrows_what_is_awaited(
    root: Path, fake: FakeBeaker, capsys: pytest.CaptureFixture[str]
) -> None:
    first = fake.experiments()[0].name
    clock = Scripted(_one(fake, 0, "succeeded"))
    capsys.readouterr()
    assert wait(root, _args(points=(first,)), clock) == Exit.OK
    out, err = capsys.readouterr()
    assert err.splitlines()[-1] == "1/1 done, 0 running"
    assert [line.split()[1] for line in out.splitlines() if line.startswith("=")] == [first]


def test_the_final_table_is_the_one_status_shows_with_a_halvings_best_of_its_rung(
    tmp_path: Path, fake: FakeBeaker, capsys: pytest.CaptureFixture[str]
) -> None:
    """`wait` sees each sweep as `status` does (its search, its rungs), not a bare listing."""
    write_manifest(tmp_path, halving(), "halving.yaml")
    assert main(["-C", str(tmp_path), "submit", "--backend", "beaker"]) == 0
    for i, exp in enumerate(fake.experiments()):
        fake.set_job_status(exp.id, "succeeded")
        fake.set_metrics(exp.id, {"loss": 1.0 + i})
    capsys.readouterr()
    assert main(["-C", str(tmp_path), "status", "--backend", "beaker"]) == 0
    shown = capsys.readouterr().out
    assert "Best of rung 0 of 2: loss 1 (minimize) at halving-" in shown
    assert wait(tmp_path, _args(), Scripted()) == Exit.OK
    assert capsys.readouterr().out == shown


def test_nothing_to_wait_for_and_a_bad_duration_are_one_line_exit_1(
    tmp_path: Path, fake: FakeBeaker, capsys: pytest.CaptureFixture[str]
) -> None:
    write_manifest(tmp_path, SWEEP, "exact.yaml")  # never submitted
    with pytest.raises(RunnerError, match="nothing to wait for"):
        wait(tmp_path, _args(), Scripted())
    capsys.readouterr()
    for bad in (["--timeout", "soon"], ["--interval", "0s"], ["--points", "nope"]):
        assert main(["-C", str(tmp_path), "wait", "--backend", "beaker", *bad]) == Exit.USER_ERROR
        err = capsys.readouterr().err
        assert err.startswith("error: ") and len(err.splitlines()) == 1, err
    assert "'soon': not a duration" in main_err(tmp_path, capsys, "--timeout", "soon")


def main_err(root: Path, capsys: pytest.CaptureFixture[str], *argv: str) -> str:
    main(["-C", str(root), "wait", "--backend", "beaker", *argv])
    return capsys.readouterr().err


def test_beaker_not_answering_exits_5(
    root: Path, fake: FakeBeaker, capsys: pytest.CaptureFixture[str]
) -> None:
    fake.fail_rpc("ListWorkloads", grpc.StatusCode.DEADLINE_EXCEEDED, times=100)
    capsys.readouterr()
    assert main(["-C", str(root), "wait", "--backend", "beaker"]) == Exit.INCOMPLETE
    err = capsys.readouterr().err
    assert err.startswith("error: ") and len(err.splitlines()) == 1, err


def test_a_big_sweeps_look_is_one_paged_listing_not_sixteen(root: Path, fake: FakeBeaker) -> None:
    """From 256 default names, a submit's look lists by 16 narrower listings at once (soon);
    `wait`'s, repeated for hours, asks for few calls: one listing, its pages."""
    (plan,) = catalog.load(root, []).plans()
    names = [f"exact-{i:012x}" for i in range(300)]  # none exists; the six submitted are listed
    backend = BeakerBackend()
    try:
        fake.reset_calls()
        backend.experiments(plan.sweep, names, listing=Listing.SOON)
        assert fake.calls["ListWorkloads"] == 16
        fake.reset_calls()
        backend.experiments(plan.sweep, names, listing=Listing.FEW_CALLS)
        assert fake.calls["ListWorkloads"] == 6 // PAGE  # the sweep's pages, as status lists
    finally:
        backend.close()


# -- on this machine: a submit records each point only as it starts -----------------------

GATED = """\
import os, pathlib, time
while not pathlib.Path("go").exists():
    time.sleep(0.02)
out = pathlib.Path(os.environ["RESULTS_DIR"])
out.mkdir(parents=True, exist_ok=True)
(out / "metrics.json").write_text('{"loss": 1}')
"""
LOCAL = (
    head("gated", draft=True)
    + """\
    command: [python, gated.py, "--lr={lr}"]
params:
  grid:
    lr: [0.1, 0.2, 0.3, 0.4]
"""
)


@pytest.fixture
def gated(tmp_path: Path) -> Iterator[tuple[Path, subprocess.Popen[bytes]]]:
    """A local submit of 4 points, one at a time, the first running (and recorded), the other
    three not started: each waits for the file `go`."""
    (tmp_path / "gated.py").write_text(GATED)
    write_manifest(tmp_path, LOCAL, "gated.yaml")
    argv = ["-C", str(tmp_path), "submit", "--backend", "local", "--concurrency", "1"]
    log = open(tmp_path / "submit.log", "wb")  # noqa: SIM115 (closed below)
    proc = subprocess.Popen([sys.executable, "-m", "runner", *argv], stdout=log, stderr=log)
    ledger = tmp_path / ".runs" / "gated" / "ledger.jsonl"
    try:
        wait_for(lambda: ledger.is_file() and "gated-" in ledger.read_text(), "the first start")
        yield tmp_path, proc
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        log.close()


def test_a_local_wait_waits_for_the_points_the_submit_has_not_started_yet(
    gated: tuple[Path, subprocess.Popen[bytes]], capsys: pytest.CaptureFixture[str]
) -> None:
    root, proc = gated
    waiting = Command(root, "wait", "--backend", "local", "--interval", "100ms")
    wait_for(lambda: "not started yet" in capsys.readouterr().err, "wait's first tally")
    assert waiting.running
    (root / "go").write_text("")
    assert waiting.join() == Exit.OK
    assert proc.wait(timeout=WAIT) == 0
    out, err = capsys.readouterr()
    assert "not awaited" not in err
    assert out.count(" succeeded ") == 4 and "not submitted" not in out  # every point, ended


def test_a_local_wait_names_the_points_a_canceled_submit_never_started_and_exits_6(
    gated: tuple[Path, subprocess.Popen[bytes]], capsys: pytest.CaptureFixture[str]
) -> None:
    root, proc = gated
    waiting = Command(root, "wait", "--backend", "local", "--interval", "100ms")
    wait_for(lambda: "not started yet" in capsys.readouterr().err, "wait's first tally")
    assert main(["-C", str(root), "cancel", "sweeps/gated.yaml", "--yes"]) == 0
    assert proc.wait(timeout=WAIT) == Exit.CANCELED
    assert waiting.join() == Exit.RUNS_FAILED
    err = capsys.readouterr().err
    (named,) = [line for line in err.splitlines() if line.startswith("not started: ")]
    assert named.count("gated-") == 3 and named.endswith(
        "(the submit that was to start them ended)"
    )
