"""`status` against the fake Beaker: every point of the manifest with its state, exit code and
metrics from the sweep's group, the plot and the best point; and its cost in calls."""

from __future__ import annotations

import csv
import io
import json
import shlex
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from beaker._service_client import ServiceClient

from runner.cli import main
from runner.core.retry import RetryPolicy
from runner.ledger.store import LedgerStore
from runner.plan import PlanStatus, catalog
from runner.report.progress import Progress
from runner.submit import Options, Submitter
from tests.charts import check_xychart, image_checks
from tests.conftest import PROJECT
from tests.fake_beaker.certs import CertBundle
from tests.fake_beaker.fixtures import serving
from tests.fake_beaker.server import FakeBeaker
from tests.helpers import SWEEP, write_manifest

MAX_PAGE_SIZE = ServiceClient.MAX_PAGE_SIZE
# The six-point sweep, then edited: lr 0.1 dropped (2 orphans), lr 0.0001 added (2 new points).
EDITED = SWEEP.replace("lr: [0.1, 0.01, 0.001]", "lr: [0.01, 0.001, 0.0001]")


def status_json(root: Path, capsys: pytest.CaptureFixture[str], *extra: str) -> Any:
    capsys.readouterr()
    assert main(["-C", str(root), "status", "--backend", "beaker", "--format", "json", *extra]) == 0
    return json.loads(capsys.readouterr().out)


@pytest.fixture
def finished(tmp_path: Path, fake_beaker: FakeBeaker) -> Path:
    """The sweep submitted (with its group), then edited; metrics and states set on the fake."""
    write_manifest(tmp_path, SWEEP, "exact.yaml")
    assert main(["-C", str(tmp_path), "submit", "--backend", "beaker"]) == 0
    for i, exp in enumerate(fake_beaker.experiments()):
        lr = json.loads(exp.spec_json)["tasks"][0]["command"][2].split("=")[1]
        if i == 1:
            fake_beaker.set_job_status(exp.id, "failed", exit_code=3)
        elif i == 2:
            fake_beaker.set_job_status(exp.id, "running")
        else:
            fake_beaker.set_job_status(exp.id, "succeeded")
            fake_beaker.set_metrics(exp.id, {"loss": 1.0 / (1 + i) + float(lr), "epoch": 3})
    write_manifest(tmp_path, EDITED, "exact.yaml")
    return tmp_path


def test_status_shows_every_point_in_manifest_order_with_metrics_from_the_group(
    finished: Path, fake_beaker: FakeBeaker, capsys: pytest.CaptureFixture[str]
) -> None:
    (plan,) = catalog.load(finished, []).plans()
    data = status_json(finished, capsys)
    (sweep,) = data["sweeps"]
    (group,) = fake_beaker.groups()
    assert sweep["group"] == {
        "name": "exact-rev0",
        "url": f"{fake_beaker.agent_address}/gr/{group.id}",
    }
    points = sweep["points"]
    assert [p["experiment"] for p in points] == [row.name for row in plan.rows]
    assert [p["status"] for p in points] == [
        "=",
        "=",
        "=",
        "=",
        PlanStatus.SUBMIT,
        PlanStatus.SUBMIT,
        PlanStatus.ORPHAN,
        PlanStatus.ORPHAN,
    ]
    by_name = {e.name: i for i, e in enumerate(fake_beaker.experiments())}
    for point in points:
        if point["status"] == PlanStatus.SUBMIT:
            assert (point["state"], point["exit_code"], point["metrics"]) == (
                "not submitted",
                None,
                {},
            )
            continue
        i = by_name[point["experiment"]]
        if i == 1:
            assert (point["state"], point["exit_code"]) == ("failed", 3)
            assert isinstance(point["seconds"], float)
        elif i == 2:
            assert (point["state"], point["exit_code"]) == ("running", None)
        else:
            lr = dict(point["params"])["lr"]
            assert (point["state"], point["exit_code"]) == ("succeeded", 0)
            assert point["metrics"] == {"epoch": 3, "loss": pytest.approx(1.0 / (1 + i) + lr)}
    assert set(group.experiment_ids) == {e.id for e in fake_beaker.experiments()}


def test_status_table_markdown_csv_plot_and_best_agree(
    finished: Path, fake_beaker: FakeBeaker, capsys: pytest.CaptureFixture[str]
) -> None:
    points = status_json(finished, capsys)["sweeps"][0]["points"]
    with_loss = [p for p in points if "loss" in p["metrics"]]
    assert main(["-C", str(finished), "status", "--backend", "beaker"]) == 0
    table = capsys.readouterr().out.splitlines()
    assert table[0].startswith("exact (sweeps/exact.yaml; group https://")
    assert table[1].split() == [
        "experiment",
        "state",
        "exit",
        "time",
        "params",
        "epoch",
        "loss",
        "url",
    ]
    rows = [line.split() for line in table if line[:1] in "+=~-" and line[4:10] == "exact-"]
    assert [row[0] for row in rows] == [p["status"] for p in points]
    assert [row[2:4] for row in rows if row[0] == PlanStatus.SUBMIT] == [["not", "submitted"]] * 2
    assert main(["-C", str(finished), "status", "--backend", "beaker", "--format", "csv"]) == 0
    records = list(csv.DictReader(io.StringIO(capsys.readouterr().out)))
    assert [r["experiment"] for r in records] == [p["experiment"] for p in points]
    assert {r["metric.loss"] for r in records if r["metric.loss"]} == {
        str(p["metrics"]["loss"]) for p in with_loss
    }
    argv = ["-C", str(finished), "status", "--backend", "beaker", "--format", "markdown"]
    assert main([*argv, "--plot", "loss", "--by", "lr"]) == 0
    markdown = capsys.readouterr().out
    assert "| =  | exact-" in markdown and "Group: [exact-rev0](https://" in markdown
    blocks = markdown.split("```mermaid\n")[1:]
    assert blocks, markdown
    for block in blocks:
        check_xychart(block.split("```", 1)[0])
    picture = finished / "loss.png"
    assert main([*argv[:-2], "--plot", "loss", "--by", "lr", "--output", str(picture)]) == 0
    image_checks(picture)
    best = min(with_loss, key=lambda p: p["metrics"]["loss"])
    data = status_json(finished, capsys, "--best", "loss", "--min")
    assert data["sweeps"][0]["best"]["experiment"] == best["experiment"]
    assert main([*argv[:-2], "--best", "loss", "--min"]) == 0
    assert capsys.readouterr().out.startswith(
        f"exact: best loss (min) = {best['metrics']['loss']:.4g} at {best['experiment']}"
    )


