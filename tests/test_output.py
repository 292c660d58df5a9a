"""Files the user names for output (`runner.core.output`): in every command that writes one, a
path that cannot be written is one `error:` line naming it, exit 1, never a traceback."""

from __future__ import annotations

from pathlib import Path

import pytest

from runner.cli import main
from runner.core.errors import Exit
from tests.conftest import PROJECT
from tests.helpers import OBJECTIVE_HEAD, write_manifest

SWEEP = (
    OBJECTIVE_HEAD.format(name="tiny")
    + """\
    command: [python, -m, runner.examples.objectives, bowl, --metric, loss]
    arguments: [--x1, "{x}"]
params:
  grid:
    x: [0.1, 0.3, 0.5]
"""
)


@pytest.fixture(scope="module")
def ran(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A three-point draft sweep run to its end on the local backend, each point with a loss."""
    root = tmp_path_factory.mktemp("ran")
    write_manifest(root, SWEEP, "tiny.yaml")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("PYTHONPATH", str(PROJECT))
        assert main(["-C", str(root), "submit", "sweeps/tiny.yaml", "--backend", "local"]) == 0
    return root


LOCAL = ["--backend", "local"]


@pytest.mark.parametrize(
    ("argv", "name"),
    [
        pytest.param(["expand", "--output"], "x", id="expand --output x"),
        pytest.param(["expand", "--save-specs"], "x", id="expand --save-specs x"),
        pytest.param(["plan-comment", "--output"], "x", id="plan-comment --output x"),
        pytest.param(["plan-comment", "--artifact"], "x", id="plan-comment --artifact x"),
        pytest.param(
            ["status", *LOCAL, "--plot", "loss", "--output"],
            "x.png",
            id="status --plot --output x.png",
        ),
        pytest.param(
            ["status", *LOCAL, "--plot", "loss", "--output"],
            "x.md",
            id="status --plot --output x.md",
        ),
        pytest.param(
            ["submit", "sweeps/tiny.yaml", *LOCAL, "--summary-json"],
            "x.json",
            id="submit --summary-json x.json",
        ),
        pytest.param(["report", *LOCAL, "--output"], "x", id="report --output x"),
        pytest.param(
            ["report", *LOCAL, "--optuna-storage"], "x.db", id="report --optuna-storage x.db"
        ),
        pytest.param(
            ["report", *LOCAL, "--optuna-storage"], "x.log", id="report --optuna-storage x.log"
        ),
    ],
)
def test_an_output_under_a_file_is_one_error_line_naming_it_exit_1(
    ran: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], argv: list[str], name: str
) -> None:
    taken = tmp_path / "taken"
    taken.write_text("mine\n")
    target = taken / name  # under a file: neither it nor its directory can be made
    capsys.readouterr()
    assert main(["-C", str(ran), *argv, str(target)]) == Exit.USER_ERROR
    err = capsys.readouterr().err
    said = [line for line in err.splitlines() if "error" in line]
    assert len(said) == 1 and said[0].startswith(f"error: cannot write {target}: "), err
    assert said[0] == err.splitlines()[-1] and "Traceback" not in err
    assert taken.read_text() == "mine\n"
