"""The price is read from what Beaker enforces (issue 46): every point's up-to GPU-hours, in the
plan, its JSON and a halving's rungs, are what its rendered spec lets Beaker spend, for every
example and documented manifest, a successive halving's at each rung; and the budget policy
judges a halving's points as it judges a grid of the same specs."""

from __future__ import annotations

import json
import math
import re
import shutil
from collections.abc import Callable, Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from runner.cli import main
from runner.core.ladder import MIN_TIMEOUT, Ladder
from runner.manifest.lock import lock_path
from runner.manifest.schema import SWEEP_SCHEMA, schema_document
from runner.plan import PlanStatus, Row, SweepPlan, budget, catalog, cost, policy
from runner.render.durations import to_nanoseconds
from tests.conftest import PROJECT
from tests.fake_beaker.server import FakeBeaker
from tests.helpers import DOC_BLOCKS, halving, head, is_manifest, promote, ready, write_manifest

SECOND = 10**9
"""A spec's timeout counts nanoseconds."""
EXAMPLES = sorted((PROJECT / "sweeps").glob("*.yaml"))
DOCUMENTED = [(page, index, text) for page, index, text in DOC_BLOCKS if is_manifest(text)]
VARIED = (
    head("varied", draft=True).replace("  clusters:", "  timeout: 6h\n  clusters:", 1)
    + """\
    command: [python, train.py, "--lr={lr}", "--steps={steps}"]
    replicas: "{nodes}"
    resources: {gpus: "{gpus}"}
params:
  grid:
    lr: [0.1, 0.01]
    gpus: [1, 8]
    nodes: [1, 2]
  fidelity: {param: steps, min: 10, max: 1000, eta: 2, metric: loss, min_timeout: 7m30s}
"""
)
"""A halving whose points differ in GPUs and nodes, whose short rungs the floor lifts (6 h at
10 / 1 000 steps is 216 s, under 7m30s), over 7 rungs (10, 20, 40, ..., 640, 1 000)."""


def spec_gpu_hours(spec: Mapping[str, Any]) -> float:
    """What a spec lets Beaker spend: each GPU task's gpuCount × replicas × timeout (infinite
    when a GPU task has none), read from the spec's JSON alone."""
    hours = 0.0
    for task in spec["tasks"]:
        gpus = task.get("resources", {}).get("gpuCount", 0)
        if not gpus:
            continue
        if "timeout" not in task:
            return math.inf
        hours += gpus * task.get("replicas", 1) * task["timeout"] / (3600 * 10**9)
    return hours


def _spec(row: Row) -> Mapping[str, Any]:
    """The spec a row's point would be submitted with, parsed from its JSON text."""
    assert row.rendered is not None
    spec: Mapping[str, Any] = json.loads(row.rendered.spec_json)
    return spec


def up_to(spent: cost.Cost) -> float:
    return math.inf if spent.unbounded else spent.up_to


def _plan(root: Path) -> SweepPlan:
    (plan,) = catalog.load(root, ()).plans()
    return plan


def _check_every_point(root: Path, capsys: pytest.CaptureFixture[str]) -> SweepPlan:
    """Each point's up-to figure (the plan's, its JSON's, the sweep's total) is its spec's."""
    plan = _plan(root)
    specs = {r.key: json.loads(r.rendered.spec_json) for r in plan.rows if r.rendered}
    assert specs and all(r.pending for r in plan.rows)  # nothing submitted: every row is priced
    priced = cost.plan_cost(plan)
    for key, spec in specs.items():
        assert up_to(priced.rows[key]) == pytest.approx(spec_gpu_hours(spec)), key
    assert up_to(priced.total) == pytest.approx(sum(map(spec_gpu_hours, specs.values())))
    capsys.readouterr()
    assert main(["-C", str(root), "expand", "--plan", "--format", "json"]) == 0
    (shown,) = json.loads(capsys.readouterr().out)["sweeps"]
    for point in shown["points"]:
        figure = point["cost"]["up_to"] if point["cost"]["gpus"] else 0.0
        expected = spec_gpu_hours(specs[point["key"]])
        assert (math.inf if figure is None else figure) == pytest.approx(expected, abs=1e-3)
    return plan


