"""docs/lifecycle.md's transcripts are what the commands print: the page's story is replayed
against the fake Beaker, command by command, and every line shown must be printed."""

from __future__ import annotations

import shlex
from collections.abc import Callable
from pathlib import Path

import pytest

from runner.cli import main
from runner.plan import catalog
from tests.conftest import PROJECT
from tests.fake_beaker.server import FakeBeaker
from tests.helpers import shown_line, transcripts, write_manifest

PAGE = PROJECT / "docs" / "lifecycle.md"


def _manifest() -> str:
    section = PAGE.read_text(encoding="utf-8").split("# Acting on a running sweep", 1)[1]
    return section.split("```yaml\n", 1)[1].split("```", 1)[0]


Action = Callable[[FakeBeaker, list[str]], None]


def _nothing(fake: FakeBeaker, names: list[str]) -> None:
    pass


def _first_fails(fake: FakeBeaker, names: list[str]) -> None:
    fake.set_job_status(names[0], "failed", exit_code=1)


def _both_run_and_log(fake: FakeBeaker, names: list[str]) -> None:
    for name in names[:2]:
        fake.set_job_status(name, "running")
    fake.set_logs(names[0], [f"step {i} loss {2.0 - i / 10:.2f}\n" for i in range(5)], replica=1)


def _fourth_preempted(fake: FakeBeaker, names: list[str]) -> None:
    """The fourth point, running again, is preempted, and Beaker does not resume it."""
    fake.set_job_status(names[3], "running")
    fake.preempt(names[3], resume=False)


STORY: list[tuple[str, Action, int]] = [
    ("python -m runner submit", _nothing, 0),
    ("python -m runner submit --restart-failed", _first_fails, 0),
    ("python -m runner status", _both_run_and_log, 0),
    ("python -m runner logs lr-89d5e116e6a7 --replica 1 --tail 3", _nothing, 0),
    ("python -m runner logs lr-4edfa35edfc7", _nothing, 1),
    ("python -m runner cancel sweeps/lr.yaml", _nothing, 2),
    ("python -m runner cancel sweeps/lr.yaml --yes", _nothing, 0),
    ("python -m runner status", _nothing, 0),
    ("python -m runner submit --restart-failed --dry-run", _nothing, 0),  # set up below
    ("python -m runner submit --dry-run sweeps/lr.yaml", _fourth_preempted, 0),
]
"""The page's commands in order, each with what happens on Beaker before it and its exit code."""


@pytest.mark.slow
def test_every_transcript_of_the_lifecycle_page_is_what_the_commands_print(
    tmp_path: Path,
    fake_beaker: FakeBeaker,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    fake_beaker.add_workspace("ai2/lr-sweeps")
    write_manifest(tmp_path, _manifest(), "lr.yaml")
    [plan] = catalog.load(tmp_path, []).plans()
    names = [row.name for row in plan.rows]
    steps = [step for block in transcripts(PAGE.read_text(encoding="utf-8")) for step in block]
    assert [command for command, _ in steps] == [command for command, _, _ in STORY]

    def run(command: str) -> tuple[int, set[str]]:
        code = main(["-C", str(tmp_path), *shlex.split(command)[3:]])
        out = capsys.readouterr()
        return code, {shown_line(line) for line in (out.out + out.err).splitlines()}

    for (command, shown), (_, before, exit_code) in zip(steps, STORY, strict=True):
        before(fake_beaker, names)
        if command.endswith("--dry-run"):  # later: the other two ran, one failed 4 times
            _later(fake_beaker, names, run)
        code, printed = run(command)
        assert code == exit_code, command
        assert [line for line in shown if shown_line(line) not in printed] == [], command


def _later(fake: FakeBeaker, names: list[str], run: Callable[[str], object]) -> None:
    """The page's "later": the next submit creates the last two points; the third fails after
    each of its 3 restarts, and the fourth fails once."""
    run("python -m runner submit")
    third, fourth = names[2], names[3]
    for _ in range(3):
        fake.set_job_status(third, "failed", exit_code=1)
        run("python -m runner submit --restart-failed")
    fake.set_job_status(third, "failed", exit_code=1)
    fake.set_job_status(fourth, "failed", exit_code=1)
