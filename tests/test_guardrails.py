"""A sweep's own stops against the fake Beaker (runner/apply/guardrails.py): `max_failures` and
`stop_when` stop creating points, say why in the plan, `status` and the job summary, and never
cancel anything."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from runner.cli import main
from tests.fake_beaker.server import FakeBeaker
from tests.helpers import SWEEP, write_manifest

CAPPED = SWEEP + "max_running: 2\n"


def _submit(root: Path, capsys: pytest.CaptureFixture[str]) -> str:
    capsys.readouterr()
    assert main(["-C", str(root), "submit", "--backend", "beaker"]) == 0
    return capsys.readouterr().err


def _status(root: Path, capsys: pytest.CaptureFixture[str]) -> dict[str, object]:
    capsys.readouterr()
    assert main(["-C", str(root), "status", "--backend", "beaker", "--format", "json"]) == 0
    document = json.loads(capsys.readouterr().out)
    sweeps = document["sweeps"] if isinstance(document, dict) else document
    return dict(sweeps[0])


def test_max_failures_stops_new_points_without_canceling_and_a_raise_resumes(
    tmp_path: Path,
    fake_beaker: FakeBeaker,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    write_manifest(tmp_path, CAPPED + "max_failures: 2\n", "exact.yaml")
    _submit(tmp_path, capsys)
    first = fake_beaker.experiments()
    assert len(first) == 2
    for exp in first:
        fake_beaker.set_job_status(exp.id, "failed", exit_code=1)

    summary = tmp_path / "summary.md"
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    err = _submit(tmp_path, capsys)  # the cap has room for 2, the failure budget none
    assert len(fake_beaker.experiments()) == 2
    assert "exact: stopped: 2 failed (max_failures 2); no new points are created" in err
    assert "Plan: 4 to submit, 2 already submitted, 0 drifted, 0 orphaned" in err
    assert "; stopped: 2 failed (max_failures 2)" in err
    assert "`exact` stopped: 2 failed (max_failures 2)" in summary.read_text()
    assert all(fake_beaker.cancels(exp.id) == 0 for exp in first)
    assert "stopped: 2 failed (max_failures 2)" in str(_status(tmp_path, capsys)["note"])

    write_manifest(tmp_path, CAPPED + "max_failures: 3\n", "exact.yaml")  # a reviewed raise
    _submit(tmp_path, capsys)
    assert len(fake_beaker.experiments()) == 4


def test_stop_when_stops_once_a_finished_point_reaches_the_target_and_status_names_it(
    tmp_path: Path, fake_beaker: FakeBeaker, capsys: pytest.CaptureFixture[str]
) -> None:
    target = "stop_when: {metric: loss, below: 0.5}\n"
    write_manifest(tmp_path, CAPPED + target, "exact.yaml")
    _submit(tmp_path, capsys)
    first, second = fake_beaker.experiments()
    fake_beaker.set_job_status(first.id, "running")
    fake_beaker.set_metrics(first.id, {"loss": 0.1})  # not finished: does not count
    fake_beaker.set_job_status(second.id, "succeeded")
    fake_beaker.set_metrics(second.id, {"loss": 0.9})
    _submit(tmp_path, capsys)
    assert len(fake_beaker.experiments()) == 3  # one slot free, target not reached

    third = next(e for e in fake_beaker.experiments() if e.id not in (first.id, second.id))
    fake_beaker.set_job_status(third.id, "succeeded")
    fake_beaker.set_metrics(third.id, {"loss": 0.25})
    err = _submit(tmp_path, capsys)
    assert len(fake_beaker.experiments()) == 3
    assert f"stopped: {third.name} reached loss 0.25 (stop_when loss below 0.5)" in err
    assert fake_beaker.cancels(first.id) == 0
    note = str(_status(tmp_path, capsys)["note"])
    assert f"stopped: {third.name} reached loss 0.25" in note


def test_stop_when_above_stops_at_the_first_finished_point_over_the_value(
    tmp_path: Path, fake_beaker: FakeBeaker, capsys: pytest.CaptureFixture[str]
) -> None:
    write_manifest(tmp_path, CAPPED + "stop_when: {metric: acc, above: 0.8}\n", "exact.yaml")
    _submit(tmp_path, capsys)
    for exp in fake_beaker.experiments():
        fake_beaker.set_job_status(exp.id, "succeeded")
        fake_beaker.set_metrics(exp.id, {"acc": 0.5})
    _submit(tmp_path, capsys)
    assert len(fake_beaker.experiments()) == 4
    exp = fake_beaker.experiments()[-1]
    fake_beaker.set_job_status(exp.id, "succeeded")
    fake_beaker.set_metrics(exp.id, {"acc": 0.81})
    assert "reached acc 0.81 (stop_when acc above 0.8)" in _submit(tmp_path, capsys)
    assert len(fake_beaker.experiments()) == 4
