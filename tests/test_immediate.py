"""`priority: immediate` (beaker-py 2.8's level above urgent) end to end: the policy may gate it
and allot it, the plan counts it, beaker-py's types carry it, and a create on the fake Beaker
runs at it; the workloads the allocation counts read it back."""

from __future__ import annotations

from pathlib import Path

from beaker import BeakerJobPriority
from beaker import beaker_pb2 as pb2

from runner.backends.beaker import BeakerBackend, to_beaker_spec
from runner.core.model import Priority
from runner.plan import SweepPlan, allocation, budget, catalog, policy
from tests.fake_beaker import FakeBeaker
from tests.helpers import SWEEP, write_manifest

IMMEDIATE = SWEEP.replace(
    "  clusters: [ai2/test-cluster]\n",
    "  clusters: [ai2/test-cluster]\n  priority: immediate\n  timeout: 1h\n",
).replace(
    'command: [python, train.py, "--lr={lr}", "--seed={seed}"]',
    'command: [python, train.py, "--lr={lr}", "--seed={seed}"]\n    resources: {gpus: 8}',
)
assert "priority: immediate" in IMMEDIATE and "gpus: 8" in IMMEDIATE
POLICY = """\
version: 1
approval_priorities: [urgent, immediate]
priority_allocation:
  ai2/test-cluster: {immediate: 16}
"""


def _plan(root: Path, policy_text: str | None = None) -> SweepPlan:
    write_manifest(root, IMMEDIATE, "now.yaml")
    if policy_text is not None:
        write_manifest(root, policy_text, "policy.yaml")
    (plan,) = catalog.load(root, []).plans()
    return plan


def test_a_policy_gates_and_allots_immediate_work(tmp_path: Path) -> None:
    plan = _plan(tmp_path, POLICY)
    rules = policy.read(tmp_path)  # `immediate` is a priority the policy may name
    assert plan.sweep.placement.priority == Priority.IMMEDIATE
    messages = [b.problem.message for b in budget.breaches([plan], rules)]
    assert messages == ["priority immediate needs approval (sweeps/policy.yaml)"]
    slot = ("ai2/test-cluster", Priority.IMMEDIATE)
    assert allocation.counted(plan, rules.priority_allocation) == [slot]
    # 6 points of 8 GPUs against 16 immediate GPUs, 8 held by someone already: one fits.
    held = allocation.allot([plan], rules.priority_allocation, {slot: 8})
    (now,) = held.plans
    assert sum(1 for row in now.rows if row.to_submit) == 1


def test_a_create_runs_at_immediate_and_its_workload_is_counted_at_it(
    tmp_path: Path, fake_beaker: FakeBeaker
) -> None:
    plan = _plan(tmp_path)
    point = plan.rows[0].rendered
    assert point is not None and point.spec["tasks"][0]["context"]["priority"] == "immediate"
    typed = to_beaker_spec(point.spec)
    assert typed.tasks[0].context is not None
    assert typed.tasks[0].context.priority is BeakerJobPriority.immediate

    backend = BeakerBackend()
    try:
        made = backend.create(plan.sweep, point)
        (live,) = backend.placing.live_workloads("ai2/sweeps-test")
    finally:
        backend.close()
    (task,) = fake_beaker.experiment(made.id).spec["tasks"]
    assert task["context"]["priority"] == "immediate"  # posted as rendered
    assert (live.priority, live.clusters, live.gpus) == (
        Priority.IMMEDIATE,
        ("ai2/test-cluster",),
        8,
    )
    assert pb2.JobPriority.Name(pb2.JobPriority.JOB_PRIORITY_IMMEDIATE) == "JOB_PRIORITY_IMMEDIATE"
