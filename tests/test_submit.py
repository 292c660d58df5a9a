"""The exactly-once protocol against the fake Beaker, over beaker-py's real wire protocols."""

from __future__ import annotations

import io
import json
import signal
import time
from pathlib import Path

import pytest
from beaker import Beaker, BeakerExperimentSpec

from runner import ledger
from runner.backends.beaker import BeakerBackend
from runner.cli import main
from runner.commands.submit import submit as submit_command
from runner.commands.submit_args import SubmitArgs
from runner.core.errors import Exit
from runner.core.retry import RetryPolicy
from runner.plan import catalog
from runner.report.progress import Progress
from runner.submit import Options, Outcome, OutcomeStatus, Submitter
from tests.clock import VirtualClock
from tests.fake_beaker.server import FakeBeaker
from tests.helpers import (
    POINTS,
    assert_exactly_once,
    interrupted_submit,
    minimal,
    submit_process,
)


def run_submit(
    root: Path,
    *,
    concurrency: int = 3,
    http_timeout: float | None = None,
    deadline: float | None = None,
    real_sleep: bool = False,
) -> tuple[list[Outcome], list[float]]:
    sleeps: list[float] = []

    def sleep(seconds: float) -> None:
        sleeps.append(seconds)
        if real_sleep:
            time.sleep(seconds)

    plans = catalog.load(root, []).plans()
    backend = BeakerBackend(http_timeout=http_timeout)
    options = Options(
        root=root,
        commit="c0ffee",
        concurrency=concurrency,
        deadline=deadline,
        policy=RetryPolicy(sleep=sleep),
    )
    try:
        outcomes = Submitter(
            backend, options, Progress(io.StringIO(), io.StringIO(), live=False)
        ).run(plans)
    finally:
        backend.close()
    return outcomes, sleeps


def test_submit_creates_every_point_once_and_records_urls(
    repo: Path, fake_beaker: FakeBeaker, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["-C", str(repo), "submit"]) == 0
    out = capsys.readouterr()
    assert_exactly_once(repo, fake_beaker)
    assert out.out.count("created exact-") == POINTS and fake_beaker.agent_address in out.out
    assert fake_beaker.token not in out.out + out.err
    assert fake_beaker.token not in ledger.ledger_path(repo, "exact").read_text()
    spec = fake_beaker.experiments()[0].spec
    assert "[sweep-key " in spec["description"]
    fake_beaker.reset_calls()
    assert main(["-C", str(repo), "submit"]) == 0  # rerun: everything is '=', no call at all
    assert fake_beaker.calls.get("http:create", 0) == 0


@pytest.mark.parametrize("status", [503, 502, 500, 429])
def test_error_bursts_are_retried_and_create_each_point_once(
    repo: Path, fake_beaker: FakeBeaker, status: int
) -> None:
    fake_beaker.fail_creates(status, times=4, retry_after=7 if status == 429 else None)
    outcomes, sleeps = run_submit(repo)
    assert {o.status for o in outcomes} <= {OutcomeStatus.CREATED, OutcomeStatus.ADOPTED}
    assert len(sleeps) == 4
    if status == 429:
        assert sleeps == [7.0] * 4  # Retry-After honoured, not the exponential backoff
    assert_exactly_once(repo, fake_beaker)


def test_commit_then_reset_adopts_instead_of_duplicating(
    repo: Path, fake_beaker: FakeBeaker
) -> None:
    fake_beaker.reset_after_commit(times=3)
    outcomes, _ = run_submit(repo)
    assert sum(o.status == OutcomeStatus.ADOPTED for o in outcomes) == 3
    assert_exactly_once(repo, fake_beaker)


def test_commit_then_late_reply_adopts_instead_of_duplicating(
    repo: Path, fake_beaker: FakeBeaker
) -> None:
    fake_beaker.reply_late_after_commit(delay=1.5, times=2)
    outcomes, _ = run_submit(repo, http_timeout=0.5)
    assert sum(o.status == OutcomeStatus.ADOPTED for o in outcomes) == 2
    assert_exactly_once(repo, fake_beaker)


@pytest.mark.slow  # beaker-py waits 2 s before it retries UNAVAILABLE
@pytest.mark.parametrize("rpc", ["ResolveWorkspaceName", "ListWorkloads"])
def test_unavailable_rpc_is_ridden_out(repo: Path, fake_beaker: FakeBeaker, rpc: str) -> None:
    fake_beaker.unavailable(rpc, times=1)
    outcomes, _ = run_submit(repo)
    assert {o.status for o in outcomes} == {OutcomeStatus.CREATED}, [o.error for o in outcomes]
    assert fake_beaker.calls[rpc] >= 2  # the UNAVAILABLE one, then beaker-py's retry
    assert_exactly_once(repo, fake_beaker)


