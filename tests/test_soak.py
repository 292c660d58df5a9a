"""The preemption soak (`tests/soak.py`): 2 000 points under `max_running: 64`, driven by the
scheduled submit every 15 virtual minutes, 10 % of them preempted (a quarter of those twice, a
fifth resumed by Beaker itself) and 1 % lost to a node failure: no point has two experiments,
none is lost, never more than 64 are queued or running, every point ends succeeded, and each
resume is counted once, by its cause, in the ledger (never as a restart)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.soak import soak


@pytest.mark.slow
def test_two_thousand_points_on_a_preempting_cluster_all_end_succeeded_exactly_once(
    tmp_path: Path,
) -> None:
    figures = soak(tmp_path, points=2000, max_running=64)
    print(
        f"\nsoak: {figures.points} points, max_running {figures.max_running}:"
        f" {figures.ticks} scheduled submits, {figures.runs} runs,"
        f" preempted {figures.events['preempt']} (resumed by the runner) +"
        f" {figures.events['resumed']} (by Beaker), {figures.events['node']} lost nodes;"
        f" restarts by the runner {figures.resumed}, most live {figures.most_live},"
        f" {figures.seconds:.1f} s"
    )
    assert (figures.duplicates, figures.lost) == (0, 0)
    assert figures.most_live == 64  # the cap is used, and never passed (checked every tick)
    assert figures.events == {"preempt": 200, "resumed": 50, "node": 20}
    # Each preemption Beaker did not resume, and each lost node, resumed exactly once.
    assert figures.resumed == figures.events["preempt"] + figures.events["node"]
    assert figures.runs == figures.points + sum(figures.events.values())
    # The ledger counts every one (Beaker's own resumes once the point has ended), apart from
    # restarts: `max_restarts: 0` and `max_failures: 1` were never spent.
    assert figures.ledger_preemptions == sum(figures.events.values())
    assert figures.ledger_restarts == 0