def _check_rungs(root: Path, shown: str, capsys: pytest.CaptureFixture[str]) -> None:
    """A halving promoted rung by rung: at each, every point is priced from its spec, the
    rungs proposed are their points' specs, and the rung projected next is what its points'
    specs let Beaker spend once promoted (the costliest configurations, as many as it holds)."""
    plan = _check_every_point(root, capsys)
    ladder = plan.sweep.space.ladder
    assert ladder is not None
    configurations = [r for r in plan.rows if ladder.rung(dict(r.params)) == 0]
    sizes = ladder.sizes(len(configurations))
    chosen: list[tuple[int, int]] = []
    projected: cost.Cost | None = None
    for rung in range(len(ladder.values)):
        if rung:
            # the costliest configurations go on, as the projection assumed
            dearest = sorted(
                range(len(configurations)),
                key=lambda i: -spec_gpu_hours(_spec(configurations[i])),
            )
            chosen += [(rung, i) for i in sorted(dearest[: sizes[rung]])]
            promote(root, shown, chosen)
            plan = _check_every_point(root, capsys)
        halving = cost.halving_cost(plan)
        assert halving is not None
        known = [r for r in plan.rows if ladder.rung(dict(r.params)) == rung]
        hours = sum(spec_gpu_hours(_spec(r)) for r in known)
        here = halving.rungs[rung]
        assert not here.projected and here.cost.points == len(known) == sizes[rung]
        assert up_to(here.cost) == pytest.approx(hours)
        if projected is not None:
            assert up_to(projected) == pytest.approx(hours)
        assert {_spec(r)["tasks"][0].get("timeout") for r in known} == {here.timeout}
        projected = halving.rungs[rung + 1].cost if rung + 1 < len(ladder.values) else None
    last = [r for r in plan.rows if ladder.rung(dict(r.params)) == len(ladder.values) - 1]
    full_length = {_spec(r)["tasks"][0].get("timeout") for r in last}
    written = plan.sweep.placement.timeout
    assert full_length == {None if written is None else to_nanoseconds(written)}


def _manifests() -> list[Any]:
    cases = [
        pytest.param(p.read_text(encoding="utf-8"), p, id=f"sweeps/{p.name}") for p in EXAMPLES
    ]
    cases += [
        pytest.param(text, None, id=f"{page.relative_to(PROJECT)}-{index}")
        for page, index, text in DOCUMENTED
    ]
    return [*cases, pytest.param(VARIED, None, id="varied-halving")]


@pytest.mark.parametrize(("text", "example"), _manifests())
def test_every_points_up_to_figure_is_what_its_spec_lets_beaker_spend(
    text: str,
    example: Path | None,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    request: pytest.FixtureRequest,
) -> None:
    fake: Callable[[], FakeBeaker] = lambda: request.getfixturevalue("fake_beaker")  # noqa: E731
    if example is None:
        path = ready(tmp_path, text, fake)
    else:  # as committed, with its lock
        path = write_manifest(tmp_path, text, example.name)
        if lock_path(example).exists():
            shutil.copy(lock_path(example), lock_path(path))
    shown = path.relative_to(tmp_path).as_posix()
    if "fidelity" in text:
        _check_rungs(tmp_path, shown, capsys)
    else:
        _check_every_point(tmp_path, capsys)


def test_the_cases_hold_halvings_of_the_docs_and_the_examples_and_bounded_ones() -> None:
    """The property above is not vacuous: it meets halvings and points with a timeout."""
    halvings = [p.id for p in _manifests() if "fidelity" in p.values[0]]
    assert {"sweeps/halving.yaml", "docs/search.md-6", "varied-halving"} <= set(halvings)
    assert sum("timeout:" in p.values[0] for p in _manifests()) >= 10


# -- the reviewer's reproduction: the same points as a grid and as a halving ----------------------

DPO_HALVING = next(t for _, _, t in DOCUMENTED if "name: dpo-halving" in t)


def _as_submitted(text: str) -> str:
    """The docs' dpo-halving with 3 configurations (lr), submitted on merge (not a draft)."""
    text = text.replace("draft: true\n", "").replace(
        "  clusters: [ai2/jupiter]\n", "  budget: ai2/olmo\n  clusters: [ai2/jupiter]\n"
    )
    return text.replace(
        "wd: [0.0, 0.01, 0.1], warmup: [100, 500, 1000]", "wd: [0.0], warmup: [100]"
    )


def _halving(min_timeout: str | None) -> str:
    text = _as_submitted(DPO_HALVING)
    if min_timeout is None:
        return text
    halved = text.replace(
        "    goal: minimize\n", f"    goal: minimize\n    min_timeout: {min_timeout}\n"
    )
    assert halved != text
    return halved


