"""A successive halving that resumes for real: `params.fidelity.checkpoint` names where each
point writes its checkpoint and where a promoted point finds its parent's; the example trainers
refuse to start over when told to resume from a checkpoint that is not there (one line, exit
66); `status` names a promoted point whose parent left no checkpoint (seen on this machine, or
said by its failed run's log, on Beaker too)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from runner import manifest
from runner.cli import main
from runner.core.errors import Exit
from runner.core.space import iter_points
from runner.examples import checkpoints
from runner.observe import live
from tests.conftest import PROJECT
from tests.fake_beaker.server import FakeBeaker
from tests.helpers import head, promote, write_manifest

MISSING = "/weka/bucket/ckpt/halving-0a1b2c3d4e5f"


def _trainer(module: str, *argv: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", f"runner.examples.{module}", *argv],
        env={**os.environ, **env},
        capture_output=True,
        text=True,
        cwd=PROJECT,
        timeout=60,
    )


@pytest.mark.parametrize(
    ("module", "argv"),
    [("objectives", ["curve", "--steps", "300"]), ("toy_trainer", ["--steps", "300"])],
)
def test_a_trainer_told_to_resume_from_a_missing_checkpoint_fails_in_one_line_naming_it(
    tmp_path: Path, module: str, argv: list[str]
) -> None:
    """It used to start over from step 0 (a promoted point retrained at full cost, and looked
    like a success)."""
    told = {"SWEEP_PARENT_KEY": "k" * 64, "RESULTS_DIR": str(tmp_path / "results")}
    done = _trainer(module, *argv, env={**told, "SWEEP_PARENT_CHECKPOINT": MISSING})
    assert done.returncode == checkpoints.NO_INPUT == 66
    assert done.stderr.splitlines() == [
        f"[sweep-checkpoint-missing] {MISSING}: told to resume (SWEEP_PARENT_KEY is set) from"
        " this checkpoint, and there is none: not starting over"
    ]
    assert not (tmp_path / "results" / "metrics.json").exists()  # nothing trained
    none = _trainer(module, *argv, env=told)  # told to resume, and no checkpoint named
    assert none.returncode == 66 and none.stderr.startswith("[sweep-checkpoint-missing] (none")


@pytest.mark.parametrize(
    ("module", "argv", "resumed"),
    [
        ("objectives", ["curve", "--steps", "300"], {"resumed_from": 100.0, "steps_run": 200.0}),
        ("toy_trainer", ["--steps", "300"], {"resumed_from": 100}),
    ],
)
def test_a_trainer_writes_its_checkpoint_where_told_and_resumes_it(
    tmp_path: Path, module: str, argv: list[str], resumed: dict[str, float]
) -> None:
    first = [a.replace("300", "100") for a in argv]
    saved = tmp_path / "parent"
    done = _trainer(
        module, *first, env={"SWEEP_CHECKPOINT": str(saved), "RESULTS_DIR": str(tmp_path / "r0")}
    )
    assert done.returncode == 0 and (saved / "checkpoint.json").is_file()
    results = tmp_path / "results"
    env = {"SWEEP_PARENT_KEY": "k", "SWEEP_PARENT_CHECKPOINT": str(saved)}
    done = _trainer(module, *argv, env={**env, "RESULTS_DIR": str(results)})
    assert done.returncode == 0, done.stderr
    metrics = json.loads((results / "metrics.json").read_text())
    assert {k: metrics[k] for k in resumed} == resumed


def test_the_trainers_line_is_the_one_status_reads() -> None:
    assert checkpoints.MISSING == live.CHECKPOINT_MISSING
    line = f"{checkpoints.MISSING} {MISSING}: told to resume (SWEEP_PARENT_KEY is set) ...\n"
    assert live.scan(["loading\n", line]).missing == MISSING


# -- the manifest ---------------------------------------------------------------------------

GRID = """\
    command: [python, train.py, "--lr={lr}", "--steps={steps}", "--load={parent_checkpoint}"]
    env: {SAVE_TO: "{checkpoint}"}
