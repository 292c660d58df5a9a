"""Every YAML block in the README parses, and every manifest among them validates."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from runner import yaml12
from runner.cli import main
from tests.conftest import PROJECT

BLOCKS = re.findall(r"```yaml\n(.*?)```", (PROJECT / "README.md").read_text(), re.S)


def test_the_readme_has_yaml_blocks() -> None:
    assert len(BLOCKS) >= 2


@pytest.mark.parametrize("index", range(len(BLOCKS)))
def test_every_readme_yaml_block_parses_and_manifests_validate(
    index: int, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    text = BLOCKS[index]
    doc = yaml12.load(text, f"README block {index}")
    if "tasks" not in doc.data:
        return  # not a manifest (the pre-commit configuration): parsing is the check
    path = tmp_path / "sweeps" / "readme.yaml"
    path.parent.mkdir()
    path.write_text(text)
    assert main(["-C", str(tmp_path), "validate"]) == 0, capsys.readouterr().err
