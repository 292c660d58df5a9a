"""`params.fidelity` (successive halving) as the manifest sees it: the rungs' values, rung 0 in
the space, the promoted points read from the lock's `rungs` (a grid's lock holds only those;
a lock without them reads as before), keys by rung, `{parent}` and SWEEP_PARENT_KEY in a
promoted point's spec, and the plan's GPU-hours by rung. The refusals of `validate` are corpus
files (tests/corpus/fidelity-*.yaml)."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from runner.cli import main
from runner.core.locked import RungLock
from runner.core.model import Point
from runner.core.sample import Sample
from runner.core.space import iter_points
from runner.manifest import Loaded, load
from runner.manifest.fidelity import (
    RUNGS,
    rung_values,
    rungs_json,
)
from runner.manifest.lock import lock_path, lock_text, parse_lock
from runner.plan import catalog, cost
from runner.render.shape import PARENT_KEY
from tests.conftest import PROJECT
from tests.helpers import halving, promote, write_manifest

SHOWN = "sweeps/halving.yaml"


def _loaded(root: Path) -> Loaded:
    return load(root / SHOWN, SHOWN)


def _promote(root: Path, *chosen: tuple[int, int]) -> str:
    """Write the lock `propose` would write promoting rung 0's configurations `chosen`
    ((rung, index of the configuration in rung 0)); its text."""
    return promote(root, SHOWN, chosen)


def _env(spec: Mapping[str, Any]) -> dict[str, str]:
    (task,) = spec["tasks"]
    return {v["name"]: v.get("value", "") for v in task["envVars"]}


def test_rung_k_runs_at_min_times_eta_to_the_k_and_the_last_at_max() -> None:
    assert rung_values(100, 2700, 3) == (100, 300, 900, 2700)
    assert rung_values(100, 2000, 3) == (100, 300, 900, 2000)  # the last rung at max
    assert rung_values(1, 10, 2) == (1, 2, 4, 8, 10)
    assert rung_values(0.1, 0.9, 3) == (0.1, 0.3, 0.9)  # 0.1 · 3, kept readable
    assert rung_values(5, 5, 2) == (5,)  # one rung: no halving at all


def test_rung_0_is_every_configuration_at_min_and_later_rungs_keep_its_keys(
    tmp_path: Path,
) -> None:
    write_manifest(tmp_path, halving(), "halving.yaml")
    loaded = _loaded(tmp_path)
    zero = list(iter_points(loaded.sweep.space))
    assert len(zero) == 9
    assert {(p.as_dict()["steps"], p.as_dict()["rung"]) for p in zero} == {(100, 0)}
    keys = [loaded.renderer.render(p).key for p in zero]

    _promote(tmp_path, (1, 4), (1, 0), (1, 8), (2, 4))
    after = _loaded(tmp_path)
    points = list(iter_points(after.sweep.space))
    assert [after.renderer.render(p).key for p in points[:9]] == keys  # rung 0 unchanged
    assert [p.as_dict()["rung"] for p in points[9:]] == [1, 1, 1, 2]
    assert [p.as_dict()["steps"] for p in points[9:]] == [300, 300, 300, 900]
    same = [p for p in points if (p.as_dict()["lr"], p.as_dict()["wd"]) == (0.01, 0.1)]
    assert [p.as_dict()["rung"] for p in same] == [0, 1, 2]  # one configuration, three points
    assert len({after.renderer.render(p).key for p in same}) == 3


def test_a_promoted_point_resumes_its_parent_and_rung_0_starts_from_scratch(
    tmp_path: Path,
) -> None:
    text = halving().replace("params:", 'experiment_name: "{sweep}-r{rung}-lr{lr}"\nparams:')
    write_manifest(tmp_path, text, "halving.yaml")
    _promote(tmp_path, (1, 4), (2, 4))
    loaded = _loaded(tmp_path)
    by_rung = {
        p.as_dict()["rung"]: loaded.renderer.render(p)
        for p in iter_points(loaded.sweep.space)
        if (p.as_dict()["lr"], p.as_dict()["wd"]) == (0.01, 0.1)
    }
    zero, one, two = by_rung[0], by_rung[1], by_rung[2]
    assert PARENT_KEY not in _env(zero.spec)
    assert not any(str(a).startswith("--resume") for a in zero.spec["tasks"][0]["command"])
    for child, parent in ((one, zero), (two, one)):
        assert _env(child.spec)[PARENT_KEY] == parent.key
        assert f"--resume={parent.name}" in child.spec["tasks"][0]["command"]
    assert one.name.startswith("halving-r1-lr0.01-") and "--resume=halving-r0-lr0.01-" in str(
        one.spec
    )


def test_a_lock_without_rungs_reads_and_writes_as_before_and_rungs_are_covered_by_its_digest(
    tmp_path: Path,
) -> None:
    committed = (PROJECT / "sweeps" / "branin.lock.json").read_text(encoding="utf-8")
    names = ("x1", "x2")
    found = parse_lock(committed, names)
    assert found is not None and found.rungs is None
    sample = load(PROJECT / "sweeps" / "branin.yaml", "sweeps/branin.yaml").sweep.search.sample
    assert isinstance(sample, Sample)
    command = "python -m runner propose sweeps/branin.yaml"
    assert lock_text(sample, found.rows, command, found.rounds) == committed  # byte for byte

    rungs = RungLock("ab" * 32, names, ((1, found.rows[0]),))
    with_rungs = lock_text(sample, found.rows, command, found.rounds, {RUNGS: rungs_json(rungs)})
    assert parse_lock(with_rungs, names) == type(found)(
        found.sample, found.rows, found.rounds, rungs
    )
    edited = with_rungs.replace("[1, [3.232", "[2, [3.232")
    assert edited != with_rungs and parse_lock(edited, names) is None


def test_rungs_of_another_fidelity_section_or_a_hand_edit_are_refused_and_propose_mends_them(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write_manifest(tmp_path, halving(draft=True), "halving.yaml")
    text = _promote(tmp_path, (1, 4), (1, 0), (1, 8))
    assert main(["-C", str(tmp_path), "validate"]) == 0
    capsys.readouterr()
    stale = "sweeps/halving.yaml:16:3: params.fidelity: the lock's rungs are out of date"
    manifest = tmp_path / SHOWN
    manifest.write_text(manifest.read_text().replace("eta: 3", "eta: 2"))
    assert main(["-C", str(tmp_path), "validate"]) == 1
    err = capsys.readouterr().err
    assert err.startswith(stale) and "run python -m runner propose sweeps/halving.yaml" in err

    assert main(["-C", str(tmp_path), "propose", "--backend", "local"]) == 0
    assert "dropped them; the halving starts again from rung 0" in capsys.readouterr().err
    reset = lock_path(manifest).read_text()
    assert json.loads(reset)["rungs"]["points"] == []  # rung 0 again, its rungs to come
    assert main(["-C", str(tmp_path), "validate"]) == 0
    assert main(["-C", str(tmp_path), "propose", "--backend", "local"]) == 0
    assert "rung 0 has 0 of 9 point(s) ended" in capsys.readouterr().err
    assert lock_path(manifest).read_text() == reset  # nothing new: no byte changed
    capsys.readouterr()

    manifest.write_text(manifest.read_text().replace("eta: 2", "eta: 3"))
    lock_path(manifest).write_text(text.replace('"points": [\n      [1,', '"points": [\n      [2,'))
    assert main(["-C", str(tmp_path), "validate"]) == 1  # edited by hand: its digest says so
    assert capsys.readouterr().err.startswith(stale)
    assert main(["-C", str(tmp_path), "propose", "--backend", "local"]) == 0  # mends it too
    assert "dropped them; the halving starts again from rung 0" in capsys.readouterr().err
    assert json.loads(lock_path(manifest).read_text())["rungs"]["points"] == []
    assert main(["-C", str(tmp_path), "validate"]) == 0


def test_an_include_joins_rung_0(tmp_path: Path) -> None:
    text = halving() + "  include:\n    - {lr: 0.5, wd: 0.5}\n"
    write_manifest(tmp_path, text, "halving.yaml")
    points = list(iter_points(_loaded(tmp_path).sweep.space))
    assert points[-1] == Point(
        (("lr", 0.5), ("wd", 0.5), ("steps", 100), ("rung", 0)), "include[0]"
    )


def test_a_rung_point_runs_and_costs_its_share_of_the_full_length_and_the_plan_shows_each_rung(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write_manifest(tmp_path, halving(), "halving.yaml")
    _promote(tmp_path, (1, 4), (1, 0), (1, 8))
    (plan,) = catalog.load(tmp_path, ()).plans()
    costs = cost.plan_cost(plan)
    by_rung = {r.params[-1][1]: costs.rows[r.key].expected for r in plan.rows}
    assert by_rung == pytest.approx({0: 2.0, 1: 6.0})  # 100 and 300 of 900 steps × 18
    halved = cost.halving_cost(plan)
    assert halved is not None
    rungs = [(r.rung, r.cost.points, round(r.cost.expected, 6), r.projected) for r in halved.rungs]
    assert rungs == [(0, 9, 18.0, False), (1, 3, 18.0, False), (2, 1, 18.0, True)]
    assert halved.full.expected == pytest.approx(162.0)  # 9 configurations × 18

    assert main(["-C", str(tmp_path), "expand", "--plan"]) == 0
    assert (
        "Successive halving, GPU-hours expected: rung 0 (steps=100, timeout 1h00m): 9 point(s),"
        " 18; rung 1 (steps=300, timeout 3h00m): 3 point(s), 18; rung 2 (steps=900, timeout"
        " 9h00m, projected): 1 point(s), 18. The whole search: 54, 33% of the full grid's 162"
        " (9 configuration(s) at steps=900)."
    ) in capsys.readouterr().out
    assert main(["-C", str(tmp_path), "expand", "--plan", "--format", "markdown"]) == 0
    assert "The whole search: 54, 33% of the full grid's 162" in capsys.readouterr().out  # comment
    assert main(["-C", str(tmp_path), "expand", "--plan", "--format", "json"]) == 0
    document = json.loads(capsys.readouterr().out)["sweeps"][0]["halving"]
    assert [r["expected"] for r in document["rungs"]] == [18.0, 18.0, 18.0]
    assert [r["timeout_seconds"] for r in document["rungs"]] == [3600, 3 * 3600, 9 * 3600]
    assert document["full"]["expected"] == 162.0