def _grid(timeout: str) -> str:
    """The same three configurations at rung 0's budget, as a grid whose timeout is `timeout`."""
    text = _as_submitted(DPO_HALVING).replace("  timeout: 8h ", f"  timeout: {timeout} ")
    text = re.sub(
        r',\s*"--save_folder=\{checkpoint\}", "--load_path=\{parent_checkpoint\}"', "", text
    )
    text = text[: text.index("  fidelity:")]  # the section is the manifest's last
    return text.replace("warmup: [100]}", "warmup: [100], steps: [100]}")


def _judged(root: Path, text: str, limit: float) -> tuple[list[str], list[float]]:
    """The breaches of max_gpu_hours_per_sweep `limit`, and each point's spec GPU-hours."""
    shutil.rmtree(root / "sweeps", ignore_errors=True)
    write_manifest(root, text, "dpo.yaml")
    plan = _plan(root)
    rules = policy.parse(f"version: 1\nmax_gpu_hours_per_sweep: {limit}\n")
    found = [b.problem.message for b in budget.breaches([plan], rules)]
    return found, [spec_gpu_hours(r.rendered.spec) for r in plan.rows if r.rendered]


@pytest.mark.parametrize(
    ("min_timeout", "rung_timeout"),
    [(None, "1067s"), ("20m", "20m"), ("2h", "2h")],
    ids=["default floor", "a floor that lifts rung 0", "a floor of hours"],
)
@pytest.mark.parametrize("over", [True, False], ids=["over the limit", "within it"])
def test_a_breach_is_caught_for_the_same_points_as_a_grid_and_as_a_halving(
    tmp_path: Path, min_timeout: str | None, rung_timeout: str, over: bool
) -> None:
    """Rung 0 of 3 configurations × 8 GPUs: its specs let Beaker spend 3 × 8 × the rung's
    timeout (8 h × 100 / 2 700 = 1 067 s, or the floor above it); a grid of the same three
    points with that timeout is judged alike, over a limit just under it and within one just
    above it."""
    spent = 3 * 8 * to_nanoseconds(rung_timeout) / (3600 * SECOND)
    limit = round(spent - 0.5 if over else spent + 0.5, 1)
    halved, halved_hours = _judged(tmp_path, _halving(min_timeout), limit)
    grid, grid_hours = _judged(tmp_path, _grid(rung_timeout), limit)
    assert halved_hours == pytest.approx([spent / 3] * 3)
    assert grid_hours == pytest.approx(halved_hours)
    assert bool(halved) == bool(grid) == over
    assert halved == grid  # the same message: "sweep dpo-halving may use 7.1 GPU-hours, over…"


