"""What researchers bring from mason and gantry: each maps to a manifest field and renders a spec
that beaker-py's BeakerExperimentSpec loads."""

from __future__ import annotations

import json
import warnings
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest
from beaker import BeakerExperimentSpec

from runner.plan import render_sweep
from tests.helpers import MINIMAL, load, minimal

TASK = "    command: [python, train.py]"


def _specs(tmp_path: Path, body: str) -> list[Mapping[str, Any]]:
    rendered = render_sweep(load(tmp_path, minimal(tmp_path, name="par", body=body)))
    for item in rendered:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)
            BeakerExperimentSpec.from_json(json.loads(item.spec_json))
    return [r.spec for r in rendered]


def _body(task_lines: str = "", beaker_lines: str = "", top: str = "") -> str:
    body = MINIMAL.format(name="par").replace(TASK, TASK + task_lines)
    body = body.replace(
        "  clusters: [ai2/test-cluster]\n", "  clusters: [ai2/test-cluster]\n" + beaker_lines
    )
    return top + body


def test_host_networking_is_honoured_on_one_replica_when_asked_for(tmp_path: Path) -> None:
    (plain, *_) = _specs(tmp_path, _body())
    assert plain["tasks"][0]["hostNetworking"] is False  # the default is unchanged
    asked = _body("\n    multinode: {host_networking: true}")
    (spec, *_) = _specs(tmp_path, asked)
    assert spec["tasks"][0]["hostNetworking"] is True
    assert "replicas" not in spec["tasks"][0]  # still one replica


def test_immediate_priority_and_a_hostname_constraint(tmp_path: Path) -> None:
    beaker = "  priority: immediate\n  hostnames: [jupiter-cs-aus-101.reviz.ai2.in]\n"
    (spec, *_) = _specs(tmp_path, _body(beaker_lines=beaker))
    task = spec["tasks"][0]
    assert task["context"]["priority"] == "immediate"
    assert task["constraints"] == {
        "cluster": ["ai2/test-cluster"],
        "hostname": ["jupiter-cs-aus-101.reviz.ai2.in"],
    }


def test_beaker_token_passes_only_through_its_explicit_field(tmp_path: Path) -> None:
    (spec, *_) = _specs(tmp_path, _body("\n    beaker_token_secret: petew-beaker-token"))
    env = spec["tasks"][0]["envVars"]
    assert {"name": "BEAKER_TOKEN", "secret": "petew-beaker-token"} in env


def test_setup_commands_run_before_the_launcher(tmp_path: Path) -> None:
    lines = (
        "\n    launcher: accelerate\n    resources: {gpus: 8}"
        '\n    setup: ["pip install -e .", "uv sync --frozen"]'
    )
    body = _body(lines).replace("[python, train.py]", "[open_instruct/dpo_tune.py]")
    (spec, *_) = _specs(tmp_path, body)
    command = spec["tasks"][0]["command"]
    assert command[:2] == ["bash", "-c"] and command[3:] == [
        "accelerate",
        "open_instruct/dpo_tune.py",
    ]
    assert command[2].startswith("set -e; pip install -e .; uv sync --frozen; nodes=")
    assert "exec accelerate launch" in command[2]


def test_a_slug_makes_task_strings_name_safe_and_leaves_the_key_alone(tmp_path: Path) -> None:
    body = MINIMAL.format(name="par").replace('"--lr={{lr}}"', '"--task={task}"')
    body = body.replace('arguments: ["--lr={lr}"]', 'arguments: ["--task={task}"]')
    body = body.replace(
        "    lr: [0.1, 0.01]", '    task: ["mmlu:mc::olmes", "arc_challenge:rc::olmes"]'
    )
    plain = render_sweep(load(tmp_path, minimal(tmp_path, name="par", body=body)))
    named = body.replace("name: par\n", 'name: par\nexperiment_name: "eval-{task|slug}"\n')
    slugged = render_sweep(load(tmp_path, minimal(tmp_path, name="par", body=named)))
    assert [r.name.rsplit("-", 1)[0] for r in slugged] == [
        "eval-mmlu-mc-olmes",
        "eval-arc_challenge-rc-olmes",
    ]
    assert [r.key for r in slugged] == [r.key for r in plain]
    assert slugged[0].spec["tasks"][0]["arguments"] == ["--task=mmlu:mc::olmes"]


def test_top_level_x_keys_hold_anchors_and_are_ignored(tmp_path: Path) -> None:
    top = "x-common-env: &env\n  HF_HOME: /weka/hf\n  WANDB_PROJECT: sweeps\n"
    (spec, *_) = _specs(tmp_path, _body("\n    env: *env", top=top))
    names = {e["name"] for e in spec["tasks"][0]["envVars"]}
    assert {"HF_HOME", "WANDB_PROJECT"} <= names


@pytest.mark.parametrize("flag", ["--nproc-per-node=8", "--nnodes", "--master_port=1"])
def test_torchrun_flags_repeated_in_the_command_are_refused(tmp_path: Path, flag: str) -> None:
    from runner.core.errors import ManifestError

    lines = "\n    launcher: torchrun\n    resources: {gpus: 8}"
    body = _body(lines).replace("[python, train.py]", f"[{flag}, scripts/train.py]")
    with pytest.raises(ManifestError, match="is set by `launcher: torchrun`"):
        load(tmp_path, minimal(tmp_path, name="par", body=body))


MIGRATED = ("migrated-dpo.yaml", "migrated-scaling.yaml", "migrated-eval.yaml")


def test_the_three_migrated_sweeps_validate_without_a_warning_and_beaker_py_loads_them(
    capsys: pytest.CaptureFixture[str],
) -> None:
    from runner.cli import main
    from tests.conftest import PROJECT

    paths = [str(PROJECT / "sweeps" / name) for name in MIGRATED]
    assert main(["-C", str(PROJECT), "validate", *paths]) == 0
    (line,) = capsys.readouterr().err.splitlines()  # no warning line before the count
    assert line == "3 manifest(s) valid, 26 point(s)"
    for path in paths:
        for item in render_sweep(load(PROJECT, Path(path))):
            BeakerExperimentSpec.from_json(json.loads(item.spec_json))
