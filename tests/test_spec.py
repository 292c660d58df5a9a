from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from runner.backends.beaker.conversion import (
    ShapeProofs,
    SpecMismatch,
    shape_of,
    to_beaker_spec,
)
from runner.cli import main
from runner.core.errors import ManifestError
from runner.core.keys import spec_hash
from runner.core.values import canonical_json
from runner.plan import render_sweep
from tests.conftest import PROJECT
from tests.helpers import MINIMAL, load, minimal

EXAMPLES = sorted((PROJECT / "sweeps").glob("*.yaml"))
GOLDEN = PROJECT / "tests" / "golden"


def _rendered_json(path: Path) -> str:
    sweep = load(PROJECT, path)
    points = [
        {"name": r.name, "key": r.key, "spec_hash": r.spec_hash, "spec": r.spec}
        for r in render_sweep(sweep)
    ]
    return json.dumps(points, indent=2, sort_keys=True, ensure_ascii=False) + "\n"


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.stem)
def test_examples_match_golden_specs(path: Path) -> None:
    golden = GOLDEN / f"{path.stem}.json"
    actual = _rendered_json(path)
    if os.environ.get("UPDATE_GOLDEN"):
        golden.parent.mkdir(exist_ok=True)
        golden.write_text(actual, encoding="utf-8")
    assert actual == golden.read_text(encoding="utf-8"), (
        f"rendering changed; UPDATE_GOLDEN=1 rewrites {golden}"
    )


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.stem)
def test_every_example_point_round_trips_through_beaker_types(path: Path) -> None:
    from beaker import BeakerExperimentSpec

    for rendered in render_sweep(load(PROJECT, path)):
        posted = json.loads(rendered.spec_json)  # the text a create POSTs
        # beaker-py's own parse, not ours: this holds even if to_beaker_spec stopped checking
        assert BeakerExperimentSpec.from_json(json.loads(rendered.spec_json)).to_json() == posted
        spec = to_beaker_spec(rendered.spec)
        assert spec.to_json() == posted and spec.tasks[0].context is not None


def test_a_field_beaker_py_would_drop_is_refused_not_posted() -> None:
    rendered = render_sweep(load(PROJECT, EXAMPLES[0]))[0]
    lossy = {**rendered.spec, "tasks": [{**rendered.spec["tasks"][0], "gpuType": "h100"}]}
    with pytest.raises(SpecMismatch, match="does not round-trip"):
        to_beaker_spec(lossy)
    proofs = ShapeProofs()
    with pytest.raises(SpecMismatch):
        proofs.check(lossy)
    assert len(proofs) == 0


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.stem)
def test_the_round_trip_is_proven_once_per_shape_not_per_point(path: Path) -> None:
    points = render_sweep(load(PROJECT, path))
    proofs = ShapeProofs()
    for rendered in points:
        proofs.check(rendered.spec)
    shapes = {shape_of(rendered.spec) for rendered in points}
    assert len(proofs) == len(shapes) <= len(points)


