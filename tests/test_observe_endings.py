"""`wait` and a point the platform ended, against the wire fake (`runner.observe.endings`): a
preempted point is pending (the next submit resumes it), so `wait` keeps waiting, even with
`--fail-fast`, and says so; a timed-out one has failed, and `wait` names why. Why a canceled
point was canceled is read once, not once per interval."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from runner.cli import main
from runner.commands.wait import WaitArgs, wait
from runner.core.errors import Exit
from runner.observe.watch import OnFailure
from tests.clock import Scripted
from tests.fake_beaker.certs import CertBundle
from tests.fake_beaker.fixtures import serving
from tests.fake_beaker.server import FakeBeaker
from tests.helpers import SWEEP, write_manifest

PREEMPTIBLE = SWEEP.replace(
    "  clusters: [ai2/test-cluster]\n",
    "  clusters: [ai2/test-cluster]\n  timeout: 1h\n  auto_resume: false\n",
)


@pytest.fixture
def fake(
    fake_beaker_ca: CertBundle, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Iterator[FakeBeaker]:
    with serving(fake_beaker_ca, tmp_path / "fake", monkeypatch) as server:
        yield server


@pytest.fixture
def root(tmp_path: Path, fake: FakeBeaker) -> Path:
    """The six-point sweep submitted to the fake, every point running."""
    write_manifest(tmp_path, PREEMPTIBLE, "exact.yaml")
    assert main(["-C", str(tmp_path), "submit", "--backend", "beaker"]) == 0
    for exp in fake.experiments():
        fake.set_job_status(exp.id, "running")
    return tmp_path


def _args(**given: object) -> WaitArgs:
    return WaitArgs(**{"interval": "1s", "backend": "beaker", **given})  # type: ignore[arg-type]


def test_wait_waits_for_a_preempted_point_until_the_next_submit_resumes_it_and_it_succeeds(
    root: Path, fake: FakeBeaker, capsys: pytest.CaptureFixture[str]
) -> None:
    first = fake.experiments()[0].name
    read: list[int] = []

    def preempted() -> None:
        fake.preempt(first)
        fake.reset_calls()

    def scheduled_submit() -> None:
        assert main(["-C", str(root), "submit", "--backend", "beaker"]) == 0

    def all_succeed() -> None:
        for exp in fake.experiments():
            fake.set_job_status(exp.id, "succeeded")

    clock = Scripted(
        preempted,
        lambda: None,  # another look while it waits for the schedule's submit
        lambda: read.append(fake.calls["ListJobs"]),
        scheduled_submit,
        all_succeed,
    )
    capsys.readouterr()
    assert wait(root, _args(on_failure=OnFailure.STOP), clock) == Exit.OK
    assert read == [1]  # why it was canceled: read once over two looks
    out, err = capsys.readouterr()
    assert "0/6 done, 5 running, 1 preempted (the next submit resumes)" in err.splitlines()
    assert err.splitlines()[-1] == "6/6 done, 0 running"
    assert fake.restarts(first) == 1
    row = next(line for line in out.splitlines() if first in line)
    assert "succeeded (preempted 1x)" in row


def test_a_timed_out_point_fails_the_wait_saying_why(
    root: Path, fake: FakeBeaker, capsys: pytest.CaptureFixture[str]
) -> None:
    slow = fake.experiments()[2].name

    def timed_out() -> None:
        fake.time_out(slow)

    clock = Scripted(timed_out)
    capsys.readouterr()
    assert wait(root, _args(on_failure=OnFailure.STOP), clock) == Exit.RUNS_FAILED
    err = capsys.readouterr().err.splitlines()
    assert err[-2:] == [
        "1/6 done, 5 running, 1 failed",
        f"failed: {slow} (timed out after its timeout of 1h00m)",
    ]