def test_the_reviewers_reproduction_says_what_beaker_enforces(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Issue 46: the docs' dpo-halving with 3 configurations, 8 GPUs, `timeout: 8h` and a
    policy of 50 GPU-hours said "up to 7.1 … within the policy" while each rung-0 spec let
    Beaker spend 8 h (192 GPU-hours for the three). Now the spec carries the 7.1."""
    write_manifest(tmp_path, _halving(None), "dpo.yaml")
    (tmp_path / "sweeps" / "policy.yaml").write_text("version: 1\nmax_gpu_hours_per_sweep: 50\n")
    out = tmp_path / "comment.md"
    assert main(["-C", str(tmp_path), "plan-comment", "--output", str(out)]) == 0
    comment = out.read_text(encoding="utf-8")
    assert "may use up to **7.1** GPU-hours" in comment and "within the policy" in comment
    plan = _plan(tmp_path)
    timeouts = {t["timeout"] for r in plan.rows if r.rendered for t in r.rendered.spec["tasks"]}
    assert timeouts == {1067 * SECOND}  # 8 h × 100 / 2 700, rounded up to whole seconds
    assert sum(spec_gpu_hours(r.rendered.spec) for r in plan.rows if r.rendered) == pytest.approx(
        7.1, abs=0.05
    )
    (tmp_path / "sweeps" / "dpo.yaml").write_text(_grid("8h"), encoding="utf-8")
    assert main(["-C", str(tmp_path), "plan-comment", "--output", str(out)]) == 1
    assert "may use 192 GPU-hours, over max_gpu_hours_per_sweep 50" in out.read_text()


# -- the rung's timeout ---------------------------------------------------------------------------

HOUR = 3600 * SECOND


def test_a_rungs_timeout_is_its_share_rounded_up_to_seconds_at_least_the_floor_at_most_the_full() -> (
    None
):
    ladder = Ladder("steps", (100, 300, 900, 2700), 3)  # the default floor, 10m
    assert [ladder.timeout(8 * HOUR, k) // SECOND for k in range(4)] == [1067, 3200, 9600, 28800]
    assert [ladder.timeout(HOUR, k) // SECOND for k in range(4)] == [600, 600, 1200, 3600]
    hours = replace(ladder, min_timeout=2 * HOUR)
    assert [hours.timeout(8 * HOUR, k) // SECOND for k in range(4)] == [7200, 7200, 9600, 28800]
    assert [hours.timeout(HOUR, k) for k in range(4)] == [HOUR] * 4  # never above the full
    # budgets as written: 0.3 of 0.9 is a third (as floats, 0.3 / 0.9 would give 3 h and 1 s)
    epochs = Ladder("epochs", (0.1, 0.3, 0.9), 3, min_timeout=0)
    assert [epochs.timeout(9 * HOUR, k) for k in range(3)] == [HOUR, 3 * HOUR, 9 * HOUR]
    # the last rung keeps the timeout as written, even one of no whole seconds
    assert ladder.timeout(to_nanoseconds("90.5s"), 3) == to_nanoseconds("90.5s")
    assert ladder.timeout(to_nanoseconds("90.5s"), 0) == to_nanoseconds("90.5s")  # floor, capped


def _floor(root: Path) -> int:
    ladder = _plan(root).sweep.space.ladder
    assert ladder is not None
    return ladder.min_timeout


def test_the_default_floor_is_the_one_the_schema_documents(tmp_path: Path) -> None:
    assert to_nanoseconds("10m") == MIN_TIMEOUT
    (fidelity,) = [
        node["properties"]["min_timeout"]["description"]
        for node in schema_document(SWEEP_SCHEMA)["$defs"].values()
        if "min_timeout" in node.get("properties", {})
    ]
    assert "(default '10m')" in fidelity
    write_manifest(tmp_path, halving(), "halving.yaml")
    assert _floor(tmp_path) == MIN_TIMEOUT
    write_manifest(
        tmp_path,
        halving().replace("metric: loss}", "metric: loss, min_timeout: 1h30m}"),
        "halving.yaml",
    )
    assert _floor(tmp_path) == 90 * 60 * SECOND


def test_a_changed_rung_timeout_drifts_the_submitted_points_and_runs_nothing_again(
    tmp_path: Path, fake_beaker: FakeBeaker, capsys: pytest.CaptureFixture[str]
) -> None:
    """Rung 0 of a 1 h sweep at 100 of 900 steps runs 400 s, lifted to the 10m floor; a floor
    of 5m gives it 400 s: each submitted point shows `~` with the timeout's change, and a
    submit creates nothing (as for any edit of a spec: bump `revision` to run them again)."""
    write_manifest(tmp_path, halving(timeout="1h"), "halving.yaml")
    assert main(["-C", str(tmp_path), "submit", "--backend", "beaker"]) == 0
    assert len(fake_beaker.experiments()) == 9
    edited = halving(timeout="1h").replace("metric: loss}", "metric: loss, min_timeout: 5m}")
    write_manifest(tmp_path, edited, "halving.yaml")
    plan = _plan(tmp_path)
    assert {r.status for r in plan.rows} == {PlanStatus.DRIFTED} and not plan.to_submit
    changes = {str(c) for r in plan.rows for c in r.changes}
    assert changes == {"~ tasks[0].timeout: 600000000000 -> 400000000000"}
    capsys.readouterr()
    assert main(["-C", str(tmp_path), "submit", "--backend", "beaker"]) == 0
    assert len(fake_beaker.experiments()) == 9


def test_a_halving_without_timeout_is_unbounded_at_every_rung_and_the_plan_says_so(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    text = halving().replace("  timeout: 9h\n", "  expected_runtime: 9h\n")
    write_manifest(
        tmp_path, text.replace("metric: loss}", "metric: loss, min_timeout: 1h}"), "h.yaml"
    )
    plan = _plan(tmp_path)
    assert all("timeout" not in r.rendered.spec["tasks"][0] for r in plan.rows if r.rendered)
    assert all(c.unbounded for c in cost.plan_cost(plan).rows.values())
    capsys.readouterr()
    assert main(["-C", str(tmp_path), "expand", "--plan"]) == 0
    out = capsys.readouterr().out
    assert "rung 0 (steps=100): 9 point(s), 18;" in out  # expected: 9 × 2 GPUs × 100 / 900 of 9 h
    assert (
        "No rung has a timeout (no beaker.timeout): each may run, and spend, without bound." in out
    )
    assert "UNBOUNDED: 9 point(s) with GPUs and no timeout" in out
