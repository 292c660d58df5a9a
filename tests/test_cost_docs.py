"""docs/cost.md: its YAML examples load, and its plan comment is what the code produces."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from runner import yaml12
from runner.cli import main
from runner.plan import policy
from tests.conftest import PROJECT

DOC = (PROJECT / "docs" / "cost.md").read_text(encoding="utf-8")
YAML = re.findall(r"```yaml\n(.*?)```", DOC, re.S)
(COMMENT,) = re.findall(r"```markdown\n(.*?)```", DOC, re.S)


def test_the_yaml_examples_load() -> None:
    manifest, rules, allocation, stops = YAML
    assert "tasks" in yaml12.load(manifest, "manifest").data
    assert policy.parse(rules).max_gpus_per_point == 16
    allotted = policy.parse(allocation).priority_allocation  # schema-checked
    assert [(a.cluster, a.priority, a.gpus) for a in allotted] == [
        ("ai2/ceres", "high", 64),
        ("ai2/ceres", "urgent", 16),
        ("ai2/jupiter", "urgent", 72),
    ]
    assert set(yaml12.load(stops, "stops").data) == {"max_failures", "stop_when"}


def test_the_plan_comment_is_the_codes_output(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    manifest, rules, *_ = YAML
    (tmp_path / "sweeps").mkdir()
    (tmp_path / "sweeps" / "dpo-8b.yaml").write_text(manifest, encoding="utf-8")
    (tmp_path / "sweeps" / "policy.yaml").write_text(rules, encoding="utf-8")
    assert main(["-C", str(tmp_path), "validate"]) == 0, capsys.readouterr().err
    out = tmp_path / "comment.md"
    assert main(["-C", str(tmp_path), "plan-comment", "--output", str(out)]) == 1  # over budget
    assert out.read_text(encoding="utf-8") == COMMENT, "regenerate the block in docs/cost.md"