params:
  grid:
    lr: [0.1, 0.01, 0.001]
  fidelity:
    param: steps
    min: 100
    max: 900
    eta: 3
    metric: loss
    checkpoint: CHECKPOINT
"""


def _halving(checkpoint: str, name: str = "resumes") -> str:
    return head(name) + GRID.replace("CHECKPOINT", checkpoint)


@pytest.mark.parametrize(
    ("written", "said"),
    [
        ("ckpt/{experiment}", "'ckpt/{experiment}' is not an absolute path without spaces"),
        ("/ckpt/../{experiment}", "'/ckpt/../{experiment}' is not an absolute path"),
        ("/ckpt/{sweep}", "'/ckpt/{sweep}' does not name {experiment}: each point writes its own"),
        ("/ckpt/{experiment}/{wd}", "template names unknown parameter 'wd' (known: experiment,"),
    ],
)
def test_a_checkpoint_path_that_cannot_key_each_points_own_is_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], written: str, said: str
) -> None:
    path = write_manifest(tmp_path, _halving(written), "resumes.yaml")
    assert main(["-C", str(tmp_path), "validate"]) == Exit.USER_ERROR
    (line,) = [x for x in capsys.readouterr().err.splitlines() if x.strip()]
    at = next(n for n, t in enumerate(path.read_text().splitlines(), 1) if "checkpoint:" in t)
    assert (
        line.startswith(f"sweeps/resumes.yaml:{at}:") and ": params.fidelity.checkpoint: " in line
    )
    assert said in line


def test_each_point_gets_its_own_checkpoint_and_a_promoted_one_its_parents(tmp_path: Path) -> None:
    write_manifest(tmp_path, _halving("/weka/b/{sweep}/{experiment}"), "resumes.yaml")
    promote(tmp_path, "sweeps/resumes.yaml", [(1, 0)])
    loaded = manifest.load(tmp_path / "sweeps" / "resumes.yaml", "sweeps/resumes.yaml")
    rendered = [loaded.renderer.render(p) for p in iter_points(loaded.sweep.space)]
    names = {r.key: r.name for r in rendered}
    for point in rendered:
        (task,) = point.spec["tasks"]
        env = {v["name"]: v["value"] for v in task["envVars"]}
        assert env["SWEEP_CHECKPOINT"] == f"/weka/b/resumes/{point.name}"
        assert env["SAVE_TO"] == env["SWEEP_CHECKPOINT"]  # {checkpoint}: the same path
        if dict(point.params)["rung"] == 0:
            assert "SWEEP_PARENT_CHECKPOINT" not in env
            assert not any(a.startswith("--load") for a in task["command"])  # left out
            continue
        parent = names[env["SWEEP_PARENT_KEY"]]
        assert env["SWEEP_PARENT_CHECKPOINT"] == f"/weka/b/resumes/{parent}"
        assert f"--load=/weka/b/resumes/{parent}" in task["command"]


# -- status: a promoted point whose parent left no checkpoint -------------------------------

SMALL = (
    (PROJECT / "sweeps" / "halving.yaml")
    .read_text()
    .replace("x2: [0.1, 0.5, 0.9]", "x2: [0.5]")
    .replace("x3: [0.1, 0.5, 0.9]", "x3: [0.5]")
)
"""The committed halving at 3 configurations: rungs of 3, 1, 1 and 1 points."""


def _status(root: Path, capsys: pytest.CaptureFixture[str], backend: str) -> Any:
    capsys.readouterr()
    argv = ["-C", str(root), "status", "--backend", backend, "--format", "json"]
    assert main(argv) == 0
    (sweep,) = json.loads(capsys.readouterr().out)["sweeps"]
    return sweep


@pytest.mark.slow
def test_status_names_a_promoted_point_whose_parent_left_no_checkpoint_here(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write_manifest(tmp_path, SMALL, "halving.yaml")
    assert main(["-C", str(tmp_path), "submit", "--backend", "local"]) == 0
    assert main(["-C", str(tmp_path), "propose", "--backend", "local"]) == 0  # rung 1
    sweep = _status(tmp_path, capsys, "local")
    assert "without their parent's checkpoint" not in sweep["note"]  # each parent wrote one
    (promoted,) = [p for p in sweep["points"] if p["params"]["rung"] == 1]
    kept = tmp_path / ".runs" / "halving" / "checkpoints"
    saved = kept / "weka/oe-training-default/sweep-checkpoints/halving" / promoted_parent(sweep)
    shutil.rmtree(saved)  # the parent's checkpoint is gone (cleaned, or never written)
    where = f"/weka/oe-training-default/sweep-checkpoints/halving/{promoted_parent(sweep)}"
    sweep = _status(tmp_path, capsys, "local")
    assert (
        "1 promoted point(s) without their parent's checkpoint where params.fidelity.checkpoint"
        f" says: {promoted['experiment']} ({promoted_parent(sweep)} left nothing at {where})"
    ) in sweep["note"]
    assert (
        main(["-C", str(tmp_path), "submit", "--backend", "local"]) == Exit.RUNS_FAILED
    )  # it refuses to start over
    sweep = _status(tmp_path, capsys, "local")
    (ran,) = [p for p in sweep["points"] if p["params"]["rung"] == 1]
    assert (ran["state"], ran["exit_code"], ran["metrics"]) == ("failed", 66, {})
    # The trainer names where it looked: on this machine, where the path is kept here.
    assert f"{promoted['experiment']} (failed: no checkpoint at {saved})" in sweep["note"]


def promoted_parent(sweep: dict[str, Any]) -> str:
    (promoted,) = [p for p in sweep["points"] if p["params"]["rung"] == 1]
    parent: str = promoted["parent"]
    return parent


def test_status_on_beaker_names_a_promoted_point_that_failed_saying_its_checkpoint_is_missing(
    tmp_path: Path, fake_beaker: FakeBeaker, capsys: pytest.CaptureFixture[str]
) -> None:
    """Beaker's storage is not read: the failed run's own line says it, from one bounded read
    of its log (the running and succeeded points cost no read)."""
    write_manifest(tmp_path, _halving("/weka/b/{sweep}/{experiment}"), "resumes.yaml")
    promote(tmp_path, "sweeps/resumes.yaml", [(1, 0)])
    assert main(["-C", str(tmp_path), "submit", "--backend", "beaker"]) == 0
    by_rung: dict[int, list[Any]] = {}
    for exp in fake_beaker.experiments():
        rung = json.loads(exp.spec_json)["tasks"][0]["envVars"]
        by_rung.setdefault(int("SWEEP_PARENT_KEY" in {v["name"] for v in rung}), []).append(exp)
    (promoted,) = by_rung[1]
    for exp in by_rung[0]:
        fake_beaker.set_job_status(exp.id, "succeeded")
    parent = next(
        v["value"]
        for v in json.loads(promoted.spec_json)["tasks"][0]["envVars"]
        if v["name"] == "SWEEP_PARENT_CHECKPOINT"
    )
    fake_beaker.set_job_status(promoted.id, "failed", exit_code=66)
    line = f"[sweep-checkpoint-missing] {parent}: told to resume (SWEEP_PARENT_KEY is set) ...\n"
    fake_beaker.set_logs(promoted.id, ["loading\n", line])
    fake_beaker.reset_calls()
    sweep = _status(tmp_path, capsys, "beaker")
    assert fake_beaker.calls["StreamJobLogs"] == 1  # the failed promoted point's log alone
    assert (
        "1 promoted point(s) without their parent's checkpoint where params.fidelity.checkpoint"
        f" says: {promoted.name} (failed: no checkpoint at {parent})"
    ) in sweep["note"]
