"""Notifications (runner/apply/notify.py) against the fake Beaker and a stand-in webhook: each event
once, batched failures, and a webhook that fails or loses its reply never fails the run."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

from runner import ledger
from runner.apply.notify import finished_text
from runner.backends import ExperimentState
from runner.cli import main
from runner.core.aims import Aim, Aims, Bound, Constraint, Goal
from runner.core.sample import Distribution, Kind, Method, Sample
from runner.core.search import Adaptive, Grid, Search
from runner.observe.model import Observation, PointResult
from runner.plan import catalog
from tests.fake_beaker.server import FakeBeaker
from tests.helpers import SWEEP, write_manifest
from tests.webhook import Webhook


def _submit(root: Path) -> int:
    return main(["-C", str(root), "submit", "--backend", "beaker"])


@pytest.fixture
def finished(tmp_path: Path, fake_beaker: FakeBeaker) -> Path:
    """The six-point sweep submitted; then one point failed, five succeeded with a loss."""
    write_manifest(tmp_path, SWEEP, "exact.yaml")
    assert _submit(tmp_path) == 0
    for i, exp in enumerate(fake_beaker.experiments()):
        fake_beaker.set_job_status(exp.id, "failed" if i == 2 else "succeeded")
        fake_beaker.set_metrics(exp.id, {"loss": 1.0 + i})
    return tmp_path


def test_each_event_is_sent_once_across_runs_and_recorded_in_the_ledger(
    finished: Path, webhook: Webhook, monkeypatch: pytest.MonkeyPatch, fake_beaker: FakeBeaker
) -> None:
    monkeypatch.setenv("SWEEP_SLACK_WEBHOOK", webhook.url)
    assert _submit(finished) == 0
    assert len(webhook.taken) == 2
    finish = next(t for t in webhook.taken if "finished" in t)
    assert "Sweep `exact` finished: 5 succeeded, 1 failed, 0 canceled" in finish
    first = fake_beaker.experiments()[0]
    last = fake_beaker.experiments()[-1]
    # A grid declares no goal: the extremes, never a guessed "best" (a maximized metric's lowest
    # point was named best)
    assert f"Lowest loss: `{first.name}` (1); highest loss: `{last.name}` (6)" in finish
    assert "Best" not in finish
    (failures,) = [t for t in webhook.taken if "failed:" in t]
    assert failures.startswith("1 point(s) failed:") and "(exit 1)" in failures

    assert _submit(finished) == 0  # the next (scheduled) run: nothing new
    assert len(webhook.received) == 2
    notified = ledger.read(ledger.ledger_path(finished, "exact"), "exact").notified
    assert sorted(notified.values()) == ["sent", "sent"]


def test_a_failing_webhook_leaves_the_run_green_and_the_next_run_sends(
    finished: Path,
    webhook: Webhook,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setenv("SWEEP_SLACK_WEBHOOK", webhook.url)
    webhook.mode = "fail"
    assert _submit(finished) == 0
    assert "not delivered; retried next run" in capsys.readouterr().err
    assert ledger.read(ledger.ledger_path(finished, "exact"), "exact").notified == {}
    webhook.mode = "ok"
    assert _submit(finished) == 0
    assert len(webhook.taken) == 2 and len(webhook.received) == 4


def test_a_lost_reply_is_never_resent(
    finished: Path,
    webhook: Webhook,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setenv("SWEEP_SLACK_WEBHOOK", webhook.url)
    webhook.mode = "drop"
    assert _submit(finished) == 0
    assert "reply lost; not resent" in capsys.readouterr().err
    header = json.loads(ledger.ledger_path(finished, "exact").read_text().splitlines()[0])
    assert sorted(header["notified"].values()) == ["sending", "sending"]
    webhook.mode = "ok"
    assert _submit(finished) == 0
    assert len(webhook.received) == 2 and webhook.taken == []


def test_an_unreachable_webhook_is_retried_and_never_fails_the_run(
    finished: Path, monkeypatch: pytest.MonkeyPatch, webhook: Webhook
) -> None:
    closed = Webhook()
    url = closed.url
    closed.close()  # nothing listens there any more: the connection is refused
    monkeypatch.setenv("SWEEP_SLACK_WEBHOOK", url)
    assert _submit(finished) == 0
    assert ledger.read(ledger.ledger_path(finished, "exact"), "exact").notified == {}
    monkeypatch.setenv("SWEEP_SLACK_WEBHOOK", webhook.url)
    assert _submit(finished) == 0
    assert len(webhook.taken) == 2


def test_no_webhook_no_lookups_no_records(finished: Path, webhook: Webhook) -> None:
    assert _submit(finished) == 0
    assert webhook.received == []
    assert ledger.read(ledger.ledger_path(finished, "exact"), "exact").notified == {}


def test_the_duplicate_check_and_the_notifications_read_one_look_after_the_creates(
    tmp_path: Path, webhook: Webhook, monkeypatch: pytest.MonkeyPatch, fake_beaker: FakeBeaker
) -> None:
    """A submit that creates and notifies lists the sweep twice: once before the creates (what
    to adopt) and once after, for both the duplicate check and the events (it was 3 times)."""
    monkeypatch.setenv("SWEEP_SLACK_WEBHOOK", webhook.url)
    write_manifest(tmp_path, "max_failures: 3\n" + SWEEP, "exact.yaml")
    fake_beaker.reset_calls()
    assert _submit(tmp_path) == 0
    assert len(fake_beaker.experiments()) == 6
    assert fake_beaker.calls["ListWorkloads"] == 1 + 2  # none yet (a page), then 6 (2 of 5)
    for exp in fake_beaker.experiments():
        fake_beaker.set_job_status(exp.id, "failed")
    assert _submit(tmp_path) == 0  # nothing to create: one look, which the stop and events read
    (failures,) = [t for t in webhook.taken if "failed:" in t]
    assert "6 point(s) failed" in failures


def _accuracy_sweep(objective: Aim | None) -> Observation:
    points = tuple(
        PointResult(
            "=",
            f"acc-{i}",
            f"k{i}",
            (("lr", i),),
            ExperimentState.SUCCEEDED,
            0,
            metrics={"accuracy": value},
        )
        for i, value in enumerate((0.91, 0.55, 0.73))
    )
    aims = Aims(() if objective is None else (objective,))
    return Observation(
        "acc", "sweeps/acc.yaml", False, ("lr",), points, search=Search(Grid(), aims)
    )


def test_the_best_point_of_a_maximized_metric_is_its_highest() -> None:
    """Review bug 2: the notice ranked every metric by its lowest value and called it best."""
    maximized = finished_text(_accuracy_sweep(Aim("accuracy", Goal.MAXIMIZE)))
    assert "Best by highest accuracy: `acc-0` (0.91)" in maximized
    minimized = finished_text(_accuracy_sweep(Aim("accuracy", Goal.MINIMIZE)))
    assert "Best by lowest accuracy: `acc-1` (0.55)" in minimized
    undeclared = finished_text(_accuracy_sweep(None))
    assert "Best" not in undeclared
    assert "Lowest accuracy: `acc-1` (0.55); highest accuracy: `acc-0` (0.91)" in undeclared


def test_a_sweep_s_objective_is_its_search_s_or_its_stop_when_s(tmp_path: Path) -> None:
    """`stop_when: {metric: accuracy, above: 0.95}` says higher is better."""
    text = SWEEP + "stop_when: {metric: accuracy, above: 0.95}\n"
    (plan,) = catalog.load(write_manifest(tmp_path, text, "exact.yaml").parent).plans()
    assert plan.sweep.search.aims.first == Aim("accuracy", Goal.MAXIMIZE)
    below = text.replace("above: 0.95", "below: 0.05")
    (plan,) = catalog.load(write_manifest(tmp_path, below, "exact.yaml").parent).plans()
    assert plan.sweep.search.aims.first == Aim("accuracy", Goal.MINIMIZE)


def test_a_point_that_breaks_a_constraint_is_never_the_notices_best() -> None:
    """acc-0 has the highest accuracy and breaks `accuracy <= 0.9` (issue 40)."""
    limit = Constraint("accuracy", Bound.AT_MOST, 0.9)
    space = (Distribution("lr", Kind.INT, (0, 9)),)
    sample = Sample(Method.TPE, 3, 0, 4, space, batch=3)
    aims = Aims((Aim("accuracy", Goal.MAXIMIZE),), (limit,))
    observed = dataclasses.replace(_accuracy_sweep(None), search=Search(Adaptive(sample), aims))
    assert "Best by highest accuracy: `acc-2` (0.73)" in finished_text(observed)


def test_a_timeout_is_told_as_a_failure_with_why_and_a_preempted_point_keeps_the_sweep_open(
    tmp_path: Path, fake_beaker: FakeBeaker, webhook: Webhook, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A preempted point the next submit resumes is neither a failure nor the end of its sweep;
    one that ran past its timeout is a failure, and the notice says why."""
    monkeypatch.setenv("SWEEP_SLACK_WEBHOOK", webhook.url)
    text = SWEEP.replace(
        "  clusters: [ai2/test-cluster]\n",
        "  clusters: [ai2/test-cluster]\n  timeout: 1h\n  auto_resume: false\n",
    )
    write_manifest(tmp_path, text, "exact.yaml")
    assert _submit(tmp_path) == 0
    slow, preempted, *rest = fake_beaker.experiments()
    for exp in fake_beaker.experiments():
        fake_beaker.set_job_status(exp.id, "running")
    fake_beaker.time_out(slow.id)
    fake_beaker.preempt(preempted.id)
    for exp in rest:
        fake_beaker.set_job_status(exp.id, "succeeded")
    assert _submit(tmp_path) == 0  # resumes the preempted point, then tells what is new
    (failures,) = [t for t in webhook.taken if "failed:" in t]
    assert f"`exact/{slow.name}` (timed out after its timeout of 1h00m)" in failures
    assert preempted.name not in failures
    assert not [t for t in webhook.taken if "finished" in t]  # one point runs again
    fake_beaker.set_job_status(preempted.id, "succeeded")
    assert _submit(tmp_path) == 0
    (done,) = [t for t in webhook.taken if "finished" in t]
    assert "finished: 5 succeeded, 0 failed, 1 canceled (1 timed-out)" in done
