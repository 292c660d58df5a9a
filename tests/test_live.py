"""Live values: the `[sweep-metric]` reporting line, read from the tail of each running point's
log by `status --live` (or a sweep's `live: true`), against the wire fake; one read per running
point, nothing read without it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from runner.cli import main
from runner.observe.live import Reported, Skipped, parse, reports, scan
from tests.fake_beaker.server import FakeBeaker
from tests.helpers import SWEEP, write_manifest

LINES = [
    '2026-01-01T00:00:00Z rank 0: [sweep-metric] {"step": 100, "loss": 3.1}\n',
    "step 1200 of 5000, nothing to report here\n",
    '[sweep-metric] {"step": 1200, "loss": 2.31, "tokens_per_s": 9800}\n',
    '[sweep-metric] {"step": 1300, "loss": \n',  # cut mid-write: skipped
]


def test_a_reporting_line_may_follow_text_and_a_bad_one_is_skipped() -> None:
    assert parse('12:00:01 [rank 0] [sweep-metric] {"step": 3, "loss": 0.5}') == Reported(
        3, {"loss": 0.5}
    )
    assert parse('[sweep-metric]: {"step": 3, "acc": 1}  trailing words') == Reported(
        3, {"acc": 1.0}
    )
    for bad in [
        '[sweep-metric] {"step": 3, "loss": ',  # malformed JSON
        '[sweep-metric] {"step": 3.5, "loss": 1}',  # not an integer step
        '[sweep-metric] {"step": true, "loss": 1}',
        '[sweep-metric] {"loss": 1}',  # no step
        "[sweep-metric] [1, 2]",
        '{"step": 3, "loss": 1}',  # no marker
    ]:
        assert parse(bad) is None, bad
    # Values that are not finite numbers are left out; the step still counts.
    assert parse(
        '[sweep-metric] {"step": 4, "loss": NaN, "name": "x", "ok": true, "lr": 1e-3}'
    ) == (Reported(4, {"lr": 0.001}))
    assert [r.step for r in reports(LINES)] == [100, 1200]


def test_a_reporting_line_that_reports_nothing_is_counted_with_the_first_and_why() -> None:
    lines = [
        "[sweep-metric] {'step': 1, 'loss': 0.5}\n",  # a Python dict
        '[sweep-metric] {"step": 2.0, "loss": 0.4}\n',  # a float step
        '[sweep-metric] {"loss": 0.3}\n',  # no step
        '[sweep-metric] {"step": 4, "loss": 0.2}\n',
        "nothing to report\n",
    ]
    found = scan(lines)
    assert found.reported == (Reported(4, {"loss": 0.2}),)
    assert found.skipped == Skipped(
        3,
        "[sweep-metric] {'step': 1, 'loss': 0.5}",
        "not a JSON object (JSON quotes names with double quotes: not a Python dict)",
    )
    whys = [scan([line]).skipped for line in lines[1:3]]
    assert [w.why for w in whys if w] == ['"step" is 2.0, not an integer', 'no "step"']
    assert scan(lines[3:]).skipped is None  # a log that reports well skips nothing
    # A last line without its newline may still be being written: not counted (yet).
    assert scan([*lines[3:], '[sweep-metric] {"step": 5, "lo']).skipped is None


def _status(root: Path, capsys: pytest.CaptureFixture[str], *extra: str) -> Any:
    capsys.readouterr()
    argv = ["-C", str(root), "status", "--backend", "beaker", "--format", "json", *extra]
    assert main(argv) == 0
    return json.loads(capsys.readouterr().out)["sweeps"][0]["points"]


@pytest.fixture
def running(tmp_path: Path, fake_beaker: FakeBeaker) -> Path:
    """The six-point sweep on the fake: three running (with reports, without, with only a
    malformed one), one succeeded with reports, two still queued."""
    write_manifest(tmp_path, SWEEP, "exact.yaml")
    assert main(["-C", str(tmp_path), "submit", "--backend", "beaker"]) == 0
    exps = fake_beaker.experiments()
    for exp in exps[:3]:
        fake_beaker.set_job_status(exp.id, "running")
    fake_beaker.set_logs(exps[0].id, LINES)
    fake_beaker.set_logs(exps[1].id, ["loading data\n", "compiling\n"])
    fake_beaker.set_logs(exps[2].id, ['[sweep-metric] {"step": 7, "loss": nope}\n'])
    fake_beaker.set_job_status(exps[3].id, "succeeded")
    fake_beaker.set_logs(exps[3].id, LINES[:1])
    return tmp_path


def test_status_live_gives_each_running_point_its_last_report_in_one_read_each(
    running: Path, fake_beaker: FakeBeaker, capsys: pytest.CaptureFixture[str]
) -> None:
    exps = {e.name: i for i, e in enumerate(fake_beaker.experiments())}
    fake_beaker.reset_calls()
    _status(running, capsys)
    plain = fake_beaker.calls
    fake_beaker.reset_calls()
    points = _status(running, capsys, "--live")
    # The running points, and only them: per point one job listing (its replica's job) and one
    # bounded log stream; the experiments are not listed again (the look already did).
    assert fake_beaker.calls - plain == {"ListJobs": 3, "StreamJobLogs": 3}
    live = {exps[p["experiment"]]: p["live"] for p in points}
    assert live == {
        0: {"step": 1200, "values": {"loss": 2.31, "tokens_per_s": 9800.0}},
        1: None,  # no reporting line: none, and no error
        2: None,  # only a malformed one: skipped
        3: None,  # finished: its values are its metrics
        4: None,
        5: None,
    }
    capsys.readouterr()
    assert main(["-C", str(running), "status", "--backend", "beaker", "--live"]) == 0
    out = capsys.readouterr()
    assert "step 1 200 · loss 2.31 · tokens_per_s 9800" in out.out
    assert "error" not in out.err
    assert main(["-C", str(running), "status", "--backend", "beaker", "--live"]) == 0


def test_status_live_counts_each_points_reporting_lines_that_report_nothing(
    running: Path, fake_beaker: FakeBeaker, capsys: pytest.CaptureFixture[str]
) -> None:
    exps = {e.name: i for i, e in enumerate(fake_beaker.experiments())}
    capsys.readouterr()
    argv = ["-C", str(running), "status", "--backend", "beaker", "--live", "--format", "json"]
    assert main(argv) == 0
    (sweep,) = json.loads(capsys.readouterr().out)["sweeps"]
    skipped = {exps[p["experiment"]]: p["skipped_lines"] for p in sweep["points"]}
    json_why = "not a JSON object (JSON quotes names with double quotes: not a Python dict)"
    assert skipped == {
        0: {"count": 1, "first": '[sweep-metric] {"step": 1300, "loss":', "why": json_why},
        1: None,  # reports nothing at all: nothing skipped either
        2: {"count": 1, "first": '[sweep-metric] {"step": 7, "loss": nope}', "why": json_why},
        3: None,  # finished: not read by status
        4: None,
        5: None,
    }
    first = fake_beaker.experiments()[0].name
    assert sweep["note"].startswith(
        "2 reporting line(s) skipped in 2 point(s), [sweep-metric] lines that report nothing:"
        f' the first, in {first}: `[sweep-metric] {{"step": 1300, "loss":`'
    )
    assert main(argv[:-2]) == 0
    assert "note: 2 reporting line(s) skipped in 2 point(s)" in capsys.readouterr().out


def test_status_reads_no_log_without_live_and_a_live_sweep_needs_no_flag(
    running: Path, fake_beaker: FakeBeaker, capsys: pytest.CaptureFixture[str]
) -> None:
    fake_beaker.reset_calls()
    plain = _status(running, capsys)
    assert "StreamJobLogs" not in fake_beaker.calls and "ListJobs" not in fake_beaker.calls
    assert all(p["live"] is None for p in plain)
    manifest = running / "sweeps" / "exact.yaml"
    manifest.write_text(manifest.read_text().replace("name: exact\n", "name: exact\nlive: true\n"))
    fake_beaker.reset_calls()
    points = _status(running, capsys)
    assert fake_beaker.calls["StreamJobLogs"] == 3
    assert [p["live"]["step"] for p in points if p["live"]] == [1200]
    markdown = ["-C", str(running), "status", "--backend", "beaker", "--format", "markdown"]
    capsys.readouterr()
    assert main(markdown) == 0
    assert "| step 1 200 · loss 2.31 · tokens_per_s 9800 |" in capsys.readouterr().out


def test_a_live_read_is_bounded_to_the_logs_last_lines(
    running: Path,
    fake_beaker: FakeBeaker,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr("runner.observe.tails.TAIL_LINES", 5)
    first = fake_beaker.experiments()[0]
    fake_beaker.append_logs(first.id, [f"line {i}\n" for i in range(5)])
    points = _status(running, capsys, "--live")
    assert all(p["live"] is None for p in points)  # its reports are before the last 5 lines
    fake_beaker.append_logs(first.id, ['[sweep-metric] {"step": 1400, "loss": 2.2}\n'])
    points = _status(running, capsys, "--live")
    assert [p["live"] for p in points if p["live"]] == [{"step": 1400, "values": {"loss": 2.2}}]
