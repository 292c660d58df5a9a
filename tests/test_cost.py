"""GPU-hours in every plan (runner/plan/cost.py, and as text runner/report/cost.py): per point,
per sweep, per merge; table, comment, JSON."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from runner.plan import SweepPlan, cost
from runner.plan.catalog import load
from runner.report import cost as priced
from runner.report import plan as report
from tests.helpers import write_manifest

DPO = """\
version: 1
name: dpo
beaker:
  workspace: ai2/sweeps-test
  budget: ai2/sweeps-budget
  clusters: [ai2/test-cluster]
  timeout: 48h
  expected_runtime: 20h
tasks:
  - name: train
    image: {beaker: org/dpo}
    command: [python, dpo.py, "--beta={beta}"]
    replicas: "{nodes}"
    resources: {gpus: 8}
params:
  grid:
    beta: [0.1]
    nodes: [2, 4]
"""
MULTI = """\
version: 1
name: multi
beaker:
  workspace: ai2/sweeps-test
  budget: ai2/sweeps-budget
  clusters: [ai2/test-cluster]
  timeout: 1h30m
tasks:
  - name: learner
    image: {beaker: org/learner}
    command: [python, learn.py]
    replicas: 2
    resources: {gpus: "{gpus}"}
  - name: actor
    image: {docker: org/actor}
    command: [python, act.py]
    resources: {gpus: 1}
  - name: judge
    image: {beaker: org/judge}
    command: [python, judge.py]
params:
  grid:
    gpus: [2, 4]
"""


def _plans(root: Path, *texts: str) -> list[SweepPlan]:
    for i, text in enumerate(texts):
        write_manifest(root, text, f"s{i}.yaml")
    return load(root).plans()


def test_replicas_and_gpus_driven_by_parameters_count_at_each_point(tmp_path: Path) -> None:
    (plan,) = _plans(tmp_path, DPO)
    costs = cost.plan_cost(plan)
    by_nodes = {dict(r.params)["nodes"]: costs.rows[r.key] for r in plan.rows}
    assert (by_nodes[2].gpus, by_nodes[2].up_to, by_nodes[2].expected) == (16, 768, 320)
    assert (by_nodes[4].gpus, by_nodes[4].up_to, by_nodes[4].expected) == (32, 1536, 640)
    assert by_nodes[4].resources == "8 GPU × 4 nodes" and by_nodes[4].image == "org/dpo"
    assert (costs.total.up_to, costs.total.expected, costs.total.points) == (2304, 960, 2)


def test_every_task_counts_replicas_times_gpus_and_cpu_tasks_nothing(tmp_path: Path) -> None:
    (plan,) = _plans(tmp_path, MULTI)
    costs = cost.plan_cost(plan)
    # 1.5 h x (2 replicas x {gpus} + 1 actor GPU); no expected_runtime: expected = up to.
    ups = sorted((c.up_to, c.expected, c.gpus) for c in costs.rows.values())
    assert ups == [(7.5, 7.5, 5), (13.5, 13.5, 9)]
    first = next(iter(costs.rows.values()))
    assert first.resources.endswith("+ 1 GPU + CPU") and "org/actor" in first.image


def test_a_gpu_task_without_timeout_is_unbounded_and_said_loudly(tmp_path: Path) -> None:
    (plan,) = _plans(tmp_path, DPO.replace("  timeout: 48h\n", ""))
    total = cost.plan_cost(plan).total
    assert total.unbounded == 2 and priced.up_to_text(total) == "unbounded"
    text = report.markdown([plan])
    assert "**This merge has no upper bound on GPU-hours: 2 point(s) have GPUs and no" in text
    assert "UNBOUNDED: 2 point(s) with GPUs and no timeout" in report.table([plan])
    assert json.loads(report.as_json([plan]))["gpu_hours"]["up_to"] is None


def test_the_comment_headline_sums_the_merge_and_leaves_drafts_out(tmp_path: Path) -> None:
    draft = MULTI.replace("name: multi", "name: multi\ndraft: true")
    plans = _plans(tmp_path, DPO, draft)
    text = report.markdown(plans)
    assert "This merge may use up to **2 304** GPU-hours; expected 960." in text
    assert "| 8 GPU × 2 nodes (org/dpo) | 768" in text
    assert "GPU-hours of the 2 point(s) to submit: up to 2 304, expected 960" in text


def test_the_json_plan_carries_each_point_and_the_totals(tmp_path: Path) -> None:
    plans = _plans(tmp_path, DPO)
    document = json.loads(report.as_json(plans))
    assert document["gpu_hours"] == {
        "up_to": 2304,
        "expected": 960,
        "gpus": 32,
        "unbounded": 0,
        "points": 2,
    }
    points = document["sweeps"][0]["points"]
    assert {p["cost"]["resources"] for p in points} == {"8 GPU × 2 nodes", "8 GPU × 4 nodes"}


def test_submitted_points_cost_nothing_more(tmp_path: Path) -> None:
    from runner import ledger
    from runner.core.keys import SPEC_HASH_VERSION

    (plan,) = _plans(tmp_path, DPO)
    first = plan.rows[0]
    assert first.rendered is not None
    entry = ledger.Entry(
        key=first.key,
        experiment=first.name,
        url="u",
        id="01",
        spec_hash=first.rendered.spec_hash,
        submitted_at="2025-01-01T00:00:00Z",
        commit="c",
        params=dict(first.params),
        hash_version=SPEC_HASH_VERSION,
    )
    ledger.record(ledger.ledger_path(tmp_path, "dpo"), "dpo", [entry])
    (again,) = load(tmp_path).plans()
    assert cost.plan_cost(again).total.up_to == 1536
    assert "This merge may use up to **1 536** GPU-hours; expected 640." in report.markdown([again])


def test_a_cpu_sweep_shows_no_cost_columns(tmp_path: Path) -> None:
    plans = _plans(tmp_path, DPO.replace("    resources: {gpus: 8}\n", ""))
    assert "GPU" not in report.table(plans) and "GPU" not in report.markdown(plans)


@pytest.mark.parametrize(
    ("hours", "text"), [(2304, "2 304"), (0.5, "0.5"), (7.0, "7"), (1e6, "1 000 000")]
)
def test_numbers_read_as_the_issue_writes_them(hours: float, text: str) -> None:
    assert cost.number(hours) == text


def test_the_planner_sums_and_the_report_writes_the_sums() -> None:
    """The text of a cost is report's (runner/report/cost.py); the planner keeps the arithmetic
    and `number`, which its budget problems write hours with."""
    spent = cost.Cost(2304.0, 960.0, 8, points=3, resources="8 GPU", image="org/image")
    assert priced.headline(spent) == "This merge may use up to **2 304** GPU-hours; expected 960."
    assert priced.sweep_line(spent) == (
        "GPU-hours of the 3 point(s) to submit: up to 2 304, expected 960"
    )
    assert priced.row_cells(spent) == ["8 GPU (org/image)", "2 304"]
    assert priced.point_json(None) is None
    text = ("up_to_text", "headline", "sweep_line", "row_cells", "as_json")
    assert [name for name in text if hasattr(cost, name)] == []