def test_latency_on_every_call_creates_each_point_once(repo: Path, fake_beaker: FakeBeaker) -> None:
    fake_beaker.latency = 0.02
    outcomes, sleeps = run_submit(repo, concurrency=6)
    assert {o.status for o in outcomes} == {OutcomeStatus.CREATED} and sleeps == []
    assert_exactly_once(repo, fake_beaker)


@pytest.mark.slow  # the fake's rate limit is a real one-second window
def test_rate_limit_is_waited_out_as_retry_after_says(repo: Path, fake_beaker: FakeBeaker) -> None:
    fake_beaker.rate_limit(4)
    outcomes, sleeps = run_submit(repo, concurrency=6, real_sleep=True)
    assert {o.status for o in outcomes} == {OutcomeStatus.CREATED}, [o.error for o in outcomes]
    assert sleeps and set(sleeps) == {1.0}  # the fake's Retry-After: 1, via beaker-py's 429 error
    assert_exactly_once(repo, fake_beaker)


def test_server_restart_mid_run_creates_each_point_once(
    repo: Path, fake_beaker: FakeBeaker
) -> None:
    fake_beaker.stop()
    fake_beaker.restart()
    fake_beaker.reset_after_commit(times=1)
    outcomes, _ = run_submit(repo)
    assert {o.status for o in outcomes} <= {OutcomeStatus.CREATED, OutcomeStatus.ADOPTED}
    assert_exactly_once(repo, fake_beaker)


def test_client_error_is_not_retried_and_is_reported_with_beakers_message(
    repo: Path, fake_beaker: FakeBeaker
) -> None:
    fake_beaker.fail_creates(400, times=1, message="spec is invalid: image not found")
    outcomes, sleeps = run_submit(repo, concurrency=1)
    failed = [o for o in outcomes if o.status == OutcomeStatus.REJECTED]
    assert len(failed) == 1 and "spec is invalid: image not found" in failed[0].error
    assert sleeps == [] and fake_beaker.calls["http:create"] == POINTS
    assert len(fake_beaker.count_by_name()) == POINTS - 1
    outcomes, _ = run_submit(repo)  # a rerun submits only the failed point
    assert [o.status for o in outcomes] == [OutcomeStatus.CREATED]
    assert_exactly_once(repo, fake_beaker)


def test_name_taken_by_someone_else_fails_loudly_and_is_left_alone(
    repo: Path, fake_beaker: FakeBeaker
) -> None:
    plans = catalog.load(repo, []).plans()
    victim = plans[0].rows[0].rendered
    assert victim is not None
    with Beaker.from_env(check_for_upgrades=False) as client:
        other = BeakerExperimentSpec.from_json(
            {
                "version": "v2",
                "description": "someone else's",
                "tasks": [
                    {"name": "main", "image": {"beaker": "x/y"}, "context": {}, "command": ["true"]}
                ],
            }
        )
        client.experiment.create(
            name=victim.name, spec=other, workspace=client.workspace.get("ai2/sweeps-test")
        )
    outcomes, _ = run_submit(repo)
    failed = [o for o in outcomes if o.status == OutcomeStatus.REJECTED]
    assert len(failed) == 1 and victim.name in failed[0].error and "left alone" in failed[0].error
    assert fake_beaker.count_by_name()[victim.name] == 1
    assert victim.key not in ledger.read(ledger.ledger_path(repo, "exact"), "exact").entries


def test_lost_ledger_is_rebuilt_by_adopting_existing_experiments(
    repo: Path, fake_beaker: FakeBeaker
) -> None:
    run_submit(repo)
    ledger.ledger_path(repo, "exact").unlink()
    fake_beaker.reset_calls()
    outcomes, _ = run_submit(repo)
    assert [o.status for o in outcomes] == [OutcomeStatus.ADOPTED] * POINTS
    assert fake_beaker.calls.get("http:create", 0) == 0
    assert (
        fake_beaker.calls.get("ListWorkloads", 0) >= 1
        and fake_beaker.calls.get("ResolveWorkloadName", 0) == 0
    )
    assert_exactly_once(repo, fake_beaker)