@pytest.mark.slow
def test_rendering_is_byte_identical_across_processes() -> None:
    path = EXAMPLES[0]
    code = f"from tests.test_spec import _rendered_json; from pathlib import Path; print(_rendered_json(Path({str(path)!r})), end='')"
    outputs = {
        subprocess.run(
            [sys.executable, "-c", code],
            cwd=PROJECT,
            env={**os.environ, "PYTHONHASHSEED": seed},
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        for seed in ("1", "2", "3")
    }
    assert len(outputs) == 1


def _scaling() -> list[dict[str, Any]]:
    sweep = load(PROJECT, PROJECT / "sweeps" / "torchrun-scaling.yaml")
    return [dict(r.spec) for r in render_sweep(sweep)]


def test_multinode_points_get_gantry_defaults_and_single_node_points_do_not() -> None:
    by_nodes = {}
    for spec in _scaling():
        task = spec["tasks"][0]
        by_nodes[task.get("replicas", 1)] = task
    multi = by_nodes[4]
    assert multi["leaderSelection"] and multi["hostNetworking"]
    assert multi["propagateFailure"] and multi["propagatePreemption"]
    assert multi["synchronizedStartTimeout"] == 10 * 60 * 10**9  # the manifest overrides 5m
    single = by_nodes[1]
    assert "replicas" not in single and single["hostNetworking"] is False
    assert "propagateFailure" not in single


def _two_node(tmp_path: Path, launcher: str, multinode: str = "") -> dict[str, Any]:
    lines = f"\n    launcher: {launcher}\n    resources: {{gpus: 8}}\n    replicas: 2" + multinode
    body = MINIMAL.format(name="nodes").replace('arguments: ["--lr={lr}"]', "") + ""
    body = body.replace("command: [python, train.py]", "command: [train.py]" + lines)
    spec = render_sweep(load(tmp_path, minimal(tmp_path, "nodes", body=body)))[0].spec
    task: dict[str, Any] = spec["tasks"][0]
    return task


@pytest.mark.parametrize("launcher", ["torchrun", "accelerate"])
def test_multinode_defaults_follow_gantry_for_torchrun_and_mason_for_accelerate(
    tmp_path: Path, launcher: str
) -> None:
    task = _two_node(tmp_path, launcher)
    assert task["replicas"] == 2
    assert task["leaderSelection"] and task["hostNetworking"]
    assert task["propagateFailure"] and task["propagatePreemption"]
    if launcher == "torchrun":  # gantry's --torchrun --replicas: a 5-minute synchronized start
        assert task["synchronizedStartTimeout"] == 5 * 60 * 10**9
    else:  # mason sends none, so neither does accelerate unless asked
        assert "synchronizedStartTimeout" not in task
    asked = _two_node(tmp_path, launcher, "\n    multinode: {synchronized_start_timeout: 2m}")
    assert asked["synchronizedStartTimeout"] == 2 * 60 * 10**9


def test_tasks_see_parameters_sweep_key_and_experiment_name(tmp_path: Path) -> None:
    sweep = load(tmp_path, minimal(tmp_path, extra='  derived:\n    run: "r-{lr}"\n'))
    first = render_sweep(sweep)[0]
    env = {e["name"]: e.get("value") for e in first.spec["tasks"][0]["envVars"]}
    assert env["SWEEP_NAME"] == "demo"
    assert env["SWEEP_POINT_KEY"] == first.key
    assert env["SWEEP_EXPERIMENT"] == first.name
    assert env["SWEEP_PARAM_LR"] == "0.1"
    assert env["SWEEP_PARAM_RUN"] == "r-0.1"
    assert json.loads(env["SWEEP_PARAMS"]) == {"lr": 0.1, "run": "r-0.1"}
    assert first.spec["tasks"][0]["arguments"] == ["--lr=0.1"]
    assert f"[sweep-key {first.key}]" in first.spec["description"]
    assert "sweeps/demo.yaml" in first.spec["description"]


def test_secrets_are_referenced_by_name_only(tmp_path: Path) -> None:
    body = (PROJECT / "sweeps" / "dpo-open-instruct.yaml").read_text()
    sweep = load(PROJECT, PROJECT / "sweeps" / "dpo-open-instruct.yaml")
    assert "hf-token" in body
    env = render_sweep(sweep)[0].spec["tasks"][0]["envVars"]
    assert {"name": "HF_TOKEN", "secret": "hf-token"} in env
    assert {"name": "WANDB_API_KEY", "secret": "wandb-api-key"} in env


def test_template_that_renders_a_non_integer_replica_count_names_the_line_and_point(
    tmp_path: Path,
) -> None:
    path = minimal(
        tmp_path,
        name="bad",
        body="""\
version: 1
name: bad
beaker: {workspace: ai2/x, budget: ai2/b, clusters: [ai2/c]}
tasks:
  - image: {beaker: org/image}
    command: [run]
    replicas: "{nodes}"
params:
  grid:
    nodes: [2, two]
""",
    )
    with pytest.raises(ManifestError) as info:
        render_sweep(load(tmp_path, path))
    assert str(info.value) == (
        "sweeps/bad.yaml:7:15: tasks[0].replicas: replicas renders to 'two', which is not an integer (point nodes=two)"
    )


def test_editing_the_template_changes_the_spec_hash_but_not_the_key(tmp_path: Path) -> None:
    path = minimal(tmp_path)
    before = render_sweep(load(tmp_path, path))
    path.write_text(path.read_text().replace("org/image", "org/image-v2"))
    after = render_sweep(load(tmp_path, path))
    assert [r.key for r in before] == [r.key for r in after]
    assert all(a.spec_hash != b.spec_hash for a, b in zip(before, after, strict=True))


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.stem)
def test_spec_text_is_the_canonical_json_of_the_spec_and_its_hash_is_the_spec_hash(
    path: Path,
) -> None:
    for rendered in render_sweep(load(PROJECT, path)):
        assert rendered.spec_json == canonical_json(rendered.spec)
        assert rendered.spec_hash == spec_hash(rendered.spec)