@pytest.fixture
def big_fake(
    fake_beaker_ca: CertBundle, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Iterator[FakeBeaker]:
    """A fake Beaker with 100-item pages, like Beaker's own page size."""
    with serving(fake_beaker_ca, tmp_path / "fake", monkeypatch, page_size=100) as fake:
        yield fake


THOUSAND = SWEEP.replace(
    "lr: [0.1, 0.01, 0.001]", f"lr: [{', '.join(str(i / 1000) for i in range(1, 101))}]"
).replace("seed: [1, 2]", "seed: [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]")


@pytest.mark.slow
def test_status_of_a_1000_point_sweep_costs_pages_not_points(
    tmp_path: Path, big_fake: FakeBeaker, capsys: pytest.CaptureFixture[str]
) -> None:
    write_manifest(tmp_path, THOUSAND, "exact.yaml")
    plans = catalog.load(tmp_path, []).plans()
    from runner.backends.beaker import BeakerBackend
    from runner.operate.membership import ensure_groups

    backend = BeakerBackend()
    options = Options(root=tmp_path, commit="c0ffee", concurrency=16, policy=RetryPolicy())
    Submitter(backend, options, Progress(io.StringIO(), io.StringIO(), live=False)).run(plans)
    (outcome,) = ensure_groups(backend, plans, LedgerStore(tmp_path))
    backend.close()
    assert outcome.group is not None and outcome.group.members == 1000
    experiments = big_fake.experiments()
    for i, exp in enumerate(experiments):
        big_fake.set_job_status(exp.id, "failed" if i % 250 == 0 else "succeeded")
        big_fake.set_metrics(exp.id, {"loss": i / 1000})
    big_fake.reset_calls()
    points = status_json(tmp_path, capsys)["sweeps"][0]["points"]
    calls = big_fake.calls
    print(f"status of 1000 points: {sum(calls.values())} calls: {dict(calls)}")
    assert len(points) == 1000 and all(p["metrics"] for p in points)
    assert sum(p["state"] == "failed" for p in points) == 4
    # One paged listing each of the workloads (20 pages: beaker-py asks for 50 at a time), the
    # groups and the group's task metrics (20 pages), a job listing per failed point (4), and the
    # workspace and organization look-ups (one per listing): never one call per point.
    pages = 1000 // MAX_PAGE_SIZE
    assert calls["ListWorkloads"] == calls["ListGroupTaskMetrics"] == pages
    assert calls["ListGroups"] == 1 and calls["ListJobs"] == 4
    assert sum(calls.values()) == 2 * pages + 1 + 4 + calls["ResolveOrganizationName"] + 2
    assert calls["ResolveOrganizationName"] <= 2 + 4


def test_the_scheduled_workflow_only_reads_and_writes_every_sweep_with_its_plot(
    finished: Path, fake_beaker: FakeBeaker, capsys: pytest.CaptureFixture[str]
) -> None:
    workflow = yaml.safe_load((PROJECT / ".github" / "workflows" / "status.yml").read_text())
    assert set(workflow[True]) == {"schedule", "workflow_dispatch"}  # YAML 1.1 reads `on` as True
    (job,) = workflow["jobs"].values()
    assert workflow["permissions"] == {} and job["permissions"] == {"contents": "read"}
    assert job["steps"][-1]["uses"] == "./.github/actions/status"  # its steps live in the action
    action = yaml.safe_load((PROJECT / ".github" / "actions" / "status" / "action.yml").read_text())
    (run,) = [
        s["run"] for s in action["runs"]["steps"] if "sweep-runner status" in s.get("run", "")
    ]
    command, summary = run.split(" >> ")
    assert summary == '"$GITHUB_STEP_SUMMARY"'
    argv = ["python", "-m", "runner", *shlex.split(command)[1:]]
    assert shlex.split(command)[:2] == ["sweep-runner", "status"]
    fake_beaker.reset_calls()
    capsys.readouterr()
    assert main(["-C", str(finished), *argv[3:]]) == 0
    out = capsys.readouterr().out
    assert out.startswith("## Sweep status\n\n### `exact`")
    blocks = [b.split("```", 1)[0] for b in out.split("```mermaid\n")[1:]]
    assert blocks
    for block in blocks:
        check_xychart(block)
        assert 'y-axis "epoch"' in block  # `auto`: the first metric, by name, that has numbers
    mutations = {"CreateGroup", "UpdateGroup", "CancelWorkloads", "RestartExperimentTasks"}
    assert not mutations & set(fake_beaker.calls) and "http:create" not in fake_beaker.calls