def test_missing_token_is_a_one_line_error(
    repo: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CI", "true")
    assert main(["-C", str(repo), "submit"]) == 1
    err = capsys.readouterr().err.strip()
    assert err.startswith("error: no Beaker token found: set BEAKER_TOKEN") and "\n" not in err
    assert "CI never falls back" in err


@pytest.mark.slow
def test_runner_killed_mid_run_and_restarted_ends_with_one_experiment_per_point(
    repo: Path, fake_beaker: FakeBeaker
) -> None:
    proc = interrupted_submit(repo, fake_beaker, signal.SIGKILL, recorded=2, concurrency=1)
    proc.wait()
    fake_beaker.latency = 0.0
    again = submit_process(repo)
    _, err = again.communicate(timeout=120)
    assert again.returncode == 0, err
    assert_exactly_once(repo, fake_beaker)


@pytest.mark.slow
def test_two_runners_at_once_create_each_point_once(repo: Path, fake_beaker: FakeBeaker) -> None:
    fake_beaker.latency = 0.05
    procs = [submit_process(repo, "--concurrency", "3") for _ in range(2)]
    results = [p.communicate(timeout=120) for p in procs]
    assert [p.returncode for p in procs] == [0, 0], results
    assert_exactly_once(repo, fake_beaker)
    lines = ledger.ledger_path(repo, "exact").read_text().splitlines()
    assert len(lines) == POINTS + 1


def test_server_that_stays_down_ends_the_run_at_its_deadline(
    repo: Path, fake_beaker: FakeBeaker, capsys: pytest.CaptureFixture[str]
) -> None:
    fake_beaker.stop()
    summary = repo / "summary.json"
    args = SubmitArgs(timeout=3, max_unreachable=600, summary_json=str(summary))
    assert submit_command(repo, args, clock=VirtualClock()) == Exit.INCOMPLETE
    err = capsys.readouterr().err
    assert f"deadline passed: {POINTS} point(s) not submitted; rerun to continue" in err
    assert "never started" not in err  # one line for them all, not one per point
    data = json.loads(summary.read_text())
    assert data["result"] == "incomplete" and data["stopped"]["kind"] == "deadline"
    assert [p["status"] for p in data["points"]] == [OutcomeStatus.NOT_STARTED] * POINTS


def test_status_lists_live_states_and_exit_codes_in_few_calls(
    repo: Path, fake_beaker: FakeBeaker, capsys: pytest.CaptureFixture[str]
) -> None:
    run_submit(repo)
    experiments = fake_beaker.experiments()
    fake_beaker.set_job_status(experiments[0].id, "running")
    fake_beaker.set_job_status(experiments[1].id, "failed", exit_code=3)
    fake_beaker.set_job_status(experiments[2].id, "succeeded", exit_code=0)
    fake_beaker.reset_calls()
    capsys.readouterr()
    assert main(["-C", str(repo), "status", "--format", "json"]) == 0
    import json

    points = {
        p["experiment"]: p for p in json.loads(capsys.readouterr().out)["sweeps"][0]["points"]
    }
    assert points[experiments[0].name]["state"] == "running"
    assert (points[experiments[1].name]["state"], points[experiments[1].name]["exit_code"]) == (
        "failed",
        3,
    )
    assert (points[experiments[2].name]["state"], points[experiments[2].name]["exit_code"]) == (
        "succeeded",
        0,
    )
    assert {points[e.name]["state"] for e in experiments[3:]} == {"queued"}
    assert fake_beaker.calls.get("ResolveWorkloadName", 0) == 0  # listed, not looked up one by one
    assert main(["-C", str(repo), "status"]) == 0
    assert "failed" in capsys.readouterr().out


def test_without_credentials_a_bare_submit_runs_nothing_locally(
    project_copy: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["-C", str(project_copy), "submit"]) == 1
    assert "the local backend runs only the manifests you name" in capsys.readouterr().err
    assert not (project_copy / ".runs").exists()


def test_without_credentials_a_sweep_that_is_not_a_draft_never_runs_locally(
    project_copy: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Named on the command line, it would once have started here: `torchrun: not found`,
    failed runs and exit 0. Now one line says how to give a token or ask for the local backend."""
    minimal(project_copy, "real")
    code = main(["-C", str(project_copy), "submit", "sweeps/quickstart.yaml", "sweeps/real.yaml"])
    err = capsys.readouterr().err
    assert code == Exit.USER_ERROR
    assert err.splitlines() == [
        "error: no Beaker token found: set BEAKER_TOKEN (in CI: the `beaker` environment's"
        " secret) or run `beaker config set user_token ...` to write ~/.beaker/config.yml;"
        " sweeps/real.yaml is not a draft (`draft: true`), so pass --backend local to run it here"
    ]
    assert not (project_copy / ".runs").exists()