def test_points_of_different_shapes_in_one_sweep_each_get_their_own_document(
    tmp_path: Path,
) -> None:
    path = minimal(
        tmp_path,
        name="mixed",
        body="""\
version: 1
name: mixed
beaker: {workspace: ai2/x, budget: ai2/b, clusters: [ai2/c]}
tasks:
  - image: {beaker: org/image}
    command: [run, "--nodes={nodes}"]
    replicas: "{nodes}"
    resources: {gpus: "{gpus}"}
params:
  grid:
    nodes: [1, 2, 3, 4]
    gpus: [0, 8]
""",
    )
    specs = [r.spec["tasks"][0] for r in render_sweep(load(tmp_path, path))]
    assert [(t["command"][1], t.get("replicas"), t["resources"]["gpuCount"]) for t in specs] == [
        ("--nodes=1", None, 0),
        ("--nodes=1", None, 8),
        ("--nodes=2", 2, 0),
        ("--nodes=2", 2, 8),
        ("--nodes=3", 3, 0),
        ("--nodes=3", 3, 8),
        ("--nodes=4", 4, 0),
        ("--nodes=4", 4, 8),
    ]
    assert [t["leaderSelection"] for t in specs] == [False, False] + [True] * 6
    assert all("propagateFailure" not in t for t in specs if "replicas" not in t)


def test_a_templated_value_is_checked_for_each_point(
    tmp_path: Path,
) -> None:
    path = minimal(
        tmp_path,
        name="paths",
        body="""\
version: 1
name: paths
beaker: {workspace: ai2/x, budget: ai2/b, clusters: [ai2/c]}
tasks:
  - image: {beaker: org/image}
    command: [run]
    resources: {gpus: "{gpus}"}
params:
  grid:
    gpus: [8, 1, -1, 0]
""",
    )
    with pytest.raises(ManifestError) as info:
        render_sweep(load(tmp_path, path))
    assert str(info.value) == (
        "sweeps/paths.yaml:7:23: tasks[0].resources.gpus: gpus renders to -1, must be at least 0"
        " (point gpus=-1)"
    )


