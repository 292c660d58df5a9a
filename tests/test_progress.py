"""The submit's progress on stderr: a local run says when each point starts, and the count
shows the points running as well as those done."""

from __future__ import annotations

import io
from pathlib import Path

from runner.backends import Experiment
from runner.plan import catalog
from runner.report.progress import Progress
from runner.submit import Outcome, OutcomeStatus
from tests.helpers import minimal


def _outcomes(root: Path) -> list[Outcome]:
    minimal(root)
    (plan,) = catalog.load(root, []).plans()
    points = [row.rendered for row in plan.rows if row.rendered is not None]
    return [
        Outcome("demo", p, OutcomeStatus.CREATED, Experiment(p.name, p.name, "file://x", p.key))
        for p in points
    ]


def test_a_log_says_when_each_point_starts_with_the_running_count(tmp_path: Path) -> None:
    first, second = _outcomes(tmp_path)
    err = io.StringIO()
    progress = Progress(io.StringIO(), err, live=False)
    progress.start(2)
    progress.started(first)
    progress.started(second)
    progress.done(first)
    progress.started(second)  # said twice (a resumed run): counted once
    assert err.getvalue().splitlines() == [
        "submitting 2 experiment(s)",
        f"[0/2 done, 1 running] started {first.point.name}",
        f"[0/2 done, 2 running] started {second.point.name}",
        f"[1/2] created {first.point.name}: file://x",
        f"[1/2 done, 1 running] started {second.point.name}",
    ]


def test_the_live_line_counts_done_and_running_points(tmp_path: Path) -> None:
    first, _ = _outcomes(tmp_path)
    err = io.StringIO()
    progress = Progress(io.StringIO(), err, live=True)
    progress.start(2)
    progress.started(first)
    assert err.getvalue().endswith("] 0/2 done, 1 running")
    progress.done(first)
    assert err.getvalue().endswith("] 1/2 done: created 1")