def test_integral_floats_stay_floats_in_argv_env_and_json_plan(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    body = (
        MINIMAL.format(name="floats")
        .replace("    lr: [0.1, 0.01]\n", "    lr: [1e-4, 3e6]\n    wd: [0.0]\n    steps: [100]\n")
        .replace('arguments: ["--lr={lr}"]', 'arguments: ["--lr={lr}", "--wd={wd}", 1.0, 2]')
    )
    path = minimal(tmp_path, name="floats", body=body)
    rendered = render_sweep(load(tmp_path, path))
    task = rendered[1].spec["tasks"][0]
    assert task["arguments"] == ["--lr=3000000.0", "--wd=0.0", "1.0", "2"]
    env = {e["name"]: e.get("value") for e in task["envVars"]}
    assert env["SWEEP_PARAM_WD"] == "0.0" and env["SWEEP_PARAM_STEPS"] == "100"
    assert '"wd": 0.0' in env["SWEEP_PARAMS"] and '"lr": 3000000.0' in env["SWEEP_PARAMS"]
    assert main(["-C", str(tmp_path), "expand", "--format", "json"]) == 0
    out = capsys.readouterr().out
    assert '"lr": 3000000.0' in out and '"wd": 0.0' in out
    # Only the key normalises: writing 3000000 instead keeps the name, the command line changes.
    path.write_text(path.read_text().replace("3e6", "3000000"))
    again = render_sweep(load(tmp_path, path))[1]
    assert again.key == rendered[1].key and again.name == rendered[1].name
    assert again.spec["tasks"][0]["arguments"][0] == "--lr=3000000"
    assert again.spec_hash != rendered[1].spec_hash


def test_every_task_gets_results_dir_set_to_its_result_path(tmp_path: Path) -> None:
    extra = '  - name: eval\n    image: {beaker: org/image}\n    command: [run]\n    result: "/out/{lr}"\n'
    body = MINIMAL.format(name="res").replace("  - image:", "  - name: train\n    image:")
    body = body.replace("params:\n", extra + "params:\n")
    rendered = render_sweep(load(tmp_path, minimal(tmp_path, name="res", body=body)))[0]
    env = [{e["name"]: e.get("value") for e in t["envVars"]} for t in rendered.spec["tasks"]]
    assert [e["RESULTS_DIR"] for e in env] == ["/results", "/out/0.1"]
    assert [t["result"]["path"] for t in rendered.spec["tasks"]] == ["/results", "/out/0.1"]


def test_sizes_are_read_as_beaker_reads_them(tmp_path: Path) -> None:
    body = MINIMAL.format(name="sizes").replace(
        "    arguments:", "    resources: {memory: 64gib, shared_memory: 10.24gb}\n    arguments:"
    )
    rendered = render_sweep(load(tmp_path, minimal(tmp_path, name="sizes", body=body)))[0]
    assert rendered.spec["tasks"][0]["resources"] == {"memory": "64gib", "sharedMemory": "10.24gb"}
    assert to_beaker_spec(rendered.spec).tasks[0].resources is not None


def test_min_runtime_and_auto_resume_reach_the_task_context(tmp_path: Path) -> None:
    body = MINIMAL.format(name="pre").replace(
        "  clusters:", "  min_runtime: 2h\n  auto_resume: false\n  clusters:"
    )
    rendered = render_sweep(load(tmp_path, minimal(tmp_path, name="pre", body=body)))[0]
    context = rendered.spec["tasks"][0]["context"]
    assert context == {"minRuntime": 2 * 3600 * 10**9, "autoResume": False}
    typed = to_beaker_spec(rendered.spec).tasks[0].context
    assert typed is not None and typed.min_runtime == 2 * 3600 * 10**9
    assert typed.auto_resume is False and typed.preemptible is None


def test_preemptible_still_works_and_validate_says_it_is_deprecated(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    body = MINIMAL.format(name="old").replace("  clusters:", "  preemptible: true\n  clusters:")
    path = minimal(tmp_path, name="old", body=body)
    assert render_sweep(load(tmp_path, path))[0].spec["tasks"][0]["context"] == {
        "preemptible": True
    }
    assert main(["-C", str(tmp_path), "validate"]) == 0
    err = capsys.readouterr().err.splitlines()
    assert err[0].startswith("sweeps/old.yaml:6:16: beaker.preemptible: warning: preemptible is")
    assert "deprecated" in err[0] and err[1] == "1 manifest(s) valid, 2 point(s)"


def test_a_launcher_renders_a_fixed_quoted_line_and_passes_argv_through(tmp_path: Path) -> None:
    body = MINIMAL.format(name="tr").replace(
        "    command: [python, train.py]",
        "    launcher: torchrun\n    command: [train.py]\n    resources: {gpus: 8}",
    )
    rendered = render_sweep(load(tmp_path, minimal(tmp_path, name="tr", body=body)))
    tasks = [r.spec["tasks"][0] for r in rendered]
    assert tasks[0]["command"][:2] == ["bash", "-c"] and tasks[0]["command"][3:] == [
        "torchrun",
        "train.py",
    ]
    assert tasks[0]["command"] == tasks[1]["command"]  # the same line for every point
    assert "--master-port=29400" in tasks[0]["command"][2]
    assert '"$BEAKER_REPLICA_COUNT"' not in tasks[0]["command"][2]  # read with defaults
    assert "BEAKER_REPLICA_COUNT" in tasks[0]["command"][2] and '"$@"' in tasks[0]["command"][2]
    assert [t["arguments"] for t in tasks] == [["--lr=0.1"], ["--lr=0.01"]]
